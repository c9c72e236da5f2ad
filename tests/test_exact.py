"""agents.game_theory.exact: the schnapsen10 tree walk against a walk of the reference engine, and its deals."""

from __future__ import annotations

import re

import numpy as np
import pytest

from agents.game_theory import exact
from schnapsen_env import rules_core
from schnapsen_env.encoding import obs_size
from schnapsen_env.rules import GameState
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
    R = rules_core.rule_table(rules)
    stack = np.empty((exact._MAX_DEPTH + 1, rules_core.STATE_SIZE), dtype=np.int64)
    legal = np.empty(exact._MAX_DEPTH + 1, dtype=np.int64)
    state = np.empty(rules_core.STATE_SIZE, dtype=np.int64)
    for k, order in enumerate(exact.deals(rules)):
        if k % 1500 != 7:  # a handful of deals spread over the enumeration
            continue
        rules_core.deal(state, R, order, 1)
        got = exact._walk(state, R, stack, legal)
        assert got == _reference_count(GameState._deal(rules, order.tolist(), 1)), order


@pytest.mark.slow
def test_schnapsen10_tree_size():
    """The figure in RULES.md section 3a and the docs (OpenSpiel and schnapsen10)."""
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
@pytest.mark.slow
def test_nash_conv_equals_openspiels_best_response_on_the_same_game():
    """Exact NashConv of three fixed policies (uniform random; the lowest legal action; the heuristic agent) on the
    game of a few deals, against OpenSpiel's own exploitability.nash_conv on the OpenSpiel game restricted to those deals:
    OpenSpiel walks every history with the reference engine and groups information sets by its own information
    state strings, independently of the compiled tree, its information-set keys and its revealed-subtree
    shortcut. The deals share the non-dealer's hand, so information sets hold several histories."""
    from open_spiel.python import policy as policy_lib
    from open_spiel.python.algorithms import exploitability

    from agents.scripted.heuristic import HeuristicAgent
    from schnapsen_env import encoding

    # the five deals with the non-dealer's hand and the turn-up in common: its trick-1 information sets span all five,
    # and after a lost trick 1 it cannot tell which of the winner's cards was the stock card
    orders = [o for o in exact.deals(RULES) if set(o[[0, 1, 2, 7]].tolist()) == {0, 1, 5, 8} and o[6] == 2]
    assert len(orders) == 5  # the dealer holds 4 of the 5 other cards
    tree = exact.Tree(RULES, orders)
    sizes = np.bincount(tree.infoset[tree.kind == exact.DECISION], minlength=tree.n_infosets)
    assert (sizes >= 2).sum() > 100 and sizes.max() == 5, (sizes >= 2).sum()  # many sets hold several histories
    game = _restricted_openspiel_game(RULES, orders)
    heuristic = HeuristicAgent(RULES)

    class HeuristicPolicy(policy_lib.Policy):
        def action_probabilities(self, state, player_id=None):
            me = state.current_player()
            obs = encoding.observation(state.game_state, me)[None].astype(np.float32)
            mask = state.game_state.action_mask()[None]
            a = int(heuristic.act_batch(obs, mask)[0])
            return {b: float(b == a) for b in state.legal_actions()}

    class LowestPolicy(policy_lib.Policy):
        def action_probabilities(self, state, player_id=None):
            legal = state.legal_actions()
            return {b: float(b == min(legal)) for b in legal}

    class Lowest:
        def act_batch(self, obs, masks):
            return masks.argmax(axis=1)

    ours_lowest = tree.nash_conv(exact.agent_policy(Lowest()))
    theirs_lowest = exploitability.nash_conv(game, LowestPolicy(game, [0, 1]))
    assert ours_lowest["nash_conv"] == pytest.approx(theirs_lowest, abs=1e-9)
    ours_uniform = tree.nash_conv(exact.uniform_policy)
    ours_heuristic = tree.nash_conv(exact.agent_policy(heuristic))
    theirs_uniform = exploitability.nash_conv(game, policy_lib.UniformRandomPolicy(game))
    theirs_heuristic = exploitability.nash_conv(game, HeuristicPolicy(game, [0, 1]))
    assert ours_uniform["nash_conv"] == pytest.approx(theirs_uniform, abs=1e-9)
    assert ours_heuristic["nash_conv"] == pytest.approx(theirs_heuristic, abs=1e-9)
    # uniform and lowest-first are far from an equilibrium; the heuristic happens to be one on these five deals
    assert ours_uniform["nash_conv"] > 0.5 and ours_lowest["nash_conv"] > 0.5 and ours_heuristic["nash_conv"] >= 0


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
    good = SMALL[0]
    bad_orders = {"deal 1: expected a deck order": [good, np.r_[good[:9], 10]],
                  "deal 0: expected a deck order": [good[:9]],
                  "deal 0: expected a deck order, a permutation": [np.r_[good[:9], good[0]]],
                  "deal 1 repeats an earlier deal": [good, good.copy()],
                  "a 2-D array": good, "got int": 5}
    for message, orders in bad_orders.items():
        with pytest.raises(ValueError, match=message):
            exact.Tree(RULES, orders)
    with pytest.raises(ValueError, match="deal 0: expected a deck order"):
        exact.Tree(RULES, [good.astype(float)])
    with pytest.raises(ValueError, match="expected a RuleSet"):
        exact.Tree("schnapsen10")
    with pytest.raises(ValueError, match="must be callable"):
        tree.nash_conv(5)
    with pytest.raises(ValueError, match="batch_rows must be an int >= 1024"):
        tree.nash_conv(exact.uniform_policy, batch_rows=-1)
    with pytest.raises(ValueError, match="revealed must be 'policy' or 'minimax'"):
        tree.nash_conv(exact.uniform_policy, revealed="both")
    with pytest.raises(ValueError, match="sum to 1"):
        tree.nash_conv(lambda obs, m: exact.uniform_policy(obs, m) * (1 + 1e-6))
    with pytest.raises(ValueError, match="complex"):
        tree.nash_conv(lambda obs, m: exact.uniform_policy(obs, m).astype(complex))
    for bad in (1.5, -1, "2"):
        with pytest.raises(ValueError, match="eval_every must be an int >= 0"):
            tree.cfr(4, eval_every=bad)
    with pytest.raises(ValueError, match="iterations must be an int >= 1"):
        tree.cfr(True)
    with pytest.raises(ValueError, match="callback must be callable"):
        tree.cfr(2, callback=3)
    assert tree.cfr(np.int64(2))["iterations"] == 2

    class Wild:
        def act_batch(self, obs, masks):
            return np.full(len(obs), 40)

        def act(self, observation):
            return 99
    with pytest.raises(ValueError, match="act_batch returned"):
        tree.nash_conv(exact.agent_policy(Wild()))
    with pytest.raises(ValueError, match="the agent returned action 99"):
        tree.nash_conv(exact.search_agent_policy(Wild()), revealed="minimax")
    with pytest.raises(ValueError, match="has no act"):
        exact.search_agent_policy(object())
    with pytest.raises(ValueError, match="expected an agents.learned.policy_net.ActorCritic"):
        exact.network_policy(object())
    # a deterministic policy: the lowest legal action, as an agent with act_batch
    class Lowest:
        def act_batch(self, obs, masks):
            return masks.argmax(axis=1)
    low = tree.nash_conv(exact.agent_policy(Lowest()))
    assert low["nash_conv"] > 0 and low["exploitability"] == pytest.approx(low["nash_conv"] / 2)


def test_network_policy_is_the_masked_softmax():
    import torch

    from agents.learned.policy_net import ActorCritic
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


@pytest.mark.slow
def test_whole_schnapsen10_game_figures():
    """The figures of agents/game_theory/exact.py's docstring and the docs: the open part's size, and the uniform policy's
    NashConv on the whole game (the docs table row)."""
    tree = exact.Tree(RULES)
    assert (tree.n_nodes, tree.n_revealed, tree.n_infosets) == (4_649_684, 136_640, 2_278_922)
    assert int((tree.kind == exact.DECISION).sum()) == 3_107_044
    assert tree.nash_conv(exact.uniform_policy)["nash_conv"] == pytest.approx(3.369185637125, abs=1e-9)


@pytest.mark.parametrize("name", ["pimc", "expert", "policy+expert:policy=trained-schnapsen10,search_stock=0"])
def test_search_agents_play_the_revealed_subtrees_perfectly(name):
    """nash_conv(..., revealed="minimax") values the revealed subtrees by minimax for pimc, expert and
    policy+expert (which hands the exhausted stock to expert): with the stock exhausted their one world is the true
    position and they pick an action of the best exact value. Checked on every decision of random playouts from 60
    revealed roots."""
    from agents.search.solver_core import CoreSolver
    from agents.specs import resolve_agent
    from helpers.play import obs_of

    tree = exact.Tree(RULES, SMALL)
    agent = resolve_agent(name, RULES)[1](seed=1)
    solver = CoreSolver(RULES)
    rng = np.random.default_rng(6)
    checked = 0
    for i in rng.choice(tree.n_revealed, 60, replace=False):
        g = rules_core.to_game_state(tree.revealed_states[i].copy(), RULES)
        while g.result is None:
            values = solver.action_values(g)
            obs = obs_of(g)
            a = agent.act(obs)
            assert values[a] == max(values.values()), (name, g.position(), a, values)
            checked += 1
            legal = g.legal_actions()
            g.push(int(legal[rng.integers(len(legal))]))
    assert checked > 150


def test_search_agent_policy_is_a_function_of_the_observation():
    """The adapter answers a repeated observation from its memory and seeds the agent's generator from it."""
    from agents import make_agent
    from schnapsen_env import encoding

    calls = []
    agent = make_agent("pimc", RULES, seed=0)
    act = agent.act
    agent.act = lambda o: calls.append(1) or act(o)
    policy = exact.search_agent_policy(agent)
    g = GameState._deal(RULES, SMALL[0].tolist(), 1)
    obs = encoding.observation(g, g.to_move)[None].repeat(3, axis=0)
    masks = g.action_mask()[None].repeat(3, axis=0)
    p = policy(obs, masks)
    assert len(calls) == 1 and (p == p[0]).all() and p[0].sum() == 1 and p[0][masks[0] == 0].sum() == 0
    fresh = exact.search_agent_policy(make_agent("pimc", RULES, seed=123))  # another seed, the same answer
    assert (fresh(obs[:1], masks[:1]) == p[:1]).all()


@pytest.mark.parametrize("spec, message", [
    ("expert:max_nodes=1", "max_nodes bounds the search"),  # misplays revealed positions that minimax values
    ("expert:max_time=0.5", "max_time bounds the search"),
    ("heuristic", "expected a spec of pimc, expert, policy\\+expert"),
    ("expert:worlds=0", "worlds must be"),
    ("expert:inference=trained-schnapsen10", "inference weighs the worlds by the opponent's earlier actions"),  # history-dependent
    ("policy+expert:policy=trained-schnapsen10,search_stock=0,inference=trained-schnapsen10", "inference weighs"),
    ("expert+", "expert\\+ weighs its worlds by the opponent's earlier actions"),
    # the agent policy+expert plays the open part with is any spec: expert+ or inference there is history too
    ("policy+expert:policy=expert+", "its policy expert\\+: expert\\+ weighs its worlds"),
    ("policy+expert:policy=pimc:inference=consistent", "its policy pimc:inference=consistent: inference weighs"),
    ("policy+expert:policy=policy+expert:policy=expert+", "its policy expert\\+: expert\\+ weighs"),
    ("expert:inference=policy", "inference weighs"),  # the reason, not the default policy's ruleset (built after)
    (None, "--perfect-endgame adds a row to each of --policies, and none was given"),  # it was ignored
])
def test_exploitability_script_refuses_agents_not_valued_by_minimax_and_idle_flags(spec, message, capsys):
    """benchmarks/exploitability.py values the search agents' revealed subtrees by minimax, so it takes only agents
    that play them perfectly: a node or time budget makes expert misplay some (max_nodes=1: 7 of the 463 revealed
    decisions of test_search_agents_play_the_revealed_subtrees_perfectly), and is refused in one line before any
    work; so is --perfect-endgame without --policies, which it would ignore."""
    from helpers.scripts import load_script

    script = load_script("benchmarks/exploitability.py")
    with pytest.raises(SystemExit) as e:
        script.main(["--no-baselines", "--perfect-endgame"] if spec is None else ["--no-baselines", "--agents", spec])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert re.search(message, err) and (spec is None or f": error: --agents {spec}: " in err), err
