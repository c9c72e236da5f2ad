"""``policy+expert`` (agents.learned.hybrid): the policy moves while the stock is large, the expert once it is down to
``search_stock`` cards, closed (R18) or exhausted (R7), decided from the observation alone; each half's move is the one that half makes on its own;
bad options and other rulesets are refused."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.learned.data import SEARCH_POLICIES, SEARCH_POLICY
from agents.learned.hybrid import SEARCH_STOCK, ExpertPlusAgent, PolicySearchAgent
from agents.search.expert import ExpertAgent
from helpers.play import obs_of
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet


@pytest.mark.parametrize("knobs, search_stock", [({}, 0), (dict(close_min_stock=2, exchange_min_stock=2), 0),
                                                 (dict(must_head=False), 0), ({}, 4)])
def test_each_half_moves_in_its_phase_and_plays_as_it_would_alone(knobs, search_stock):
    """The hybrid plays seat 0 against the heuristic in seat 1, 12 hands. At each of its decisions the truth of
    the state (stock closed, exhausted or down to ``search_stock`` cards) picks the half, and the hybrid's move
    equals a lone greedy policy's (open stock) or a lone expert's with the same seed and worlds, fed the same
    observations in the same order."""
    rules = RuleSet.make("schnapsen20", **knobs)
    hybrid = PolicySearchAgent(rules, seed=3, worlds=4, search_stock=search_stock)
    policy = make_agent(SEARCH_POLICY, rules, seed=3)
    expert = ExpertAgent(rules, seed=3, worlds=4)
    other = make_agent("heuristic", rules, seed=1)
    rng = np.random.default_rng(7)
    seen = {"policy": 0, "expert": 0}
    closed_seen = 0
    for _ in range(12):
        g = GameState.new_hand(rules, rng=rng)
        while g.result is None:
            obs = obs_of(g)
            if g.to_move == 1:
                g.push(other.act(obs))
                continue
            late = g.closed_by >= 0 or len(g.stock) <= search_stock
            closed_seen += g.closed_by >= 0 and len(g.stock) > 0
            assert hybrid.searches(obs) is late
            action = hybrid.act(obs)
            assert action == (expert if late else policy).act(obs)
            seen["expert" if late else "policy"] += 1
            g.push(action)
    assert hybrid.decisions == seen and min(seen.values()) > 20
    assert closed_seen > 0  # a closed stock with cards left was met, not only the exhausted one


def test_registered_and_defaults_to_the_search_policy():
    agent = make_agent("policy+expert", "schnapsen20", seed=0)
    assert isinstance(agent, PolicySearchAgent) and agent.policy_name == SEARCH_POLICY
    assert agent.expert.worlds == ExpertAgent("schnapsen20").worlds  # None: the expert's own default
    assert agent.search_stock == SEARCH_STOCK == 6  # the arena's choice (agents/learned/hybrid.py)
    # schnapsen10 deals a stock of 2, within the default's reach: the policy plays while it is open (the measured
    # choice there), an explicit value is checked
    assert PolicySearchAgent("schnapsen10", seed=0, policy="heuristic").search_stock == 0
    assert make_agent("expert+", "schnapsen10", seed=0).search_stock == 0
    assert make_agent("expert+", "sixtysix24", seed=0).search_stock == SEARCH_STOCK
    with pytest.raises(ValueError, match="search_stock must be an int from 0 to 2"):
        PolicySearchAgent("schnapsen10", seed=0, policy="heuristic", search_stock=6)


@pytest.mark.parametrize("options, match", [
    (dict(policy="no-such-policy"), "unknown agent"),
    (dict(policy="missing/policy.pt"), "no checkpoint file"),
    (dict(policy=3), "policy must be a shipped policy's name or a .pt file, got 3"),
    (dict(worlds=0), "worlds must be an int from 1"),
    (dict(search_stock=-1), "search_stock must be an int from 0 to 10 .* or None, got -1"),
    (dict(search_stock=11), "search_stock must be an int from 0 to 10"),
    (dict(search_stock=True), "search_stock must be an int"),
    (dict(search_stock=2.0), "search_stock must be an int"),
])
def test_bad_options_are_refused(options, match):
    with pytest.raises(ValueError, match=match):
        PolicySearchAgent("schnapsen20", seed=0, **options)


def test_another_ruleset_is_refused_and_bad_observations_named():
    with pytest.raises(ValueError, match="plays schnapsen20, not sixtysix24"):
        make_agent("policy+expert", "sixtysix24")
    agent = PolicySearchAgent("schnapsen20", seed=0)
    with pytest.raises(ValueError, match="'observation' entry"):
        agent.act({"action_mask": np.ones(agent.rules.n_actions, np.int8)})
    with pytest.raises(ValueError, match="shape"):
        agent.act({"observation": np.zeros(3, np.float32), "action_mask": np.ones(agent.rules.n_actions, np.int8)})
    with pytest.raises(ValueError, match="no legal action"):
        agent.act({"observation": np.zeros(3, np.float32), "action_mask": np.zeros(agent.rules.n_actions, np.int8)})
    assert agent.decisions == {"policy": 0, "expert": 0}


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_expert_plus_plays_every_ruleset_with_its_policy_and_a_whole_history(ruleset):
    """``expert+``: the ruleset's search policy (``SEARCH_POLICIES``) opens and models the opponent; at each of the expert's
    decisions its history holds every decision of the hand, the policy's too, and reads as a hand (a replay)."""
    rules = RuleSet.make(ruleset)
    agent = make_agent("expert+", rules, seed=2, worlds=4)
    assert isinstance(agent, ExpertPlusAgent) and agent.policy_name == SEARCH_POLICIES[ruleset]
    assert agent.expert.inference is not None
    other = make_agent("heuristic", rules, seed=1)
    rng = np.random.default_rng(3)
    replays = []  # what the expert's inference is handed at each of its searches
    weights = agent.expert.inference.weights
    agent.expert.inference.weights = lambda replay, *args: replays.append(replay) or weights(replay, *args)
    checked = 0
    for _ in range(4):
        g = GameState.new_hand(rules, rng=rng)
        agent.reset()
        mine = 0
        while g.result is None:
            obs = obs_of(g)
            if g.to_move == 1:
                g.push(other.act(obs))
                continue
            searched = len(replays)
            g.push(agent.act(obs))
            mine += 1
            assert len(agent.expert.history.actions) == mine
            if len(replays) > searched:
                assert replays[-1] is not None and len(replays[-1].checks) == mine
                checked += 1
    assert checked > 4
    with pytest.raises(ValueError, match="unknown agent"):
        ExpertPlusAgent("schnapsen20", inference="no-such-model")
