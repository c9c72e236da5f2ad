"""Variants of the default recipe, each a ``train.py`` run with the same seed and learner decisions and a few flags
changed, each evaluated against ``pimc`` and ``expert`` on the final table's duplicate deals (seed 999999) and,
with ``--arena-deals``, against ``expert`` on more deals of a seed no variant was chosen on, and with
``--verify-seed`` on as many deals of another seed, to verify a recipe chosen on the first seed's deals.

    python benchmarks/recipe_variants.py --variant lr-3e-4="--learning-rate 3e-4" \
        --variant lr-1e-3="--learning-rate 1e-3" --json benchmarks/recipe_variants_schnapsen20.json

Each variant's row keeps its flags, the ``train.py`` command that trains it, its training seconds and rate (on a
machine shared with other programs, pessimistic) and its results. A row already in the ``--json`` file for
another variant stays there with the command and commit that wrote it, so variants measured by several
invocations share one record. ``--run-dir DIR`` keeps the runs in ``DIR/NAME``; a finished run found there whose
recorded flags are the variant's (its ``summary.json`` and ``policy.pt``) is evaluated again instead of trained
again (the trainer is deterministic for a seed, so training it again gives the same policy); anything else at
that path is refused before any work.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's packages, not an installed copy
sys.path.append(str(Path(__file__).resolve().parent))  # the shared harness, however this file is loaded
import harness  # noqa: E402

from agents.training.recipe import DEFAULT_TOTAL_STEPS  # noqa: E402

#: The seed of the final table's deals (``train.py``'s final evaluation).
FINAL_SEED = 999_999
PANEL = ("pimc", "expert")


def variant(text: str) -> tuple[str, list[str]]:
    name, sep, flags = text.partition("=")
    if not sep or not name or not all(c.isalnum() or c in "-_." for c in name):
        raise argparse.ArgumentTypeError(f"expected NAME=FLAGS (a name of letters, digits, '-', '_' or '.'), got "
                                         f"{text!r}")
    return name, shlex.split(flags)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", type=variant, action="append", required=True, metavar="NAME=FLAGS",
                   help="a variant: its name and the train.py flags it adds to the defaults (repeatable)")
    p.add_argument("--total-steps", type=int, default=DEFAULT_TOTAL_STEPS, help="learner decisions of each run")
    p.add_argument("--seed", type=int, default=1, help="--seed of every run")
    p.add_argument("--deals", type=int, default=200, help="duplicate deals of the final table (pimc, expert)")
    p.add_argument("--arena-deals", type=int, default=0, help="also play expert on this many duplicate deals of "
                                                                "--arena-seed (0: not)")
    p.add_argument("--arena-seed", type=int, default=4242, help="seed of those deals")
    p.add_argument("--verify-seed", type=int, help="also play expert on --arena-deals deals of this seed, one chosen "
                                                   "after the variants were compared on --arena-seed's (a recipe "
                                                   "picked on those deals is verified on others)")
    p.add_argument("--run-dir", help="keep the runs in this folder (default: a temporary one)")
    harness.json_option(p)
    args = p.parse_args(argv)
    if min(args.total_steps, args.deals) <= 0 or args.arena_deals < 0:
        p.error("--total-steps and --deals must be positive, --arena-deals >= 0")
    if args.verify_seed is not None and (not args.arena_deals or args.verify_seed == args.arena_seed):
        p.error(f"--verify-seed {args.verify_seed} needs --arena-deals and a seed other than --arena-seed's "
                f"{args.arena_seed}")
    harness.check_json(p, args, key=lambda r: r["name"], named="its variant")
    return args


def command(args: argparse.Namespace, name: str, flags: list[str], folder: Path) -> list[str]:
    own = [a for key, value in (("--seed", args.seed), ("--total-steps", args.total_steps)) if key not in flags
           for a in (key, str(value))]  # a variant may set its own seed or length
    return ["train.py", *own, *flags,
            "--eval-every", "0", "--final-eval-opponents", *PANEL, "--final-eval-deals", str(args.deals),
            "--run-dir", str(folder), "--run-name", name, "--no-progress", "--no-tensorboard"]


#: ``train.py`` arguments that do not change what a run learns (or resolve per machine), left out of the check
#: that a finished run is the variant's.
NOT_COMPARED = {"run_dir", "run_name", "tensorboard", "progress", "eval_workers", "threads", "samplers", "precision",
                "device", "checkpoint_every", "resume", "stop_after_updates", "final_eval_deals",
                "final_eval_opponents", "eval_every", "eval_opponents", "eval_deals", "eval_rollout_every",
                "nash_conv_every", "sampler_nice", "inline_samplers", "ray_address", "overlap_sampling"}


def finished(folder: Path, name: str, args: argparse.Namespace, flags: list[str]) -> bool:
    """Whether ``folder/name`` holds a finished run of these flags, seed and decisions: its policy's recorded
    arguments agree with every flag given and are ``train.py``'s defaults otherwise (:data:`NOT_COMPARED` aside;
    an argument the run predates counts as the value that reproduces runs from before it,
    :data:`agents.training.resume.ADDED_ARGS`, which is not its default where the default changed since)."""
    import dataclasses

    import torch

    from agents.training.resume import ADDED_ARGS
    from train import Args

    run = folder / name
    if not (run / "summary.json").is_file() or not (run / "policy.pt").is_file():
        return False
    recorded = torch.load(run / "policy.pt", weights_only=True, map_location="cpu")["args"]
    wanted = {"seed": str(args.seed), "total_steps": str(args.total_steps)}
    i = 0
    while i < len(flags):
        key = flags[i].removeprefix("--").replace("-", "_")
        if i + 1 < len(flags) and not flags[i + 1].startswith("--"):
            wanted[key], i = flags[i + 1], i + 2
        else:
            wanted[key.removeprefix("no_")], i = str(not key.startswith("no_")), i + 1
    for f in dataclasses.fields(Args):
        if f.name not in wanted and f.name not in NOT_COMPARED and f.default is not dataclasses.MISSING:
            wanted[f.name] = "None" if f.default is None else str(f.default)
    recorded = {**{k: v for k, v in ADDED_ARGS.items() if k not in recorded}, **recorded}
    return all(_same(recorded[k], v) if k in recorded else v in ("None", str(getattr(Args, k, None)))
               for k, v in wanted.items())


def _same(recorded: object, text: str) -> bool:
    if isinstance(recorded, bool):
        return str(recorded) == text
    if isinstance(recorded, (tuple, list)):
        return text in (str(tuple(recorded)), " ".join(map(str, recorded)))
    if isinstance(recorded, (int, float)):
        try:
            return float(recorded) == float(text)
        except ValueError:
            return False
    return str(recorded) == text


def measure(args: argparse.Namespace, folder: Path, name: str, flags: list[str], old: dict | None = None) -> dict:
    """The variant's row: trained (or its finished run found), then evaluated. ``old``: the ``--json`` record's
    row of this name; where it has the same flags and decisions as a finished run, each of its results of the same
    deals and seed is kept instead of played again (the arena is deterministic for a seed)."""
    from agents.evaluation.arena import play_match

    cmd = command(args, name, flags, folder)
    policy = ("policy", str(folder / name / "policy.pt"))
    if finished(folder, name, args, flags):
        print(f"{name}: the finished run in {folder / name} has these flags; evaluating it", flush=True)
        s = json.loads((folder / name / "summary.json").read_text(encoding="utf-8"))
        if not (old and old.get("flags") == shlex.join(flags) and old.get("steps") == s["steps"]):
            old = None
        evaluation = {o: old[o] if old and old[o]["deals"] == args.deals else
                      play_match(policy, o, n_deals=args.deals, seed=FINAL_SEED, progress=False).to_dict()
                      for o in PANEL}
    else:
        print(" ".join(cmd), flush=True)
        subprocess.run([sys.executable, *cmd], check=True, cwd=harness.ROOT, stdout=subprocess.DEVNULL)
        s = json.loads((folder / name / "summary.json").read_text(encoding="utf-8"))
        evaluation, old = s["evaluation"], None
    row = {"name": name, "flags": shlex.join(flags), "train_command": shlex.join(cmd[:-6]),
           "steps": s["steps"], "train_seconds": round(s["train_seconds"], 1),
           "steps_per_second": round(s["steps_per_second"]), "search_teacher": s.get("search_teacher"),
           **{o: {k: evaluation[o][k] for k in ("mean", "ci_low", "ci_high", "deals")} for o in PANEL}}
    for key, seed in (("arena_expert", args.arena_seed), ("verify_expert", args.verify_seed)):
        if not args.arena_deals or seed is None:
            continue
        kept = (old or {}).get(key)
        if kept and kept["deals"] == args.arena_deals and kept["seed"] == seed:
            print(f"{name}: keeping the record's {key} ({args.arena_deals} deals of seed {seed})", flush=True)
            row[key] = kept
        else:
            r = play_match(policy, "expert", n_deals=args.arena_deals, seed=seed, progress=False).to_dict()
            row[key] = {k: r[k] for k in ("mean", "ci_low", "ci_high", "deals", "seed")}
    print(f"{name}: pimc {_text(row['pimc'])}, expert {_text(row['expert'])}"
          + (f", expert on {args.arena_deals} deals of seed {args.arena_seed} {_text(row['arena_expert'])}"
             if args.arena_deals else "")
          + (f", on deals of seed {args.verify_seed} {_text(row['verify_expert'])}"
             if args.verify_seed is not None else ""), flush=True)
    return row


def _text(result: dict) -> str:
    """``+0.123 [+0.010, +0.236]``; without the interval where the arena gives none (a single deal)."""
    if result["ci_low"] is None:
        return f"{result['mean']:+.3f} (one deal: no CI)"
    return f"{result['mean']:+.3f} [{result['ci_low']:+.3f}, {result['ci_high']:+.3f}]"


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.run_dir).resolve() if args.run_dir else Path(tmp)
        for name, flags in args.variant:
            if (folder / name).exists() and not finished(folder, name, args, flags):
                print(f"recipe_variants.py: {folder / name} holds something other than a finished run of variant "
                      f"{name}'s flags: expected no folder there (to train it) or that run (to evaluate it); remove "
                      "it or name the variant otherwise", file=sys.stderr)
                return 2
        old = {r["name"]: r for r in harness.old_rows(args.json, key=lambda r: r["name"], named="its variant")
               if isinstance(r, dict)} if args.json else {}
        rows = [measure(args, folder, name, flags, old.get(name)) for name, flags in args.variant]
    if args.json:
        harness.write_rows(args.json, rows, key=lambda r: r["name"],
                           figures={"settings": {"total_steps": args.total_steps, "seed": args.seed,
                                                 "deals": args.deals, "final_seed": FINAL_SEED}},
                           named="its variant")
    return 0


if __name__ == "__main__":
    sys.exit(main())
