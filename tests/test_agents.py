"""Agents, solver, sampler and arena.

* Legality: no agent returns an illegal action over many seeded hands in both rulesets (the raw env raises
  ``IllegalActionError`` on one, and every choice is also checked against the mask).
* The alpha-beta solver equals plain minimax on random exhausted-stock positions and on the end-of-hand
  scenarios S29, S34, S35 of RULES.md; PIMC plays an exactly optimal action once the stock is exhausted.
* The sampler: sampled states load as valid positions and reproduce the observation; the unseen cards are
  spread over the opponent's hand and the stock slots with the right frequencies (chi-square, fixed seed).
* The arena: an agent against itself averages about zero, the heuristic beats random, bad names are refused.
"""

from __future__ import annotations

import functools
import json
import math
import statistics

import numpy as np
import pytest

from agents import NEEDS_OPTION, ONE_RULESET, agent_names, make_agent, shipped_policies
from agents.evaluation.arena import fit_elo, play_match, resolve_agent, round_robin
from agents.scripted.heuristic import HeuristicAgent
from agents.scripted.random_agent import RandomAgent
from agents.search.pimc import PIMCAgent
from agents.search.rollout import RolloutAgent
from helpers.play import assert_legal_hands, obs_of
from helpers.reference_solver import Solver, terminal_value
from helpers.rulebook import scenario
from schnapsen_env import GameState, RuleSet, schnapsen_v0
from schnapsen_env.encoding import layout, observation
from schnapsen_env.sampler import Determinizer

RULESETS = ("schnapsen20", "sixtysix24", "schnapsen10")


# ------------------------------------------------------------------------------------------------ helpers
def play_hands(agent_a, agent_b, ruleset: str, n_hands: int, seed: int, **knobs) -> list[int]:
    """Play ``n_hands`` seeded hands through the raw env (which raises on an illegal action), A as player_0 in
    even hands and player_1 in odd ones; every action is also checked against the mask. Returns A's points."""
    env = schnapsen_v0.raw_env(ruleset=ruleset, **knobs)
    out = []
    for h in range(n_hands):
        env.reset(seed=seed + h)
        seats = {"player_0": agent_a, "player_1": agent_b} if h % 2 == 0 else {"player_0": agent_b,
                                                                                "player_1": agent_a}
        for ag in (agent_a, agent_b):
            ag.reset()
        while not all(env.terminations.values()):
            name = env.agent_selection
            obs = env.observe(name)
            action = seats[name].act(obs)
            assert isinstance(action, int), (type(action), action)
            assert obs["action_mask"][action] == 1, (env.action_names[action], env.game)
            env.step(action)
        out.append(env.rewards["player_0" if h % 2 == 0 else "player_1"])
    return out


def minimax(s: GameState, root: int) -> float:
    """Plain minimax (no pruning, no table): game points for ``root``."""
    if s.result is not None:
        return terminal_value(s, root)
    maximizing = s.to_move == root
    best = -math.inf if maximizing else math.inf
    for a in s.legal_actions():
        s.push(a)
        v = minimax(s, root)
        s.pop()
        best = max(best, v) if maximizing else min(best, v)
    return best


def exhausted_positions(ruleset: str, n: int, seed: int) -> list[GameState]:
    """``n`` random positions with the stock exhausted (not closed): random play (never closing) until the last
    stock card is drawn, then 0-3 more random actions."""
    rules = RuleSet.make(ruleset)
    close = rules.action_id("close")
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = GameState.new_hand(rules, rng)
        while s.result is None and s.stock:
            s.push(int(rng.choice([a for a in s.legal_actions() if a != close])))
        if s.result is not None:
            continue
        for _ in range(int(rng.integers(0, 4))):
            if s.result is not None:
                break
            s.push(int(rng.choice(s.legal_actions())))
        if s.result is None:
            out.append(s)
    return out


def random_states(ruleset: str, n: int, seed: int) -> list[GameState]:
    """``n`` states from random play at random depths (open, closed and exhausted stocks, led cards, exchanges,
    marriages), each with a player to move."""
    rules = RuleSet.make(ruleset)
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = GameState.new_hand(rules, rng)
        for _ in range(int(rng.integers(0, 2 * rules.n_cards))):
            if s.result is not None:
                break
            s.push(int(rng.choice(s.legal_actions())))
        if s.result is None:
            out.append(s)
    return out


# ------------------------------------------------------------------------------------------------ legality
@pytest.mark.parametrize("ruleset", RULESETS)
def test_random_and_heuristic_always_legal(ruleset):
    h = HeuristicAgent(ruleset, seed=1)
    pts = play_hands(h, RandomAgent(ruleset, seed=2), ruleset, 700, seed=1000)
    pts += play_hands(HeuristicAgent(ruleset, seed=3), h, ruleset, 200, seed=5000)
    pts += play_hands(RandomAgent(ruleset, seed=4), RandomAgent(ruleset, seed=5), ruleset, 300, seed=9000)
    assert len(pts) == 1200


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("knobs", [dict(false_claim="mirror"), dict(false_claim="pagat"),
                                   dict(marriage_declaration="optional"), dict(claim_mode="auto"),
                                   dict(closed_hand_end="must_claim", marriage_on_opening_lead=False)])
def test_heuristic_legal_under_other_knobs(ruleset, knobs):
    rules = RuleSet.make(ruleset, **knobs)
    play_hands(HeuristicAgent(rules, seed=1), RandomAgent(rules, seed=2), ruleset, 150, seed=77, **knobs)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_rollout_always_legal(ruleset):
    play_hands(RolloutAgent(ruleset, n_samples=2, depth=2, seed=1), RandomAgent(ruleset, seed=2), ruleset, 16,
               seed=300)
    play_hands(RolloutAgent(ruleset, n_samples=2, depth=1, seed=3), HeuristicAgent(ruleset, seed=4), ruleset, 8,
               seed=400)


def test_rollout_legal_under_mirror_claims():
    rules = RuleSet.make("schnapsen20", false_claim="mirror")
    play_hands(RolloutAgent(rules=rules, n_samples=2, depth=2, seed=1), RandomAgent(rules, seed=2), "schnapsen20", 8,
               seed=600, false_claim="mirror")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_pimc_always_legal(ruleset):
    play_hands(PIMCAgent(ruleset, n_samples=2, seed=1), HeuristicAgent(ruleset, seed=2), ruleset, 4, seed=700)


def test_make_agent_builds_every_registered_agent():
    assert {"random", "heuristic", "rollout", "pimc"} <= set(agent_names())
    for name in agent_names():
        ruleset = ONE_RULESET.get(name, "schnapsen20")  # a shipped policy of another ruleset plays that one
        options = {NEEDS_OPTION[name]: "random"} if name in NEEDS_OPTION else {}  # lbr:target=random
        agent = make_agent(name, RuleSet.make(ruleset), seed=0, **options)
        assert hasattr(agent, "act")
        if name in NEEDS_OPTION:
            with pytest.raises(ValueError, match=NEEDS_OPTION[name]):
                make_agent(name, RuleSet.make(ruleset), seed=0)


def test_agents_are_reproducible_from_seed():
    r = "schnapsen20"
    a = play_hands(RolloutAgent(r, n_samples=2, depth=2, seed=9), RandomAgent(r, seed=8), r, 6, seed=1)
    b = play_hands(RolloutAgent(r, n_samples=2, depth=2, seed=9), RandomAgent(r, seed=8), r, 6, seed=1)
    assert a == b


# ------------------------------------------------------------------------------------------------ heuristic
def test_heuristic_claims_exchanges_and_announces_trump_marriage():
    # S29: A leads with 70 counted points: the claim is legal and taken at once.
    st = scenario("S29").state()
    assert HeuristicAgent(st.rules).act(obs_of(st)) == st.rules.action_id("claim")
    # player_0 (non-dealer) holds JH KH QH KS QS under the turn-up TH: exchange first, then the 40 marriage.
    rules = RuleSet.make("schnapsen20")
    st = GameState.from_deck(rules, ["JH", "KH", "QH", "AC", "TC", "JC", "TH", "KS", "QS", "AS", "TS", "AD", "TD",
                                     "KD", "QD", "JD", "AH", "KC", "QC", "JS"], dealer="player_1")
    assert st.to_move == 0 and st.stock[-1] == rules.deck.index("TH")
    agent = HeuristicAgent(rules)
    assert agent.act(obs_of(st)) == rules.action_id("exchange")
    st.step("exchange")
    assert agent.act(obs_of(st)) == rules.action_id("marriage H")
    st.step("marriage H")
    assert agent.act(obs_of(st)) == rules.action_id("play QH")  # stock open: lead the queen


def test_heuristic_takes_a_led_ten_with_a_low_trump():
    rules = RuleSet.make("schnapsen20")
    # player_0 leads TC; player_1 (dealer, hand JH AH QS KS JS, trump H) has no club: it trumps with JH.
    st = GameState.from_deck(rules, ["TC", "KD", "QD", "JH", "AH", "QS", "TH", "AS", "JD", "KS", "JS", "AC", "KC",
                                     "QC", "JC", "AD", "TD", "KH", "QH", "TS"], dealer="player_1")
    st.step("play TC")
    assert st.to_move == 1
    assert HeuristicAgent(rules).act(obs_of(st)) == rules.deck.index("JH")
    # a led jack is not worth a trump: discard the lowest non-trump (JS, 2 points)
    st = GameState.from_deck(rules, ["JC", "KD", "QD", "JH", "AH", "QS", "TH", "AS", "JD", "KS", "JS", "AC", "KC",
                                     "QC", "TC", "AD", "TD", "KH", "QH", "TS"], dealer="player_1")
    st.step("play JC")
    assert HeuristicAgent(rules).act(obs_of(st)) == rules.deck.index("JS")


# ------------------------------------------------------------------------------------------------ solver
@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.slow
def test_solver_equals_minimax_on_exhausted_positions(ruleset):
    for s in exhausted_positions(ruleset, 50, seed=11):
        root = s.to_move
        before = s.copy()
        exact = {}
        for a in s.legal_actions():
            s.push(a)
            exact[a] = minimax(s, root)
            s.pop()
        value, action = Solver().solve(s)
        assert value == max(exact.values()), s
        assert exact[action] == value, s
        assert Solver().action_values(s) == exact, s
        assert s == before


@pytest.mark.parametrize("sid, expected", [("S29", 1), ("S34", 1), ("S35", 1)])
def test_solver_equals_minimax_on_end_of_hand_scenarios(sid, expected):
    st = scenario(sid).state()
    # every position along every line of play from the scenario, for the player to move there
    stack = [st]
    checked = 0
    while stack:
        s = stack.pop()
        if s.result is not None:
            continue
        assert Solver().solve(s)[0] == minimax(s, s.to_move), s
        checked += 1
        for a in s.legal_actions():
            t = s.copy()
            t.push(a)
            stack.append(t)
    assert checked >= 1
    assert Solver().solve(st)[0] == minimax(st, 0) == expected  # A to move in all three: +1 game point


def test_solver_s34_line_b_claims_after_taking_the_queen():
    st = scenario("S34").state()
    st.step("play QC")
    st.step("play AC")  # B now has 69 and leads: claiming wins 1 (A has 73 > 33)
    value, action = Solver().solve(st)
    assert st.to_move == 1 and value == 1 == minimax(st, 1)
    assert action == st.rules.action_id("claim")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_pimc_plays_exactly_once_the_stock_is_exhausted(ruleset):
    agent = PIMCAgent(ruleset, n_samples=2, seed=5)
    for s in exhausted_positions(ruleset, 25, seed=21):
        exact = Solver().action_values(s)
        chosen = agent.act(obs_of(s))
        assert exact[chosen] == max(exact.values()), (s, chosen, exact)


# ------------------------------------------------------------------------------------------------ sampler
_TRICK_PLANES = ("me_lead", "me_follow", "opp_lead", "opp_follow")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_sampled_states_are_legal_and_consistent(ruleset):
    rules = RuleSet.make(ruleset)
    lay = layout(rules)
    keep = np.ones(lay["match"].stop, dtype=bool)
    for name in _TRICK_PLANES:
        keep[lay[name]] = False  # the sampler does not rebuild who led and who followed
    rng = np.random.default_rng(3)
    kinds = set()
    for s in random_states(ruleset, 150, seed=31):
        obs = observation(s, s.to_move)
        det = Determinizer(obs, rules)
        kinds.add(("open" if s.stock_open else "closed" if s.closed_by >= 0 else "exhausted", s.table >= 0,
                   bool(s.known[1 - s.to_move])))
        for _ in range(8):
            t = det.sample(rng)
            assert t.to_move == 0 and t.result is None
            pos = t.position()
            del pos["history"]  # not rebuilt (see the sampler's docstring)
            loaded = GameState.from_position(rules, pos)  # raises InvalidPositionError when inconsistent
            assert np.array_equal(observation(loaded, 0)[keep], obs[keep])
            assert np.array_equal(observation(t, 0)[keep], obs[keep])
            assert t.legal_bits() == s.legal_bits()
            assert t.hands[0] == s.hands[s.to_move]
            assert t.hands[1] & s.known[1 - s.to_move] == s.known[1 - s.to_move]  # public cards stay put
            assert t.hands[1].bit_count() == s.hands[1 - s.to_move].bit_count()
            assert len(t.stock) == len(s.stock) and t.stock[-1:] == s.stock[-1:]  # the turn-up stays
    # the states covered every phase, both roles, and known opponent cards
    assert {k[0] for k in kinds} == {"open", "closed", "exhausted"}
    assert any(k[1] for k in kinds) and any(k[2] for k in kinds)


def _chi2_critical(df: int, alpha: float) -> float:
    """Upper ``alpha`` quantile of chi-square(df), Wilson-Hilferty approximation (accurate to ~1% for df >= 10;
    e.g. df=13, alpha=0.001: 34.6 vs the exact 34.53)."""
    z = statistics.NormalDist().inv_cdf(1 - alpha)
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def _state_with_known_opponent_card() -> GameState:
    """A schnapsen20 position, stock open, where the player to move faces an opponent who exchanged (the old
    turn-up is a known card in the opponent's hand); found by seeded random play."""
    rules = RuleSet.make("schnapsen20")
    exchange = rules.action_id("exchange")
    for seed in range(1000):
        rng = np.random.default_rng(seed)
        s = GameState.new_hand(rules, rng)
        if not s.legal_bits() >> exchange & 1:
            continue
        s.step("exchange")
        me = s.to_move
        # lead a card other than the old turn-up, which stays a known card in the exchanger's hand
        s.push(int(rng.choice([a for a in s.legal_actions() if a < rules.n_cards and not s.known[me] >> a & 1])))
        return s  # the opponent of the exchanger is to move and follows
    raise AssertionError("no seed gave an exchange on the first lead")


def test_sampler_frequencies_chi_square():
    s = _state_with_known_opponent_card()
    rules = s.rules
    assert s.stock_open and s.known[1 - s.to_move]
    obs = observation(s, s.to_move)
    det = Determinizer(obs, rules)
    unseen = [c for c in range(rules.n_cards) if det.unseen >> c & 1]
    n = len(unseen)
    k = det.opp_hidden  # hidden cards in the opponent's hand
    face_down = len(s.stock) - 1
    assert n == k + face_down and k >= 1 and face_down >= 2
    n_samples = 20000
    rng = np.random.default_rng(20240601)
    # places: 0 = the opponent's hand, 1 + j = stock slot j (top first); the turn-up is not a place
    counts = np.zeros((rules.n_cards, 1 + face_down))
    for _ in range(n_samples):
        t = det.sample(rng)
        assert t.hands[1] & det.opp_known == det.opp_known  # the exchanged turn-up is always there
        assert t.stock[-1] == s.stock[-1]
        for c in unseen:
            if t.hands[1] >> c & 1:
                counts[c, 0] += 1
        for j, c in enumerate(t.stock[:-1]):
            counts[c, 1 + j] += 1
    counts = counts[unseen]
    assert (n, k, face_down) == (12, 3, 9)  # the position the critical values quoted below were computed for
    p = np.array([k / n] + [1 / n] * face_down)  # uniform over the ways to place the unseen cards
    expected = n_samples * p
    assert np.allclose(counts.sum(axis=1), n_samples)
    # (a) every place of every card. Each card's Pearson statistic has mean (cells - 1); the cards are tied by
    # the fixed places (like a contingency table with both margins fixed), so the sum is distributed as
    # n/(n-1) * chi2((n-1) * face_down). Critical value at alpha = 0.001; for the position used (n = 12 unseen
    # cards, k = 3 hidden in the opponent's hand, 9 face-down stock slots): 12/11 * chi2_0.999(99) = 161.8.
    stat = float((((counts - expected) ** 2) / expected).sum())
    crit = n / (n - 1) * _chi2_critical((n - 1) * face_down, 0.001)
    assert stat < crit, (stat, crit)
    # (b) opponent's hand vs stock only: per card (O - E)^2 / (N p (1 - p)); the sum is n/(n-1) * chi2(n - 1),
    # critical value 12/11 * chi2_0.999(11) = 12/11 * 31.4 = 34.3 here.
    q = k / n
    stat2 = float(((counts[:, 0] - n_samples * q) ** 2 / (n_samples * q * (1 - q))).sum())
    crit2 = n / (n - 1) * _chi2_critical(n - 1, 0.001)
    assert stat2 < crit2, (stat2, crit2)
    # and the test has power: a sampler that always puts the lowest unseen ids in the opponent's hand fails
    biased = np.zeros(n)
    biased[:k] = n_samples
    assert float(((biased - n_samples * q) ** 2 / (n_samples * q * (1 - q))).sum()) > crit2


# ------------------------------------------------------------------------------------------------ arena
def test_arena_random_against_itself_averages_zero():
    # One fixed seed is one draw: about 5% of seeds give a 95% CI that misses zero (seed 0 does: -0.22 ± 0.15).
    r = play_match("random", "random", 400, seed=1, workers=1, progress=False)
    assert r.deals == 400 and r.hands == 800
    assert r.ci_low < 0 < r.ci_high
    assert abs(r.mean) < 0.25
    assert 0.4 < r.hand_win_rate < 0.6
    assert r.hands_won_a + r.hands_won_b + r.ties == 800
    json.dumps(r.to_dict())


def test_arena_heuristic_beats_random():
    r = play_match("heuristic", "random", 300, seed=2, workers=1, progress=False)
    assert r.mean > 0.3 and r.ci_low > 0, r.table()
    assert r.hand_win_rate > 0.6


def test_arena_duplicate_deals_cancel_the_cards():
    # Two deterministic copies of the same agent: each deal's two seatings mirror each other, so every pair
    # sums to exactly zero.
    r = play_match("heuristic", "heuristic", 40, seed=3, workers=1, progress=False)
    assert r.mean == 0 and r.stdev_deal == 0 and r.hand_win_rate == 0.5


def test_arena_result_does_not_depend_on_workers():
    one = play_match("random", "heuristic", 30, seed=4, workers=1, progress=False, chunk_size=7)
    two = play_match("random", "heuristic", 30, seed=4, workers=2, progress=False, chunk_size=7)
    d1, d2 = one.to_dict(), two.to_dict()
    d1.pop("seconds"), d2.pop("seconds")
    assert d1 == d2


def test_arena_match_episodes_and_factories():
    factory = functools.partial(RolloutAgent, n_samples=2, depth=1)
    r = play_match(("rollout2", factory), lambda seed=None: RandomAgent("sixtysix24", seed=seed), 3,
                   ruleset="sixtysix24", episode="match", seed=5, workers=2, progress=False)
    assert r.agent_a == "rollout2" and r.matches == 6 and r.hands >= 6 * 4
    assert 0 <= r.match_win_rate <= 1
    assert "match win rate" in r.table()


def test_round_robin_elo_and_table():
    rr = round_robin(["random", "heuristic", "rollout:n_samples=2,depth=1"], 20, seed=6, workers=1,
                     progress=False)
    assert rr.elo["random"] == 0
    assert rr.elo["heuristic"] > 0
    assert len(rr.pairs) == 3
    text = rr.table()
    assert "Elo" in text and "heuristic" in text
    json.loads(json.dumps(rr.to_dict()))


def test_fit_elo_recovers_bradley_terry_ratings():
    # 3:1 odds is 400 * log10(3) = 190.85 Elo; B beats C with the same odds.
    wins = {("A", "B"): 300, ("B", "A"): 100, ("B", "C"): 300, ("C", "B"): 100, ("A", "C"): 900, ("C", "A"): 100}
    elo = fit_elo(["A", "B", "C"], wins, anchor="C", prior=0)
    assert elo["C"] == 0
    assert elo["B"] == pytest.approx(190.85, abs=0.1)
    assert elo["A"] == pytest.approx(381.7, abs=0.1)
    mean0 = fit_elo(["A", "B", "C"], wins, anchor=None, prior=0)
    assert sum(mean0.values()) == pytest.approx(0, abs=1e-9)


def test_bad_agent_name_lists_valid_names():
    with pytest.raises(ValueError, match="heuristic.*pimc.*random.*rollout"):
        play_match("random", "randmo", 2, workers=1, progress=False)
    with pytest.raises(ValueError, match="random"):
        make_agent("no-such-agent", "schnapsen20")
    with pytest.raises(ValueError, match="no checkpoint file"):
        resolve_agent("missing/policy.pt", "schnapsen20")
    with pytest.raises(ValueError, match="bad agent argument"):
        resolve_agent("rollout:n_samples", "schnapsen20")


# ------------------------------------------------------------------ regressions: agents (named after what broke)
def test_arena_took_arguments_the_agent_does_not_take_bug():
    """resolve_agent accepted arguments the agent does not take (rollout:foo=1), and seed= and rules=, which the
    arena sets itself."""
    from agents.evaluation.arena import resolve_agent

    with pytest.raises(ValueError, match="takes no argument"):
        resolve_agent("rollout:foo=1", "schnapsen20")
    with pytest.raises(ValueError, match="seed"):
        resolve_agent("random:seed=3", "schnapsen20")
    with pytest.raises(ValueError, match="rules"):
        resolve_agent("random:rules='sixtysix24'", "schnapsen20")


@pytest.mark.parametrize("name", shipped_policies("schnapsen20"))  # the others: tests/test_shipped.py
def test_trained_policy_greedy_argmax_chose_illegal_actions_bug(name):
    """The greedy policy took the argmax over all actions, so it could choose an illegal one; the shipped trained
    agents play whole hands with legal actions only."""
    from agents import make_agent
    from schnapsen_env import schnapsen_v0

    env = schnapsen_v0.raw_env()
    assert_legal_hands(make_agent(name, env.rules, seed=0), 5, env)


def test_crafted_checkpoint_failed_with_untyped_errors_bug(tmp_path):
    """Checkpoints with a malformed layout, rules or network config raised KeyError/AttributeError/TypeError
    instead of CheckpointError, and NaN weights went on choosing actions."""
    import torch

    from agents.learned.checkpoint import CheckpointError, load_checkpoint, save_atomic
    from agents.learned.policy import DEFAULT_POLICY, PolicyAgent

    ck = load_checkpoint(DEFAULT_POLICY)
    for key, value in (("layout", [1, 2]), ("rules", [1, 2]), ("rules", 5),
                       ("net", {**ck["net"], "n_actions": 31})):
        bad = dict(ck)
        bad[key] = value
        save_atomic(bad, tmp_path / "bad.pt")
        with pytest.raises(CheckpointError):
            PolicyAgent.load(tmp_path / "bad.pt")
    nan = dict(ck)
    nan["model"] = {k: torch.full_like(v, float("nan")) for k, v in ck["model"].items()}
    save_atomic(nan, tmp_path / "nan.pt")
    with pytest.raises(CheckpointError, match="hold NaN or inf"):  # refused when loaded
        PolicyAgent.load(tmp_path / "nan.pt")
    agent = PolicyAgent.load(DEFAULT_POLICY)  # weights that turn NaN after loading: refused when acting
    with torch.no_grad():
        for p in agent.model.parameters():
            p.fill_(float("nan"))
    from schnapsen_env import schnapsen_v0

    env = schnapsen_v0.raw_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not finite"):
        agent.act(env.observe(env.agent_selection))


# ------------------------------------------------------------------ legal actions over many hands
@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_search_agents_legal_over_many_hands(ruleset):
    # Cheap settings of the same code paths (sampling, search, horizon, exact endgames): hundreds of hands each.
    play_hands(PIMCAgent(ruleset, n_samples=2, depth=1, seed=5), RandomAgent(ruleset, seed=6), ruleset, 150,
               seed=20_000)
    play_hands(RolloutAgent(ruleset, n_samples=3, depth=2, seed=7), HeuristicAgent(ruleset, seed=8), ruleset, 300,
               seed=30_000)


def test_trained_policy_legal_over_many_hands():
    from agents import make_agent

    play_hands(make_agent("trained", "schnapsen20", seed=1), HeuristicAgent("schnapsen20", seed=2), "schnapsen20",
               600, seed=40_000)
