"""A learned best response: a lower bound on a policy's exploitability by ``train.py``'s PPO trained against it alone.

    python benchmarks/learned_best_response.py --ruleset schnapsen10 --total-steps 6000000 --json benchmarks/learned_best_response_schnapsen10.json
    python benchmarks/learned_best_response.py --ruleset schnapsen20 --total-steps 15000000 --json benchmarks/learned_best_response_schnapsen20.json

The responder is a network trained by ``train.py --opponent TARGET --opponent-prob 1 --pool-prob 0
--heuristic-prob 0`` (every hand against the frozen target; one seat drawn per hand) for ``--total-steps`` learner
decisions, fresh or (``--init-from``) starting from a policy's weights, the target's own (``--init-from target``)
or another's; then played greedily against the target on ``--deals`` duplicate deals of the arena
(:func:`agents.evaluation.arena.play_match`; each deal once in each seat). With ``--init-from`` the row's
``start`` is the starting policy's result, played the same way on the same deals: what the training added. A policy target plays its masked
softmax, sampled; an agent target (``--target expert``) the deterministic strategy train.py plays it as, its
generator seeded from each observation (:func:`agents.game_theory.exact.search_agent_policy`), whose exact
NashConv ``benchmarks/exploitability.py --agents NAME`` measures.
Any responder's value is at most the best response's, so its margin bounds the target's exploitability from below
(up to the CI). The record holds the arena's mean game points a hand with its 95% CI and, in the convention of
``benchmarks/local_best_response.py`` and ``benchmarks/exploitability_schnapsen10.json``, the NashConv lower bound:
the sum of the responder's values in the two seats, twice the arena's mean over both seatings (CI likewise); on
``schnapsen10`` also the exact NashConv of the target (a policy's softmax) from that file and the ratio of the two.
``--json`` keeps the file's rows of other targets (or of a target played the other way), each with its command.
"""

from __future__ import annotations

import argparse
import functools
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages, not an installed copy
sys.path.append(str(Path(__file__).resolve().parent))  # the shared harness
import harness  # noqa: E402

from agents.evaluation.arena import MAX_DEALS, play_match  # noqa: E402
from agents.game_theory.exact import search_agent_policy  # noqa: E402
from agents.learned.data import SHIPPED_BY_NAME, STRONGEST_POLICIES  # noqa: E402
from agents.learned.shipped import load_checkpoint_agent  # noqa: E402
from agents.specs import resolve_agent  # noqa: E402
from agents.training.self_play import TARGET_MEMO  # noqa: E402

EXACT = ROOT / "benchmarks" / "exploitability_schnapsen10.json"
RULESETS = ("schnapsen10", "schnapsen20", "sixtysix24")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ruleset", default="schnapsen10", help=f"one of {', '.join(RULESETS)}")
    p.add_argument("--target", nargs="+", dest="targets",
                   help="the targets, each measured in turn with the same settings: a shipped policy's name, a "
                        "train.py .pt of the ruleset or an agent spec (default: the ruleset's strongest shipped "
                        "policy)")
    p.add_argument("--total-steps", type=int, default=6_000_000, help="learner decisions of the responder's training")
    p.add_argument("--deals", type=int, default=2000, help="duplicate deals of the final match against the target")
    p.add_argument("--seed", type=int, default=1, help="--seed of the training; the match plays seed 0's deals")
    p.add_argument("--samplers", type=int, default=1, help="train.py --samplers")
    p.add_argument("--target-greedy", action="store_true",
                   help="policy targets play their argmax (train.py --opponent-greedy), in training and in the "
                        "match, instead of sampling their softmax")
    p.add_argument("--init-from", help="start the responder from a policy's weights instead of a fresh network "
                                       "(train.py --init-from, that policy's network size): \"target\" (a policy "
                                       "target's own), a shipped policy's name or a train.py .pt")
    p.add_argument("--train-flags", default="", help="more train.py flags for the responder's training, one "
                                                       "string (e.g. \"--ent-coef 0 --learning-rate 0.001\")")
    p.add_argument("--run-dir", help="keep the responders' run folders here, learned_br_0, learned_br_1, ... by "
                                     "target (default: temporary folders)")
    harness.json_option(p)
    return p.parse_args(argv)


def row_key(row: dict) -> tuple:
    """A row of the --json file: the rows of one target played one way replace its earlier row; the others stay."""
    return row["target"], row.get("target_play")


def check(args: argparse.Namespace) -> str | None:
    """What is wrong with the options, in one line (None: nothing)."""
    if args.ruleset not in RULESETS:
        return f"--ruleset {args.ruleset!r}: expected one of {', '.join(RULESETS)}"
    if args.total_steps < 1:
        return f"--total-steps must be >= 1, got {args.total_steps}"
    if not 1 <= args.deals <= MAX_DEALS:
        return f"--deals must be from 1 to {MAX_DEALS:,}, got {args.deals}"
    if args.samplers < 1:
        return f"--samplers must be >= 1, got {args.samplers}"
    try:
        shlex.split(args.train_flags)
    except ValueError as e:
        return f"--train-flags {args.train_flags!r}: {e}: expected train.py flags as one shell-quoted string"
    problem = harness.json_problem(args.json, row_key)  # a file of rows that is not one: before the training
    if problem is not None:
        return problem
    if args.json is not None:  # a row of another ruleset would be replaced by this one's of the same target
        other = sorted({str(r["ruleset"]) for r in harness.old_rows(args.json, row_key)
                        if r.get("ruleset") is not None} - {args.ruleset})  # rows that name none: any
        if other:
            return (f"--json {args.json!r} holds rows of --ruleset {', '.join(other)}: expected a file of "
                    f"--ruleset {args.ruleset}'s rows (one file a ruleset) or a path that does not exist yet")
    if args.targets is None:
        args.targets = [STRONGEST_POLICIES[args.ruleset]]
    for target in args.targets:
        problem = check_target(argparse.Namespace(**{**vars(args), "target": target}))
        if problem is not None:
            return problem
    return None


def check_target(args: argparse.Namespace) -> str | None:
    """What is wrong with one target (``args.target``) and ``--init-from`` for it, in one line (None: nothing)."""
    if not is_policy(args.target) and not args.target.endswith(".pt"):
        try:
            resolve_agent(args.target, args.ruleset)[1](seed=0)
        except (ValueError, TypeError) as e:
            return (f"--target {args.target!r}: {' '.join(str(e).split())}: expected a .pt written by train.py, one "
                    f"of {', '.join(sorted(SHIPPED_BY_NAME))} or an agent spec")
        if args.init_from == "target":
            return f"--init-from target: the target {args.target!r} is an agent, not a policy with weights"
    for flag, name in (("--target", args.target), ("--init-from", args.init_from)):
        if name is None or (flag == "--init-from" and name == "target"):
            continue
        if flag == "--target" and not is_policy(name) and not name.endswith(".pt"):
            continue
        if not is_policy(name):
            return (f"{flag} {name!r}: no such file and no shipped policy of that name: expected a .pt written "
                    f"by train.py or one of {', '.join(sorted(SHIPPED_BY_NAME))}")
        try:
            load_checkpoint_agent(policy_path(name), args.ruleset)
        except ValueError as e:
            return f"{flag} {name!r}: {' '.join(str(e).split())}"
    return None


def exact_row(target: str, greedy: bool = False) -> dict | None:
    """The exact NashConv of ``target`` (a policy's softmax, or with ``greedy`` its argmax; an agent's strategy)
    from ``exploitability_schnapsen10.json`` (None: not there)."""
    if not EXACT.exists():
        return None
    shipped = SHIPPED_BY_NAME.get(target)
    path = str(shipped.path.relative_to(ROOT)) if shipped is not None else target
    name = f"{path} ({'greedy' if greedy else 'softmax'})" if is_policy(target) else target
    for row in json.loads(EXACT.read_text())["rows"]:
        if row["policy"] == name:
            return row
    return None


def policy_path(name: str):
    """A policy's file: a shipped policy's, or the path given."""
    shipped = SHIPPED_BY_NAME.get(name)
    return shipped.path if shipped is not None else name


def is_policy(name: str) -> bool:
    """A shipped policy's name or an existing file (else an agent spec)."""
    return name in SHIPPED_BY_NAME or Path(name).is_file()


class StrategyAgent:
    """A searching agent as the deterministic strategy train.py's samplers play it (its generator seeded from each
    observation, :func:`agents.game_theory.exact.search_agent_policy`): the strategy whose exact NashConv
    ``exploitability_schnapsen10.json`` holds."""

    def __init__(self, spec: str, ruleset: str, seed: int = 0) -> None:
        _, factory = resolve_agent(spec, ruleset)
        self.policy = search_agent_policy(factory(seed=0), max_memo=TARGET_MEMO)

    def act(self, observation: dict) -> int:
        p = self.policy(observation["observation"][None], observation["action_mask"][None])
        return int(np.argmax(p[0]))


def train(args: argparse.Namespace, run_dir: Path) -> dict:
    """Train the responder with train.py (a subprocess, as a user runs it); returns its summary.json."""
    cmd = [sys.executable, str(ROOT / "train.py"), "--ruleset", args.ruleset, "--opponent", args.target,
           "--opponent-prob", "1", "--pool-prob", "0", "--heuristic-prob", "0", "--total-steps",
           str(args.total_steps), "--seed", str(args.seed), "--samplers", str(args.samplers), "--eval-every", "0",
           "--final-eval-deals", "0", "--run-dir", str(run_dir.parent), "--run-name", run_dir.name,
           "--no-progress", "--no-tensorboard"]
    if args.init_from is not None:
        init = args.target if args.init_from == "target" else args.init_from
        net = load_checkpoint_agent(policy_path(init), args.ruleset).model.config()
        cmd += ["--init-from", init, "--hidden", str(net["hidden"]), "--layers", str(net["layers"]),
                "--privileged-critic" if net["critic_extra"] else "--no-privileged-critic",
                "--canonical-trump" if net.get("canonical_trump") else "--no-canonical-trump",
                "--canonical-suits" if net.get("canonical_suits") else "--no-canonical-suits"]
    if args.target_greedy and is_policy(args.target):
        cmd += ["--opponent-greedy"]
    cmd += shlex.split(args.train_flags)
    print(" ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)
    return json.loads((run_dir / "summary.json").read_text())


def measure(args: argparse.Namespace, run_dir: Path) -> dict:
    t0 = time.perf_counter()
    summary = train(args, run_dir)
    wall = time.perf_counter() - t0
    responder = ("learned BR (greedy)", functools.partial(load_checkpoint_agent, run_dir / "policy.pt", greedy=True))
    if is_policy(args.target):
        play = "greedy" if args.target_greedy else "softmax"
        target = (f"{args.target} ({play})", functools.partial(load_checkpoint_agent, policy_path(args.target),
                                                               greedy=args.target_greedy))
    else:
        target = (args.target, functools.partial(StrategyAgent, args.target, args.ruleset))
    res = play_match(responder, target, args.deals, ruleset=args.ruleset, seed=0, workers=1, progress=False)
    row = {"ruleset": args.ruleset, "target": args.target, "total_steps": args.total_steps,
           "target_play": ("greedy" if args.target_greedy else "softmax") if is_policy(args.target) else "strategy",
           "init": args.init_from or "fresh", "train_flags": args.train_flags,
           "decisions_trained": summary["steps"], "seed": args.seed, "samplers": args.samplers,
           "train_seconds": summary["train_seconds"], "wall_seconds": wall, "deals": res.deals,
           "mean": res.mean, "ci_low": res.ci_low, "ci_high": res.ci_high,
           "nash_conv_lower_bound": 2 * res.mean,
           "nash_conv_ci": [2 * res.ci_low, 2 * res.ci_high],
           "training_margin": summary["target_points_per_hand"]}
    exact = exact_row(args.target, args.target_greedy) if args.ruleset == "schnapsen10" else None
    if exact is not None:
        row |= {"exact_nash_conv": exact["nash_conv"], "ratio": 2 * res.mean / exact["nash_conv"],
                "ratio_ci": [2 * res.ci_low / exact["nash_conv"], 2 * res.ci_high / exact["nash_conv"]]}
    if args.init_from is not None:  # what the training added: the start, played the same way on the same deals
        init = args.target if args.init_from == "target" else args.init_from
        start = (f"{init} (greedy)", functools.partial(load_checkpoint_agent, policy_path(init), greedy=True))
        res0 = play_match(start, target, args.deals, ruleset=args.ruleset, seed=0, workers=1, progress=False)
        row["start"] = {"mean": res0.mean, "ci_low": res0.ci_low, "ci_high": res0.ci_high,
                        "nash_conv_lower_bound": 2 * res0.mean}
        if exact is not None:
            row["start"]["ratio"] = 2 * res0.mean / exact["nash_conv"]
    return row


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    problem = check(args)
    if problem is not None:
        print(f"learned_best_response.py: {problem}", file=sys.stderr)
        return 2
    rows = []
    for i, target in enumerate(args.targets):
        one = argparse.Namespace(**{**vars(args), "target": target})
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(args.run_dir) / f"learned_br_{i}" if args.run_dir else Path(tmp) / "learned_br"
            try:
                row = measure(one, run_dir)
            except subprocess.CalledProcessError as e:  # train.py printed its own one-line error above
                print(f"learned_best_response.py: train.py failed (exit status {e.returncode})", file=sys.stderr)
                return 1
        rows.append(row)
        print(f"{row['target']} on {row['ruleset']}: learned BR {row['mean']:+.3f} game points a hand "
              f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}] over {row['deals']:,} duplicate deals; NashConv >= "
              f"{row['nash_conv_lower_bound']:.3f} [{row['nash_conv_ci'][0]:.3f}, {row['nash_conv_ci'][1]:.3f}]"
              + (f"; exact {row['exact_nash_conv']:.3f}, ratio {row['ratio']:.2f}" if "ratio" in row else "")
              + f"; {row['decisions_trained']:,} decisions in {row['train_seconds'] / 60:.1f} min", flush=True)
        if args.json:  # after each target, so that a long run keeps what it measured; rows of other targets (or
            # of the same target played the other way) already in the file stay, each with the command that wrote it
            try:
                harness.write_rows(args.json, rows, key=row_key)
            except ValueError as e:  # the file changed since check: it is left as it is
                print(f"learned_best_response.py: {e}; the rows measured are printed above", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
