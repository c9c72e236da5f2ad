"""The command-line apps (``agents/cli/``): their ``main()`` functions, ``python -m`` entry points, and the
``[project.scripts]`` table that names them.

The play and replay programs are exercised in depth by ``test_records_play.py``; here the arena's command line is
run end to end, and every app is checked to start as ``python -m agents.cli.<app>``.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.cli import arena as arena_cli

ROOT = Path(__file__).resolve().parent.parent
APPS = {"schnapsen-arena": "agents.cli.arena", "schnapsen-play": "agents.cli.play",
        "schnapsen-replay": "agents.cli.replay", "schnapsen-web": "agents.cli.web"}


def test_project_scripts_name_the_cli_modules():
    tomllib = pytest.importorskip("tomllib")
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert {name: target.partition(":")[0] for name, target in scripts.items()} == APPS
    for target in scripts.values():
        module, _, func = target.partition(":")
        assert callable(getattr(importlib.import_module(module), func)), target


@pytest.mark.parametrize("prog, module", sorted(APPS.items()))
def test_python_m_runs_each_app(prog, module):
    proc = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith(f"usage: {prog}")


def test_replay_app_uses_only_the_env():
    tree = ast.parse((ROOT / "agents" / "cli" / "replay.py").read_text(encoding="utf-8"))
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert [m for m in imported if m.split(".")[0] == "agents"] == []
    assert any(m.startswith("schnapsen_env") for m in imported)


def test_arena_app_plays_a_match_and_writes_json(tmp_path, capsys):
    out_json = tmp_path / "match.json"
    assert arena_cli.main(["heuristic", "random", "--deals", "3", "--workers", "1", "--no-progress",
                           "--json", str(out_json), "--knob", "must_head=False"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("heuristic vs random  (schnapsen20 must_head=False, hand episodes, seed 0)")
    result = json.loads(out_json.read_text())
    assert result["deals"] == 3 and result["hands"] == 6 and result["knobs"] == {"must_head": False}


def test_arena_app_round_robin_to_stdout(capsys):
    assert arena_cli.main(["--round-robin", "random", "heuristic", "--deals", "2", "--workers", "1",
                           "--no-progress", "--json", "-"]) == 0
    printed = capsys.readouterr().out
    table = json.loads(printed[printed.index("{"):])
    assert table["agents"] == ["random", "heuristic"] and table["elo"]["random"] == 0


@pytest.mark.parametrize("argv, message", [
    (["grandmaster", "random"], "unknown agent 'grandmaster'"),
    (["random"], "expected two agents"),
    (["rollout:bogus=1", "random"], "takes no argument(s) ['bogus']"),
    (["random", "heuristic", "--knob", "nonsense=1"], "unknown rule key 'nonsense'"),
])
def test_arena_app_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        arena_cli.main(argv + ["--no-progress", "--workers", "1", "--deals", "1"])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
