"""``policy-rollout`` (agents.learned.rollouts): IIMC with the learned policy's playouts and solver leaves.

Each playout is the hand a lone greedy policy plays for both seats from the world, handed to the exact solver once
the stock is exhausted (R7); with nothing hidden the values are the solver's; two hands the player sees alike get
the same values (R27); bad options are refused."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.learned.data import SEARCH_POLICIES
from agents.learned.rollouts import PolicyRolloutAgent
from agents.search.solver_core import CoreSolver
from helpers.play import obs_of, redeal
from schnapsen_env.rules import GameState
from schnapsen_env.rules_core import apply_all
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.state_layout import from_game_state


def _positions(rules: RuleSet, seed: int, n: int, want):
    """``n`` positions of seeded random play where seat 0 is to move and ``want(g)`` holds."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        g = GameState.new_hand(rules, rng)
        while g.result is None:
            if g.to_move == 0 and want(g) and len(g.legal_actions()) > 1:
                out.append(g.copy())
                break
            legal = g.legal_actions()
            g.push(legal[int(rng.integers(len(legal)))])
    return out


def _readable_playout(g: GameState, action: int, policy, solver: CoreSolver) -> float:
    """The playout of the module docstring on ``GameState``: the action, then the greedy policy for both seats
    while a card is hidden (an open stock with cards, or a closed one), then the solver; game points for seat 0."""
    s = g.copy()
    s.push(action)
    while s.result is None and (s.stock or s.closed_by >= 0):
        s.push(policy.act(obs_of(s)))
    if s.result is not None:
        r = s.result
        return 0.0 if r.winner is None else float(r.game_points if r.winner == 0 else -r.game_points)
    value, _ = solver.solve(s)
    return value if s.to_move == 0 else -value


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_a_playout_is_the_greedy_policys_hand_then_the_solver(ruleset):
    """The compiled playout of every legal action from true positions (open and closed stocks) equals the readable
    one: the greedy policy (each seat from its own observation) to the exhausted stock, then the exact solver."""
    rules = RuleSet.make(ruleset)
    agent = PolicyRolloutAgent(rules, seed=0)
    policy = make_agent(SEARCH_POLICIES[ruleset], rules)
    solver = CoreSolver(rules, close_below_root=True)
    positions = _positions(rules, 5, 10, lambda g: bool(g.stock)) \
        + _positions(rules, 6, 4, lambda g: g.closed_by >= 0 and bool(g.stock))
    for g in positions:
        actions = g.legal_actions()
        states = np.stack([from_game_state(g)] * len(actions))
        apply_all(states, agent._R, np.array(actions, dtype=np.int64))
        agent._play_out(states)
        got = agent._values(states)
        want = [_readable_playout(g, a, policy, solver) for a in actions]
        assert np.allclose(got, want), (g, actions, got, want)


def test_with_nothing_hidden_the_values_are_the_solvers():
    """Stock exhausted (R7): one world, the true position, no playout: every action's value is the exact one."""
    rules = RuleSet.make("schnapsen20")
    agent = PolicyRolloutAgent(rules, seed=0)
    solver = CoreSolver(rules, close_below_root=True)
    for g in _positions(rules, 9, 8, lambda g: not g.stock):
        values = agent.action_values(obs_of(g))
        exact = solver.action_values(g)
        assert values.keys() == exact.keys()
        assert np.allclose([values[a] for a in exact], list(exact.values()))
        assert agent.last_plies == 0


def _hidden_swap(g: GameState, rng: np.random.Generator) -> GameState | None:
    """``g`` dealt with one card of the opponent's hand and one face-down stock card swapped and its actions replayed;
    None where that is not a legal replay or changes nothing."""
    order = list(g.deal[0])
    opp = [i for i, c in enumerate(order) if g.hands[1] >> c & 1]
    down = [i for i, c in enumerate(order) if c in g.stock[:-1]]  # the turn-up (last) is seen
    if not opp or not down:
        return None
    i, j = int(rng.choice(opp)), int(rng.choice(down))
    order[i], order[j] = order[j], order[i]
    return redeal(g, order)


@pytest.mark.parametrize("ruleset", ["schnapsen20", "schnapsen10"])
def test_hands_the_player_sees_alike_get_the_same_values(ruleset):
    """R27: the true position with a card of the opponent's hand and a face-down stock card swapped shows seat 0 the
    same observation and, to the same seed, gets the same values (the values are reproducible)."""
    rules = RuleSet.make(ruleset)
    rng = np.random.default_rng(12)
    compared = 0
    for g in _positions(rules, 13, 12, lambda g: len(g.stock) > 1):
        other = _hidden_swap(g, rng)
        if other is None or not np.array_equal(obs_of(g)["observation"], obs_of(other)["observation"]):
            continue
        assert other.hands[1] != g.hands[1]
        a = PolicyRolloutAgent(rules, seed=4, worlds=6).action_values(obs_of(g))
        b = PolicyRolloutAgent(rules, seed=4, worlds=6).action_values(obs_of(other))
        assert a == b
        compared += 1
    assert compared >= 6


@pytest.mark.parametrize("options, match", [
    (dict(worlds=0), "worlds must be an int from 1"),
    (dict(policy="heuristic"), "policy must be a policy network"),
    (dict(policy=3), "policy must be a shipped policy's name or a .pt file, got 3"),
    (dict(policy="trained-sixtysix24"), "sixtysix24"),
    (dict(inference="no-such-model"), "unknown agent"),
])
def test_bad_options_are_refused(options, match):
    with pytest.raises(ValueError, match=match):
        PolicyRolloutAgent("schnapsen20", seed=0, **options)
