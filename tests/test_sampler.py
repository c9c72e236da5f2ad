"""Determinisation (schnapsen_env/sampler.py): a sampled world equals the true state on every field the
observation determines, for every knob set, so a field the sampler forgets (a new one, say) is caught."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.knob_cases import CASES, case_seed
from schnapsen_env import encoding
from schnapsen_env.rules import FIELDS, GameState
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.sampler import Determinizer

#: Fields the observation does not fix (R27): the opponent's hidden cards and the face-down stock, and which of
#: the observer's own cards the opponent has seen (``known[0]``: no part of the observer's observation).
NOT_OBSERVED = ("hands", "stock", "known")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0] + str(sorted(c[1].items())))
def test_sampled_world_equals_the_true_state_where_the_observation_fixes_it(case):
    ruleset, knobs = case
    rules = RuleSet.make(ruleset, **knobs)
    rng = np.random.default_rng(case_seed(case))
    checked = 0
    for _ in range(12):
        g = GameState.new_hand(rules, rng)
        while g.result is None:
            if g.to_move == 0:  # the sampler makes the observer seat 0
                s = Determinizer(encoding.observation(g, 0), rules).sample(rng)
                for name, _, _ in FIELDS:
                    if name not in NOT_OBSERVED:
                        assert getattr(s, name) == getattr(g, name), (name, g.position())
                assert s.hands[0] == g.hands[0] and s.known[1] == g.known[1]
                assert s.hands[1] & g.known[1] == g.known[1] and s.hands[1].bit_count() == g.hands[1].bit_count()
                assert len(s.stock) == len(g.stock) and s.stock[-1:] == g.stock[-1:]  # the turn-up stays
                hidden = lambda x: x.hands[1] | sum(1 << c for c in x.stock)  # noqa: E731
                assert hidden(s) == hidden(g)
                checked += 1
            g.push(int(rng.choice(g.legal_actions())))
    assert checked > 30
