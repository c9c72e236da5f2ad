"""The code style and types CI checks (the same checks as ``.pre-commit-config.yaml``): ruff's lint rules over the
repository, and mypy over the public API (``[tool.mypy] files`` in ``pyproject.toml``)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="needs the docs extra (ruff)")
def test_ruff_lint_passes():
    out = _run("ruff", "check", ".")
    assert out.returncode == 0, out.stdout[-5000:] + out.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="needs the docs extra (mypy)")
def test_mypy_passes_on_the_public_api():
    out = _run("mypy")
    assert out.returncode == 0, out.stdout[-5000:] + out.stderr[-2000:]


def test_the_game_state_annotations_name_its_fields():
    """GameState declares its FIELDS' types in the class body for mypy (it sets them from the table with setattr):
    the annotations name exactly the fields, and every field is still a slot."""
    from schnapsen_env.rules import FIELDS, GameState

    names = [name for name, _, _ in FIELDS]
    declared = set(GameState.__annotations__)
    assert set(names) <= declared, sorted(set(names) - declared)
    assert declared - set(names) <= {"rules", "deck", "history", "deal", "actions", "_stack", "_exchange_card"}
    assert set(names) <= set(GameState.__slots__)
    assert not hasattr(GameState(), "__dict__")
