"""Checking :class:`GameState` objects in the rule book's terms: players ``"A"``/``"B"``, action names.

Positions come from the rule book (``helpers.rulebook.scenario("S20").state()``) or from blocks in its notation
(:func:`load`, e.g. :mod:`helpers.fault_positions`).
"""

from __future__ import annotations

import pytest

from helpers.rulebook import SEAT, load_block
from schnapsen_env import GameState, IllegalActionError, RuleSet


def load(text: str, ruleset: str = "schnapsen20", extra: dict | None = None, **knobs) -> GameState:
    """A position block in the rule book's notation, loaded under ``RuleSet.make(ruleset, **knobs)`` and checked
    against the totals it lists. ``extra`` adds or replaces position keys (e.g. ``{"dealer": "player_0"}``)."""
    return load_block(text, RuleSet.make(ruleset, **knobs), extra)


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


def turn_up(st: GameState) -> str:
    return st.position()["stock"][-1]


def snapshot(st: GameState) -> tuple[int, int]:
    snap = st.position()["closing_snapshot"]
    return snap["points"], snap["tricks"]


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


def differing_fields(a: GameState, b: GameState) -> dict[str, tuple]:
    """``{field: (a's value, b's value)}`` for every field of :data:`schnapsen_env.rules.FIELDS` (and the
    history) where two states differ: what an ``assert a == b`` message should show (two reprs of states that
    differ in one hidden field look the same)."""
    from schnapsen_env.rules import FIELDS

    out = {name: (getattr(a, name), getattr(b, name)) for name, _, _ in FIELDS
           if getattr(a, name) != getattr(b, name)}
    if list(a.history) != list(b.history):
        out["history"] = (a.history, b.history)
    return out
