"""World inference (agents/search/inference.py): the worlds it weighs never contradict what the player saw, their
weights are the opponent model's likelihood (checked against a brute force over every deal of ``schnapsen10``), and
it reads only the player's own observations and actions (RULES.md R27: swapping hidden cards changes nothing)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from agents import make_agent
from agents.base import observe_hand
from agents.game_theory.exact import deals
from agents.search.expert import ExpertAgent
from agents.search.inference import (
    POLICY,
    HandHistory,
    WorldInference,
    consistent_model,
    opponent_model,
    world_rows,
)
from agents.search.worlds import draw_worlds
from helpers.knob_cases import CASES
from helpers.play import redeal
from schnapsen_env import encoding
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet


def _pick(g: GameState, rng: np.random.Generator, special_p: float) -> int:
    """A random legal action, a non-play one (marriage, exchange, close, claim) with probability ``special_p`` when
    there is one, so that the histories hold every kind of action."""
    legal = g.legal_actions()
    special = [a for a in legal if a >= g.rules.n_cards]
    if special and rng.random() < special_p:
        return int(rng.choice(special))
    return int(rng.choice(legal))


def _seat0_view(g: GameState) -> dict:
    return {"observation": encoding.observation(g, 0), "action_mask": g.action_mask()}


def _world_of(g: GameState, unseen: np.ndarray) -> np.ndarray:
    """The true world of a position for seat 0: the opponent's hidden cards (in id order), then the face-down stock."""
    hidden = set(unseen.tolist())
    return np.array([c for c in unseen if g.hands[1] >> c & 1] + [c for c in g.stock[:-1] if c in hidden], np.int64)


def _replays(rules: RuleSet, deck: list[int], dealer: int, actions: list[int], seen: list[np.ndarray]) -> bool:
    """Whether ``actions`` are legal on ``deck`` and show seat 0 exactly ``seen`` at its decisions (the test's own
    replay, independent of the module's)."""
    g = GameState.from_deck(rules, [rules.deck.codes[c] for c in deck], dealer)
    at = 0
    for a in actions:
        if g.to_move == 0:
            if not np.array_equal(encoding.observation(g, 0), seen[at]):
                return False
            at += 1
        if not g.is_legal(a):
            return False
        g.push(a)
    return g.to_move == 0 and g.result is None and np.array_equal(encoding.observation(g, 0), seen[at])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2 ** 32 - 1), case=st.sampled_from(CASES), special_p=st.floats(0.0, 1.0))
def test_weighed_worlds_never_contradict_the_observations_or_the_history(seed, case, special_p):
    """Every ruleset and knob set: a world of positive weight completes to a deal on which the hand's actions are
    legal and show the player every observation it had (the actions of the history's reading: the true ones, or
    with an exchange of trick 1 that the player's observations cannot rule out); the true deal is one of them and
    the true world has positive weight (in some completion)."""
    ruleset, knobs = case
    rules = RuleSet.make(ruleset, **knobs)
    rng = np.random.default_rng(seed)
    inference = WorldInference(rules)
    g = GameState.new_hand(rules, rng)
    history = HandHistory(rules)
    seen: list[np.ndarray] = []
    while g.result is None:
        if g.to_move == 0:
            view = _seat0_view(g)
            history.observe(view)
            seen.append(view["observation"])
            replay = history.replay()
            assert replay is not None
            readings = [replay, *replay.alternatives]
            assert any(inference.replay_deal(r, list(g.deal[0])) is not None for r in readings)  # the truth fits
            unseen, k = world_rows(view, rules)
            truth = np.repeat(_world_of(g, unseen)[None], 20, axis=0)
            assert inference.weights(replay, truth, k, rng).max() >= 1.0
            worlds = draw_worlds(unseen, 12, rng)
            for w, reading in itertools.product(range(len(worlds)), readings):
                deck = inference.deal(reading, worlds[w], k, rng)
                if deck is not None and inference.replay_deal(reading, deck) is not None:
                    # the reading's actions: the true ones, or with an exchange the player could not see
                    assert _replays(rules, deck, g.deal[1], [a for _, a in reading.events], seen)
            a = _pick(g, rng, special_p)
            history.acted(a)
        else:
            a = _pick(g, rng, special_p)
        g.push(a)


def _linear_softmax(rules: RuleSet, seed: int):
    """A fixed random opponent model: a softmax of a linear function of the observation (its probabilities differ
    from world to world)."""
    weights = np.random.default_rng(seed).normal(0.0, 2.0, (encoding.obs_size(rules), rules.n_actions))

    def model(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = obs.astype(np.float64) @ weights
        logits[masks == 0] = -np.inf
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    return model


def _schnapsen10_decision(rules: RuleSet, deal_index: int, model):
    """Seat 0 (the dealer) following the opponent's trick-1 lead on one deal, the opponent playing ``model``'s most
    likely actions: ``(game, history, actions played)``."""
    order = list(itertools.islice(deals(rules), deal_index, deal_index + 1))[0].tolist()
    g = GameState.from_deck(rules, [rules.deck.codes[c] for c in order], 0)
    while g.to_move == 1:
        obs = encoding.observation(g, 1)[None]
        p = model(obs, g.action_mask()[None])[0]
        g.push(int(np.argmax(p)))
    history = HandHistory(rules)
    history.observe(_seat0_view(g))
    return g, history


def _exact_posterior(rules: RuleSet, g: GameState, model, unseen: np.ndarray) -> dict[tuple, float]:
    """Brute force: every deal of ``schnapsen10`` with seat 0 dealing, replayed; the posterior of each current
    world (opponent's hidden hand as a set, face-down stock) is the sum of the likelihoods of its deals."""
    seen = encoding.observation(g, 0)
    post: dict[tuple, float] = {}
    for order in deals(rules):
        h = GameState.from_deck(rules, [rules.deck.codes[c] for c in order.tolist()], 0)
        like = 1.0
        ok = True
        for a in g.actions:
            if not h.is_legal(a):
                ok = False
                break
            mask = h.action_mask()
            if mask.sum() > 1:
                like *= model(encoding.observation(h, 1)[None], mask[None])[0, a]
            h.push(a)
        if not ok or not np.array_equal(encoding.observation(h, 0), seen):
            continue
        key = tuple(_world_of(h, unseen).tolist())
        post[key] = post.get(key, 0.0) + like
    total = sum(post.values())
    return {key: v / total for key, v in post.items()}


@pytest.mark.parametrize("deal_index", [17, 2024, 5000])
@pytest.mark.slow
def test_weights_are_the_models_likelihood_against_a_brute_force_over_every_deal(deal_index):
    """``schnapsen10``, seat 0 following the opponent's lead: the normalised weights of every world equal the
    posterior computed from every deal of the game, and worlds drawn by rejection (accepted with probability
    equal to their weight, at most 1) follow it (chi-square, fixed seed)."""
    rules = RuleSet.make("schnapsen10")
    model = _linear_softmax(rules, 11)
    g, history = _schnapsen10_decision(rules, deal_index, model)
    unseen, k = world_rows(_seat0_view(g), rules)
    exact = _exact_posterior(rules, g, model, unseen)
    inference = WorldInference(rules, model)
    rng = np.random.default_rng(5)
    every = np.array([list(h) + list(t) for h in itertools.combinations(unseen.tolist(), k)
                      for t in itertools.permutations([c for c in unseen.tolist() if c not in h])], np.int64)
    w = inference.weights(history.replay(), every, k, rng)
    keys = [tuple(row.tolist()) for row in every]
    assert set(exact) <= set(keys)
    assert np.allclose(w / w.sum(), [exact.get(key, 0.0) for key in keys], atol=1e-12)
    accepted = {key: 0 for key in exact}
    drawn = draw_worlds(unseen, 20_000, rng)
    weights = inference.weights(history.replay(), drawn, k, rng)
    for row, p in zip(drawn, weights):
        key = (*sorted(row[:k].tolist()), *row[k:].tolist())
        if rng.random() < p:
            accepted[key] += 1
    observed = np.array([accepted[key] for key in exact])
    expected = np.array([exact[key] for key in exact]) * observed.sum()
    assert len(exact) > 1 and observed.sum() > 500
    assert chisquare(observed, expected).pvalue > 1e-3, (observed, expected)


def _hidden_swap(g: GameState, unseen: np.ndarray, rng: np.random.Generator) -> GameState | None:
    """The same hand dealt with two cards the player never saw swapped (one in the opponent's hand, one face down
    in the stock, or two stock cards), replayed: None if the opponent's actions are illegal there or the player
    would have seen anything differently."""
    order = list(g.deal[0])
    hidden = [i for i, c in enumerate(order) if c in set(unseen.tolist())]
    if len(hidden) < 2:
        return None
    i, j = rng.choice(hidden, size=2, replace=False)
    order[i], order[j] = order[j], order[i]
    other = redeal(g, order)
    return None if other is None or (other.hands == g.hands and other.stock == g.stock) else other


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_hidden_card_swaps_change_no_sample_and_no_weight(ruleset):
    """R27: two hands that differ only in cards the player never saw (the opponent's hand, the stock order) and
    show it the same observations give the same worlds, weights and actions, to the same seed."""
    rules = RuleSet.make(ruleset)
    rng = np.random.default_rng(31)
    model = _linear_softmax(rules, 3)
    compared = 0
    for _ in range(60):
        g = GameState.new_hand(rules, rng)
        actions: list[int] = []
        while g.result is None and compared < 30:
            if g.to_move == 0 and actions:
                unseen, _ = world_rows(_seat0_view(g), rules)
                other = _hidden_swap(g, unseen, rng)
                if other is not None and other.to_move == 0:
                    played = []
                    for game in (g, other):
                        agent = ExpertAgent(rules, seed=4, worlds=6, inference="consistent")
                        agent.inference.model = model
                        h = GameState.from_deck(rules, [rules.deck.codes[c] for c in game.deal[0]], game.deal[1])
                        for a in actions:
                            if h.to_move == 0:
                                agent.history.observe(_seat0_view(h))
                                agent.history.acted(a)
                            h.push(a)
                        assert h == game
                        agent.history.observe(_seat0_view(game))
                        template, worlds, k, weights = agent.weighted_worlds(_seat0_view(game))
                        played.append((agent.history.observations, template, worlds, k, weights))
                    (obs_a, *a_rest), (obs_b, *b_rest) = played
                    if all(np.array_equal(x, y) for x, y in zip(obs_a, obs_b)):
                        for x, y in zip(a_rest, b_rest):
                            assert np.array_equal(np.asarray(x), np.asarray(y))
                        compared += 1
            a = _pick(g, rng, 0.3)
            actions.append(a)
            g.push(a)
    assert compared >= 15


def test_a_new_hand_starts_a_new_history_and_an_unreadable_one_weighs_nothing():
    rules = RuleSet.make("schnapsen20")
    rng = np.random.default_rng(2)
    history = HandHistory(rules)
    first = GameState.new_hand(rules, rng)
    while first.to_move != 0:
        first.push(first.legal_actions()[0])
    history.observe(_seat0_view(first))
    history.acted(first.legal_actions()[0])
    second = GameState.new_hand(rules, np.random.default_rng(3))
    while second.to_move != 0:
        second.push(second.legal_actions()[0])
    history.observe(_seat0_view(second))
    assert len(history.observations) == 1 and history.actions == []
    assert WorldInference(rules).weights(None, np.zeros((3, 4), np.int64), 2, rng).tolist() == [1.0, 1.0, 1.0]


def test_model_specs():
    from agents.learned.data import SEARCH_POLICY

    assert POLICY == SEARCH_POLICY
    rules = RuleSet.make("schnapsen20")
    assert opponent_model("consistent", rules) is consistent_model
    g = GameState.new_hand(rules, np.random.default_rng(0))
    obs, mask = encoding.observation(g, 0)[None], g.action_mask()[None]
    for spec in ("uniform", "policy", "heuristic"):
        p = np.asarray(opponent_model(spec, rules)(obs, mask))
        assert p.shape == mask.shape and np.isclose(p.sum(), 1.0) and (p[mask == 0] == 0).all()
    with pytest.raises(ValueError, match="schnapsen20"):
        opponent_model("policy", RuleSet.make("schnapsen10"))
    with pytest.raises(ValueError, match="epsilon"):
        WorldInference(rules, epsilon=1.5)
    with pytest.raises(ValueError, match="inference"):
        ExpertAgent(rules, inference=3)


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_search_agents_with_inference_play_through_the_arena(ruleset):
    """``expert:inference=...`` and ``pimc:inference=...`` as arena specs: whole hands of legal play (the env
    refuses an illegal action), the history kept across each hand."""
    from agents.evaluation.arena import play_match

    for spec in ("expert:inference=consistent,worlds=8,max_nodes=50000", "pimc:inference=uniform,n_samples=4"):
        result = play_match(spec, "heuristic", n_deals=2, ruleset=ruleset, seed=3, workers=1, progress=False)
        assert result.hands == 4


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_an_exchange_whose_old_turn_up_is_led_at_once_is_one_reading(ruleset):
    """The opponent exchanges before the player's first observation and leads the old turn-up at once: nothing in
    the observation shows the exchange (the turn-up is the exchange card, no trump is known in the opponent's
    hand), yet the true deal is one reading of the history (pimc plays this; random play rarely does)."""
    rules = RuleSet.make(ruleset)
    rng = np.random.default_rng(8)
    inference = WorldInference(rules)
    exchange = rules.n_cards + 4
    found = 0
    for _ in range(400):
        g = GameState.new_hand(rules, rng)
        if g.dealer != 0 or not g.is_legal(exchange):
            continue
        old = g.stock[-1]
        g.push(exchange)
        if not g.is_legal(old):
            continue
        g.push(old)
        history = HandHistory(rules)
        history.observe(_seat0_view(g))
        replay = history.replay()
        assert len(replay.alternatives) >= 1
        assert any(inference.replay_deal(r, list(g.deal[0])) is not None for r in [replay, *replay.alternatives])
        unseen, k = world_rows(_seat0_view(g), rules)
        assert inference.weights(replay, np.repeat(_world_of(g, unseen)[None], 20, axis=0), k, rng).max() >= 1.0
        found += 1
    assert found >= 3


def _search_half(agent):
    """The part of an agent that draws its worlds from a generator and keeps the hand's history: the expert of
    ``policy+expert`` / ``expert+``, the sampler of ``policy-rollout``, else the agent itself."""
    return getattr(agent, "expert", None) or getattr(agent, "sampler", None) or agent


@pytest.mark.parametrize("spec, options", [
    ("expert", {"inference": "consistent", "worlds": 8, "max_nodes": 50_000}),
    ("pimc", {"inference": "uniform", "n_samples": 4}),
    ("expert+", {"worlds": 4}),
    ("policy-rollout", {"inference": "policy", "worlds": 4}),
])
def test_observe_hand_then_act_decides_as_the_agent_kept_through_the_hand(spec, options):
    """The agent protocol ``observe_hand`` (agents.base.ObservesHand): at every decision of a hand, an agent built
    afresh and given the player's earlier observations and actions decides as the agent kept through the hand, when
    both draw from the same generator state (the web app builds one per decision from that decision's seed); and it
    keeps the same history. The history matters: without it the expert's world weights differ somewhere."""
    rules = RuleSet.make("schnapsen20")
    whole = make_agent(spec, rules, seed=0, **options)
    other = make_agent("heuristic", rules, seed=1)
    g = GameState.new_hand(rules, rng=np.random.default_rng(5))
    seen, taken, differs, decisions = [], [], False, 0
    while g.result is None:
        obs = {"observation": encoding.observation(g, g.to_move), "action_mask": g.action_mask()}
        if g.to_move == 1:
            g.push(other.act(obs))
            continue
        seed = 100 + decisions
        fresh = make_agent(spec, rules, seed=seed, **options)
        assert observe_hand(fresh, seen, taken)
        _search_half(whole).rng = np.random.default_rng(seed)
        action = whole.act(obs)
        assert fresh.act(obs) == action, f"decision {decisions}"
        h_whole, h_fresh = _search_half(whole).history, _search_half(fresh).history
        assert h_fresh.actions == h_whole.actions == [*taken, action]
        assert all(np.array_equal(a, b) for a, b in zip(h_fresh.observations, h_whole.observations, strict=True))
        if taken and len(np.flatnonzero(obs["action_mask"])) > 1:  # the weights with and without the history
            inference, (unseen, k) = _search_half(fresh).inference, world_rows(obs, rules)
            worlds = draw_worlds(unseen, 16, np.random.default_rng(0))
            full, bare = HandHistory(rules), HandHistory(rules)
            full.load(seen, taken)
            full.observe(obs)
            bare.observe(obs)
            differs |= not np.array_equal(inference.weights(full.replay(), worlds, k, np.random.default_rng(1)),
                                          inference.weights(bare.replay(), worlds, k, np.random.default_rng(1)))
        seen.append(obs["observation"])
        taken.append(action)
        decisions += 1
        g.push(action)
    assert decisions >= 5
    if "policy" in options.get("inference", "policy"):  # a model that prefers some actions: the history weighs
        assert differs, "the history changed no world weight: the check proves nothing"
    with pytest.raises(ValueError, match="one action per observation"):
        observe_hand(whole, seen, taken[:-1])
    assert not observe_hand(make_agent("heuristic", rules, seed=0), seen, taken)  # reads no history
