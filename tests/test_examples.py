"""The examples under examples/ run with tiny budgets and only ever choose legal actions."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sb3_maskable_ppo_example():
    pytest.importorskip("sb3_contrib")
    out = _load("sb3_maskable_ppo").main(["--timesteps", "1024", "--eval-hands", "20", "--seed", "1"])
    assert out["illegal"] == 0
    assert -3 <= out["mean"] <= 3
