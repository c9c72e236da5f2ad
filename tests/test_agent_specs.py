"""One agent spec everywhere: every place that takes an agent (the Gymnasium env's ``opponent``, the arena,
``schnapsen-arena``, ``schnapsen-play``, ``train.py``'s evaluation opponents, ``policy+expert``'s policy) accepts
every form of :mod:`schnapsen_env.agent_specs` and refuses a bad spec with the same message."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import schnapsen_env  # noqa: F401  (registers the envs)
from agents.evaluation.arena import play_match
from agents.learned.data import DATA_DIR, SHIPPED_POLICIES
from agents.scripted.random_agent import RandomAgent
from schnapsen_env.agent_specs import resolve_agent, spec_forms

ROOT = Path(__file__).resolve().parent.parent
BAD = "nosuchagent"


def first_legal(observation: dict) -> int:
    """A policy function: observation -> action."""
    return int(np.flatnonzero(observation["action_mask"])[0])


def _forms(tmp_path: Path) -> dict:
    ck = tmp_path / "mine.pt"
    shutil.copy(DATA_DIR / SHIPPED_POLICIES["trained"], ck)
    return {
        "name": "heuristic",
        "name with options": "pimc:n_samples=2,depth=1",
        "checkpoint path": str(ck),
        "agent object": RandomAgent(rules="schnapsen20", seed=0),
        "agent class": RandomAgent,
        "factory taking seed": functools.partial(RandomAgent, rules="schnapsen20"),
        "policy function": first_legal,
    }


def _play_gym(opponent) -> None:
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=opponent)
    obs, _ = env.reset(seed=1)
    done = False
    while not done:
        obs, _, terminated, truncated, _ = env.step(first_legal(obs))
        done = terminated or truncated


def test_every_form_is_an_opponent_and_an_arena_agent(tmp_path):
    for form, spec in _forms(tmp_path).items():
        _play_gym(spec)
        result = play_match(spec, "random", n_deals=1, seed=0, workers=1, progress=False)
        assert result.hands == 2, form


def _message(exc_info) -> str:
    return str(exc_info.value)


def test_a_bad_spec_gets_one_message_everywhere(tmp_path):
    want = f"unknown agent '{BAD}': expected {spec_forms()}"
    with pytest.raises(ValueError) as e:
        resolve_agent(BAD, "schnapsen20")
    assert _message(e) == want
    with pytest.raises(ValueError) as e:
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=BAD)
    assert _message(e) == want
    with pytest.raises(ValueError) as e:
        play_match(BAD, "random", n_deals=1, workers=1, progress=False)
    assert want in _message(e)
    with pytest.raises(ValueError) as e:
        play_match("policy+expert:policy=" + BAD, "random", n_deals=1, workers=1, progress=False)
    assert want in _message(e)
    for argv, prog in ([sys.executable, "-m", "agents.cli.arena", BAD, "random", "--deals", "1"], "schnapsen-arena"), \
            ([sys.executable, "-m", "agents.cli.play", "--opponent", BAD], "schnapsen-play"), \
            ([sys.executable, "train.py", "--final-eval-opponents", BAD, "--run-name", "x"], "train.py"):
        out = subprocess.run(argv, cwd=tmp_path if prog != "train.py" else ROOT, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=300)
        assert out.returncode == 2, (prog, out.stderr)
        assert want in out.stderr and "Traceback" not in out.stderr, (prog, out.stderr)
        assert out.stderr.count("\n") == 1, (prog, out.stderr)


def test_a_bad_object_names_the_forms():
    with pytest.raises(ValueError, match="cannot use 42 as an agent: expected a registered name"):
        resolve_agent(42, "schnapsen20")
    with pytest.raises(ValueError, match="need an opponent given by name"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=first_legal, opponent_kwargs={"depth": 1})
    with pytest.raises(ValueError, match=r"both give \['depth'\]"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="pimc:depth=1", opponent_kwargs={"depth": 2})


def test_a_path_object_a_bad_option_and_a_bad_factory_in_the_gymnasium_env(tmp_path):
    ck = tmp_path / "mine.pt"
    shutil.copy(DATA_DIR / SHIPPED_POLICIES["trained"], ck)
    _play_gym(ck)  # a pathlib.Path, as well as its str
    with pytest.raises(ValueError, match=r"agent 'pimc' takes no argument\(s\) \['bogus'\]"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="pimc", opponent_kwargs={"bogus": 1})
    with pytest.raises(ValueError, match="drop seed="):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="pimc", opponent_kwargs={"seed": 3})
    with pytest.raises(ValueError, match="the factory returned None, which has no act"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=lambda seed=None: None)
    with pytest.raises(ValueError, match=r"agent 'pimc:n_samples=-1' cannot be built: n_samples"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="pimc:n_samples=-1")


def test_a_factory_opponent_is_reseeded_by_a_seeded_reset():
    """A seeded reset rebuilds an opponent given as a factory with a seed drawn from the env's generator, as it does
    for a name: two envs replay the same episodes."""

    def episodes(opponent) -> list[list[int]]:
        env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=opponent)
        played = []
        for seed in range(3):
            obs, _ = env.reset(seed=seed)
            moves, done = [], False
            while not done:
                obs, _, terminated, truncated, _ = env.step(first_legal(obs))
                moves.append(int(np.flatnonzero(obs["action_mask"]).sum()) if not terminated else -1)
                done = terminated or truncated
            played.append(moves)
        return played

    for spec in (RandomAgent, functools.partial(RandomAgent, rules="schnapsen20")):
        assert episodes(spec) == episodes(spec)
