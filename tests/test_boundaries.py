"""Package boundaries: ``schnapsen_env`` never imports ``agents``; named opponents come from the agent
registry (:mod:`schnapsen_env.agent_registry`), which the agents package fills, found through the project's entry
point when the user imported only ``schnapsen_env``.

* Statically: no module of ``schnapsen_env`` imports ``agents`` (``import``, ``from ... import``,
  ``importlib.import_module``/``__import__`` with a literal name).
* At run time, in a fresh process: importing every module of ``schnapsen_env`` and playing the Gymnasium env with
  an unnamed opponent, the AEC env and the vector env loads no ``agents`` module.
* In a fresh process whose metadata is this checkout's ``pyproject.toml`` (a dist-info written from it, so the
  test does not depend on when the project was last installed): ``gymnasium.make(..., opponent="heuristic")``
  works without importing ``agents`` first, exactly as for a user.
* The registry: a registered agent is built for the env's rules with a seed; bad and duplicate names are refused
  with clear messages.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import schnapsen_env  # noqa: F401  (registers "schnapsen_env/Schnapsen-v0")
from schnapsen_env import RuleSet, agent_registry

ROOT = Path(__file__).resolve().parent.parent
ENV_SOURCES = sorted((ROOT / "schnapsen_env").rglob("*.py"))


def _upward_imports(source: str, where: str) -> list[str]:
    """``where:line name`` for every import of ``agents`` in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source, filename=where)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif isinstance(node, ast.Call):
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if fname in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
                names = [str(node.args[0].value)]
        found += [f"{where}:{node.lineno} {n}" for n in names if n == "agents" or n.startswith("agents.")]
    return found


def test_env_sources_do_not_import_agents():
    assert len(ENV_SOURCES) > 10
    hits = [hit for path in ENV_SOURCES
            for hit in _upward_imports(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert hits == []


def test_the_static_check_finds_upward_imports():
    probe = ("import numpy, agents.base\nfrom agents.evaluation.arena import play_match\nimport importlib\n"
             "def f():\n    return importlib.import_module('agents')\nfrom schnapsen_env import rules\n")
    assert _upward_imports(probe, "probe.py") == ["probe.py:1 agents.base", "probe.py:2 agents.evaluation.arena",
                                                  "probe.py:5 agents"]


def _run(code: str, extra_path: list[Path] | None = None) -> dict:
    """Run ``code`` in a fresh interpreter in the checkout (so it imports this checkout's packages); the code
    prints one JSON line last."""
    env = None
    if extra_path:
        import os

        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(p) for p in extra_path] + [env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_using_the_env_loads_no_agents_module():
    out = _run("""
        import importlib, importlib.util, json, pkgutil, sys
        import gymnasium, numpy as np
        import schnapsen_env
        for m in pkgutil.walk_packages(schnapsen_env.__path__, "schnapsen_env."):
            if m.name == "schnapsen_env.openspiel" and importlib.util.find_spec("pyspiel") is None:
                continue  # needs the optional extra "openspiel"
            importlib.import_module(m.name)
        from schnapsen_env import RuleSet, schnapsen_v0
        from schnapsen_env.vector import SchnapsenVectorEnv

        first_legal = lambda obs: int(np.flatnonzero(obs["action_mask"])[0])
        env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=first_legal)
        for seed in range(3):
            obs, info = env.reset(seed=seed)
            done = info.get("result") is not None
            while not done:
                obs, r, done, trunc, info = env.step(first_legal(obs))
        aec = schnapsen_v0.env(ruleset="sixtysix24")
        aec.reset(seed=0)
        for agent in aec.agent_iter():
            obs, r, term, trunc, info = aec.last()
            aec.step(None if term or trunc else first_legal(obs))
        vec = SchnapsenVectorEnv(4)
        vec.reset(seed=0)
        print(json.dumps({"file": schnapsen_env.__file__,
                          "agents": sorted(m for m in sys.modules if m == "agents" or m.startswith("agents."))}))
    """)
    assert Path(out["file"]).resolve().parent == ROOT / "schnapsen_env"
    assert out["agents"] == []


def _dist_info_from_pyproject(folder: Path) -> Path:
    """A dist-info of this checkout (name, version and entry points from ``pyproject.toml``), as ``pip install``
    writes it, in ``folder``."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = folder / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    groups = dict(project.get("entry-points", {}))
    groups["console_scripts"] = project.get("scripts", {})
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()) + "\n"
        for group, entries in groups.items()))
    return info


def test_a_named_opponent_works_without_importing_agents(tmp_path):
    _dist_info_from_pyproject(tmp_path)
    out = _run("""
        import json, sys
        import gymnasium
        import schnapsen_env
        before = "agents" in sys.modules
        env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="heuristic", must_head=False)
        env.reset(seed=0)
        inner = env.unwrapped
        print(json.dumps({"before": before, "type": type(inner.opponent).__name__,
                          "same_rules": inner.opponent.rules == inner.rules,
                          "agents_file": sys.modules["agents"].__file__}))
    """, extra_path=[tmp_path])
    assert out["before"] is False
    assert out["type"] == "HeuristicAgent" and out["same_rules"]
    assert Path(out["agents_file"]).resolve().parent == ROOT / "agents"


def test_the_project_declares_its_agents_entry_point():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"][agent_registry.ENTRY_POINT_GROUP] == {"agents": "agents"}


# ------------------------------------------------------------------------------------------------ registry
class _Echo:
    """A minimal agent: plays the first legal action, remembers how it was built."""

    name = "echo"

    def __init__(self, rules, seed=None, bias=0):
        self.rules, self.seed, self.bias = rules, seed, bias

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.fixture
def echo():
    agent_registry.register_agent("echo-test", _Echo)
    yield "echo-test"
    agent_registry.unregister_agent("echo-test")


def test_a_registered_agent_is_a_named_opponent_built_for_the_env_rules(echo):
    assert echo in agent_registry.agent_names()
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=echo, opponent_kwargs={"bias": 3},
                         ruleset="sixtysix24", tie="last_trick").unwrapped
    assert isinstance(env.opponent, _Echo) and env.opponent.bias == 3
    assert env.opponent.rules == env.rules == RuleSet.make("sixtysix24", tie="last_trick")
    env.reset(seed=4)
    seed = env.opponent.seed
    assert isinstance(seed, int)  # a seeded reset rebuilds the opponent with a seed from the env's generator
    env.reset(seed=4)
    assert env.opponent.seed == seed


def test_the_registry_refuses_bad_and_duplicate_names(echo):
    with pytest.raises(ValueError, match="already registered"):
        agent_registry.register_agent(echo, lambda rules, seed=None: None)
    agent_registry.register_agent(echo, _Echo)  # the same factory again is fine
    for bad in ("", "a:b", " x", None):
        with pytest.raises(ValueError, match="agent name"):
            agent_registry.register_agent(bad, _Echo)
    with pytest.raises(TypeError, match="callable"):
        agent_registry.register_agent("not-callable", 3)
    with pytest.raises(ValueError, match=r"unknown agent 'grandmaster': expected one of \[.*'echo-test'"):
        agent_registry.make_agent("grandmaster", "schnapsen20")
    with pytest.raises(TypeError, match="RuleSet"):
        agent_registry.make_agent(echo, None)


def test_a_checkpoint_path_is_the_gymnasium_opponent(tmp_path):
    """``opponent="path/to/policy.pt"`` works in the Gymnasium env as in the arena: the registered checkpoint loader
    builds the policy; a missing file is one clear error."""
    import shutil

    import gymnasium
    import numpy as np

    from agents.learned.data import DATA_DIR, SHIPPED_POLICIES

    ck = tmp_path / "policy.pt"
    shutil.copy(DATA_DIR / SHIPPED_POLICIES["trained"], ck)
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=str(ck))
    assert type(env.unwrapped.opponent).__name__ == "PolicyAgent"
    obs, info = env.reset(seed=3)
    done = False
    while not done:
        action = int(np.flatnonzero(obs["action_mask"])[0])
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    with pytest.raises(ValueError, match="missing.pt"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=str(tmp_path / "missing.pt"))
    with pytest.raises(ValueError, match="need an opponent given by name"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=str(ck), opponent_kwargs={"greedy": False})
