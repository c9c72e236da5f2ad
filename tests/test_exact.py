"""agents.exact: the schnapsen10 tree walk against a walk of the reference engine, and its deals."""

from __future__ import annotations

import numpy as np
import pytest

from agents import exact
from schnapsen_env import core
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet

RULES = RuleSet.make("schnapsen10")


def _reference_count(g: GameState) -> tuple[int, int, int]:
    """(nodes, decisions, terminals) below ``g`` by the reference engine, recursively."""
    if g.result is not None:
        return 1, 0, 1
    nodes, decisions, terminals = 1, 1, 0
    for a in g.legal_actions():
        child = g.copy()
        child.push(a)
        n, d, t = _reference_count(child)
        nodes, decisions, terminals = nodes + n, decisions + d, terminals + t
    return nodes, decisions, terminals


def test_deals_are_every_split_once():
    seen = set()
    for order in exact.deals(RULES):
        assert sorted(order.tolist()) == list(range(10))
        g = GameState._deal(RULES, order.tolist(), 1)
        seen.add((g.hands[0], g.hands[1], g.stock))
    assert len(seen) == 6300 == 210 * 15 * 2


@pytest.mark.parametrize("knobs", [{}, {"marriage_declaration": "optional", "false_claim": "mirror"},
                                   {"claim_mode": "auto", "closed_hand_end": "must_claim"}])
def test_compiled_walk_counts_what_the_reference_engine_walks(knobs):
    rules = RuleSet.make("schnapsen10", **knobs)
    R = core.rule_table(rules)
    stack = np.empty((exact._MAX_DEPTH + 1, core.STATE_SIZE), dtype=np.int64)
    legal = np.empty(exact._MAX_DEPTH + 1, dtype=np.int64)
    state = np.empty(core.STATE_SIZE, dtype=np.int64)
    for k, order in enumerate(exact.deals(rules)):
        if k % 1500 != 7:  # a handful of deals spread over the enumeration
            continue
        core.deal(state, R, order, 1)
        got = exact._walk(state, R, stack, legal)
        assert got == _reference_count(GameState._deal(rules, order.tolist(), 1)), order


def test_schnapsen10_tree_size():
    """The figure in RULES.md section 3a and the README."""
    assert exact.tree_size(RULES) == {"deals": 6300, "nodes": 72_529_808, "decisions": 48_199_680,
                                      "terminals": 24_330_128}


def test_other_rulesets_are_refused():
    with pytest.raises(ValueError, match="exact tree walks need ruleset 'schnapsen10'"):
        exact.tree_size(RuleSet.make("schnapsen20"))
    with pytest.raises(ValueError, match="dealer must be seat 0 or 1"):
        exact.tree_size(RULES, dealer=2)
