"""Env speed: random legal play through the PettingZoo AEC loop (ours against two PettingZoo classic
envs) and through the vectorised env, in one process.

Run:

    bash scripts/bootstrap.sh --extras bench python benchmarks/env.py

Options: ``--seconds S`` (wall time per measurement, default 0.7), ``--rounds R`` (default 7),
``--seed K``. The script measures the checkout it lives in (its root goes first on ``sys.path``; the
package path is printed), not whatever ``schnapsen_env`` is installed.

What is measured (a *decision* is one action of a live agent; the ``None`` steps that PettingZoo's
loop gives each agent after the end of an episode are run but not counted):

* **AEC**, the same loop for every env: ``env.reset(seed=K)`` once, then episodes of PettingZoo's
  usual ``for agent in env.agent_iter(): obs, rew, term, trunc, info = env.last(); ...;
  env.step(action)``, with ``env.reset()`` (unseeded, the env's generator carries on) between
  episodes; the resets are timed too. ``last()`` builds the observation and action mask every step.
  The action is a uniformly random legal id: ``np.flatnonzero(obs["action_mask"])`` indexed with a
  uniform from a seeded ``numpy.random.Generator``, drawn in blocks (``rng.random(4096)``) so that
  numpy's per-call overhead is not charged to the env. Rows: ``schnapsen_v0.env()`` (wrapped as
  PettingZoo's classic envs are: the public entry), ``schnapsen_v0.raw_env()`` (unwrapped), and
  PettingZoo's own ``leduc_holdem_v4.env()`` (needs ``rlcard``) and ``connect_four_v3.env()`` (needs
  ``pygame``), which have the same wrapper chain as ours
  (``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(raw_env)))``). Our
  rule set is ``schnapsen20``.
* **vector**: ``SchnapsenVectorEnv(N)`` at N = 1, 64 and 1024, ``reset(seed=K)`` (not timed), then
  ``step(actions)`` with the actions chosen from ``masks`` for all N slots at once: a row-wise
  cumulative sum of the mask, one uniform per slot (blocks of ``(steps, N)`` uniforms), and the
  index of the first cumulative count above ``u * count``. Every slot acts every step (finished
  hands are re-dealt inside ``step``), so one step is N decisions.

Noise: this machine has 2 cores (shared with whatever else runs), so one noisy moment must not
decide a ratio. Every row first runs once, untimed (a warm-up: imports, numba's cache, allocations), then
is measured ``--rounds`` short times, the rounds interleaved (round 1 of every row, then round 2 of every
row, ...). The table reports each row's **median** decisions/s over the rounds with the minimum and maximum
(the spread), and a ``cpu`` column (the median over the rounds of process CPU time / wall time, below 100%
when the process lost time to other processes). Ratios are of the medians; the range of the same ratio
computed within each round (rows measured seconds apart) is printed next to it. With the defaults the whole
script takes about 40 s.

Ratios (decisions/s) and goals: ours ``env()`` / max(leduc, connect four) >= 2x, ours
``raw_env()`` / max(leduc, connect four) >= 3x, and vector at N=1024 / ours ``env()`` >= 20x.
This file is a script, not a test: it lives outside ``tests/`` and pytest does not collect it.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout, not an installed copy

import harness  # noqa: E402

import schnapsen_env  # noqa: E402
from schnapsen_env import schnapsen_v0  # noqa: E402
from schnapsen_env.vector import SchnapsenVectorEnv  # noqa: E402

GOAL_PEERS = 2.0  # ours wrapped AEC / best peer AEC
GOAL_RAW = 3.0  # ours raw_env / best peer AEC
GOAL_VECTOR = 20.0  # vector N=1024 / ours wrapped AEC
WARMUP_S = 0.2  # untimed run of every row before the rounds
BLOCK = 4096  # uniforms drawn per rng.random call
VECTOR_SIZES = (1, 64, 1024)
RULESET = "schnapsen20"


def run_aec(make_env: Callable[[], object], seed: int, seconds: float) -> tuple[int, int, float, float]:
    """Random legal play through the AEC loop; returns (episodes, decisions, elapsed wall s, process CPU s)."""
    env = make_env()
    out = harness.aec_random_play(env, seed, seconds)
    env.close()
    return out


def run_vector(num_envs: int, seed: int, seconds: float) -> tuple[int, int, float, float]:
    """Vectorised random legal play; returns (hands finished, decisions, elapsed wall s, process CPU s)."""
    venv = SchnapsenVectorEnv(num_envs, ruleset=RULESET)
    rng = np.random.default_rng(seed)
    _obs, masks, _to_move = venv.reset(seed=seed)
    rows = max(1, BLOCK // num_envs)  # steps of uniforms per rng.random call
    block = rng.random((rows, num_envs))
    j = 0
    n_steps = n_done = 0
    step = venv.step
    clock = time.perf_counter
    cpu0 = time.process_time()
    t0 = clock()
    deadline = t0 + seconds
    while True:
        if j == rows:
            block = rng.random((rows, num_envs))
            j = 0
        cum = masks.cumsum(axis=1, dtype=np.int16)  # (N, A): running count of legal ids
        target = (block[j] * cum[:, -1]).astype(np.int16)  # 0 .. count-1 per slot
        j += 1
        actions = (cum <= target[:, None]).sum(axis=1)  # index of the (target+1)-th legal id
        _obs, masks, _to_move, _rewards, dones, _infos = step(actions)
        n_done += int(dones.sum())
        n_steps += 1
        if clock() >= deadline:
            break
    elapsed = clock() - t0
    return n_done, n_steps * num_envs, elapsed, time.process_time() - cpu0


def main(argv: list[str] | None = None) -> int:
    parser = harness.timing_parser(__doc__.splitlines()[0])
    harness.json_option(parser)
    args = parser.parse_args(argv)
    harness.check_timing(parser, args)
    random.seed(args.seed)
    np.random.seed(args.seed)

    from importlib.metadata import version

    def aec_row(make: Callable[[], object]) -> Callable[[float], tuple[int, int, float, float]]:
        return lambda seconds: run_aec(make, args.seed, seconds)

    rows: list[tuple[str, Callable[[float], tuple[int, int, float, float]]]] = [
        ("ours env() wrapped", aec_row(lambda: schnapsen_v0.env(ruleset=RULESET))),
        ("ours raw_env()", aec_row(lambda: schnapsen_v0.raw_env(ruleset=RULESET))),
    ]
    peers = []
    try:
        from pettingzoo.classic import leduc_holdem_v4

        rows.append(("leduc_holdem_v4", aec_row(leduc_holdem_v4.env)))
        peers.append("leduc_holdem_v4")
    except ImportError as exc:
        print(f"leduc_holdem_v4 unavailable ({exc}); run with: bash scripts/bootstrap.sh --extras bench ...")
    try:
        from pettingzoo.classic import connect_four_v3

        rows.append(("connect_four_v3", aec_row(connect_four_v3.env)))
        peers.append("connect_four_v3")
    except ImportError as exc:
        print(f"connect_four_v3 unavailable ({exc}); run with: bash scripts/bootstrap.sh --extras bench ...")
    for n in VECTOR_SIZES:
        rows.append((f"vector N={n}", lambda seconds, n=n: run_vector(n, args.seed, seconds)))

    print(f"env benchmark: random legal play, {RULESET}, seed {args.seed}, median of {args.rounds} interleaved "
          f"rounds of {args.seconds:g} s per row (after an untimed warm-up), {harness.versions()}, "
          f"pettingzoo {version('pettingzoo')}, schnapsen_env from "
          f"{Path(schnapsen_env.__file__).parent}")
    for _label, fn in rows:
        fn(WARMUP_S)
    results = harness.interleaved({label: lambda fn=fn: fn(args.seconds) for label, fn in rows}, args.rounds,
                                  progress=None)

    print(f"{'env':<20} {'decisions/s':>12} {'min':>10} {'max':>10} {'cpu':>5} {'episodes':>9} {'dec/episode':>11}")
    rate: dict[str, float] = {}
    for label, _ in rows:
        runs = results[label]
        rates = [d / t for _n, d, t, _c in runs]
        rate[label] = float(np.median(rates))
        cpu = float(np.median([c / t for _n, _d, t, c in runs]))
        episodes = sum(n for n, _d, _t, _c in runs)
        decisions = sum(d for _n, d, _t, _c in runs)
        per_ep = f"{decisions / episodes:.1f}" if episodes and not label.startswith("vector") else "-"
        print(f"{label:<20} {rate[label]:>12,.0f} {min(rates):>10,.0f} {max(rates):>10,.0f} {cpu:>5.0%} "
              f"{episodes // len(runs):>9d} {per_ep:>11}")
    print(f"(median decisions/s over {args.rounds} rounds, with the slowest and fastest round; cpu = median process\n"
          " CPU time / wall time, below 100% when the process was descheduled; episodes per round (vector: hands\n"
          " finished))")

    def round_ratios(num: str, den: list[str]) -> list[float]:
        return [results[num][r][1] / results[num][r][2]
                / max(results[x][r][1] / results[x][r][2] for x in den) for r in range(args.rounds)]

    def per_round(num: str, den: list[str]) -> str:
        ratios = round_ratios(num, den)
        return f"per round {min(ratios):.2f}x..{max(ratios):.2f}x"

    ratios: dict[str, dict] = {}
    ours = rate["ours env() wrapped"]
    if peers:
        best_peer = max(peers, key=lambda p: rate[p])
        for label, goal in (("ours env() wrapped", GOAL_PEERS), ("ours raw_env()", GOAL_RAW)):
            ratio = rate[label] / rate[best_peer]
            print(f"ratio {label} / max(peers) = / {best_peer} (median decisions/s): {ratio:.2f}x "
                  f"({per_round(label, peers)}); {harness.verdict(ratio, goal)}")
            rr = round_ratios(label, peers)
            ratios[f"{label} / {best_peer}"] = {"ratio": ratio, "low": min(rr), "high": max(rr), "goal": goal}
    ratio = rate["vector N=1024"] / ours
    print(f"ratio vector N=1024 / ours env() wrapped (median decisions/s): {ratio:.2f}x "
          f"({per_round('vector N=1024', ['ours env() wrapped'])}); {harness.verdict(ratio, GOAL_VECTOR)}")
    rr = round_ratios("vector N=1024", ["ours env() wrapped"])
    ratios["vector N=1024 / ours env() wrapped"] = {"ratio": ratio, "low": min(rr), "high": max(rr),
                                                    "goal": GOAL_VECTOR}
    if args.json:
        rows = harness.rows_figures({label: [d / t for _n, d, t, _c in results[label]] for label, _ in rows})
        for label, fig in rows.items():
            fig["cpu"] = float(np.median([c / t for _n, _d, t, c in results[label]]))
        harness.write_json(args.json, {
            "title": f"AEC env and vector env decisions/s, random legal play, {RULESET}, median of {args.rounds} "
                     f"interleaved rounds of {args.seconds:g} s",
            "unit": "decisions/s", "peers": peers, "rows": rows, "ratios": ratios})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
