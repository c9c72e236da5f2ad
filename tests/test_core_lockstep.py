"""The compiled rules core (schnapsen_env.rules_core) against the reference engine (GameState), action by action:
legal actions, the whole state, both seats' observations and the result after every action (and the search's
step, rules_core.apply_searched, on the fields a search reads), over every knob set
of RULES.md section 5 (tests/helpers/knob_cases.py) in both rulesets, with special actions (marriage, exchange, close,
claim) taken often. The vector env's batch loops are checked in tests/test_vector_exact.py."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.engine import differing_fields
from helpers.knob_cases import CASES, case_seed
from helpers.lockstep import action_kind, case_id, choose, play_hand
from schnapsen_env import encoding, rules_core
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet

HANDS_PER_CASE = 25


def _play_lockstep(rules: RuleSet, rng: np.random.Generator, special_p: float) -> int:
    """One hand on both engines (:func:`helpers.lockstep.play_hand`); returns the number of actions. Asserts
    equality after every action: legal actions, both seats' observations, the whole state, the search's step on the
    fields a search reads, and the result."""
    R = rules_core.rule_table(rules)
    obs = np.empty(encoding.obs_size(rules), dtype=np.float32)
    searched = []  # the state stepped with apply_searched: equal to st on the fields a search reads

    def check(g: GameState, st: np.ndarray, a: int | None) -> None:
        if a is None:
            searched.append(st.copy())
        else:
            rules_core.apply_searched(searched[0], R, a)
            np.testing.assert_array_equal(searched[0][:rules_core.SEARCH_SIZE], st[:rules_core.SEARCH_SIZE])
            assert rules_core.to_game_state(st, rules) == g, (a, differing_fields(rules_core.to_game_state(st, rules), g))
        if g.result is not None:
            assert rules_core.result_of(st) == g.result
            assert rules_core.legal_bits(st, R) == 0
            return
        assert rules_core.legal_bits(st, R) == g.legal_bits(), g.position()
        for seat in (0, 1):
            rules_core.observe(st, R, seat, obs)
            np.testing.assert_array_equal(obs, encoding.observation(g, seat))

    return play_hand(rules, rng, special_p, check)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_core_lockstep_every_knob(case):
    ruleset, knobs = case
    rules = RuleSet.make(ruleset, **knobs)
    rng = np.random.default_rng(case_seed(case))
    steps = sum(_play_lockstep(rules, rng, 0.4) for _ in range(HANDS_PER_CASE))
    assert steps >= 2 * HANDS_PER_CASE  # a hand takes at least two actions (marriage and a false claim)


def test_the_lockstep_hands_play_every_kind_of_action():
    """The hands above (same seeds, same choices) play every kind of action (card, marriage, exchange, close,
    claim): counted here, on the reference alone, so that the check does not depend on the order the cases run
    in (a count shared between the cases once failed under pytest --random-order)."""
    kinds = Counter()
    for case in CASES:
        ruleset, knobs = case
        rules = RuleSet.make(ruleset, **knobs)
        rng = np.random.default_rng(case_seed(case))
        for _ in range(HANDS_PER_CASE):
            g = GameState.new_hand(rules, rng=rng)
            while g.result is None:
                a = choose(g.legal_actions(), rules.n_cards, rng, 0.4)
                kinds[action_kind(a, rules.n_cards)] += 1
                g.push(a)
    assert all(kinds[k] > 0 for k in range(5)), kinds


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2 ** 32 - 1), case=st.sampled_from(CASES), special_p=st.floats(0.0, 1.0))
def test_core_lockstep_property(seed, case, special_p):
    """Hypothesis draws the knob set, the seed and how often special actions are taken."""
    ruleset, knobs = case
    _play_lockstep(RuleSet.make(ruleset, **knobs), np.random.default_rng(seed), special_p)


def test_rule_table_and_state_layout_declared_once():
    """The offsets come from STATE_FIELDS (contiguous, no overlap) and every knob of the rule table is set."""
    at = 0
    for name, size in rules_core.STATE_FIELDS:
        assert getattr(rules_core.F, name) == at
        at += size
    assert at == rules_core.STATE_SIZE
    # the fields no search reads come last, history last of all: a search copies what precedes them
    assert rules_core.STATE_FIELDS[-1][0] == "history"
    assert [name for name, _ in rules_core.STATE_FIELDS[-len(rules_core.UNSEARCHED):]] == list(rules_core.UNSEARCHED)
    assert rules_core.F.stock + rules_core.MAX_STOCK <= rules_core.SEARCH_SIZE == getattr(rules_core.F, rules_core.UNSEARCHED[0])
    table = rules_core.rule_table(RuleSet.make("sixtysix24", tie="last_trick", claim_mode="auto"))
    assert table.shape == (len(rules_core.RULE_FIELDS),) and table.dtype == np.int64
    assert table[rules_core.K.n] == 24 and table[rules_core.K.tie_last_trick] == 1 and table[rules_core.K.claim_auto] == 1
