"""The SVG picture of the table (schnapsen_env.svg): well-formed for the RULES.md scenario positions, hides what the viewer cannot see."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import test_scenarios as scen
from schnapsen_env import GameState, RuleSet
from schnapsen_env.svg import TableView, table_svg
from scenario_util import parse_scenario

BLOCKS = {name: value for name, value in vars(scen).items()
          if isinstance(value, str) and value.lstrip().startswith("trump:")}


def test_there_are_scenario_blocks():
    assert len(BLOCKS) >= 20


@pytest.mark.parametrize("name", sorted(BLOCKS))
@pytest.mark.parametrize("viewer", [0, 1])
def test_scenario_positions_render_as_svg(name, viewer):
    ruleset = "sixtysix24" if re.search(r"\b9[CDHS]\b", BLOCKS[name]) else "schnapsen20"  # nines: 24 cards
    s = GameState.from_position(RuleSet.make(ruleset), parse_scenario(BLOCKS[name]).position)
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
