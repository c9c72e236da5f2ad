"""The documentation: the site builds with warnings as errors, every Python code block of the README and the docs
runs, and every table rendered from a benchmark's JSON file equals its rendering (one source for each number)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<code>.*?)^```\s*$", re.S | re.M)
SLOW = "<!-- slow -->"  # put on the line before a block of a minute or more: the test is marked slow
RUN_BASH = "<!-- run: bash -->"  # put on the line before a shell block that the tests run as written


def _load_tables():
    spec = importlib.util.spec_from_file_location("docs_tables", ROOT / "scripts" / "docs_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _python_blocks() -> list:
    """Every fenced ``python`` block of the pages, as pytest params named ``PAGE:LINE``."""
    blocks = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            if m.group("info").strip().split(" ")[0] != "python":
                continue
            line = text.count("\n", 0, m.start()) + 1
            slow = text[:m.start()].rstrip().endswith(SLOW)
            blocks.append(pytest.param(m.group("code"), id=f"{page.relative_to(ROOT)}:{line}",
                                       marks=[pytest.mark.slow] if slow else []))
    return blocks


BLOCKS = _python_blocks()


def test_the_pages_hold_python_blocks():
    """The extraction finds the README's examples (so that the test below can fail)."""
    assert sum(p.id.startswith("README.md") for p in BLOCKS) >= 3


@pytest.mark.parametrize("code", BLOCKS)
def test_python_block_runs(code, tmp_path, monkeypatch):
    """Each block runs as a user pastes it, in a fresh namespace, from a folder of its own."""
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "<doc block>", "exec"), {"__name__": "__doc_block__"})


def test_rendered_tables_are_current():
    tables = _load_tables()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert tables.fill(text) == text, f"{page.name}: a table differs from its JSON source; rerun " \
                                          f"python scripts/docs_tables.py {page.relative_to(ROOT)}"


def test_every_table_marker_names_a_table():
    tables = _load_tables()
    names = {m.group("name") for p in PAGES for m in tables.MARKER.finditer(p.read_text(encoding="utf-8"))}
    assert names and names <= set(tables.TABLES)
    with pytest.raises(KeyError, match="unknown table 'nope': expected one of"):
        tables.render("nope")


def _bash_blocks() -> list:
    blocks = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            if m.group("info").strip() == "bash" and text[: m.start()].rstrip().endswith(RUN_BASH):
                line = text.count("\n", 0, m.start()) + 1
                blocks.append(pytest.param(m.group("code"), id=f"{page.relative_to(ROOT)}:{line}"))
    return blocks


@pytest.mark.slow
@pytest.mark.parametrize("code", _bash_blocks())
def test_bash_block_runs(code, tmp_path):
    """A shell block marked ``<!-- run: bash -->`` runs line by line as a user types it from the clone (here from a
    folder of its own, so that its runs/ is new): ``.venv/bin/`` is this environment's bin folder, ``train.py`` the
    checkout's; ``schnapsen-play`` gets ``quit`` as its first move. Every command must exit 0."""
    bin_dir = Path(sys.executable).parent
    for line in filter(None, (ln.split("  #")[0].strip() for ln in code.splitlines())):
        command = line.replace(".venv/bin/", f"{bin_dir}/").replace(" train.py", f" {ROOT / 'train.py'}")
        out = subprocess.run(["bash", "-c", command], cwd=tmp_path, input="quit\n", capture_output=True, text=True,
                             timeout=900)
        assert out.returncode == 0, (line, out.stdout[-2000:], out.stderr[-2000:])


def test_the_pages_hold_a_bash_block_that_runs():
    assert any(p.id.startswith("README.md") for p in _bash_blocks())


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="needs the docs extra (mkdocs)")
def test_the_site_builds_with_warnings_as_errors(tmp_path):
    """``mkdocs build --strict``: a broken link, anchor, reference or docstring fails the build."""
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert out.returncode == 0, out.stderr[-5000:]
    assert (tmp_path / "site" / "reference" / "index.html").is_file()
    shutil.rmtree(tmp_path / "site")
