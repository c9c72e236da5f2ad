"""The AEC env plays on the compiled core (its GameState built on demand, then followed through
schnapsen_env.mirror): its observations must equal the reference encoder (``encoding.observation``) value for value,
and the action masks the engine's legal actions, at every decision of every knob set, in hand and match episodes,
after loaded positions and decks, and after the env's game was moved by hand (``push``/``pop``); played on the
compiled state alone it must play exactly what it plays on its GameState. Observations handed out are new arrays: no
later step changes one a caller kept."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from helpers.knob_cases import CASES, case_seed
from helpers.lockstep import case_id, choose
from schnapsen_env import IllegalActionError, encoding, schnapsen_v0
from schnapsen_env.mirror import CoreMirror
from schnapsen_env.rules import PLAYERS, GameState, bits_to_array
from schnapsen_env.ruleset import RuleSet


def _expected(env, agent: str) -> tuple[np.ndarray, np.ndarray]:
    """The reference for ``observe(agent)``: the encoder's vector and the mask of the game's legal actions."""
    game = env.game
    seat = PLAYERS.index(agent)
    obs = encoding.observation(game, seat)
    if game.result is None and game.to_move == seat and not env.terminations[agent]:
        mask = bits_to_array(game.legal_bits(), env.rules.n_actions)
    else:
        mask = np.zeros(env.rules.n_actions, dtype=np.int8)
    return obs, mask


def _check(env) -> None:
    for agent in PLAYERS:
        got = env.observe(agent)
        obs, mask = _expected(env, agent)
        assert got["observation"].dtype == np.float32 and got["action_mask"].dtype == np.int8
        np.testing.assert_array_equal(got["observation"], obs)
        np.testing.assert_array_equal(got["action_mask"], mask)


def _play(env, rng: np.random.Generator, special_p: float = 0.4) -> int:
    """Random legal play (special actions often) until the episode ends, checking both seats at every step."""
    n = 0
    n_cards = env.rules.n_cards
    while not all(env.terminations.values()):
        _check(env)
        env.step(choose(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]), n_cards, rng, special_p))
        n += 1
    _check(env)
    return n


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_observations_equal_the_encoder_every_knob(case):
    ruleset, knobs = case
    rng = np.random.default_rng(17_000 + case_seed(case))
    env = schnapsen_v0.raw_env(ruleset=ruleset, **knobs)
    for k in range(6):
        env.reset(seed=k)
        assert _play(env, rng) >= 2
    menv = schnapsen_v0.raw_env(ruleset=ruleset, episode="match", reward="game_points", **knobs)
    menv.reset(seed=1)
    assert _play(menv, rng, special_p=0.2) >= 2  # several hands: the mirror follows every new deal


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_loaded_positions_and_decks(ruleset):
    rng = np.random.default_rng(5)
    rules = RuleSet.make(ruleset)
    env = schnapsen_v0.raw_env(ruleset=ruleset)
    for k in range(20):
        g = GameState.new_hand(rules, rng)
        for _ in range(int(rng.integers(0, 9))):  # a position in the middle of a hand (history kept or not)
            if g.result is not None:
                break
            g.push(int(rng.choice(g.legal_actions())))
        if g.result is not None:
            continue
        pos = g.position()
        if k % 2:
            pos.pop("history", None)
        if pos["exchanged"] and pos["table"] is not None:
            pos["exchanged"] = False  # from_position refuses this combination (see test_env_sealed.py)
        env.reset(options={"position": pos})
        _play(env, rng)
    deck = list(rules.deck.codes)
    rng.shuffle(deck)
    env.reset(options={"deck": deck, "dealer": "player_1"})
    _play(env, rng)


def test_the_env_follows_its_game_moved_by_hand():
    """push/pop on ``env.game`` (not an API the env offers, but nothing may go stale): the observation follows."""
    rng = np.random.default_rng(3)
    env = schnapsen_v0.raw_env()
    env.reset(seed=3)
    for _ in range(4):
        env.step(int(rng.choice(env.game.legal_actions())))
    _check(env)
    g = env.game
    g.pop()
    env._legal = g.legal_bits()
    _check(env)
    other = [a for a in g.legal_actions() if a != g.actions[-1]] if g.actions else g.legal_actions()
    g.pop()
    g.push(int(other[0]) if other else g.legal_actions()[0])  # same record length, another line of play
    env._legal = g.legal_bits()
    env.agent_selection = PLAYERS[g.to_move]
    _check(env)


def test_mirror_resyncs_after_pop_and_push_of_another_action():
    rules = RuleSet.make()
    rng = np.random.default_rng(11)
    mirror = CoreMirror(rules)
    g = GameState.new_hand(rules, rng)
    for _ in range(3):
        g.push(g.legal_actions()[0])
    legal = g.legal_bits()
    obs, _ = mirror.observe(g, 0, legal)
    np.testing.assert_array_equal(obs, encoding.observation(g, 0))
    g.pop()
    g.push(g.legal_actions()[-1])  # same length, another action
    for seat in (0, 1):
        obs, mask = mirror.observe(g, seat, g.legal_bits())
        np.testing.assert_array_equal(obs, encoding.observation(g, seat))
        np.testing.assert_array_equal(mask, bits_to_array(g.legal_bits(), rules.n_actions))
    copy = g.copy()  # another object, same game
    np.testing.assert_array_equal(mirror.observe(copy, 1, 0)[0], encoding.observation(copy, 1))


@pytest.mark.parametrize("make", [schnapsen_v0.raw_env, schnapsen_v0.env])
def test_observations_handed_out_are_never_overwritten(make):
    """Every observe()/last() returns new arrays (as PettingZoo's classic envs do): arrays a caller keeps keep
    their values through later steps and resets, and no two share memory."""
    rng = np.random.default_rng(0)
    env = make()
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    for episode in range(3):
        env.reset(seed=episode)
        for agent in env.agent_iter():
            obs, _rew, term, trunc, _info = env.last()
            other = env.observe(PLAYERS[1 - PLAYERS.index(agent)])
            for o in (obs, other):
                kept.append((o, {k: v.copy() for k, v in o.items()}))
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(rng.integers(len(legal)))]))
    for o, values in kept:
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(o[key], values[key])
    arrays = [o[key] for o, _ in kept for key in ("observation", "action_mask")]
    for k in range(1, len(arrays)):
        assert not np.shares_memory(arrays[k - 1], arrays[k])


def test_observe_an_agent_removed_after_an_illegal_move():
    """``env()`` ends the episode on an illegal move (``TerminateIllegalWrapper``) with the hand unfinished, so the
    game still names a seat to move. Once PettingZoo's loop had removed that agent (its ``None`` step), ``observe``
    of it raised KeyError (it read ``terminations[agent]``); it gives the encoder's observation and an all-zero
    mask, as after every other end (API.md)."""
    env = schnapsen_v0.env()
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(int(np.flatnonzero(mask == 0)[0]))
    game = env.unwrapped.game
    assert game.result is None
    for _agent in env.agent_iter():
        env.step(None)
        for agent in PLAYERS:
            got = env.observe(agent)
            np.testing.assert_array_equal(got["observation"], encoding.observation(game, PLAYERS.index(agent)))
            assert not got["action_mask"].any()
    assert env.agents == []


def _same(a, b) -> None:
    """Two AEC envs in the same place: agent to move, both seats' observations and masks, rewards, terminations,
    infos and the state vector."""
    assert a.agent_selection == b.agent_selection
    assert a.rewards == b.rewards and a._cumulative_rewards == b._cumulative_rewards
    assert a.terminations == b.terminations and a.infos == b.infos
    for agent in PLAYERS:
        got, want = a.observe(agent), b.observe(agent)
        np.testing.assert_array_equal(got["observation"], want["observation"])
        np.testing.assert_array_equal(got["action_mask"], want["action_mask"])
    np.testing.assert_array_equal(a.state(), b.state())


@pytest.mark.parametrize("case", CASES[::2], ids=[case_id(c) for c in CASES[::2]])
@pytest.mark.parametrize("episode", ["hand", "match"])
def test_the_compiled_env_plays_what_the_game_env_plays(case, episode):
    """The env plays on the compiled state alone while nobody asks for its ``GameState`` (``fast``), and on the
    ``GameState`` once asked (``ref``, asked at every deal): the same observations, masks, rewards, infos and state
    vectors at every step, the same errors for illegal actions (leaving the env unchanged), actions by name, and
    an equal ``GameState`` (position and record) when the fast env's is asked for at the end."""
    ruleset, knobs = case
    kwargs = dict(ruleset=ruleset, **knobs)
    if episode == "match":
        kwargs.update(episode="match", reward="game_points")
    rng = np.random.default_rng(23_000 + case_seed(case))
    fast, ref = schnapsen_v0.raw_env(**kwargs), schnapsen_v0.raw_env(**kwargs)
    names = fast.action_names
    for k in range(3):
        fast.reset(seed=k)
        ref.reset(seed=k)
        game = ref.game  # the reference env plays on its GameState from here
        while not all(fast.terminations.values()):
            if ref.game is not game:  # a match's next hand
                game = ref.game
            assert fast._game is None  # still on the compiled state alone (what this test is about)
            _same(fast, ref)
            mask = ref.observe(ref.agent_selection)["action_mask"]
            if rng.random() < 0.2:
                bad = int(rng.choice(np.flatnonzero(mask == 0))) if (mask == 0).any() else 64
                with pytest.raises(IllegalActionError) as want:
                    ref.step(bad)
                with pytest.raises(IllegalActionError) as got:
                    fast.step(bad)
                assert str(got.value) == str(want.value)
                _same(fast, ref)
            legal = np.flatnonzero(mask)
            action = int(legal[int(rng.integers(len(legal)))])
            if rng.random() < 0.1:
                fast.step(names[action])
                ref.step(names[action])
            else:
                fast.step(np.int64(action) if rng.random() < 0.1 else action)
                ref.step(action)
        _same(fast, ref)
        assert fast.game.position() == ref.game.position()
        assert (fast.game.deal, fast.game.actions) == (ref.game.deal, ref.game.actions)


def test_the_env_builds_its_game_mid_hand_and_follows_it():
    """``env.game`` asked in the middle of a hand played on the compiled state is the hand so far (with its record),
    the same object for the rest of the hand, kept in step by the env; before any reset it is None."""
    env = schnapsen_v0.raw_env()
    assert env.game is None and not env.has_hand
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(5):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    ref = GameState.new_hand(env.rules, np.random.default_rng(5))
    for a in env.game.actions:
        ref.push(a)
    g = env.game
    assert g == ref and g.actions == ref.actions and g.deal == ref.deal
    a = int(rng.choice(g.legal_actions()))
    env.step(a)
    ref.push(a)
    assert env.game is g and g == ref
