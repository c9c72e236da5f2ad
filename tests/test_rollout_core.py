"""The rollout agent's compiled playouts (agents/search/rollout_core.py) against the readable ones on GameState
(agents/search/rollout.py): the same score on every state, legal and uniform random actions, and the same action values
up to sampling error."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare

from agents.search.rollout import RolloutAgent, rollout_score, score
from agents.search.rollout_core import random_action
from agents.search.rollout_core import score as core_score
from helpers.knob_cases import CASES
from helpers.lockstep import case_id, case_rules, play_hand
from schnapsen_env import encoding, jit, rules_core
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.sampler import Determinizer


@pytest.mark.parametrize("case", CASES[::5], ids=case_id)
def test_compiled_score_equals_the_reference_score(case):
    rng = np.random.default_rng(1)
    checked = []

    def check(g: GameState, st: np.ndarray, _action) -> None:
        assert core_score(st) == score(g, 0)
        checked.append(1)

    for _ in range(40):
        play_hand(case_rules(case), rng, 0.0, check)
    assert len(checked) > 400


def test_random_action_is_legal_and_uniform():
    rules = RuleSet.make()
    g = GameState.new_hand(rules, np.random.default_rng(3))
    st, R = rules_core.from_game_state(g), rules_core.rule_table(rules)
    legal = g.legal_actions()
    assert len(legal) >= 4
    rng = np.random.default_rng(7)
    fn, state = jit.bitgen_addresses(rng)
    draws = [random_action(st, R, fn, state) for _ in range(6000)]
    assert set(draws) <= set(legal)
    counts = [draws.count(a) for a in legal]
    assert chisquare(counts).pvalue > 1e-3, counts


def _reference_values(agent: RolloutAgent, observation: dict, n: int, rng: np.random.Generator) -> dict[int, float]:
    """The agent's algorithm in plain Python on GameState (Determinizer worlds, rollout_score playouts)."""
    det = Determinizer(observation, agent.rules)
    legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
    totals = dict.fromkeys(legal, 0.0)
    for _ in range(n):
        s = det.sample(rng)
        target = s.tricks[0] + s.tricks[1] + agent.depth
        for a in legal:
            s.push(a)
            totals[a] += rollout_score(s, 0, target, rng)
            s.pop()
    return {a: v / n for a, v in totals.items()}


@pytest.mark.parametrize("ruleset, seed, plies", [("schnapsen20", 0, 0), ("schnapsen20", 5, 6), ("sixtysix24", 2, 3),
                                                  ("schnapsen20", 9, 13)])
def test_compiled_action_values_match_the_reference_playouts(ruleset, seed, plies):
    rules = RuleSet.make(ruleset)
    rng = np.random.default_rng(seed)
    g = GameState.new_hand(rules, rng)
    for _ in range(plies):
        g.push(int(rng.choice(g.legal_actions())))
    assert g.result is None
    obs = {"observation": encoding.observation(g, g.to_move), "action_mask": g.action_mask()}
    n = 3000
    agent = RolloutAgent(rules, n_samples=n, seed=seed)
    fast = agent.action_values(obs)
    slow = _reference_values(agent, obs, n, np.random.default_rng(seed + 100))
    assert fast.keys() == slow.keys()
    for a in fast:  # each a mean of n scores in [0, 1]: standard error at most 0.5 / sqrt(n) ~ 0.009 per side
        assert abs(fast[a] - slow[a]) < 0.05, (a, fast, slow)
