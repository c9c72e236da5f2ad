"""Helpers for the RULES.md section 6 scenario tests.

:func:`parse_scenario` turns the scenario notation of RULES.md section 6 into a position dict for
:meth:`GameState.from_position`::

    trump: H   stock: QD JD KC [TH]  (size 4; top first, [turn-up] last)
    A: hand KS AH TD QC JC | won AD KD = 15 card pts, 1 trick(s) | marriages – | counted 15
    B (leader): hand TS JS KH QH | won AC TC QS JH = 26 card pts, 2 trick(s) | marriages – | counted 26
    table: B has led AS; A to play

A = ``player_0``, B = ``player_1``. ``marriages H20 S40`` gives the suit letters ``["H", "S"]``.
``(dealer)`` sets ``dealer``; ``(leader)`` or a ``table:`` line sets ``leader`` (the player who led).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from schnapsen_env import GameState, IllegalActionError, RuleSet

SEAT = {"A": "player_0", "B": "player_1"}
NONE_MARKS = ("–", "-", "—")


@dataclass
class Scenario:
    """A parsed scenario block: the position dict plus the listed totals (to cross-check the load)."""

    position: dict
    card_points: dict  # player -> card points listed
    tricks: dict  # player -> tricks listed
    counted: dict  # player -> counted listed
    stock_size: int


def _cards(text: str) -> list[str]:
    text = text.strip()
    if text in NONE_MARKS or not text:
        return []
    return text.split()


def parse_scenario(text: str) -> Scenario:
    """Parse a RULES.md section 6 position block (see the module docstring)."""
    trump = None
    stock: list[str] = []
    size = 0
    hands, won, marriages = {}, {}, {}
    card_points, tricks, counted = {}, {}, {}
    leader = dealer = None
    table = None
    for raw in text.strip().splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("trump:"):
            m = re.match(r"trump:\s*([CDHS])\s+stock:\s*(.*)$", line)
            assert m, line
            trump = m.group(1)
            rest = m.group(2)
            if rest.startswith("empty"):
                stock, size = [], 0
            else:
                m2 = re.match(r"(.*?)\[(\w\w)\]\s*\(size (\d+);", rest)
                assert m2, line
                stock = m2.group(1).split() + [m2.group(2)]
                size = int(m2.group(3))
                assert len(stock) == size, line
        elif line.startswith("table:"):
            m = re.match(r"table:\s*([AB]) has led (\w\w); ([AB]) to play", line)
            assert m, line
            leader = SEAT[m.group(1)]
            table = m.group(2)
            assert m.group(3) != m.group(1)
        else:
            m = re.match(
                r"([AB])(?: \((leader|dealer)\))?: hand (.*?) \| won (.*?) = (\d+) card pts, (\d+) trick\(s\) \| "
                r"marriages (.*?) \| counted (\d+)$", line)
            assert m, f"cannot parse scenario line {line!r}"
            p = SEAT[m.group(1)]
            if m.group(2) == "leader":
                leader = p
            elif m.group(2) == "dealer":
                dealer = p
            hands[p] = _cards(m.group(3))
            won[p] = _cards(m.group(4))
            card_points[p] = int(m.group(5))
            tricks[p] = int(m.group(6))
            mar = m.group(7).strip()
            suits = []
            if mar not in NONE_MARKS:
                for tok in mar.split():
                    mm = re.fullmatch(r"([CDHS])(20|40)", tok)
                    assert mm, f"bad marriage token {tok!r}"
                    assert int(mm.group(2)) == (40 if mm.group(1) == trump else 20), f"{tok}: 40 in trumps, else 20"
                    suits.append(mm.group(1))
            marriages[p] = suits
            counted[p] = int(m.group(8))
    assert trump is not None and set(hands) == set(SEAT.values()) and leader is not None, text
    pos = {
        "trump": trump,
        "stock": stock,
        "closed_by": None,
        "closing_snapshot": None,
        "hands": hands,
        "won": won,
        "marriages": marriages,
        "announced": None,
        "leader": leader,
        "table": table,
    }
    if dealer is not None:
        pos["dealer"] = dealer
    return Scenario(pos, card_points, tricks, counted, size)


def load(text: str, ruleset: str = "schnapsen20", check: bool = True, extra: dict | None = None,
         **knobs) -> GameState:
    """Parse a scenario block and load it under ``RuleSet.make(ruleset, **knobs)``.

    ``extra`` adds or replaces position keys (e.g. ``{"dealer": "player_0"}``).

    With ``check`` the loaded state must agree with the block's listed card points, tricks, counted
    points and stock size.
    """
    sc = parse_scenario(text)
    st = GameState.from_position(RuleSet.make(ruleset, **knobs), {**sc.position, **(extra or {})})
    if check:
        pos = st.position()
        for p in SEAT.values():
            assert st.card_points[int(p[-1])] == sc.card_points[p], (p, "card points")
            assert pos["tricks"][p] == sc.tricks[p], (p, "tricks")
            assert pos["points"][p] == sc.counted[p], (p, "counted")
        assert len(st.stock) == sc.stock_size
    return st


# ---------------------------------------------------------------------------------------------- assertions
def legal(st: GameState) -> set[str]:
    """Legal action names as a set, checked against the int8 mask."""
    names = set(st.legal_action_names())
    mask = st.action_mask()
    from_mask = {st.rules.action_names[i] for i in range(st.rules.n_actions) if mask[i]}
    assert names == from_mask, "action_mask disagrees with legal_action_names"
    return names


def plays(*cards: str) -> set[str]:
    """``{"play XX", ...}``."""
    return {f"play {c}" for c in cards}


def hand(st: GameState, who: str) -> set[str]:
    """Hand of ``"A"``/``"B"`` as a set of card codes."""
    return set(st.position()["hands"][SEAT[who]])


def points(st: GameState, who: str) -> int:
    return st.counted(int(SEAT[who][-1]))


def tricks(st: GameState, who: str) -> int:
    return st.tricks[int(SEAT[who][-1])]


def run(st: GameState, *actions: str) -> None:
    """Step each action by name (checked)."""
    for a in actions:
        st.step(a)


def assert_illegal(st: GameState, action: str) -> None:
    """RULES.md ``illegal:``: not offered by the mask, refused by step(), state unchanged."""
    aid = st.rules.action_id(action)
    assert st.action_mask()[aid] == 0, f"{action!r} is offered by the mask"
    assert action not in legal(st)
    before_pos = st.position()
    before = st.copy()
    with pytest.raises(IllegalActionError):
        st.step(action)
    assert st.position() == before_pos
    assert st == before


def assert_result(st: GameState, winner: str | None, game_points: int, reason: str | None = None) -> None:
    """The hand's Result: winner ``"A"``/``"B"``/None, game points, and (when given) reason."""
    assert st.result is not None, "the hand should be over"
    res = st.position()["result"]
    assert res["winner"] == (None if winner is None else SEAT[winner]), res
    assert res["game_points"] == game_points, res
    if reason is not None:
        assert res["reason"] == reason, res
