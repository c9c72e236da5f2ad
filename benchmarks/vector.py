"""Vector env speed: this checkout's ``SchnapsenVectorEnv`` (compiled core) against a recorded commit's.

Run:

    bash scripts/bootstrap.sh python benchmarks/vector.py            # peer: commit baf1e2c (numpy-batched engine)

Options: ``--peer COMMIT`` (default ``baf1e2c``, the last commit with ``schnapsen_env/batch.py``), ``--sizes``
(default 1 64 1024), ``--seconds S`` per measurement (default 1.0), ``--rounds R`` (default 7), ``--seed K``.

The peer's ``schnapsen_env`` package is taken from git (``git archive COMMIT schnapsen_env``) into a temporary
folder; every measurement runs in a fresh subprocess with that folder (peer) or this checkout (ours) first on
``PYTHONPATH``, so both run on the same interpreter and packages. In each: ``SchnapsenVectorEnv(N)``,
``reset(seed=K)`` and one warm-up step (not timed: it includes numba's cache load), then ``step(actions)`` for
``S`` seconds with uniformly random legal actions for all N slots (a row-wise cumulative sum of the masks and one
uniform per slot, drawn in blocks); every slot acts every step, so one step is N decisions. Rounds are
interleaved (round 1 of every row, then round 2, ...). The table gives each row's **median** decisions/s over the
rounds with its minimum and maximum; the ratio is of the medians, with the range of the per-round ratios.

Goal (issue "Expert-level search on a compiled core"): ours >= 3x the peer at N = 1024, and no slower at N = 1
and N = 64. This file is a script, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BLOCK = 64  # steps of uniforms drawn per rng.random call


def worker(num_envs: int, seconds: float, seed: int) -> dict:
    """Random legal play in this process; returns decisions/s and the package path used."""
    import time

    import schnapsen_env
    from schnapsen_env.vector import SchnapsenVectorEnv

    venv = SchnapsenVectorEnv(num_envs)
    obs, masks, to_move = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def pick(masks, u):
        c = np.cumsum(masks, axis=1)
        return np.argmax(c > (u * c[:, -1])[:, None], axis=1)

    venv.step(pick(masks, rng.random(num_envs)))  # warm-up
    masks = venv.masks
    steps = 0
    start = time.perf_counter()
    while True:
        us = rng.random((BLOCK, num_envs))
        for k in range(BLOCK):
            _, masks, _, _, _, _ = venv.step(pick(masks, us[k]))
        steps += BLOCK
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return {"rate": steps * num_envs / elapsed, "package": schnapsen_env.__file__}


def measure(path: Path, num_envs: int, seconds: float, seed: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, __file__, "--worker", str(num_envs), str(seconds), str(seed)], env=env,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"benchmarks/vector.py: a measurement failed ({path}, N={num_envs}):\n{out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not result["package"].startswith(str(path)):
        raise SystemExit(f"benchmarks/vector.py: expected the package from {path}, got {result['package']}")
    return result["rate"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", default="baf1e2c", help="git commit of the peer (default baf1e2c)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        n, s, k = args.worker
        print(json.dumps(worker(int(n), float(s), int(k))))
        return 0
    if args.rounds < 1 or args.seconds <= 0 or any(n < 1 for n in args.sizes):
        parser.error("--rounds and --sizes must be >= 1 and --seconds > 0")
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.peer, "schnapsen_env"], capture_output=True,
                             check=False)
    if archive.returncode != 0:
        parser.error(f"--peer {args.peer!r}: git archive failed: {archive.stderr.decode().strip()}")
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
            tar.extractall(tmp, filter="data")
        rows = [(f"{who} N={n}", path, n) for n in args.sizes for who, path in (("ours", ROOT), ("peer", Path(tmp)))]
        rates: dict[str, list[float]] = {label: [] for label, _, _ in rows}
        for r in range(args.rounds):
            for label, path, n in rows:
                rates[label].append(measure(path, n, args.seconds, args.seed))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"vector env decisions/s, median of {args.rounds} interleaved rounds of {args.seconds:g} s "
          f"(peer: commit {args.peer})")
    print(f"{'row':<14}{'median':>14}{'min':>14}{'max':>14}")
    for label, values in rates.items():
        print(f"{label:<14}{np.median(values):>14,.0f}{min(values):>14,.0f}{max(values):>14,.0f}")
    for n in args.sizes:
        ours, peer = rates[f"ours N={n}"], rates[f"peer N={n}"]
        per_round = [a / b for a, b in zip(ours, peer)]
        print(f"ratio ours/peer at N={n}: {np.median(ours) / np.median(peer):.2f}x "
              f"(per round {min(per_round):.2f}x..{max(per_round):.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
