"""The search teacher's effect on a short run: ``train.py`` with the same seed and decisions, with
``--search-teacher-share`` (once for each ``--search-teacher-coef`` of ``--coefs``) and without it, each evaluated
against ``pimc`` on the same duplicate deals (the final table's deals, seed 999999) and periodically on the way
(``--eval-opponents pimc``: the learning curve against the training seconds), then each teacher's policy against
the policy trained without it on duplicate deals.

    python benchmarks/search_teacher.py --json benchmarks/search_teacher_schnapsen20.json

Both runs train the same number of learner decisions; the teacher's run takes longer by the search's cost, which
its record states (``search_teacher``: decisions labelled, seconds searched in the samplers, their share of the
samplers' time) beside each run's training seconds. On a machine shared with other programs the seconds are
pessimistic and the two runs' seconds less comparable.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's packages, not an installed copy
sys.path.append(str(Path(__file__).resolve().parent))  # the shared harness, however this file is loaded
import harness  # noqa: E402

from agents.evaluation.arena import play_match  # noqa: E402


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--total-steps", type=int, default=8_000_000, help="learner decisions of each run")
    p.add_argument("--share", type=float, default=0.0015, help="--search-teacher-share of the teacher's run")
    p.add_argument("--nodes", type=int, default=50_000, help="--search-teacher-nodes of the teacher's run")
    p.add_argument("--coefs", type=float, nargs="+", default=[1.0, 0.1],
                   help="--search-teacher-coef of the teacher's runs, one run each")
    p.add_argument("--samplers", type=int, default=1, help="--samplers of both runs")
    p.add_argument("--seed", type=int, default=1, help="--seed of both runs")
    p.add_argument("--deals", type=int, default=200, help="duplicate deals of the final evaluation against pimc "
                                                           "and of the policies' match")
    p.add_argument("--eval-every", type=int, default=120, help="updates between the periodic evaluations")
    p.add_argument("--eval-deals", type=int, default=100, help="duplicate deals of each periodic evaluation")
    harness.json_option(p)
    return p.parse_args(argv)


def run(args: argparse.Namespace, folder: Path, name: str, share: float, coef: float = 1.0) -> dict:
    """One ``train.py`` run in ``folder``; its summary.json's figures."""
    cmd = [sys.executable, str(harness.ROOT / "train.py"), "--seed", str(args.seed), "--total-steps",
           str(args.total_steps), "--samplers", str(args.samplers), "--search-teacher-share", str(share),
           "--search-teacher-nodes", str(args.nodes), "--search-teacher-coef", str(coef), "--eval-every", str(args.eval_every), "--eval-deals",
           str(args.eval_deals), "--eval-opponents", "pimc", "--eval-rollout-every", "0", "--final-eval-opponents",
           "pimc", "--final-eval-deals", str(args.deals), "--run-dir", str(folder), "--run-name", name,
           "--no-progress", "--no-tensorboard"]
    print(" ".join(cmd[1:]), flush=True)
    subprocess.run(cmd, check=True, cwd=harness.ROOT, stdout=subprocess.DEVNULL)
    s = json.loads((folder / name / "summary.json").read_text(encoding="utf-8"))
    return {"steps": s["steps"], "train_seconds": s["train_seconds"], "eval_seconds": s["eval_seconds"],
            "steps_per_second": s["steps_per_second"], "search_teacher": s["search_teacher"],
            "vs_pimc": s["evaluation"]["pimc"], "curve": [h for h in s["history"] if "train_seconds" in h],
            "policy": str(folder / name / "policy.pt")}


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        runs = {f"teacher_coef_{c:g}": {"coef": c, **run(args, folder, f"teacher{i}", args.share, c)}
                for i, c in enumerate(args.coefs)}
        runs["no_teacher"] = run(args, folder, "plain", 0.0)
        plain = runs["no_teacher"].pop("policy")
        matches = {name: play_match((name, r.pop("policy")), ("no_teacher", plain), n_deals=args.deals, seed=2026,
                                    progress=False).to_dict()
                   for name, r in runs.items() if name != "no_teacher"}
    figures = {"settings": {k: getattr(args, k) for k in ("total_steps", "share", "nodes", "samplers", "seed", "deals",
                                                          "eval_every", "eval_deals")},
               "runs": runs, "against_no_teacher": matches}
    for name, r in runs.items():
        v = r["vs_pimc"]
        print(f"{name}: {r['steps']:,} decisions in {r['train_seconds']:.0f} s of training; against pimc "
              f"{v['mean']:+.3f} [{v['ci_low']:+.3f}, {v['ci_high']:+.3f}] over {v['deals']} deals; search "
              f"{r['search_teacher']}")
    for name, m in matches.items():
        print(f"{name} against no_teacher: {m['mean']:+.3f} [{m['ci_low']:+.3f}, {m['ci_high']:+.3f}]")
    if args.json:
        harness.write_json(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
