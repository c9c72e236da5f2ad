"""Every benchmark script under benchmarks/ starts and answers --help from any working directory, as the README
runs them (benchmarks/rllib.py once failed to import this checkout's train_rllib.py, which is not installed)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parent.parent / "benchmarks").glob("*.py"))
#: Scripts that need an optional extra, and the module that extra installs.
NEEDS = {"rllib.py": "ray"}


def test_the_benchmarks_folder_holds_the_scripts():
    assert {"solver_core.py", "vector.py", "trainer.py", "rllib.py"} <= {p.name for p in BENCHMARKS}


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_benchmark_answers_help_from_another_folder(script, tmp_path):
    needed = NEEDS.get(script.name)
    if needed and importlib.util.find_spec(needed) is None:
        pytest.skip(f"needs {needed} (its optional extra)")
    out = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage:"), out.stdout[:200]


TRAINER = Path(__file__).resolve().parent.parent / "benchmarks" / "trainer.py"


def _has_commit(commit: str) -> bool:
    return subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"], cwd=TRAINER.parent,
                          capture_output=True).returncode == 0


@pytest.mark.parametrize("argv, expected", [
    (["--peer=--help"], "--peer '--help' names no commit of this clone"),  # once a tarfile traceback
    (["--peer", "no-such-commit"], "--peer 'no-such-commit' names no commit of this clone"),
    (["--peer", "b341ce3", "--peer-like-ours"], "has no --samplers: expected a commit with sampler processes"),
])
def test_trainer_benchmark_bad_peer_is_one_line(argv, expected, tmp_path):
    """A peer that is no commit, or one older than the sampler processes with --peer-like-ours (once a TypeError
    traceback from the worker), exits 1 with one line naming what was wrong, before any measurement."""
    if "b341ce3" in argv and not _has_commit("b341ce3"):
        pytest.skip("needs a clone with history (commit b341ce3)")
    out = subprocess.run([sys.executable, str(TRAINER), *argv], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 1
    assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert expected in out.stderr and "round" not in out.stdout


def test_trainer_benchmark_times_the_update_alone():
    """--ceiling's worker: a sampler plays one batch, then train.ppo_update runs on it and the rate comes back (tiny
    sizes here; the benchmark uses the recipe's)."""
    spec = importlib.util.spec_from_file_location("bench_trainer", TRAINER)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    kw = dict(bench.COMMON, samplers=1, num_envs=16, threads=1, batch_size=256, minibatch_size=64, hidden=16)
    out = bench.run(bench.ROOT, kw, updates=2)
    assert set(out) == {"steps_per_second"} and out["steps_per_second"] > 0


def test_trainer_benchmark_refuses_an_unwritable_json_before_measuring(tmp_path):
    """--json into a folder that does not exist is refused in one line before any run (once a traceback after all
    the rounds, which lost the figures)."""
    out = subprocess.run([sys.executable, str(TRAINER), "--json", str(tmp_path / "no" / "x.json")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "--json" in out.stderr and "round" not in out.stdout and "machine" not in out.stdout
