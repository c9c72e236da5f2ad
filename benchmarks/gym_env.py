"""Gymnasium env speed: this checkout's ``SchnapsenGymEnv.step`` (and ``raw_env``) against a recorded commit's.

Run:

    bash scripts/bootstrap.sh python benchmarks/gym_env.py            # peer: commit baf1e2c

Options: ``--peer COMMIT`` (default ``baf1e2c``, the numpy-batched engine before the compiled core), ``--seconds S`` per
measurement (default 1.0), ``--rounds R`` (default 7), ``--seed K``, ``--rows`` (default ``gym raw_env``).

The peer's ``schnapsen_env`` package is taken from git (``git archive COMMIT schnapsen_env``, so this needs a
clone with history) into a temporary folder; every measurement runs in a fresh subprocess with that folder (peer)
or this checkout (ours) first on ``PYTHONPATH``, so both run on the same interpreter and packages (the worker
checks which package it imported). In each, after an untimed warm-up of 0.2 s:

* **gym**: ``SchnapsenGymEnv(opponent=f)`` (the class itself, as ``gymnasium.make`` builds it but without
  Gymnasium's checker wrappers), ``reset(seed=K)``, then ``step(action)`` for ``S`` seconds with a uniformly random
  legal action of ``obs["action_mask"]``, ``reset()`` (timed) whenever an episode ends. The opponent ``f`` is a
  plain function picking a uniformly random legal action the same way, so both envs pay the same opponent and the
  rate is the env's own. Counted: learner steps (``env.step`` calls); each includes the opponent's replies.
* **raw_env**: ``schnapsen_v0.raw_env()`` through PettingZoo's AEC loop with random legal play, exactly as
  ``benchmarks/env.py``; counted: decisions.

Uniforms come from a seeded ``numpy.random.Generator`` in blocks (``rng.random(4096)``). Rounds are interleaved
(round 1 of every row, then round 2, ...). The table gives each row's **median** rate over the rounds with its
minimum and maximum; the ratios are of the medians, with the range of the per-round ratios. With the defaults
the script takes about 80 s (most of it starting the 28 worker processes).

Goal: the Gymnasium env's step >= 1.5x the peer's. This file is a script, not a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import harness
import numpy as np

BLOCK = 4096  # uniforms drawn per rng.random call
WARMUP_S = 0.2
GOAL_GYM = 1.5
ROWS = ("gym", "raw_env")


class _Picker:
    """Uniformly random legal action ids from masks, with uniforms drawn in blocks from a seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.buf: list[float] = []
        self.k = 0

    def __call__(self, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        if self.k == len(self.buf):
            self.buf = self.rng.random(BLOCK).tolist()
            self.k = 0
        u = self.buf[self.k]
        self.k += 1
        return int(legal[int(u * len(legal))])


def run_gym(seconds: float, seed: int) -> tuple[int, float, float]:
    """Learner steps of ``SchnapsenGymEnv`` against a random-legal function; (steps, wall s, CPU s)."""
    from schnapsen_env.gym_env import SchnapsenGymEnv

    pick = _Picker(seed)
    env = SchnapsenGymEnv(opponent=lambda obs: pick(obs["action_mask"]))
    clock = time.perf_counter
    cpu0 = time.process_time()
    t0 = clock()
    deadline = t0 + seconds
    obs, _info = env.reset(seed=seed)
    steps = 0
    while True:
        obs, _reward, terminated, truncated, _info = env.step(pick(obs["action_mask"]))
        steps += 1
        if terminated or truncated:
            if clock() >= deadline:
                break
            obs, _info = env.reset()
    return steps, clock() - t0, time.process_time() - cpu0


def run_raw_env(seconds: float, seed: int) -> tuple[int, float, float]:
    """Decisions of ``raw_env`` through PettingZoo's AEC loop (as benchmarks/env.py); (decisions, wall s, CPU s)."""
    from schnapsen_env import schnapsen_v0

    _episodes, decisions, wall, cpu = harness.aec_random_play(schnapsen_v0.raw_env(), seed, seconds)
    return decisions, wall, cpu


def worker(row: str, seconds: float, seed: int) -> dict:
    import schnapsen_env

    run = {"gym": run_gym, "raw_env": run_raw_env}[row]
    run(WARMUP_S, seed)
    count, wall, cpu = run(seconds, seed)
    return {"rate": count / wall, "cpu": cpu / wall, "package": schnapsen_env.__file__}


def measure(path: Path, row: str, seconds: float, seed: int) -> tuple[float, float]:
    result = harness.run_worker(__file__, path, [row, seconds, seed], row)
    return result["rate"], result["cpu"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    harness.peer_options(parser, peer="baf1e2c")
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    harness.json_option(parser)
    args = parser.parse_args(argv)
    if args.worker:
        row, s, k = args.worker
        print(json.dumps(worker(row, float(s), int(k))))
        return 0
    if args.rounds < 1 or args.seconds <= 0:
        parser.error("--rounds must be >= 1 and --seconds > 0")
    results = harness.against_peer(parser, args.peer, ["schnapsen_env"], {row: row for row in args.rows},
                                   lambda tree, row: measure(tree, row, args.seconds, args.seed), args.rounds)
    rates = {label: [rate for rate, _cpu in runs] for label, runs in results.items()}
    print(f"Gymnasium env steps/s (gym: learner steps; raw_env: AEC decisions), median of {args.rounds} interleaved "
          f"rounds of {args.seconds:g} s (peer: commit {args.peer})")
    print(f"{'row':<14}{'median':>12}{'min':>12}{'max':>12}{'cpu':>6}")
    for label, values in rates.items():
        med, low, high = harness.spread(values)
        print(f"{label:<14}{med:>12,.0f}{low:>12,.0f}{high:>12,.0f}"
              f"{np.median([cpu for _rate, cpu in results[label]]):>6.0%}")
    for row in args.rows:
        ours, peer = rates[f"ours {row}"], rates[f"peer {row}"]
        goal = f"; {harness.verdict(harness.ratio(ours, peer)[0], GOAL_GYM)}" if row == "gym" else ""
        print(f"ratio ours/peer {row}: {harness.ratio_text(ours, peer)}{goal}")
    if args.json:
        rows = harness.rows_figures(rates)
        for label, runs in results.items():
            rows[label]["cpu"] = float(np.median([cpu for _rate, cpu in runs]))
        harness.write_json(args.json, {
            "title": f"Gymnasium env steps/s (gym: learner steps; raw_env: AEC decisions), median of {args.rounds} "
                     f"interleaved rounds of {args.seconds:g} s (peer: commit {args.peer})",
            "unit": "steps/s", "peer": args.peer, "rows": rows,
            "ratios": {f"ours/peer {row}": harness.ratio_figures(rates[f"ours {row}"], rates[f"peer {row}"],
                                                                 GOAL_GYM if row == "gym" else None)
                       for row in args.rows}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
