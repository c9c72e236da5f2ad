"""Postponed perfect-information reasoning (``expert:postpone=1``, agents/search/postponed.py): legal play in every
ruleset through a spec string, PIMC's exact values with one world, values never above PIMC's (postponing only
constrains the player) and strictly below somewhere, nothing hidden read (RULES.md R27), and its option checks."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.evaluation.arena import play_match
from agents.search.expert import ExpertAgent
from agents.search.postponed import postponed_values
from agents.search.solver_core import CoreSolver
from helpers.play import obs_of
from schnapsen_env import encoding
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet


def _positions(rules: RuleSet, rng: np.random.Generator, count: int, min_tricks: int) -> list[GameState]:
    """Positions of random card play after at least ``min_tricks`` tricks (cheap to solve), the hand running."""
    out = []
    while len(out) < count:
        g = GameState.new_hand(rules, rng=rng)
        stop = int(rng.integers(2 * min_tricks, 2 * rules.n_tricks))
        for _ in range(stop):
            if g.result is not None:
                break
            g.push(int(rng.choice(g.legal_actions())))
        if g.result is None and len(g.legal_actions()) > 1:
            out.append(g)
    return out


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_postponed_expert_plays_legal_actions_through_a_spec(ruleset):
    """Whole hands in the arena (which refuses an illegal action) against random play, the option given in a spec
    string; a small budget in sixtysix24, where most early moves fall back to PIMC."""
    nodes = 30_000 if ruleset == "sixtysix24" else 200_000
    result = play_match(f"expert:postpone=1,worlds=6,max_nodes={nodes}", "random", n_deals=3, ruleset=ruleset,
                        seed=5, workers=1, progress=False)
    assert np.isfinite(result.mean)


@pytest.mark.parametrize("ruleset", ["schnapsen20", "schnapsen10"])
def test_one_world_gives_pimc_exact_values(ruleset):
    """With the true world alone nothing is hidden, so nothing is fused: the postponed values are the solver's."""
    rules = RuleSet.make(ruleset)
    rng = np.random.default_rng(3)
    agent = ExpertAgent(rules, seed=0)
    solver = CoreSolver(rules, close_below_root=True)
    for g in _positions(rules, rng, 12, 2):
        template, worlds, k = agent.sample_worlds(obs_of(g))
        world = worlds[:1]
        actions = np.array(g.legal_actions(), dtype=np.int64)
        pimc = solver.world_values(template, world, k, actions)
        values, nodes = postponed_values(solver, template, world, k, np.ones(1), actions)
        np.testing.assert_array_equal(values, pimc)


def test_postponed_values_are_never_above_pimc():
    """Per world and root action, postponing (one action per observation at the player's next decision) never
    gives the player more than PIMC, and it gives less somewhere (strategy fusion removed)."""
    rules = RuleSet.make("schnapsen20")
    rng = np.random.default_rng(8)
    agent = ExpertAgent(rules, seed=2, worlds=6)
    solver = CoreSolver(rules, close_below_root=True)
    lower = 0
    for g in _positions(rules, rng, 25, 2):
        template, worlds, k = agent.sample_worlds(obs_of(g))
        actions = np.array(g.legal_actions(), dtype=np.int64)
        pimc = solver.world_values(template, worlds, k, actions)
        values, _ = postponed_values(solver, template, worlds, k, rng.uniform(0.5, 2.0, len(worlds)), actions)
        assert (values <= pimc + 1e-9).all()
        lower += bool((values < pimc - 1e-9).any())
    assert lower > 0


def test_a_spent_budget_falls_back_to_pimc():
    """A walk past ``max_nodes`` returns no values, and the agent's move is then plain PIMC's."""
    rules = RuleSet.make("schnapsen20")
    g = _positions(rules, np.random.default_rng(4), 1, 1)[0]
    obs = obs_of(g)
    agent = ExpertAgent(rules, seed=0, worlds=6)
    template, worlds, k = agent.sample_worlds(obs)
    actions = np.array(g.legal_actions(), dtype=np.int64)
    values, nodes = postponed_values(CoreSolver(rules, close_below_root=True), template, worlds, k,
                                     np.ones(len(worlds)), actions, max_nodes=1)
    assert values is None and nodes >= 1
    plain = ExpertAgent(rules, seed=0, worlds=6, max_nodes=1000)
    starved = ExpertAgent(rules, seed=0, worlds=6, max_nodes=1000, postpone=1)
    assert plain.action_values(obs) == starved.action_values(obs)
    assert starved.last_nodes > plain.last_nodes  # the walk's nodes are counted too


def _swap_hidden(g: GameState, rng: np.random.Generator) -> GameState | None:
    """``g`` with one card of the opponent's hidden hand swapped with a face-down stock card (never the turn-up):
    the player to move sees nothing different."""
    me, opp = g.to_move, 1 - g.to_move
    hand = [c for c in range(g.rules.n_cards) if g.hands[opp] >> c & 1 and not g.known[opp] >> c & 1]
    down = list(g.stock[:-1])
    if not hand or not down or g.closed_by >= 0:
        return None
    a, b = int(rng.choice(hand)), int(rng.choice(down))
    other = g.copy()
    other.hands[opp] = other.hands[opp] & ~(1 << a) | (1 << b)
    other.stock = tuple(a if c == b else c for c in other.stock)
    assert np.array_equal(encoding.observation(other, me), encoding.observation(g, me))
    return other


def test_reads_nothing_hidden():
    """R27: two positions that differ only in cards the player never saw (the opponent's hand, the stock order)
    give the same values and the same action, to the same seed."""
    rules = RuleSet.make("schnapsen20")
    rng = np.random.default_rng(12)
    checked = 0
    for g in _positions(rules, rng, 12, 2):
        other = _swap_hidden(g, rng)
        if other is None:
            continue
        a, b = (ExpertAgent(rules, seed=7, worlds=4, postpone=1) for _ in range(2))
        assert a.action_values(obs_of(g)) == b.action_values(obs_of(other))
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize("bad", [2, -1, True, 0.5])
def test_bad_postpone_is_refused(bad):
    with pytest.raises(ValueError, match="postpone must be an int from 0 to 1"):
        make_agent("expert", "schnapsen20", postpone=bad)
