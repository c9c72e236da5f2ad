"""Every info key the envs emit is documented in docs/envs.md ("Info keys"), and every documented key is emitted:
random play of hand and match episodes of every ruleset collects them."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium
import numpy as np

import schnapsen_env  # noqa: F401  (registers the envs)
from schnapsen_env import schnapsen_v0
from schnapsen_env.vector import SchnapsenVectorEnv

DOC = Path(__file__).resolve().parent.parent / "docs" / "envs.md"


def _documented() -> dict[str, set[str]]:
    text = DOC.read_text(encoding="utf-8").split("<!-- info keys -->", 1)[1]
    keys: dict[str, set[str]] = {}
    for env, key in re.findall(r"^\| (AEC|Gymnasium|vector) \| `(\w+)` \|", text, re.M):
        keys.setdefault(env, set()).add(key)
    return keys


def _aec_keys(rng: np.random.Generator) -> set[str]:
    keys: set[str] = set()
    for ruleset in ("schnapsen20", "sixtysix24", "schnapsen10"):
        for episode in ("hand", "match"):
            env = schnapsen_v0.raw_env(ruleset=ruleset, episode=episode)
            env.reset(seed=int(rng.integers(1000)))
            for _agent in env.agent_iter():
                obs, _, term, trunc, info = env.last()
                keys |= set(info)
                env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            for info in env.infos.values():
                keys |= set(info)
    return keys


def _gym_keys(rng: np.random.Generator) -> set[str]:
    keys: set[str] = set()
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="random")
    for episode in range(6):
        obs, info = env.reset(seed=episode)
        keys |= set(info)
        done = False
        while not done:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(rng.integers(env.action_space.n)) if episode == 5 else int(rng.choice(legal))
            obs, _, terminated, truncated, info = env.step(action)  # episode 5: an illegal action ends it
            keys |= set(info)
            done = terminated or truncated
    return keys


def test_every_info_key_is_documented_and_every_documented_key_is_emitted():
    rng = np.random.default_rng(7)
    documented = _documented()
    aec = _aec_keys(rng)
    assert aec == documented["AEC"]
    gym = _gym_keys(rng)
    assert gym - aec == documented["Gymnasium"] and gym >= {"points", "tricks", "result"}
    venv = SchnapsenVectorEnv(num_envs=2)
    _, masks, _ = venv.reset(seed=0)
    _, _, _, _, _, infos = venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))
    assert set(infos) == documented["vector"]
