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

Goal of the compiled core: ours >= 3x the peer at N = 1024, and no slower at N = 1
and N = 64. This file is a script, not a test.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import harness
import numpy as np

BLOCK = 64  # steps of uniforms drawn per rng.random call
GOAL_VECTOR = 3.0  # ours / peer at the largest N


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
    return harness.run_worker(__file__, path, [num_envs, seconds, seed], f"N={num_envs}")["rate"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    harness.peer_options(parser, peer="baf1e2c")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024])
    harness.json_option(parser)
    args = parser.parse_args(argv)
    if args.worker:
        n, s, k = args.worker
        print(json.dumps(worker(int(n), float(s), int(k))))
        return 0
    if args.rounds < 1 or args.seconds <= 0 or any(n < 1 for n in args.sizes):
        parser.error("--rounds and --sizes must be >= 1 and --seconds > 0")
    rates = harness.against_peer(parser, args.peer, ["schnapsen_env"], {f"N={n}": n for n in args.sizes},
                                 lambda tree, n: measure(tree, n, args.seconds, args.seed), args.rounds)
    print(f"vector env decisions/s, median of {args.rounds} interleaved rounds of {args.seconds:g} s "
          f"(peer: commit {args.peer})")
    print(f"{'row':<14}{'median':>14}{'min':>14}{'max':>14}")
    for label, values in rates.items():
        med, low, high = harness.spread(values)
        print(f"{label:<14}{med:>14,.0f}{low:>14,.0f}{high:>14,.0f}")
    for n in args.sizes:
        print(f"ratio ours/peer at N={n}: {harness.ratio_text(rates[f'ours N={n}'], rates[f'peer N={n}'])}")
    if args.json:
        harness.write_json(args.json, {
            "title": f"vector env decisions/s, median of {args.rounds} interleaved rounds of {args.seconds:g} s "
                     f"(peer: commit {args.peer})",
            "unit": "decisions/s", "peer": args.peer, "rows": harness.rows_figures(rates),
            "ratios": {f"ours/peer at N={n}": harness.ratio_figures(
                rates[f"ours N={n}"], rates[f"peer N={n}"], GOAL_VECTOR if n == max(args.sizes) else None)
                for n in args.sizes}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
