"""The SVG picture of the table (schnapsen_env.svg): well-formed for the RULES.md scenario positions, hides what the viewer cannot see."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from helpers.engine import load
from helpers.fault_positions import FAULT_POSITIONS
from helpers.rulebook import position_scenarios
from schnapsen_env import GameState, RuleSet
from schnapsen_env.cards import SUIT_SYMBOLS
from schnapsen_env.svg import TableView, card_svg, table_svg

# every position of the rule book's scenarios (docs/RULES.md section 6) and of the section 7 fault tests
POSITIONS = {sc.sid: (sc, None) for sc in position_scenarios()}
POSITIONS |= {name: (None, v) for name, v in FAULT_POSITIONS.items()}


def _state(name: str) -> GameState:
    sc, fault = POSITIONS[name]
    return sc.state() if sc is not None else load(fault[0], fault[1])


def test_there_are_scenario_blocks():
    assert len(POSITIONS) >= 20


@pytest.mark.parametrize("name", sorted(POSITIONS))
@pytest.mark.parametrize("viewer", [0, 1])
def test_scenario_positions_render_as_svg(name, viewer):
    s = _state(name)
    svg = table_svg(s, viewer)
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag.endswith("svg")
    backs = svg.count('fill="#2e5fa3"')
    hidden = (s.hands[1 - viewer] & ~s.known[1 - viewer]).bit_count() + (1 if s.stock else 0)
    assert backs == hidden
    assert table_svg(s, viewer, reveal=True).count('fill="#2e5fa3"') == (1 if s.stock else 0)


def test_table_view_repr_svg_during_play():
    s = GameState.new_hand(RuleSet.make(), np.random.default_rng(0))
    while s.result is None:
        assert TableView(s, s.to_move)._repr_svg_().startswith("<svg")
        s.push(s.legal_actions()[-1])
    assert "wins" in table_svg(s, 0) or "tie" in table_svg(s, 0)


def test_card_svg_draws_the_table_faces_alone():
    """card_svg is the table's own drawing of a card (schnapsen-web lays these out itself), face or back."""
    for code in RuleSet.make("sixtysix24").deck.codes:
        root = ET.fromstring(card_svg(code))  # well-formed, one face: a white card, rank and suit twice
        texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
        rank = "10" if code[0] == "T" else code[0]
        assert texts == [rank, SUIT_SYMBOLS["CDHS".index(code[1])], SUIT_SYMBOLS["CDHS".index(code[1])]]
    assert 'fill="#2e5fa3"' in card_svg(None) and 'fill="#2e5fa3"' not in card_svg("AS")
    assert 'opacity="0.45"' in card_svg("AS", dim=True)
    assert "10" in card_svg("TH") and "♥" in card_svg("TH") and "#c62828" in card_svg("TH")
    assert "#c62828" not in card_svg("TS")
    for bad in ("XH", "QX", "Q", "", 7):
        with pytest.raises(ValueError, match="card code"):
            card_svg(bad)
