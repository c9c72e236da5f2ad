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
    """schnapsen-replay needs no agent: it imports the env and its own room's console helpers only."""
    tree = ast.parse((ROOT / "agents" / "cli" / "replay.py").read_text(encoding="utf-8"))
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert [m for m in imported if m.split(".")[0] == "agents" and m != "agents.cli.console"] == []
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
    captured = capsys.readouterr()
    table = json.loads(captured.out)  # the JSON alone on standard output
    assert table["agents"] == ["random", "heuristic"] and table["elo"]["random"] == 0
    assert captured.err.startswith("Round robin: schnapsen20")


def test_arena_json_to_stdout_pipes_into_a_json_reader(tmp_path):
    """``schnapsen-arena ... --json - | python -c "import json, sys; json.load(sys.stdin)"`` works: the table
    goes to standard error."""
    arena = subprocess.run([sys.executable, "-m", "agents.cli.arena", "heuristic", "random", "--deals", "2",
                            "--workers", "1", "--no-progress", "--json", "-"], capture_output=True, text=True,
                           cwd=tmp_path, timeout=300)
    assert arena.returncode == 0, arena.stderr
    reader = subprocess.run([sys.executable, "-c", "import json, sys; print(json.load(sys.stdin)['deals'])"],
                            input=arena.stdout, capture_output=True, text=True, timeout=60)
    assert reader.stdout.strip() == "2", reader.stderr
    assert "heuristic vs random" in arena.stderr and "verdict" in arena.stderr


@pytest.mark.parametrize("mean, low, high, words", [
    (0.05, -0.388, 0.488, "no measurable difference: the 95% CI includes 0"),
    (-0.5, -0.7, -0.3, "b is stronger than a by 0.500 game points a hand (a hand is worth 1 to 3); the 95% CI "
                       "excludes 0"),
    (0.5, 0.3, 0.7, "a is stronger than b by 0.500"),
])
def test_the_arena_says_its_verdict_in_words(mean, low, high, words):
    from agents.evaluation.ratings import MatchResult

    result = MatchResult(agent_a="a", agent_b="b", ruleset="schnapsen20", episode="hand", seed=0, deals=100,
                         hands=200, mean=mean, ci_low=low, ci_high=high, stdev_deal=1.0, hand_win_rate=0.5,
                         hands_won_a=100, hands_won_b=100, ties=0, matches=None, match_win_rate=None, knobs={},
                         chunk_size=10, seconds=1.0)
    assert words in result.verdict() and words in result.table()


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


def test_replay_names_the_recorded_players_and_prompts_when_stepping(tmp_path):
    """An arena record is replayed with its players' labels (not "you"/"opponent"), a header with the dealer and
    result, and ``--step`` prompts before each wait; ``q`` stops."""
    records = tmp_path / "arena.jsonl"
    assert arena_cli.main(["heuristic", "random", "--deals", "1", "--workers", "1", "--no-progress",
                           "--records", str(records)]) == 0
    out = subprocess.run([sys.executable, "-m", "agents.cli.replay", str(records), "--index", "0", "--step"],
                         input="\n\nq\n", capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("=== record 0: player_0 = heuristic, player_1 = random; ")
    assert "(heuristic)" in out.stdout and "(random)" in out.stdout
    assert "(you)" not in out.stdout and "(opponent)" not in out.stdout
    assert out.stdout.count("[Enter: next action, q: stop]") == 3  # stopped at the third prompt


def test_replay_of_a_file_without_a_complete_record_is_an_error(tmp_path):
    cut = tmp_path / "cut.jsonl"
    cut.write_text('{"rules": {"ruleset": "schnapsen20"}, "deck', encoding="utf-8")  # a line cut off
    out = subprocess.run([sys.executable, "-m", "agents.cli.replay", str(cut)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 2
    assert "holds no complete record" in out.stderr and "Traceback" not in out.stderr


def test_arena_level_verdict_and_records_to_stdout_refused(capsys):
    assert arena_cli.main(["heuristic", "heuristic", "--deals", "1", "--workers", "1", "--no-progress"]) == 0
    assert "verdict               heuristic (A) and heuristic (B) are level over 1 deal(s)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        arena_cli.main(["heuristic", "random", "--deals", "1", "--records", "-"])
    assert exc.value.code == 2 and "--records '-': expected a file path" in capsys.readouterr().err


def test_play_reads_a_card_typed_with_a_space_or_an_emoji_suit():
    import numpy as np

    from agents.cli.play import parse_action
    from schnapsen_env.rules import GameState
    from schnapsen_env.ruleset import RuleSet

    g = GameState.new_hand(RuleSet.make("schnapsen20"), rng=np.random.default_rng(1))
    code = g.deck.codes[g.legal_actions()[0]]
    rank = "10" if code[0] == "T" else code[0]
    for typed in (f"{rank} {code[1]}", f"{rank}{'♣♦♥♠'['CDHS'.index(code[1])]}\ufe0f", code.lower()):
        assert parse_action(typed, g)[0] == g.legal_actions()[0], typed
