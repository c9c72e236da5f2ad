"""Every notebook under notebooks/ runs top to bottom (outputs are not committed; this re-creates them) with
nbclient, the runner behind ``jupyter nbconvert --execute``, and prints no warning into its outputs."""

from __future__ import annotations

import os
from pathlib import Path

import nbclient
import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


#: Notebooks of tens of seconds or more on 2 cores even at their quick sizes (they train and solve): marked slow, so
#: that the README's test command stays short; CI runs them.
SLOW_NOTEBOOKS = {"02_train_and_evaluate.ipynb", "04_exact_schnapsen10.ipynb"}


@pytest.mark.parametrize("path", [pytest.param(p, marks=[pytest.mark.slow] if p.name in SLOW_NOTEBOOKS else [])
                                  for p in NOTEBOOKS], ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHNAPSEN_NOTEBOOK_QUICK", "1")  # small budgets (the kernel inherits the environment)
    # the kernel imports this checkout's packages, not whichever checkout the environment has installed
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(path, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit notebooks without outputs"
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    warned = [out.get("text", "") for c in nb.cells if c.cell_type == "code" for out in c.get("outputs", [])
              if out.get("name") == "stderr" and "Warning" in out.get("text", "")]
    assert not warned, f"{path.name} printed warnings: {warned}"


def test_there_are_notebooks():
    assert NOTEBOOKS and SLOW_NOTEBOOKS <= {p.name for p in NOTEBOOKS}
