"""Learning curves against wall-clock: the strength of ``train.py``'s policy against a fixed panel (``pimc``,
``expert``) after each minute of training, for the default recipe and the recipe with the search teacher, and the
plot the docs show beside the shipped long runs.

    python benchmarks/learning_curves.py --json benchmarks/learning_curves_schnapsen20.json
    python benchmarks/learning_curves.py --plot docs/img/learning_curves.svg \
        --from benchmarks/learning_curves_schnapsen20.json

The first trains each recipe once, one after the other (the same seed and learner decisions; the default recipe
is ``train.py``'s defaults, the teacher's adds ``--search-teacher-share/-nodes/-coef``), each with periodic
evaluations against the panel (``--eval-opponents``; the k-th evaluation of every run plays the same duplicate
deals) and a final one on more deals, and records the curves against the training seconds (which leave out the
evaluations' own time). The second draws them: game points a
hand with the 95% CI against training minutes, one panel per opponent, with the shipped long runs' results against
the same opponents (from ``benchmarks/ladder_schnapsen20.json``) as horizontal lines. Plotting needs matplotlib
(the ``notebooks`` extra, or ``dev``).
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

from agents.training.recipe import DEFAULT_TOTAL_STEPS  # noqa: E402

#: The recipes: the flags each adds to ``train.py``'s defaults (the teacher's share, nodes and coefficient are
#: filled from the options); ``lr-3e-4`` is the default recipe with the learning rate it had before 1e-3.
RECIPES = ("default", "teacher", "lr-3e-4")
#: The shipped long runs drawn beside the curves (their results come from the ladder).
SHIPPED_RUNS = ("trained-100m", "trained-220m")
LADDER = harness.ROOT / "benchmarks" / "ladder_schnapsen20.json"


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--recipes", nargs="+", choices=RECIPES, default=list(RECIPES),
                   help="the recipes to train (the --json file keeps the runs of the others)")
    p.add_argument("--total-steps", type=int, default=DEFAULT_TOTAL_STEPS, help="learner decisions of each run")
    p.add_argument("--opponents", nargs="+", default=["pimc", "expert"], help="the evaluation panel")
    p.add_argument("--eval-every", type=int, default=220, help="updates between the periodic evaluations")
    p.add_argument("--eval-deals", type=int, default=100, help="duplicate deals of each periodic evaluation")
    p.add_argument("--final-deals", type=int, default=200, help="duplicate deals of the final evaluation")
    p.add_argument("--share", type=float, default=0.0015, help="--search-teacher-share of the teacher's recipe")
    p.add_argument("--nodes", type=int, default=50_000, help="--search-teacher-nodes of the teacher's recipe")
    p.add_argument("--coef", type=float, default=0.1, help="--search-teacher-coef of the teacher's recipe")
    p.add_argument("--seed", type=int, default=1, help="--seed of every run")
    p.add_argument("--plot", metavar="SVG", help="draw the curves of --from into this file instead of training")
    p.add_argument("--from", dest="source", metavar="JSON", help="the record --plot draws")
    harness.json_option(p)
    args = p.parse_args(argv)
    if args.plot and not args.source:
        p.error("--plot needs --from JSON (a record this script wrote with --json)")
    if min(args.total_steps, args.eval_every, args.eval_deals, args.final_deals) <= 0:
        p.error("--total-steps, --eval-every, --eval-deals and --final-deals must be positive")
    if args.json and not args.plot:
        harness.check_json(p, args)
        try:
            old_runs(args.json)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            p.error(f"--json {args.json}: cannot keep the runs of the record there ({type(e).__name__} {e}): "
                    "expected a record this script wrote, or no file")
    return args


def train(args: argparse.Namespace, folder: Path, recipe: str) -> dict:
    """One ``train.py`` run of ``recipe`` in ``folder``; its command, decisions, seconds and curve."""
    extra = {"teacher": ["--search-teacher-share", str(args.share), "--search-teacher-nodes", str(args.nodes),
                         "--search-teacher-coef", str(args.coef)],
             "lr-3e-4": ["--learning-rate", "3e-4"]}.get(recipe, [])
    flags = ["--seed", str(args.seed), "--total-steps", str(args.total_steps), *extra]
    panel = ["--eval-every", str(args.eval_every), "--eval-deals", str(args.eval_deals), "--eval-opponents",
             *args.opponents, "--eval-rollout-every", "0", "--final-eval-opponents", *args.opponents, "--final-eval-deals",
             str(args.final_deals)]
    cmd = [sys.executable, str(harness.ROOT / "train.py"), *flags, *panel, "--run-dir", str(folder),
           "--run-name", recipe, "--no-progress", "--no-tensorboard"]
    print(" ".join(["train.py", *flags]), flush=True)
    subprocess.run(cmd, check=True, cwd=harness.ROOT, stdout=subprocess.DEVNULL)
    s = json.loads((folder / recipe / "summary.json").read_text(encoding="utf-8"))
    final = {"step": s["steps"], "train_seconds": round(s["train_seconds"], 3), "final": True,
             **{o: s["evaluation"][o]["mean"] for o in args.opponents},
             "ci": {o: [s["evaluation"][o]["ci_low"], s["evaluation"][o]["ci_high"]] for o in args.opponents}}
    return {"flags": " ".join(flags), "steps": s["steps"], "train_seconds": s["train_seconds"],
            "steps_per_second": s["steps_per_second"], "search_teacher": s.get("search_teacher"),
            "curve": [h for h in s["history"] if "train_seconds" in h] + [final]}


def shipped_lines(opponents: list[str]) -> dict[str, dict[str, dict]]:
    """The shipped long runs' ladder results against each opponent, from their side: ``{run: {opponent: {mean,
    ci}}}`` (an opponent the ladder lacks for a run is left out)."""
    pairs = json.loads(LADDER.read_text(encoding="utf-8"))["pairs"]
    out: dict[str, dict[str, dict]] = {}
    for run in SHIPPED_RUNS:
        for p in pairs:
            for me, them, sign in ((p["agent_a"], p["agent_b"], 1), (p["agent_b"], p["agent_a"], -1)):
                if me == run and them in opponents:
                    lo, hi = sorted((sign * p["ci_low"], sign * p["ci_high"]))
                    out.setdefault(run, {})[them] = {"mean": sign * p["mean"], "ci": [lo, hi], "deals": p["deals"]}
    return out


def plot(record: dict, path: str) -> None:
    """Draw ``record``'s curves (one panel per opponent) and the shipped runs' lines into the SVG ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "learning-curves"  # the same record draws the same file
    plt.rcParams["svg.fonttype"] = "none"
    opponents = record["settings"]["opponents"]
    shipped = shipped_lines(opponents)
    fig, axes = plt.subplots(1, len(opponents), figsize=(5 * len(opponents), 3.6), sharey=True, squeeze=False)
    for ax, opp in zip(axes[0], opponents):
        for name, run in record["runs"].items():
            pts = [h for h in run["curve"] if opp in h]
            x = [h["train_seconds"] / 60 for h in pts]
            y = [h[opp] for h in pts]
            err = [[h[opp] - h["ci"][opp][0] for h in pts], [h["ci"][opp][1] - h[opp] for h in pts]]
            ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=f"{name} recipe")
        for i, (run, res) in enumerate(shipped.items()):
            if opp in res:
                ax.axhline(res[opp]["mean"], ls="--", lw=1, color=f"C{i + 2}", label=f"{run} (shipped)")
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_title(f"against {opp}")
        ax.set_xlabel("training minutes")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("game points a hand (95% CI)")
    axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.plot:
        try:
            record = json.loads(Path(args.source).read_text(encoding="utf-8"))
            runs = record["runs"]
            plot(record, args.plot)
        except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
            print(f"learning_curves.py: cannot read the record {args.source}: {type(e).__name__} {e} (expected a "
                  "record this script wrote with --json)", file=sys.stderr)
            return 2
        print(f"drew {len(runs)} curves into {args.plot}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        runs = {recipe: train(args, Path(tmp), recipe) for recipe in args.recipes}
    settings = {k: getattr(args, k) for k in ("total_steps", "opponents", "eval_every", "eval_deals", "final_deals",
                                              "share", "nodes", "coef", "seed")}
    for name, r in runs.items():
        last = r["curve"][-1]
        print(f"{name}: {r['steps']:,} decisions in {r['train_seconds'] / 60:.1f} min of training; final evaluation "
              + ", ".join(f"{o} {last[o]:+.3f} [{last['ci'][o][0]:+.3f}, {last['ci'][o][1]:+.3f}]"
                          for o in args.opponents if o in last))
    if args.json:
        now = harness.record({})
        kept = {name: r for name, r in old_runs(args.json).items() if name not in runs}
        harness.write_json(args.json, {"settings": settings, "runs": {
            **kept, **{name: {**r, **{k: now[k] for k in ("command", "commit", "machine", "load_average")}}
                       for name, r in runs.items()}}})
    return 0


def old_runs(path: str) -> dict:
    """The runs of the record at ``path`` (none where there is no file), each with the command, commit, machine
    and load average of its measurement (a run without its own takes the record's)."""
    try:
        old = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {name: {**r, **{k: r.get(k, old.get(k)) for k in ("command", "commit", "machine", "load_average")}}
            for name, r in old["runs"].items()}


if __name__ == "__main__":
    sys.exit(main())
