"""The local best response (agents/search/lbr.py): on ``schnapsen10`` its value against a target equals the exact
best-response value where its assumptions hold (the target plays perfectly once the cards are known) and never
exceeds it; it plays only legal actions."""

from __future__ import annotations

import numpy as np
import pytest

from agents.game_theory import exact
from agents.scripted.heuristic import HeuristicAgent
from agents.search.expert import ExpertAgent
from agents.search.lbr import LocalBestResponse, play_hand
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


def _lbr_value(target, orders, seat: int, rng: np.random.Generator) -> float:
    """The responder's mean game points in ``seat`` over ``orders`` (seat 1 dealing), the target's actions drawn
    from its probabilities (deterministic targets: exact)."""
    lbr = LocalBestResponse(RULES, target, seed=0)
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


@pytest.mark.parametrize("seat, hand, turn_up", [(0, {0, 2, 6, 8}, 3), (1, {1, 3, 5, 9}, 7)])
def test_lbr_never_exceeds_the_exact_best_response(seat, hand, turn_up):
    """Against the heuristic, which does not play the known cards perfectly, the solver's values are not the
    target's: the responder's value stays at or below the best response's."""
    orders = _deals_seen_by(seat, hand, turn_up)
    target = exact.agent_policy(HeuristicAgent(RULES))
    best = exact.Tree(RULES, orders).nash_conv(target)["best_response"][seat]
    assert _lbr_value(target, orders, seat, np.random.default_rng(0)) <= best + 1e-9


@pytest.mark.parametrize("case", [c for c in CASES if c[0] == "schnapsen10"], ids=lambda c: str(sorted(c[1].items())))
def test_lbr_plays_only_legal_actions(case):
    """Twenty hands a knob set, hundreds over the knob sets, against the uniform policy (every action possible, so every kind of
    history): GameState.step refuses any illegal action."""
    rules = RuleSet.make("schnapsen10", **case[1])
    rng = np.random.default_rng(case_seed(case))
    lbr = LocalBestResponse(rules, exact.uniform_policy, seed=1)
    for _ in range(20):
        s = GameState.new_hand(rules, rng)
        seat = int(rng.integers(2))
        lbr.reset()
        while s.result is None:
            obs = {"observation": encoding.observation(s, s.to_move), "action_mask": s.action_mask()}
            a = lbr.act(obs) if s.to_move == seat else int(rng.choice(s.legal_actions()))
            s.step(a)


def test_bad_arguments():
    with pytest.raises(ValueError, match="schnapsen10 only"):
        LocalBestResponse(RuleSet.make("schnapsen20"), exact.uniform_policy)
    with pytest.raises(ValueError, match="target"):
        LocalBestResponse(RULES, "expert")
    with pytest.raises(ValueError, match="lookahead"):
        LocalBestResponse(RULES, exact.uniform_policy, lookahead=-1)
