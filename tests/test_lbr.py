"""The local best response (agents/game_theory/lbr.py): on ``schnapsen10`` its value against a target equals the exact
best-response value where its assumptions hold (the target plays perfectly once the cards are known) and never
exceeds it; its drawn worlds (the budget of the larger decks) estimate the exact posterior; it plays only legal
actions on every ruleset; the registered agent ``lbr`` models its target as the target plays."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.game_theory import exact
from agents.game_theory.lbr import DEFAULT_WORLDS, LocalBestResponse, play_hand, target_policy
from agents.scripted.heuristic import HeuristicAgent
from agents.search.expert import ExpertAgent
from agents.search.pimc import PIMCAgent
from helpers.knob_cases import CASES, case_seed
from schnapsen_env import encoding
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet

RULES = RuleSet.make("schnapsen10")


def _deals_seen_by(seat: int, hand: set[int], turn_up: int) -> list[np.ndarray]:
    """Every deal (seat 1 dealing, as the exact tree) in which ``seat`` holds ``hand`` and ``turn_up`` lies: the
    responder's whole information at its first decision, so its best response on these deals is the whole game's."""
    cards = (lambda o: {*o[0:3], o[7]}) if seat == 0 else (lambda o: {*o[3:6], o[8]})
    return [o for o in exact.deals(RULES) if cards(o.tolist()) == hand and o[6] == turn_up]


def _lbr_value(target, orders, seat: int, rng: np.random.Generator, **options) -> float:
    """The responder's mean game points in ``seat`` over ``orders`` (seat 1 dealing), the target's actions drawn
    from its probabilities (deterministic targets: exact)."""
    lbr = LocalBestResponse(RULES, target, seed=0, **options)
    total = sum(play_hand(lbr, target, order, seat, rng) for order in orders)  # raises on an illegal action
    return total / len(orders)


@pytest.mark.parametrize("agent, seat, hand, turn_up", [
    ("expert", 0, {0, 4, 5, 9}, 8),  # here and for pimc below the solver alone, without the walk over the
    ("pimc", 0, {1, 3, 5, 7}, 6),  # target's follow, falls short of the best response (1.0 against 1.2 and 1.6)
    ("expert", 1, {1, 3, 5, 9}, 7),
])
def test_lbr_equals_the_exact_best_response_against_a_target_that_plays_known_cards_perfectly(agent, seat, hand,
                                                                                             turn_up):
    orders = _deals_seen_by(seat, hand, turn_up)
    assert len(orders) == 5
    target = exact.search_agent_policy((ExpertAgent if agent == "expert" else PIMCAgent)(RULES, seed=0))
    best = exact.Tree(RULES, orders).nash_conv(target, revealed="minimax")["best_response"][seat]
    assert _lbr_value(target, orders, seat, np.random.default_rng(0)) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("seat, hand, turn_up, short", [(0, {0, 2, 6, 8}, 3, True), (1, {1, 3, 5, 9}, 7, False)])
def test_lbr_never_exceeds_the_exact_best_response(seat, hand, turn_up, short):
    """Against the heuristic, which does not play the known cards perfectly, the solver's values
    (``revealed="minimax"``) are not the target's: the responder's value stays below the best response's; valuing
    the revealed positions by the heuristic's own play (the default for a batched target) makes it the best
    response itself (``short``: an information set where the solver's values fall short)."""
    orders = _deals_seen_by(seat, hand, turn_up)
    target = exact.agent_policy(HeuristicAgent(RULES))
    best = exact.Tree(RULES, orders).nash_conv(target)["best_response"][seat]
    by_solver = _lbr_value(target, orders, seat, np.random.default_rng(0), revealed="minimax")
    assert by_solver < best - 0.1 if short else by_solver <= best + 1e-9
    assert _lbr_value(target, orders, seat, np.random.default_rng(0)) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("seat, hand, turn_up", [(0, {0, 2, 6, 8}, 3), (1, {1, 3, 5, 9}, 7)])
def test_lbr_is_the_best_response_to_a_greedy_policy(seat, hand, turn_up):
    """Against the shipped schnapsen10 policy as it plays (its argmax), the responder with its defaults (every
    world, every hidden decision walked, the revealed positions valued by the policy's own play) is a best
    response: its value on the deals of an information set equals the exact best response's."""
    orders = _deals_seen_by(seat, hand, turn_up)
    target = target_policy("trained-schnapsen10", RULES)
    best = exact.Tree(RULES, orders).nash_conv(target)["best_response"][seat]
    assert _lbr_value(target, orders, seat, np.random.default_rng(0)) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] == "schnapsen10"], ids=lambda c: str(sorted(c[1].items())))
@pytest.mark.slow
def test_lbr_plays_only_legal_actions(case):
    """Twenty hands a knob set, hundreds over the knob sets, against the uniform policy (every action possible, so every kind of
    history): GameState.step refuses any illegal action."""
    rules = RuleSet.make("schnapsen10", **case[1])
    lbr = LocalBestResponse(rules, exact.uniform_policy, seed=1)
    for _ in _hands_against_random(lbr, rules, np.random.default_rng(case_seed(case)), 20):
        pass


def _hands_against_random(lbr: LocalBestResponse, rules: RuleSet, rng: np.random.Generator, hands: int):
    """Play ``hands`` hands of ``lbr`` in a random seat against seeded uniformly random legal actions, yielding after
    each (GameState.step refuses an illegal action)."""
    for _ in range(hands):
        s = GameState.new_hand(rules, rng)
        seat = int(rng.integers(2))
        lbr.reset()
        while s.result is None:
            obs = {"observation": encoding.observation(s, s.to_move), "action_mask": s.action_mask()}
            s.step(lbr.act(obs) if s.to_move == seat else int(rng.choice(s.legal_actions())))
        yield


def _stochastic_target(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A stochastic policy that prefers higher action ids (weights 1, 2, 3, ... over the legal ones): every world
    keeps a positive, unequal likelihood."""
    w = masks.astype(np.float64) * (1.0 + np.arange(masks.shape[1]))
    return w / w.sum(axis=1, keepdims=True)


def _world_key(s: GameState) -> tuple:
    return s.hands[1], tuple(s.stock)


@pytest.mark.parametrize("seed", [3, 4])
def test_drawn_worlds_estimate_the_exact_posterior(seed):
    """At the responder's follow of trick 1 in schnapsen10 (the target led: one decision of evidence), the posterior
    of drawn worlds (worlds=64, many decisions' worth) matches the enumerated one's within a total-variation
    distance of 0.04: uniform draws weighed by the likelihood are importance sampling of the same posterior."""
    rng = np.random.default_rng(seed)
    s = GameState.from_deck(RULES, [RULES.deck.codes[int(c)] for c in rng.permutation(RULES.n_cards)], 0)
    exact_lbr = LocalBestResponse(RULES, _stochastic_target, seed=0)
    drawn_lbr = LocalBestResponse(RULES, _stochastic_target, seed=1, worlds=64)
    while s.to_move != 0 or s.table is None:  # the target (seat 1, not dealing) leads trick 1, the responder follows
        assert s.to_move == 1
        s.step(int(rng.choice(s.legal_actions())))
    obs = encoding.observation(s, 0)
    for lbr in (exact_lbr, drawn_lbr):
        lbr.history.observe(obs)
    states, weights = exact_lbr.posterior(obs)
    exact_p: dict[tuple, float] = {}
    for st, w in zip(states, weights):
        exact_p[_world_key(st)] = exact_p.get(_world_key(st), 0.0) + w / weights.sum()
    assert len(exact_p) >= 4 and max(exact_p.values()) < 0.5  # a posterior with some spread to estimate
    got: dict[tuple, float] = {}
    for _ in range(200):
        states, weights = drawn_lbr.posterior(obs)
        assert len(states) == 64
        for st, w in zip(states, weights):
            got[_world_key(st)] = got.get(_world_key(st), 0.0) + w
    assert set(got) <= set(exact_p)  # no drawn world contradicts the history
    total = sum(got.values())
    tv = 0.5 * sum(abs(exact_p[k] - got.get(k, 0.0) / total) for k in exact_p)
    assert tv < 0.04


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24"])
@pytest.mark.slow
def test_lbr_with_drawn_worlds_plays_only_legal_actions(ruleset):
    """Six hands a knob set (over a hundred a ruleset) against the uniform policy, every world budget at its
    smallest (sixtysix24 with a one-trick solver horizon, for time): GameState.step refuses any illegal action;
    each decision with hidden cards drew its worlds, most of them weighed by the target's likelihood."""
    fallbacks = decisions = 0
    for name, knobs in (c for c in CASES if c[0] == ruleset):
        rules = RuleSet.make(name, **knobs)
        lbr = LocalBestResponse(rules, exact.uniform_policy, seed=1, worlds=2,
                                depth=1 if ruleset == "sixtysix24" else None)
        for _ in _hands_against_random(lbr, rules, np.random.default_rng(case_seed((name, knobs))), 6):
            assert all(accepted <= 2 <= drawn for drawn, accepted in lbr.draws)
            fallbacks += sum(lbr.fallbacks.values())
            decisions += len(lbr.draws)
    assert decisions > 300 and fallbacks < decisions / 10  # the target's likelihood weighs most decisions


def test_registered_lbr_models_a_greedy_policy_by_its_argmax_and_plays_the_arena():
    """``lbr:target=trained`` on schnapsen20: the target model is one-hot on the action the shipped policy plays;
    the defaults are the larger decks' budget; two arena deals play through."""
    from agents.evaluation.arena import play_match

    rules = RuleSet.make("schnapsen20")
    lbr = make_agent("lbr", rules, seed=0, target="trained")
    assert (lbr.worlds, lbr.lookahead) == (DEFAULT_WORLDS, 0)
    agent = make_agent("trained", rules, seed=0)
    rng = np.random.default_rng(0)
    rows, masks, played = [], [], []
    for _ in range(10):
        s = GameState.new_hand(rules, rng)
        while s.result is None:
            obs = {"observation": encoding.observation(s, s.to_move), "action_mask": s.action_mask()}
            rows.append(obs["observation"])
            masks.append(obs["action_mask"])
            played.append(agent.act(obs))
            s.step(played[-1])
    probs = target_policy("trained", rules)(np.stack(rows), np.stack(masks))
    assert np.array_equal(probs.argmax(axis=1), played) and np.array_equal(probs.max(axis=1), np.ones(len(rows)))
    result = play_match("lbr:target=trained,worlds=4", "trained", n_deals=2, ruleset="schnapsen20", seed=5)
    assert result.hands == 4


def test_lbr_reads_only_its_own_observations():
    """R27: two schnapsen20 deals that differ only in the cards hidden from the responder (the target's hand and the
    face-down stock, swapped) give it the same observation at its first decision, and the same action with the same
    seed, at every world budget."""
    rules = RuleSet.make("schnapsen20")
    rng = np.random.default_rng(11)
    for worlds in (1, 8):
        order = rng.permutation(rules.n_cards)
        swapped = order.copy()
        hidden = [3, 4, 5, 9, 10, *range(11, 20)]  # seat 1's dealt cards (dealer 1) and the face-down stock
        swapped[hidden] = rng.permutation(order[hidden])
        actions = []
        for deck in (order, swapped):
            s = GameState.from_deck(rules, [rules.deck.codes[int(c)] for c in deck], 1)
            obs = {"observation": encoding.observation(s, 0), "action_mask": s.action_mask()}
            actions.append((obs["observation"].tobytes(), LocalBestResponse(rules, _stochastic_target, seed=2,
                                                                           worlds=worlds).act(obs)))
        assert actions[0] == actions[1]


def test_revealed_positions_are_valued_by_the_targets_play_where_it_is_cheap():
    """The default: a batched target's own play on 5-card hands; the solver for a search agent (asked one
    observation at a time, and perfect once every card is known) and on sixtysix24 (subtrees too large)."""
    from agents.specs import build, resolve_agent

    assert LocalBestResponse(RULES, exact.uniform_policy).revealed == "policy"
    assert LocalBestResponse(RULES, exact.search_agent_policy(ExpertAgent(RULES, seed=0))).revealed == "minimax"
    assert make_agent("lbr", "schnapsen20", target="trained").revealed == "policy"
    assert make_agent("lbr", "schnapsen20", target="expert").revealed == "minimax"
    assert make_agent("lbr", "sixtysix24", target="trained-sixtysix24").revealed == "minimax"
    label, factory = resolve_agent("lbr:target=trained,revealed=minimax", "schnapsen20")
    assert build(factory, label, seed=0).revealed == "minimax"


def test_bad_arguments():
    with pytest.raises(ValueError, match="needs its target"):
        LocalBestResponse(RuleSet.make("schnapsen20"))
    with pytest.raises(ValueError, match="needs its target"):
        make_agent("lbr", RULES)
    with pytest.raises(ValueError, match="unknown agent|not a registered|nosuch"):
        LocalBestResponse(RULES, "nosuch")
    with pytest.raises(ValueError, match="lookahead"):
        LocalBestResponse(RULES, exact.uniform_policy, lookahead=-1)
    with pytest.raises(ValueError, match="worlds"):
        LocalBestResponse(RULES, exact.uniform_policy, worlds=0)
    with pytest.raises(ValueError, match="max_draws"):
        LocalBestResponse(RULES, exact.uniform_policy, max_draws=0)
    with pytest.raises(ValueError, match="depth"):
        LocalBestResponse(RULES, exact.uniform_policy, depth=0)
    with pytest.raises(ValueError, match="revealed must be 'policy' or 'minimax'"):
        LocalBestResponse(RULES, exact.uniform_policy, revealed="exact")
