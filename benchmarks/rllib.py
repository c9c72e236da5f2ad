"""Training throughput of ``train_rllib.py`` (Ray RLlib) with 1 and 2 env runners, against ``train.py``.

    bash scripts/bootstrap.sh --extras rllib python benchmarks/rllib.py
    bash scripts/bootstrap.sh --extras rllib python benchmarks/rllib.py --steps 40000 --runners 1 2 4 \
        --envs-per-runner 8 --rounds 3

Each configuration trains from scratch for ``--steps`` env steps (no evaluation) and reports env steps per
second over the training loop (the Ray start and the algorithm build are not counted). The peer, measured in the
same run, is this project's own PPO (``train.py`` with its default samplers), whose steps are learner decisions
(the decisions of the trained network; env steps are about 1.4 times as many, since pool and heuristic
opponents also move). With ``--rounds R`` (default 1: a configuration takes minutes) every configuration is
measured R times, the rounds interleaved (train.py and every RLlib configuration, then again); the table
gives each one's **median** steps/s with the slowest and fastest round, and the ratio of the medians to
train.py's. Numbers go to stdout and, with ``--json``, to a file (every row's median, range and rounds, the ratios,
and the command, commit, machine and load average).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's train_rllib.py (not installed)
import harness  # noqa: E402

import train  # noqa: E402
import train_rllib  # noqa: E402


def measure(backend: str, steps: int, runners: int = 1, envs_per_runner: int = 1, batch: int = 4000) -> float:
    """Env steps (rllib) or learner decisions (torch: train.py) per second of one fresh training run."""
    common = dict(total_steps=steps, batch_size=batch, final_eval_deals=0, run_name="bench", progress=False,
                  tensorboard=False)
    with tempfile.TemporaryDirectory() as tmp:
        if backend == "rllib":
            args = train_rllib.RLlibArgs(env_runners=runners, envs_per_runner=envs_per_runner, minibatch_size=500,
                                         run_dir=tmp, **common)
            return float(train_rllib.main(args)["steps_per_second"])
        return float(train.main(train.Args(eval_every=0, run_dir=tmp, **common))["steps_per_second"])


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=20_000, help="env steps per RLlib configuration (default: %(default)s)")
    p.add_argument("--runners", type=int, nargs="+", default=[1, 2], help="env runner counts (default: 1 2)")
    p.add_argument("--envs-per-runner", type=int, nargs="+", default=[1, 8], help="envs per runner (default: 1 8)")
    p.add_argument("--rounds", type=int, default=1, help="interleaved rounds, median kept (default: 1)")
    harness.json_option(p)
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be >= 1")
    configs = {"torch": lambda: measure("torch", 400_000, batch=16384)}
    for n in args.runners:
        for k in args.envs_per_runner:
            configs[f"rllib_{n}x{k}"] = lambda n=n, k=k: measure("rllib", args.steps, runners=n, envs_per_runner=k)
    rounds = harness.interleaved(configs, args.rounds, progress=None)
    out = {key: float(np.median(values)) for key, values in rounds.items()}
    print(f"median of {args.rounds} round(s)")
    print(f"{'trainer':<28}{'steps/s':>10}{'min':>10}{'max':>10}{'vs train.py':>12}")
    labels = {"torch": "train.py (default samplers)"}
    labels.update({f"rllib_{n}x{k}": f"rllib, {n} runner(s) x {k} env(s)" for n in args.runners
                   for k in args.envs_per_runner})
    for key, label in labels.items():
        med, low, high = harness.spread(rounds[key])
        print(f"{label:<28}{med:>10,.0f}{low:>10,.0f}{high:>10,.0f}"
              f"{out[key] / out['torch']:>12.3f}")
    if args.json:
        harness.write_json(args.json, {
            "title": f"training steps/s (RLlib: env steps of both seats; train.py: learner decisions), median of "
                     f"{args.rounds} round(s), {args.steps:,} env steps per RLlib configuration",
            "unit": "steps/s", "rows": harness.rows_figures({labels[k]: v for k, v in rounds.items()}),
            "ratios": {f"{labels[k]} / train.py": harness.ratio_figures(v, rounds["torch"])
                       for k, v in rounds.items() if k != "torch"}})
    return out


if __name__ == "__main__":
    main()
