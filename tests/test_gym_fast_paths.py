"""The Gymnasium env's faster paths: the infos it returns are fresh copies equal to what
``copy.deepcopy`` gave (no dict shared with the AEC env or with an earlier step), and its observations equal the
reference encoder's and are never overwritten by later steps."""

from __future__ import annotations

import copy
from enum import Enum

import numpy as np
import pytest

from schnapsen_env import encoding
from schnapsen_env.gym_env import SchnapsenGymEnv, _fresh_copy
from schnapsen_env.rules import PLAYERS


def _dicts(value, out: list) -> list:
    if isinstance(value, dict):
        out.append(value)
        for v in value.values():
            _dicts(v, out)
    elif isinstance(value, list):
        out.append(value)
        for v in value:
            _dicts(v, out)
    return out


class _Color(Enum):
    RED = 1


def test_fresh_copy_equals_deepcopy():
    class Box:
        def __init__(self):
            self.items = [1, 2]

        def __eq__(self, other):
            return isinstance(other, Box) and self.items == other.items

    value = {"a": {"b": [1, {"c": "x"}], "d": None}, "e": 1.5, "f": True, "g": _Color.RED, "h": (1, 2), "i": Box()}
    got = _fresh_copy(value)
    assert got == copy.deepcopy(value)
    assert got["a"] is not value["a"] and got["a"]["b"] is not value["a"]["b"]
    assert got["a"]["b"][1] is not value["a"]["b"][1]
    assert got["i"] is not value["i"] and got["i"].items is not value["i"].items  # other objects: deepcopy
    assert got["g"] is _Color.RED


@pytest.mark.parametrize("kwargs", [{}, {"episode": "match", "reward": "game_points"},
                                    {"ruleset": "sixtysix24", "episode": "match"}])
def test_gym_infos_are_fresh_and_observations_exact(kwargs):
    rng = np.random.default_rng(0)

    def opponent(obs):
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[int(rng.integers(len(legal)))])

    env = SchnapsenGymEnv(opponent=opponent, **kwargs)
    kept = []
    for episode in range(4):
        obs, info = env.reset(seed=episode)
        terminated = False
        while True:
            aec = env.aec
            learner = PLAYERS.index(env.learner)
            np.testing.assert_array_equal(obs["observation"], encoding.observation(aec.game, learner))
            expected = copy.deepcopy(aec.infos[env.learner])
            expected["learner"] = env.learner
            extra = {k: v for k, v in info.items() if k not in expected}
            assert set(extra) <= {"reward_before_first_move"}
            assert {k: v for k, v in info.items() if k in expected} == expected
            held = {id(d) for d in _dicts(aec.infos, [])}
            assert not any(id(d) in held for d in _dicts(info, []))
            for _o, i, _v in kept[-1:]:
                assert not any(d is e for d in _dicts(info, []) for e in _dicts(i[0], []))
            kept.append((obs, (info, copy.deepcopy(info)), {k: v.copy() for k, v in obs.items()}))
            if terminated:
                break
            legal = np.flatnonzero(obs["action_mask"])
            obs, _reward, terminated, _truncated, info = env.step(int(legal[int(rng.integers(len(legal)))]))
    for obs, (info, info_copy), values in kept:
        assert info == info_copy
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(obs[key], values[key])


def test_render_before_reset_says_to_reset():
    import gymnasium
    import pytest

    import schnapsen_env  # noqa: F401  (registers the envs)

    env = gymnasium.make("schnapsen_env/Schnapsen-v0", render_mode="ansi")
    with pytest.raises(RuntimeError, match=r"call reset\(\) before render\(\)"):
        env.unwrapped.render()
