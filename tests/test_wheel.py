"""The package as a user installs it: the sdist and the wheel build, and the wheel, installed into a fresh virtual
environment (not the editable install of this checkout), plays a hand, an arena match and a shipped policy, finds
the web page's files, and answers ``--help`` in every command-line program."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ("schnapsen-arena", "schnapsen-play", "schnapsen-replay", "schnapsen-web")

CHECK = r"""
import importlib.resources, sys
from pathlib import Path
import agents, schnapsen_env
site = Path(sys.argv[1]).resolve()
for module in (agents, schnapsen_env):
    assert site in Path(module.__file__).resolve().parents, f"{module.__name__} from {module.__file__}, not the wheel"
from schnapsen_env import schnapsen_v0
env = schnapsen_v0.env()
env.reset(seed=1)
for agent in env.agent_iter():
    obs, reward, term, trunc, info = env.last()
    env.step(None if term or trunc else int(obs["action_mask"].nonzero()[0][0]))
from agents.evaluation.arena import play_match
result = play_match("trained", "random", n_deals=2, seed=0, workers=1, progress=False)
assert result.hands == 4
static = importlib.resources.files("agents.web") / "static"
assert (static / "index.html").is_file(), "the web page's files are missing"
print("wheel ok")
"""


def _source_tree(into: Path) -> Path:
    """The checkout's files as a user's clone holds them (tracked and new, not ignored), without build leftovers
    (a stale ``build/`` folder would put old files into the wheel)."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            dst = into / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    return into


def _build(tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "dist"
    src = _source_tree(tmp_path / "src")
    code = ("import sys; from setuptools import build_meta as b; out = sys.argv[1]; "  # the hooks rewrite sys.argv
            "s = b.build_sdist(out); w = b.build_wheel(out); print('BUILT', s, w)")
    r = subprocess.run([sys.executable, "-c", code, str(out)], cwd=src, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    built = [line.split()[1:] for line in r.stdout.splitlines() if line.startswith("BUILT ")]
    assert built, r.stdout[-3000:]
    sdist, wheel = (out / name for name in built[-1])
    return sdist, wheel


@pytest.mark.slow
def test_the_wheel_works_in_a_fresh_virtual_environment(tmp_path):
    sdist, wheel = _build(tmp_path)
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    for must in ("pyproject.toml", "LICENSE", "README.md", "agents/learned/data/schnapsen20_policy.pt"):
        assert any(n.endswith(must) for n in names), f"the sdist lacks {must}"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    for must in ("agents/learned/data/schnapsen20_policy.pt", "agents/web/static/index.html",
                 "schnapsen_env/aec.py"):
        assert must in names, f"the wheel lacks {must}"
    assert not any(n in ("train.py", "train_rllib.py") for n in names), "the wheel installs a top-level script"

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # the dependencies (torch, numba, ...) come from this environment's site-packages as a plain path entry, so
    # its .pth files, which put this checkout on the path (the editable install), are not run
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    r = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    work = tmp_path / "elsewhere"
    work.mkdir()
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    r = subprocess.run([str(python), "-c", CHECK, str(purelib)], cwd=work, capture_output=True, text=True,
                       timeout=900, env=clean)
    assert r.returncode == 0 and r.stdout.strip().endswith("wheel ok"), r.stderr[-3000:]
    for program in PROGRAMS:
        r = subprocess.run([str(env_dir / "bin" / program), "--help"], cwd=work, capture_output=True, text=True,
                           timeout=300, env=clean)
        assert r.returncode == 0 and "usage" in r.stdout.lower(), (program, r.stderr[-2000:])
