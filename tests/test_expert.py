"""The expert agent (agents.search.expert): legal play over hundreds of hands in both rulesets under random knobs, worlds
that never contradict the observation (RULES.md R27), uniform sampling (chi-square) and complete enumeration,
exact play once the stock is exhausted, its decision rules and its option checks."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from agents import make_agent
from agents.search.expert import ExpertAgent
from agents.search.solver_core import CoreSolver
from agents.search.worlds import world_state
from helpers.knob_cases import CASES, case_seed
from helpers.play import obs_of
from schnapsen_env import encoding
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet

LEAD_FOLLOW = ("me_lead", "me_follow", "opp_lead", "opp_follow")  # the history planes worlds do not rebuild


def random_positions(rules: RuleSet, rng: np.random.Generator, count: int, special_p: float = 0.4):
    """Positions of random play (special actions often), each with the hand running."""
    out = []
    while len(out) < count:
        g = GameState.new_hand(rules, rng=rng)
        stop = int(rng.integers(0, 2 * rules.n_tricks))
        for _ in range(stop):
            if g.result is not None:
                break
            legal = g.legal_actions()
            special = [a for a in legal if a >= rules.n_cards and a != rules.claim_action]
            g.push(int(rng.choice(special)) if special and rng.random() < special_p else int(rng.choice(legal)))
        if g.result is None:
            out.append(g)
    return out


@pytest.mark.parametrize("case", CASES[::3], ids=lambda c: c[0] + "-" + "-".join(f"{k}={v}" for k, v in c[1].items()))
def test_expert_plays_only_legal_actions(case):
    """Hands against itself (both seats; 12 knob sets x 10 hands), a cheap budget; every action legal, every hand
    finished. sixtysix24 hands start after two random tricks: a world of its opening can take a million nodes."""
    ruleset, knobs = case
    rules = RuleSet.make(ruleset, **knobs)
    agents = [make_agent("expert", rules, seed=s, worlds=2, max_nodes=1) for s in (0, 1)]
    rng = np.random.default_rng(case_seed(case))
    for _ in range(10):
        g = GameState.new_hand(rules, rng=rng)
        while ruleset == "sixtysix24" and g.result is None and g.tricks[0] + g.tricks[1] < 2:
            g.push(int(rng.choice(g.legal_actions())))
        while g.result is None:
            a = agents[g.to_move].act(obs_of(g))
            assert g.is_legal(a), (a, g.position())
            g.step(a)


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_worlds_never_contradict_the_observation(ruleset):
    """Every sampled or enumerated world shows the observer exactly its observation (but for the history planes,
    which worlds do not rebuild), keeps every card once, pins the opponent's known cards to its hand and gives it
    the right number of cards."""
    rules = RuleSet.make(ruleset, marriage_declaration="optional", exchange_min_stock=2, close_min_stock=2)
    rng = np.random.default_rng(4)
    layout = encoding.layout(rules)
    keep = np.ones(encoding.obs_size(rules), dtype=bool)
    for name in LEAD_FOLLOW:
        keep[layout[name]] = False
    for budget in (6, 400):  # sampled and (late in the hand) enumerated
        agent = ExpertAgent(rules, seed=1, worlds=budget)
        for g in random_positions(rules, rng, 60):
            obs = obs_of(g)
            template, worlds, k = agent.sample_worlds(obs)
            opp_size = g.hands[1 - g.to_move].bit_count()
            for world in worlds:
                h = world_state(template, world, k, rules)
                np.testing.assert_array_equal(encoding.observation(h, 0)[keep], obs["observation"][keep])
                assert h.hands[1].bit_count() == opp_size
                assert h.hands[1] & g.known[1 - g.to_move] == g.known[1 - g.to_move]
                cards = [h.hands[0], h.hands[1], h.won[0], h.won[1], 1 << h.table if h.table >= 0 else 0,
                         *[1 << c for c in h.stock]]
                assert sum(m.bit_count() for m in cards) == rules.n_cards
                assert np.bitwise_or.reduce(cards) == (1 << rules.n_cards) - 1
                if g.stock:
                    assert h.stock[-1] == g.stock[-1]  # the turn-up stays under the stock


def _small_case() -> tuple[RuleSet, dict, int]:
    """A position with three face-down stock cards and no known opponent card: C(8, 5) * 3! = 336 worlds."""
    rules = RuleSet.make(marriage_declaration="optional")
    rng = np.random.default_rng(11)
    while True:
        g = GameState.new_hand(rules, rng=rng)
        while g.result is None and len(g.stock) > 4:
            legal = [a for a in g.legal_actions() if a < rules.n_cards]
            g.push(int(rng.choice(legal)))
        if g.result is None and len(g.stock) == 4 and g.table < 0 and not g.known[1 - g.to_move]:
            return rules, obs_of(g), math.comb(8, 5) * math.factorial(3)


def test_enumeration_is_complete_and_sampling_uniform():
    rules, obs, count = _small_case()
    every = ExpertAgent(rules, seed=0, worlds=count)
    template, worlds, k = every.sample_worlds(obs)
    assert every.world_setup(obs)[3] == count
    keys = {(frozenset(w[:k].tolist()), tuple(w[k:].tolist())) for w in worlds}
    assert len(worlds) == len(keys) == count
    sampler = ExpertAgent(rules, seed=5, worlds=48)
    seen = Counter()
    for _ in range(200):
        _, drawn, _ = sampler.sample_worlds(obs)
        assert len(drawn) == 48
        seen.update((frozenset(w[:k].tolist()), tuple(w[k:].tolist())) for w in drawn)
    assert set(seen) <= keys
    observed = [seen[key] for key in keys]
    assert chisquare(observed).pvalue > 0.001, observed  # seeded: passes or fails the same way every run


def test_exhausted_stock_is_played_exactly():
    """With the stock exhausted the one world is the true position: the expert's values are the solver's."""
    rules = RuleSet.make()
    rng = np.random.default_rng(2)
    checked = 0
    while checked < 15:
        g = GameState.new_hand(rules, rng=rng)
        while g.result is None and g.stock and g.closed_by < 0:
            g.push(int(rng.choice([a for a in g.legal_actions() if a != rules.close_action])))
        if g.result is not None or g.stock:
            continue
        agent = ExpertAgent(rules, seed=0)
        exact = CoreSolver(rules, close_below_root=True).action_values(g)
        assert agent.action_values(obs_of(g)) == exact
        assert agent.last_worlds == 1
        best = max(exact.values())
        assert exact[agent.act(obs_of(g))] == best
        checked += 1


def test_decision_rules():
    """"mean": best mean game points; "loss": the lowest share of lost worlds, then the best mean."""
    rules = RuleSet.make()
    g = GameState.new_hand(rules, rng=np.random.default_rng(8))
    obs = obs_of(g)
    for decision in ("mean", "loss"):
        agent = ExpertAgent(rules, seed=3, worlds=8, decision=decision)
        actions, values = ExpertAgent(rules, seed=3, worlds=8).world_values(obs)
        mean, loss = values.mean(axis=0), (values < 0).mean(axis=0)
        if decision == "mean":
            want = min(range(len(actions)), key=lambda i: (-mean[i], actions[i]))
        else:
            want = min(range(len(actions)), key=lambda i: (loss[i], -mean[i], actions[i]))
        assert agent.act(obs) == actions[want]


def test_budgets():
    rules = RuleSet.make()
    obs = obs_of(GameState.new_hand(rules, rng=np.random.default_rng(1)))
    agent = ExpertAgent(rules, seed=0, worlds=40, max_nodes=1)
    agent.act(obs)  # no exact world fits one node: every world one trick ahead, the pass that always completes
    assert (agent.last_worlds, agent.last_depth) == (40, 1)
    agent = ExpertAgent(rules, seed=0, worlds=40, max_nodes=1_000_000)
    agent.act(obs)
    assert agent.last_depth is None and 8 <= agent.last_worlds < 40  # exact worlds, chunks until the budget
    agent = ExpertAgent(rules, seed=0, worlds=5, max_nodes=None)
    agent.act(obs)
    assert agent.last_worlds == 5
    a, b = ExpertAgent(rules, seed=7, worlds=16), ExpertAgent(rules, seed=7, worlds=16)
    assert a.action_values(obs) == b.action_values(obs)  # seeded: reproducible


def test_a_move_of_a_24_card_opening_stays_within_its_node_budget():
    """``sixtysix24``'s openings, whose exact worlds cost up to tens of millions of nodes each: the move searches
    at most its budget for the exact attempt and again for the horizon (plus the one-trick pass and the unwinding),
    and its values are the solver's at the horizon reached, world by world."""
    rules = RuleSet.make("sixtysix24")
    budget = 400_000
    deepened = 0
    for seed in range(3):
        obs = obs_of(GameState.new_hand(rules, rng=np.random.default_rng(100 + seed)))
        agent = ExpertAgent(rules, seed=seed, max_nodes=budget)
        actions, values = agent.world_values(obs)
        if agent.last_depth is None:  # this opening's first chunk fitted: exact, as before
            assert agent.last_nodes < 2 * budget
            continue
        template, worlds, k = ExpertAgent(rules, seed=seed).sample_worlds(obs)
        solver = CoreSolver(rules, close_below_root=True)
        one_trick = solver.world_values(template, worlds, k, actions, depth=1)
        assert agent.last_nodes <= 2 * budget + solver.nodes + 100
        assert agent.last_worlds == len(worlds) and 1 <= agent.last_depth < 12
        want = solver.world_values(template, worlds, k, actions, depth=agent.last_depth)
        assert np.array_equal(values, want)
        assert one_trick.shape == values.shape
        deepened += 1
    assert deepened >= 2  # most 24-card openings need the horizon at this budget


@pytest.mark.parametrize("bad", [dict(worlds=0), dict(worlds=2.5), dict(max_nodes=0), dict(decision="best"),
                                 dict(max_time=0), dict(max_time=float("nan"))])
def test_bad_options_are_refused(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        ExpertAgent(RuleSet.make(), **bad)
