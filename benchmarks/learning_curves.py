"""Learning curves against wall-clock: the strength of ``train.py``'s policy against a fixed panel (``pimc``,
``expert``) after each minute of training, for the default recipe and the recipe with the search teacher, and the
plot the docs show beside the shipped long runs.

    python benchmarks/learning_curves.py --json benchmarks/learning_curves_schnapsen20.json
    python benchmarks/learning_curves.py --plot docs/img/learning_curves.svg \
        --from benchmarks/learning_curves_schnapsen20.json
    python benchmarks/learning_curves.py --add-run long150m runs/long150m --train-command "python train.py ..." \
        --arena runs/long150m/arena_expert.json --json benchmarks/learning_curves_schnapsen20.json
    python benchmarks/learning_curves.py --add-run long185m runs/long185m --continues long150m ...

The first trains each recipe once, one after the other (the same seed and learner decisions; the default recipe
is ``train.py``'s defaults, the teacher's adds ``--search-teacher-share/-nodes/-coef``), each with periodic
evaluations against the panel (``--eval-opponents``; the k-th evaluation of every run plays the same duplicate
deals) and a final one on more deals, and records the curves against the training seconds (which leave out the
evaluations' own time). The second draws them: game points a
hand with the 95% CI against training minutes, one panel per opponent, with the shipped long runs' results against
the same opponents (from ``benchmarks/ladder_schnapsen20.json``) as horizontal lines. The third adds a finished
``train.py`` run made elsewhere (a long run, trained with periodic evaluations against the panel) to the record
without training: its curve is the periodic evaluations of the run folder's ``summary.json``, and each
``schnapsen-arena --json`` result of its policy against a panel opponent is the curve's final point, at the run's
training seconds; a run resumed from a copy of another's folder (``--continues``) keeps only its own evaluations,
drawn on from the other's last point. Plotting needs matplotlib (the ``notebooks`` extra, or ``dev``).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's packages, not an installed copy
sys.path.append(str(Path(__file__).resolve().parent))  # the shared harness, however this file is loaded
import harness  # noqa: E402

from agents.training.recipe import DEFAULT_TOTAL_STEPS  # noqa: E402
from schnapsen_env.files import describe_os_error  # noqa: E402

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
    p.add_argument("--add-run", nargs=2, metavar=("NAME", "RUN_DIR"),
                   help="add a finished train.py run's periodic evaluations against the panel (RUN_DIR/summary.json) "
                        "to the --json record as the curve NAME, instead of training")
    p.add_argument("--train-command", metavar="CMD", help="with --add-run: the command(s) that made the run")
    p.add_argument("--arena", nargs="+", default=[], metavar="JSON",
                   help="with --add-run: schnapsen-arena --json results of the run's policy against panel opponents, "
                        "the curve's final points")
    p.add_argument("--continues", metavar="NAME",
                   help="with --add-run: the record's run NAME that this one resumed (a copy of its folder, resumed "
                        "with a larger --total-steps); the curve keeps the evaluations after NAME's last decision")
    harness.json_option(p)
    args = p.parse_args(argv)
    if args.plot and not args.source:
        p.error("--plot needs --from JSON (a record this script wrote with --json)")
    if args.add_run and not (args.json and args.train_command):
        p.error("--add-run needs --json (the record it adds to) and --train-command (what made the run)")
    if (args.train_command or args.arena or args.continues) and not args.add_run:
        p.error("--train-command, --arena and --continues go with --add-run NAME RUN_DIR")
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


def added_run(args: argparse.Namespace) -> dict:
    """The run of ``--add-run NAME RUN_DIR`` as a record's run: its command, decisions, seconds and curve (the
    periodic evaluations against the panel, then one final point per ``--arena`` result).

    Raises:
        ValueError: the run folder has no finished run's summary, no periodic evaluation against the panel, or an
            arena result is not one of its policy against a panel opponent on schnapsen20's hands.
    """
    name, folder = args.add_run
    if args.continues == name:
        raise ValueError(f"--continues {name}: the run it resumed must be another run of the record than itself")
    path = Path(folder) / "summary.json"
    try:
        s = json.loads(path.read_text(encoding="utf-8"))
        steps, seconds, history = s["steps"], s["train_seconds"], s["history"]
        if not _count(steps) or not _number(seconds) or seconds <= 0 or not isinstance(history, list):
            raise ValueError(f"steps {steps!r}, train_seconds {seconds!r}, history of type {type(history).__name__}")
        for h in history:
            if not isinstance(h, dict) or ("train_seconds" in h and not (_count(h.get("step"))
                                                                        and _number(h["train_seconds"]))):
                raise ValueError(f"the evaluation {h!r} has no decision count and training seconds")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: not the summary of a finished train.py run, with its decisions, positive training "
                         f"seconds and a list of evaluations ({type(e).__name__} {e})") from None
    after = -1
    if args.continues:  # the evaluations the run it resumed holds already are that run's
        prior = old_runs(args.json).get(args.continues)
        after = prior.get("steps") if isinstance(prior, dict) else None
        if not _count(after):
            raise ValueError(f"--continues {args.continues}: no such run with its decisions in {args.json}")
        if after >= steps:
            raise ValueError(f"--continues {args.continues}: that run ends at {after:,} decisions, not before this "
                             f"one's {steps:,}")
    curve = [h for h in history if "train_seconds" in h and any(o in h for o in args.opponents) and h["step"] > after]
    if not curve and not args.arena:
        raise ValueError(f"{path}: no periodic evaluation against {' or '.join(args.opponents)} (train with "
                         f"--eval-opponents {' '.join(args.opponents)})")
    for arena in args.arena:
        try:
            a = json.loads(Path(arena).read_text(encoding="utf-8"))
            opp, mean, ci = a["agent_b"], a["mean"], [a["ci_low"], a["ci_high"]]
            if opp not in args.opponents or a["ruleset"] != "schnapsen20" or a["episode"] != "hand":
                raise ValueError(f"agent_b {opp!r}, ruleset {a['ruleset']!r}, episode {a['episode']!r}")
            if not (all(_number(v) for v in (mean, *ci)) and _count(a["deals"]) and _count(a["seed"], 0)):
                raise ValueError(f"mean {mean!r}, CI {ci!r}, deals {a['deals']!r}, seed {a['seed']!r}")
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"--arena {arena}: expected a schnapsen-arena --json result of the run's policy against "
                             f"one of {', '.join(args.opponents)} on schnapsen20 hands ({type(e).__name__} {e})") from None
        curve.append({"step": steps, "train_seconds": round(seconds, 3), "final": True, opp: mean, "ci": {opp: ci},
                      "deals": a["deals"], "seed": a["seed"]})
    # decisions a second of training: the summary's own rate is its last invocation's alone where a run resumed
    return {"flags": args.train_command, "steps": steps, "train_seconds": seconds, "steps_per_second": steps / seconds,
            "search_teacher": s.get("search_teacher"), **({"continues": args.continues} if args.continues else {}),
            "curve": curve}


def _count(v, least: int = 1) -> bool:
    """Whether ``v`` is an int (not a bool) of at least ``least``."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= least


def _number(v) -> bool:
    """Whether ``v`` is a finite int or float (not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


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
            label = f"{name} recipe" if name in RECIPES else name
            if run.get("continues"):
                label += f" (resumed from {run['continues']})"
            resumed = [h for h in record["runs"].get(run.get("continues"), {}).get("curve", []) if opp in h]
            if resumed and pts:  # drawn on from the last point of the run it resumed
                ax.plot([resumed[-1]["train_seconds"] / 60, x[0]], [resumed[-1][opp], y[0]], ls=":", color="grey")
            ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=label)
        for i, (run, res) in enumerate(shipped.items()):
            if opp in res:
                ax.axhline(res[opp]["mean"], ls="--", lw=1, color=f"C{len(record['runs']) + i}",
                           label=f"{run} (shipped)")
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_title(f"against {opp}")
        ax.set_xscale("log")  # the short recipes' minutes and the long runs' hours on one axis
        ax.set_xlabel("training minutes (log scale)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("game points a hand (95% CI)")
    axes[0][0].legend(fontsize=8, loc="lower right")  # where the curves against pimc leave room
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.plot:
        try:
            record = json.loads(Path(args.source).read_text(encoding="utf-8"))
            runs = record["runs"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"learning_curves.py: cannot read the record {args.source}: {type(e).__name__} {e} (expected a "
                  "record this script wrote with --json)", file=sys.stderr)
            return 2
        try:
            plot(record, args.plot)
        except OSError as e:  # the figure's file (matplotlib names a format it cannot write as a ValueError)
            print(f"learning_curves.py: cannot write {args.plot}: {describe_os_error(e)}", file=sys.stderr)
            return 2
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
            print(f"learning_curves.py: cannot read the record {args.source} to draw {args.plot}: {type(e).__name__} "
                  f"{e} (expected a record this script wrote with --json, and a file name ending in .svg, .png or "
                  ".pdf)", file=sys.stderr)
            return 2
        print(f"drew {len(runs)} curves into {args.plot}")
        return 0
    if args.add_run:
        try:
            runs = {args.add_run[0]: added_run(args)}
        except ValueError as e:
            print(f"learning_curves.py: {e}", file=sys.stderr)
            return 2
    else:
        with tempfile.TemporaryDirectory() as tmp:
            runs = {recipe: train(args, Path(tmp), recipe) for recipe in args.recipes}
    settings = {k: getattr(args, k) for k in ("total_steps", "opponents", "eval_every", "eval_deals", "final_deals",
                                              "share", "nodes", "coef", "seed")}
    if args.add_run and args.json and Path(args.json).exists():  # the recipes' settings stay the record's
        settings = json.loads(Path(args.json).read_text(encoding="utf-8")).get("settings", settings)
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
