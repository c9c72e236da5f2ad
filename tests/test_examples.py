"""The examples under examples/ run with tiny budgets and only ever choose legal actions."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    if str(EXAMPLES) not in sys.path:  # as when run as a script: the examples' shared module is importable
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sb3_maskable_ppo_example():
    pytest.importorskip("sb3_contrib")
    out = _load("sb3_maskable_ppo").main(["--timesteps", "1024", "--eval-hands", "20", "--seed", "1"])
    assert out["illegal"] == 0
    assert -3 <= out["mean"] <= 3


@pytest.fixture
def one_torch_thread():
    """Tiny networks run fastest on one thread; two threads on a busy 2-core machine are several times slower."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _check(out):
    assert out["illegal"] == 0
    assert isinstance(out["mean"], float) and math.isfinite(out["mean"])
    assert -3 <= out["mean"] <= 3


def test_torchrl_pettingzoo_example(one_torch_thread):
    pytest.importorskip("torchrl")
    out = _load("torchrl_pettingzoo").main(["--steps", "1024", "--batch", "512", "--eval-hands", "20", "--seed", "1"])
    _check(out)


@pytest.mark.slow
def test_tianshou_pettingzoo_example(one_torch_thread):
    pytest.importorskip("tianshou")
    out = _load("tianshou_pettingzoo").main(["--steps", "1000", "--eval-hands", "20", "--seed", "1"])
    _check(out)
