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
