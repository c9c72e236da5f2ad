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
from schnapsen_env import encoding, rules_core
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet

HANDS_PER_CASE = 25


def _case_id(case) -> str:
    ruleset, knobs = case
    return ruleset + ("-" + "-".join(f"{k}={v}" for k, v in knobs.items()) if knobs else "-defaults")


def _choose(g: GameState, rng: np.random.Generator, special_p: float) -> int:
    """A random legal action, a special one (marriage, exchange, close, claim) with probability ``special_p``."""
    legal = g.legal_actions()
    special = [a for a in legal if a >= g.rules.n_cards]
    return int(rng.choice(special)) if special and rng.random() < special_p else int(rng.choice(legal))


def _kind(a: int, rules: RuleSet) -> int:
    """0 a card, then 1..4 the kinds of special action (marriage, exchange, close, claim)."""
    return min(a - rules.n_cards, 4) + 1 if a >= rules.n_cards else 0


def _play_lockstep(rules: RuleSet, rng: np.random.Generator, special_p: float) -> int:
    """One hand on both engines; returns the number of actions. Asserts equality after every action."""
    R = rules_core.rule_table(rules)
    g = GameState.new_hand(rules, rng=rng)
    st = rules_core.from_game_state(g)
    searched = st.copy()  # stepped with apply_searched: equal to st on the fields a search reads
    obs = np.empty(encoding.obs_size(rules), dtype=np.float32)
    n = 0
    while g.result is None:
        assert rules_core.legal_bits(st, R) == g.legal_bits(), g.position()
        for seat in (0, 1):
            rules_core.observe(st, R, seat, obs)
            np.testing.assert_array_equal(obs, encoding.observation(g, seat))
        a = _choose(g, rng, special_p)
        g.push(a)
        rules_core.apply(st, R, a)
        rules_core.apply_searched(searched, R, a)
        np.testing.assert_array_equal(searched[:rules_core.SEARCH_SIZE], st[:rules_core.SEARCH_SIZE])
        n += 1
        assert rules_core.to_game_state(st, rules) == g, (a, differing_fields(rules_core.to_game_state(st, rules), g))
    assert rules_core.result_of(st) == g.result
    assert rules_core.legal_bits(st, R) == 0
    return n


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
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
                a = _choose(g, rng, 0.4)
                kinds[_kind(a, rules)] += 1
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
