"""agents.exact: the schnapsen10 tree walk against a walk of the reference engine, and its deals."""

from __future__ import annotations

import numpy as np
import pytest

from agents import exact
from schnapsen_env import core
from schnapsen_env.rules import GameState
from schnapsen_env.encoding import obs_size
from schnapsen_env.ruleset import RuleSet

RULES = RuleSet.make("schnapsen10")


def _reference_count(g: GameState) -> tuple[int, int, int]:
    """(nodes, decisions, terminals) below ``g`` by the reference engine, recursively."""
    if g.result is not None:
        return 1, 0, 1
    nodes, decisions, terminals = 1, 1, 0
    for a in g.legal_actions():
        child = g.copy()
        child.push(a)
        n, d, t = _reference_count(child)
        nodes, decisions, terminals = nodes + n, decisions + d, terminals + t
    return nodes, decisions, terminals


def test_deals_are_every_split_once():
    seen = set()
    for order in exact.deals(RULES):
        assert sorted(order.tolist()) == list(range(10))
        g = GameState._deal(RULES, order.tolist(), 1)
        seen.add((g.hands[0], g.hands[1], g.stock))
    assert len(seen) == 6300 == 210 * 15 * 2


@pytest.mark.parametrize("knobs", [{}, {"marriage_declaration": "optional", "false_claim": "mirror"},
                                   {"claim_mode": "auto", "closed_hand_end": "must_claim"}])
def test_compiled_walk_counts_what_the_reference_engine_walks(knobs):
    rules = RuleSet.make("schnapsen10", **knobs)
    R = core.rule_table(rules)
    stack = np.empty((exact._MAX_DEPTH + 1, core.STATE_SIZE), dtype=np.int64)
    legal = np.empty(exact._MAX_DEPTH + 1, dtype=np.int64)
    state = np.empty(core.STATE_SIZE, dtype=np.int64)
    for k, order in enumerate(exact.deals(rules)):
        if k % 1500 != 7:  # a handful of deals spread over the enumeration
            continue
        core.deal(state, R, order, 1)
        got = exact._walk(state, R, stack, legal)
        assert got == _reference_count(GameState._deal(rules, order.tolist(), 1)), order


def test_schnapsen10_tree_size():
    """The figure in RULES.md section 3a and the README."""
    assert exact.tree_size(RULES) == {"deals": 6300, "nodes": 72_529_808, "decisions": 48_199_680,
                                      "terminals": 24_330_128}


def test_other_rulesets_are_refused():
    with pytest.raises(ValueError, match="exact tree walks need ruleset 'schnapsen10'"):
        exact.tree_size(RuleSet.make("schnapsen20"))
    with pytest.raises(ValueError, match="dealer must be seat 0 or 1"):
        exact.tree_size(RULES, dealer=2)


# ------------------------------------------------------------------------------------------------ exploitability
HAS_OPENSPIEL = True
try:
    import pyspiel  # noqa: F401
except ImportError:  # pragma: no cover - the openspiel extra is installed by the README's commands
    HAS_OPENSPIEL = False


def _restricted_openspiel_game(rules: RuleSet, orders: list[np.ndarray]):
    """The OpenSpiel game ``python_schnapsen`` (schnapsen_env.openspiel) with its chance events restricted to seat
    1 dealing one of ``orders`` (uniform): the same game as ``exact.Tree(rules, orders)``."""
    from schnapsen_env import openspiel as sos

    allowed = [tuple(o.tolist()) for o in orders]

    class State(sos.SchnapsenState):
        def chance_outcomes(self):
            h = self._hand
            if h.dealer is None:
                return [(1, 1.0)]
            prefix = tuple(h.deck)
            nxt = [o[len(prefix)] for o in allowed if o[:len(prefix)] == prefix]
            return [(c, nxt.count(c) / len(nxt)) for c in sorted(set(nxt))]

    class Game(sos.SchnapsenGame):
        def new_initial_state(self):
            return State(self)

    return Game(sos.params_from_rules(rules))


@pytest.mark.skipif(not HAS_OPENSPIEL, reason="needs the openspiel extra")
def test_nash_conv_equals_openspiels_best_response_on_the_same_game():
    """Exact NashConv of two fixed policies (uniform random; the heuristic agent, deterministic) on the game of a
    few deals, against OpenSpiel's own exploitability.nash_conv on the OpenSpiel game restricted to those deals:
    OpenSpiel walks every history with the reference engine and groups information sets by its own information
    state strings, independently of the compiled tree, its information-set keys and its revealed-subtree
    shortcut."""
    from open_spiel.python import policy as policy_lib
    from open_spiel.python.algorithms import exploitability

    from agents.heuristic import HeuristicAgent
    from schnapsen_env import encoding

    orders = [o for k, o in enumerate(exact.deals(RULES)) if k in (5, 2222, 4321)]
    tree = exact.Tree(RULES, orders)
    game = _restricted_openspiel_game(RULES, orders)
    heuristic = HeuristicAgent(RULES)

    class HeuristicPolicy(policy_lib.Policy):
        def action_probabilities(self, state, player_id=None):
            me = state.current_player()
            obs = encoding.observation(state.game_state, me)[None].astype(np.float32)
            mask = state.game_state.action_mask()[None]
            a = int(heuristic.act_batch(obs, mask)[0])
            return {b: float(b == a) for b in state.legal_actions()}

    ours_uniform = tree.nash_conv(exact.uniform_policy)
    ours_heuristic = tree.nash_conv(exact.agent_policy(heuristic))
    theirs_uniform = exploitability.nash_conv(game, policy_lib.UniformRandomPolicy(game))
    theirs_heuristic = exploitability.nash_conv(game, HeuristicPolicy(game, [0, 1]))
    assert ours_uniform["nash_conv"] == pytest.approx(theirs_uniform, abs=1e-9)
    assert ours_heuristic["nash_conv"] == pytest.approx(theirs_heuristic, abs=1e-9)
    assert ours_uniform["nash_conv"] > 0.5 and ours_heuristic["nash_conv"] > 0.1  # neither is an equilibrium


# ------------------------------------------------------------------------------------------------ CFR+ and policies
SMALL = [o for k, o in enumerate(exact.deals(RULES)) if k % 300 == 11]  # 21 deals


def test_cfr_plus_converges_on_a_small_game():
    """CFR+'s average strategy: NashConv falls by orders of magnitude and ends below 0.001 game points; its value
    lies between the two best responses (a sanity check of the passes)."""
    tree = exact.Tree(RULES, SMALL)
    res = tree.cfr(300, eval_every=50)
    curve = [nc for _, nc in res["curve"]]
    assert curve[-1] < 0.001 and curve[0] > 10 * curve[-1], curve
    assert all(nc >= -1e-9 for nc in curve)
    br0, br1 = res["best_response"]
    assert br0 + 1e-9 >= res["value"] >= -br1 - 1e-9


def test_policy_checks_and_adapters():
    tree = exact.Tree(RULES, SMALL[:2])
    with pytest.raises(ValueError, match="put probability on an illegal action"):
        tree.nash_conv(lambda obs, m: np.full(m.shape, 1.0 / m.shape[1]))
    with pytest.raises(ValueError, match=r"returned shape \(3,\)"):
        tree.nash_conv(lambda obs, m: np.ones(3))
    with pytest.raises(ValueError, match="NaN"):
        tree.nash_conv(lambda obs, m: np.where(m > 0, np.nan, 0.0))
    with pytest.raises(ValueError, match="has no act_batch"):
        exact.agent_policy(object())
    with pytest.raises(ValueError, match="at least one deal"):
        exact.Tree(RULES, [])
    # a deterministic policy: the lowest legal action, as an agent with act_batch
    class Lowest:
        def act_batch(self, obs, masks):
            return masks.argmax(axis=1)
    low = tree.nash_conv(exact.agent_policy(Lowest()))
    assert low["nash_conv"] > 0 and low["exploitability"] == pytest.approx(low["nash_conv"] / 2)


def test_network_policy_is_the_masked_softmax():
    import torch

    from agents.policy_net import ActorCritic
    torch.manual_seed(0)
    model = ActorCritic(obs_size=obs_size(RULES), n_actions=RULES.n_actions, hidden=16, layers=1).eval()
    tree = exact.Tree(RULES, SMALL[:2])
    obs = np.random.default_rng(0).random((5, obs_size(RULES))).astype(np.float32)
    masks = np.zeros((5, RULES.n_actions), np.int8)
    masks[:, [0, 3, 15]] = 1
    p = exact.network_policy(model)(obs, masks)
    assert np.allclose(p.sum(axis=1), 1) and (p[:, [1, 2, 16]] == 0).all() and (p[:, [0, 3, 15]] > 0).all()
    res = tree.nash_conv(exact.network_policy(model))
    assert res["nash_conv"] > 0


def test_whole_schnapsen10_game_figures():
    """The figures of agents/exact.py's docstring and the README: the open part's size, and the uniform policy's
    NashConv on the whole game (the README's table row)."""
    tree = exact.Tree(RULES)
    assert (tree.n_nodes, tree.n_revealed, tree.n_infosets) == (4_649_684, 136_640, 2_278_922)
    assert int((tree.kind == exact.DECISION).sum()) == 3_107_044
    assert tree.nash_conv(exact.uniform_policy)["nash_conv"] == pytest.approx(3.369185637125, abs=1e-9)
