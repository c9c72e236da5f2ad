"""Conformance of the envs with PettingZoo's and Gymnasium's own checkers, pickling, seeding,
and the vectorised env against the AEC env step by step."""

from __future__ import annotations

import pickle
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, render_test, seed_test

import schnapsen_env  # noqa: F401  (registers the Gymnasium id)
from helpers.play import random_episode
from schnapsen_env import IllegalActionError, InvalidPositionError, RulesError, schnapsen_v0
from schnapsen_env.encoding import obs_size, state_size
from schnapsen_env.vector import SchnapsenVectorEnv

CONFIGS = [
    {"ruleset": "schnapsen20", "episode": "hand"},
    {"ruleset": "sixtysix24", "episode": "hand"},
    {"ruleset": "schnapsen20", "episode": "match"},
    {"ruleset": "sixtysix24", "episode": "match", "reward": "game_points"},
]


@pytest.fixture(autouse=True)
def _quiet_api_test_warning():
    # api_test passes reset(options={"options": 1}); our env warns about the unknown key.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="reset\\(\\) ignores unknown option")
        yield


@pytest.mark.parametrize("kwargs", CONFIGS, ids=lambda k: "-".join(map(str, k.values())))
def test_pettingzoo_api_seed_render(kwargs):
    api_test(schnapsen_v0.env(**kwargs), num_cycles=200)
    seed_test(lambda: schnapsen_v0.env(**kwargs), num_cycles=30)
    render_test(lambda render_mode=None: schnapsen_v0.env(render_mode=render_mode, **kwargs))


@pytest.mark.parametrize("kwargs", CONFIGS, ids=lambda k: "-".join(map(str, k.values())))
def test_gymnasium_check_env(kwargs):
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", **kwargs)
    check_env(env.unwrapped, skip_render_check=True)


def test_spaces_cached_and_sized():
    env = schnapsen_v0.raw_env()
    assert env.observation_space("player_0") is env.observation_space("player_0")
    assert env.action_space("player_1") is env.action_space("player_1")
    assert env.action_space("player_0").n == 27
    assert env.observation_space("player_0")["observation"].shape == (obs_size(env.rules),) == (255,)
    env66 = schnapsen_v0.raw_env(ruleset="sixtysix24")
    assert env66.action_space("player_0").n == 31
    assert env66.observation_space("player_0")["observation"].shape == (299,)
    env.reset(seed=0)
    assert env.state().shape == env.state_space.shape == (state_size(env.rules),)
    assert env.state_space.contains(env.state())
    assert env.metadata["is_parallelizable"] is False
    assert env.possible_agents == ["player_0", "player_1"]


def test_action_names_and_numpy_actions():
    env = schnapsen_v0.env()
    env.reset(seed=3)
    names = env.unwrapped.action_names
    assert names[0] == "play AC" and names[19] == "play JS" and names[20:] == [
        "marriage C", "marriage D", "marriage H", "marriage S", "exchange", "close", "claim"]
    obs, *_ = env.last()
    action = np.int64(np.flatnonzero(obs["action_mask"])[0])
    env.step(action)  # numpy integers are accepted


def test_masks_of_waiting_agent_and_after_end_are_zero():
    env = schnapsen_v0.raw_env()
    env.reset(seed=5)
    waiting = "player_1" if env.agent_selection == "player_0" else "player_0"
    assert env.observe(waiting)["action_mask"].sum() == 0
    assert env.observe(env.agent_selection)["action_mask"].sum() >= 1
    rng = np.random.default_rng(0)
    while not all(env.terminations.values()):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    for agent in env.possible_agents:
        assert env.observe(agent)["action_mask"].sum() == 0


def test_hand_rewards_zero_sum_and_equal_game_points():
    env = schnapsen_v0.raw_env()
    rng = np.random.default_rng(1)
    for seed in range(30):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
        result = env.infos["player_0"]["result"]
        r0, r1 = env._cumulative_rewards["player_0"], env._cumulative_rewards["player_1"]
        assert r0 + r1 == 0
        if result["winner"] is None:
            assert r0 == 0
        else:
            assert env._cumulative_rewards[result["winner"]] == result["game_points"] >= 1
        assert env.position()["result"] == result


def test_match_episode_reaches_target_and_pays_plus_minus_one():
    env = schnapsen_v0.raw_env(episode="match")
    env.reset(seed=11)
    ended = []  # after every step: whether a hand ended there
    total = random_episode(env, np.random.default_rng(2), lambda e: ended.append("last_hand" in e.infos["player_0"]))
    hands = sum(ended)
    info = env.infos["player_0"]
    winner = info["match_winner"]
    assert info["match_points"][winner] >= 7 > info["match_points"]["player_1" if winner == "player_0" else "player_0"]
    assert total[winner] == 1 and sum(total.values()) == 0
    assert hands >= 2  # a match to 7 needs at least 3 hands; hands counts the steps after which one ended


def test_match_game_points_rewards_add_up_to_match_score():
    env = schnapsen_v0.raw_env(episode="match", reward="game_points")
    env.reset(seed=4)
    total = random_episode(env, np.random.default_rng(3))
    mp = env.infos["player_0"]["match_points"]
    assert total["player_0"] == mp["player_0"] - mp["player_1"] == -total["player_1"]


def test_reset_options_deck_and_position():
    deck = "AS TS KS QS JS AH TH KH QH JH AD TD KD QD JD AC TC KC QC JC".split()
    env = schnapsen_v0.raw_env()
    env.reset(options={"deck": deck, "dealer": "player_0"})
    pos = env.position()
    assert sorted(pos["hands"]["player_1"]) == sorted(["AS", "TS", "KS", "KH", "QH"])
    assert env.agent_selection == "player_1"
    env2 = schnapsen_v0.raw_env()
    env2.reset(options={"position": pos})
    assert env2.position() == pos
    with pytest.raises(ValueError, match="dealer"):
        env.reset(options={"deck": deck})
    with pytest.raises(InvalidPositionError, match="missing"):
        env.reset(options={"deck": deck[:-1], "dealer": "player_0"})
    with pytest.raises(InvalidPositionError):
        env.reset(options={"position": {"trump": "H"}})
    with pytest.warns(UserWarning, match="unknown option"):
        env.reset(options={"dek": deck})


def test_bad_constructor_arguments():
    with pytest.raises(RulesError, match="unknown rule key"):
        schnapsen_v0.raw_env(nonsense=1)
    with pytest.raises(ValueError, match="episode"):
        schnapsen_v0.raw_env(episode="season")
    with pytest.raises(ValueError, match="reward"):
        schnapsen_v0.raw_env(episode="match", reward="elo")


def test_raw_env_raises_on_illegal_and_wrapped_env_terminates():
    raw = schnapsen_v0.raw_env()
    raw.reset(seed=0)
    mask = raw.observe(raw.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = raw.position()
    with pytest.raises(IllegalActionError, match="illegal action"):
        raw.step(illegal)
    assert raw.position() == before
    env = schnapsen_v0.env()
    env.reset(seed=0)
    agent = env.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards[agent] == schnapsen_v0.ILLEGAL_REWARD == -3


def test_pickle_roundtrip_midgame():
    env = schnapsen_v0.raw_env()
    env.reset(seed=8)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    clone = pickle.loads(pickle.dumps(env))
    clone.reset(seed=8)
    env.reset(seed=8)
    assert clone.position() == env.position()


def test_render_hides_opponent_unless_revealed():
    env = schnapsen_v0.raw_env(render_mode="ansi")
    env.reset(seed=2)
    viewer = env.agent_selection
    other = "player_1" if viewer == "player_0" else "player_0"
    text = env.render()
    assert "??" in text
    from schnapsen_env.render import card_text

    hidden = env.position()["hands"][other]
    opp_line = [line for line in text.splitlines() if "(opponent)" in line][0]
    assert not any(card_text(c) in opp_line for c in hidden)
    env_r = schnapsen_v0.raw_env(render_mode="ansi", render_reveal=True)
    env_r.reset(seed=2)
    opp_line = [line for line in env_r.render().splitlines() if "(opponent)" in line][0]
    assert all(card_text(c) in opp_line for c in hidden)


def _aec_rollout(seed, n_steps, actions_rng, ruleset):
    env = schnapsen_v0.raw_env(ruleset=ruleset)
    env.reset(seed=seed)
    trace = []
    for _ in range(n_steps):
        agent = env.agent_selection
        o = env.observe(agent)
        a = int(actions_rng.choice(np.flatnonzero(o["action_mask"])))
        trace.append((agent, o["observation"].copy(), o["action_mask"].copy(), a))
        env.step(a)
        if all(env.terminations.values()):
            trace.append(("end", env.infos["player_0"]["result"]))
            env.reset()
    return trace


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_vector_env_matches_aec_env(ruleset):
    seeds = [3, 17, 99]
    n_steps = 120
    traces = [_aec_rollout(s, n_steps, np.random.default_rng(1000 + s), ruleset) for s in seeds]
    venv = SchnapsenVectorEnv(len(seeds), ruleset=ruleset)
    obs, masks, to_move = venv.reset(seed=seeds)
    rngs = [np.random.default_rng(1000 + s) for s in seeds]
    cursors = [0] * len(seeds)
    for _ in range(n_steps):
        actions = np.zeros(len(seeds), dtype=np.int64)
        for i in range(len(seeds)):
            agent, o, m, a = traces[i][cursors[i]]
            assert f"player_{to_move[i]}" == agent
            np.testing.assert_array_equal(obs[i], o)
            np.testing.assert_array_equal(masks[i], m)
            assert int(rngs[i].choice(np.flatnonzero(masks[i]))) == a
            actions[i] = a
            cursors[i] += 1
        obs, masks, to_move, rewards, dones, infos = venv.step(actions)
        for i in range(len(seeds)):
            if dones[i]:
                tag, result = traces[i][cursors[i]]
                assert tag == "end"
                r = infos["results"][i]
                assert result == {"winner": None if r.winner is None else f"player_{r.winner}",
                                  "game_points": r.game_points, "reason": r.reason}
                assert rewards[i].sum() == 0
                cursors[i] += 1
            else:
                assert not rewards[i].any()


def test_vector_env_rejects_illegal_and_bad_shapes():
    venv = SchnapsenVectorEnv(2)
    _, masks, _ = venv.reset(seed=0)
    bad = np.array([int(np.flatnonzero(masks[0] == 0)[0]), int(np.flatnonzero(masks[1])[0])])
    with pytest.raises(IllegalActionError, match="slot 0"):
        venv.step(bad)
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="num_envs"):
        SchnapsenVectorEnv(0)


def test_gym_env_seat_opponent_and_masks():
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="random", seat="player_1").unwrapped
    obs, info = env.reset(seed=1)
    assert info["learner"] == "player_1"
    np.testing.assert_array_equal(env.action_masks(), obs["action_mask"].astype(bool))
    done = False
    total = 0.0
    while not done:
        obs, r, done, trunc, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        total += r
    assert info["result"]["game_points"] in (1, 2, 3)
    assert abs(total) == info["result"]["game_points"]
    with pytest.raises(ValueError, match="unknown agent"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="grandmaster")


def test_gym_env_illegal_action_modes():
    env = gymnasium.make("schnapsen_env/Schnapsen-v0").unwrapped
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _, r, term, _, info = env.step(illegal)
    assert term and r == -3 and info["illegal_action"]
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", illegal_action="raise").unwrapped
    env.reset(seed=0)
    with pytest.raises(IllegalActionError):
        env.step(illegal)


def test_gym_action_masks_all_false_after_an_illegal_action_ended_the_episode():
    """After an illegal action ends the episode (``illegal_action="terminate"``) the returned mask is all zeros, but
    ``action_masks()`` still gave the learner's legal actions of the unfinished hand; nothing is legal once the
    episode is over, as after a hand played to its end."""
    env = gymnasium.make("schnapsen_env/Schnapsen-v0").unwrapped
    obs, _ = env.reset(seed=0)
    obs, _, term, _, _ = env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert term and not obs["action_mask"].any()
    masks = env.action_masks()
    assert masks.dtype == bool and masks.shape == obs["action_mask"].shape and not masks.any()
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(env.action_masks(), obs["action_mask"].astype(bool))


def test_maskable_ppo_trains_if_installed():
    sb3c = pytest.importorskip("sb3_contrib")
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="random")
    model = sb3c.MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=128)
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
    assert obs["action_mask"][int(action)] == 1


# ------------------------------------------------------------------ regressions: envs (named after what broke)
def test_illegal_opponent_action_left_gym_env_half_stepped_bug():
    """An opponent returning an illegal action left the Gymnasium env half-stepped (the learner's move played, the
    episode going on); now it raises and the episode is aborted until reset()."""
    calls = {"n": 0}

    def opponent(obs):
        calls["n"] += 1
        return 26 if calls["n"] == 2 else int(np.flatnonzero(obs["action_mask"])[0])

    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=opponent, seat="player_0").unwrapped
    obs, _ = env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="opponent returned"):
        for _ in range(30):
            obs, *_ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_failed_gym_reset_changed_the_env_bug():
    """A Gymnasium reset with a bad position changed the learner seat, the game and the generator before failing."""
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="random").unwrapped
    env.reset(seed=0)
    before = (env.learner, env.aec.position(), env.np_random.bit_generator.state)
    with pytest.raises(InvalidPositionError):
        env.reset(options={"position": {"bogus": 1}})
    assert (env.learner, env.aec.position(), env.np_random.bit_generator.state) == before


def test_failed_aec_reset_reseeded_the_generator_bug():
    """raw_env.reset(seed=..., options=<bad deck>) reseeded the generator before failing."""
    a, b = schnapsen_v0.raw_env(), schnapsen_v0.raw_env()
    a.reset(seed=1)
    b.reset(seed=1)
    with pytest.raises(InvalidPositionError):
        b.reset(seed=99, options={"deck": ["AS"], "dealer": "player_0"})
    a.reset()
    b.reset()
    assert a.position() == b.position()


def test_gym_env_took_bool_float_str_actions_bug():
    """step() took True, 1.0 and "1" as action ids, and an illegal action that ended the episode left the mask
    non-zero."""
    env = gymnasium.make("schnapsen_env/Schnapsen-v0").unwrapped
    obs, _ = env.reset(seed=0)
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    for bad in (True, float(legal), str(legal)):
        with pytest.raises(IllegalActionError, match="int action id"):
            env.step(bad)
    env.step(np.array(legal))  # a 0-d array, as model.predict returns, is accepted
    env.reset(seed=0)
    obs, r, term, _, _ = env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert term and r == -3 and obs["action_mask"].sum() == 0


def test_raw_env_used_before_reset_gave_obscure_error_bug():
    """observe(), state(), position() and render() before reset() failed with an AttributeError on None instead
    of saying to call reset()."""
    env = schnapsen_v0.raw_env(render_mode="ansi")
    for call in (lambda: env.observe("player_0"), env.state, env.position, env.render):
        with pytest.raises(RuntimeError, match="reset"):
            call()


def test_vector_env_took_finished_slots_and_non_integer_inputs_bug():
    """The vector env's set_state took a finished hand in a slot, step() took bool and overflowing uint64 actions,
    reset() took non-integer seeds."""
    from schnapsen_env import GameState, RuleSet

    venv = SchnapsenVectorEnv(2)
    venv.reset(seed=0)
    state = venv.get_state()
    s = GameState.new_hand(RuleSet.make(), np.random.default_rng(0))
    while s.result is None:
        s.push(s.legal_actions()[0])
    state["positions"][0] = s.position()
    with pytest.raises(InvalidPositionError, match="slot 0 holds a finished hand"):
        venv.set_state(state)
    with pytest.raises(IllegalActionError, match="integer"):
        venv.step(np.array([True, False]))
    with pytest.raises(IllegalActionError):
        venv.step(np.array([2**64 - 1, 0], dtype=np.uint64))
    for bad_seed in (1.5, "12"):
        with pytest.raises(ValueError, match="seed"):
            venv.reset(seed=bad_seed)
    with pytest.raises(ValueError, match="get_state"):
        venv.set_state({})


# ------------------------------------------------------------------ without_infos
def test_without_infos_hides_only_the_infos():
    """``without_infos`` (for TorchRL / Tianshou): empty infos, the same observations, rewards and order."""
    plain, bare = schnapsen_v0.env(), schnapsen_v0.without_infos(schnapsen_v0.env())
    for e in (plain, bare):
        e.reset(seed=11)
    rng = np.random.default_rng(0)
    saw_result = False
    for agent in plain.agent_iter():
        o1, r1, t1, tr1, i1 = plain.last()
        o2, r2, t2, tr2, i2 = bare.last()
        assert bare.agent_selection == agent
        assert np.array_equal(o1["observation"], o2["observation"])
        assert np.array_equal(o1["action_mask"], o2["action_mask"])
        assert (r1, t1, tr1) == (r2, t2, tr2)
        assert i1 and i2 == {} and bare.infos == {a: {} for a in bare.agents}
        saw_result |= "result" in i1
        a = None if t1 or tr1 else int(rng.choice(np.flatnonzero(o1["action_mask"])))
        plain.step(a)
        bare.step(a)
    assert saw_result and not bare.agents


def test_without_infos_passes_the_api_test():
    api_test(schnapsen_v0.without_infos(schnapsen_v0.env()), num_cycles=100)


def test_without_infos_refuses_a_non_env():
    for bad in (None, object(), "schnapsen_v0"):
        with pytest.raises(TypeError, match="PettingZoo AEC env"):
            schnapsen_v0.without_infos(bad)
