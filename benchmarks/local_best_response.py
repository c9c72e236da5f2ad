"""Lower bounds on exploitability by the local best response (``agents/game_theory/lbr.py``) on ``schnapsen10``, against
the exact values of ``benchmarks/exploitability_schnapsen10.json``.

Run:

    python benchmarks/local_best_response.py --targets expert pimc heuristic --policies runs/s10_cfr_b/policy.pt --sample 2100 --json benchmarks/local_best_response_schnapsen10.json

For each target the responder plays every deal of the game (:func:`agents.game_theory.exact.deals`, seat 1 dealing,
as the exact tree), every ``stride``-th one or a uniform ``--sample`` of them (:func:`chosen_deals`), in each seat
against it; the targets are deterministic (``pimc`` and ``expert`` asked
once per observation with their generator seeded from it, as ``benchmarks/exploitability.py`` asks them; the
heuristic; a checkpoint's greedy policy with ``--policies``), so each deal is one hand and the mean over all deals is
the responder's exact value. A row holds the responder's game points a hand in each seat (with the standard error
over the deals played), their sum (the lower bound on NashConv) with its 95% CI over the deals' draw (none where
every deal was played), the exact NashConv and the ratio of the two with its CI;
``--exact-missing`` computes the exact NashConv of a target the file does not hold (a new checkpoint). ``--json``
keeps the rows of other targets already in the file.

``--worlds W --lookahead L`` play the responder with the budget of the larger decks instead (``W`` drawn worlds a
decision, the walk stopped after ``L`` target decisions; the agent ``lbr`` on ``schnapsen20`` draws 32 and stops
after 0): how close that budget's bound comes to the exact NashConv here calibrates it where nothing is exact.

    python benchmarks/local_best_response.py --targets expert pimc heuristic --policies runs/s10_cfr_b/policy.pt runs/s10_nashconv/policy.pt --worlds 32 --lookahead 0 --sample 2100 --json benchmarks/local_best_response_schnapsen10_drawn.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

from agents import make_agent  # noqa: E402
from agents.game_theory import exact  # noqa: E402
from agents.game_theory.lbr import LocalBestResponse, play_hand  # noqa: E402
from schnapsen_env.ruleset import RuleSet  # noqa: E402

EXACT = ROOT / "benchmarks" / "exploitability_schnapsen10.json"
TARGETS = ("expert", "pimc", "heuristic")


def target_policy(name: str, rules: RuleSet):
    if name == "heuristic":
        from agents.scripted.heuristic import HeuristicAgent

        return exact.agent_policy(HeuristicAgent(rules))
    if name.endswith(".pt"):
        from agents.learned.policy_net import load_policy

        soft = exact.network_policy(load_policy(name, "schnapsen10")[0])

        def greedy(obs, masks):
            p = soft(obs, masks)
            out = np.zeros_like(p)
            out[np.arange(len(p)), p.argmax(axis=1)] = 1.0
            return out

        return greedy
    return exact.search_agent_policy(make_agent(name, rules, seed=0))


def chosen_deals(rules: RuleSet, stride: int = 1, sample: int | None = None, seed: int = 0) -> list[list[int]]:
    """The deck orders played: every ``stride``-th deal of :func:`agents.game_theory.exact.deals`, or ``sample`` of
    them drawn uniformly without replacement by a generator seeded with ``seed`` (in the enumeration's order).

    A stride is a systematic sample: the enumeration's innermost loops (the turn-up, then the other hand) repeat
    with periods that a small stride shares, so every third deal, for one, never pairs a hand with a third of the
    other hands, and ties the turn-up to the other hand's place in its loop; its mean can lie several standard
    errors from the mean over every deal. A uniform sample's mean is unbiased; its standard error over
    the deals played is an upper bound (without replacement from a finite set it is smaller)."""
    every = [o.tolist() for o in exact.deals(rules)]
    if sample is None:
        return every[::stride]
    picked = np.sort(np.random.default_rng(seed).choice(len(every), size=sample, replace=False))
    return [every[i] for i in picked]


def sum_stderr(both: np.ndarray, population: int) -> float:
    """The standard error of the mean over the deals played of the responder's two seats' sum on each deal (the
    NashConv bound), as a sample without replacement from the ``population`` deals of the game: with the
    finite-population correction, so 0 where every deal was played (the mean is then the responder's exact value)."""
    n = len(both)
    if n < 2:
        return float("nan")
    return float(both.std(ddof=1) / np.sqrt(n) * np.sqrt(max(0.0, (population - n) / (population - 1))))


def row_key(row: dict) -> str:
    """A row of the --json file: the rows of one target replace its earlier row; the others stay."""
    return row["target"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="*", default=list(TARGETS), choices=TARGETS)
    parser.add_argument("--policies", nargs="*", default=[], metavar="PATH",
                        help="train.py --ruleset schnapsen10 checkpoints, played greedily")
    parser.add_argument("--stride", type=int, default=1,
                        help="play every stride-th deal in the order of exact.deals (default 1: all 6,300); a "
                             "systematic sample, which follows that order's pattern (prefer --sample)")
    parser.add_argument("--sample", type=int, default=None, metavar="N",
                        help="play N deals drawn uniformly without replacement (seeded by --seed) instead")
    parser.add_argument("--seed", type=int, default=0, help="the seed of --sample's draw (default 0)")
    parser.add_argument("--exact-missing", action="store_true",
                        help=f"compute the exact NashConv of targets without a row in {EXACT.name} (minutes)")
    parser.add_argument("--worlds", type=int, default=None,
                        help="worlds drawn a decision (default: every world, enumerated)")
    parser.add_argument("--lookahead", type=int, default=None,
                        help="target decisions the walk expands before the solver (default 8: all)")
    harness.json_option(parser)
    args = parser.parse_args(argv)
    if args.stride < 1:
        parser.error("--stride must be >= 1")
    rules = RuleSet.make("schnapsen10")
    population = sum(1 for _ in exact.deals(rules))
    if args.sample is not None and not 1 <= args.sample <= population:
        parser.error(f"--sample must be from 1 to {population:,} (the deals of schnapsen10), got {args.sample}")
    if args.sample is not None and args.stride != 1:
        parser.error("--sample and --stride are two ways to choose the deals: expected one of them")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    if args.worlds is not None and not 1 <= args.worlds <= 10_000:
        parser.error(f"--worlds must be from 1 to 10000, got {args.worlds}")
    if args.lookahead is not None and not 0 <= args.lookahead <= 32:
        parser.error(f"--lookahead must be from 0 to 32, got {args.lookahead}")
    harness.check_json(parser, args, key=row_key)  # a file of rows that is not one: before the play
    orders = chosen_deals(rules, args.stride, args.sample, args.seed)
    known = {r["policy"]: r for r in json.loads(EXACT.read_text())["rows"]} if EXACT.exists() else {}
    rows = []
    print(f"{'target':<28}{'LBR N':>10}{'LBR D':>10}{'LBR sum':>10}{'NashConv':>10}{'ratio':>8}{'time':>8}")
    for name in [*args.targets, *args.policies]:
        t = time.perf_counter()
        target = target_policy(name, rules)
        lbr = LocalBestResponse(rules, target, seed=0, worlds=args.worlds, lookahead=args.lookahead)
        seats, both = [], np.zeros(len(orders))
        for seat in (0, 1):
            values = np.array([play_hand(lbr, target, o, seat) for o in orders])
            seats.append({"mean": float(values.mean()), "stderr": float(values.std(ddof=1) / np.sqrt(len(values)))})
            both += values
        lower = seats[0]["mean"] + seats[1]["mean"]
        half = 1.96 * sum_stderr(both, population)
        exact_row = known.get(name if not name.endswith(".pt") else f"{name} (greedy)")
        if exact_row is None and args.exact_missing:
            res = exact.Tree(rules).nash_conv(target, revealed="policy" if name not in ("expert", "pimc") else
                                              "minimax")
            exact_row = {"nash_conv": res["nash_conv"], "best_response": res["best_response"]}
        nash = exact_row["nash_conv"] if exact_row else None
        row = {"target": name, "deals": len(orders), "stride": args.stride, "sample": args.sample,
               "seed": args.seed if args.sample is not None else None, "worlds": args.worlds,
               "lookahead": lbr.lookahead, "lbr": seats, "lbr_nash_conv": lower,
               "lbr_nash_conv_ci": [lower - half, lower + half],
               "exact_nash_conv": nash, "exact_best_response": exact_row["best_response"] if exact_row else None,
               "ratio": lower / nash if nash else None,
               "ratio_ci": [(lower - half) / nash, (lower + half) / nash] if nash else None,
               "seconds": time.perf_counter() - t}
        rows.append(row)
        ratio = f"{row['ratio']:8.3f}" if nash else f"{'-':>8}"
        print(f"{name:<28}{seats[0]['mean']:>+10.4f}{seats[1]['mean']:>+10.4f}{lower:>+10.4f}"
              f"{nash if nash is not None else float('nan'):>10.4f}{ratio}{row['seconds']:>7.0f}s", flush=True)
    if args.json:  # rows of other targets already in the file stay, each with the command that wrote it
        try:
            harness.write_rows(args.json, rows, key=row_key, figures={"ruleset": "schnapsen10"})
        except ValueError as e:  # the file changed since check_json: it is left as it is
            print(f"local_best_response.py: {e}; the rows measured are printed above", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
