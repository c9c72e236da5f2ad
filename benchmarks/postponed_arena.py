"""``expert:postpone=1`` (EPIMC, ``agents/search/postponed.py``) against plain ``expert``: move time and strength.

Run:

    python benchmarks/postponed_arena.py --deals 200 --seed 9101 --hands 3 --json benchmarks/postponed_arena_schnapsen20.json

First times the postponed expert's moves as ``benchmarks/solver_core.py --expert`` times expert's
(:func:`solver_core.expert_moves`: ``--hands`` seeded hands against ``heuristic``, median, p90 and max ms a move),
then plays it against ``expert`` with :func:`agents.evaluation.arena.play_match` on ``--deals`` duplicate deals (every
deal twice, seats swapped): the mean game points a hand of the postponed expert with its 95% confidence interval.
``--json`` writes both with the command, commit and machine (``benchmarks/harness.py``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import solver_core  # noqa: E402

from agents.evaluation.arena import play_match  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=200, help="duplicate deals (default 200)")
    parser.add_argument("--seed", type=int, default=9101, help="seed of the deals and agents (default 9101)")
    parser.add_argument("--hands", type=int, default=3, help="hands of the move timing (default 3; 0: none)")
    parser.add_argument("--ruleset", default="schnapsen20", help="ruleset (default schnapsen20)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    harness.json_option(parser)
    args = parser.parse_args(argv)
    if args.deals < 1 or args.hands < 0:
        parser.error("--deals must be at least 1 and --hands at least 0")
    figures = {}
    if args.hands:
        figures["move_time"] = solver_core.expert_moves(args.hands, args.ruleset, "expert", {"postpone": 1})
    t = time.perf_counter()
    result = play_match("expert:postpone=1", "expert", n_deals=args.deals, ruleset=args.ruleset, seed=args.seed,
                        workers=args.workers, progress=False)
    seconds = time.perf_counter() - t
    print(result.table())
    print(f"{seconds:.0f} s")
    if args.json:
        harness.write_json(args.json, {"result": result.to_dict(), "seconds": seconds, **figures})
    return 0


if __name__ == "__main__":
    sys.exit(main())
