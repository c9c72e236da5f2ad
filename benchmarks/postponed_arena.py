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

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import solver_core  # noqa: E402


def main(argv=None) -> int:
    parser = harness.arena_parser(__doc__.splitlines()[0], seed=9101)
    parser.add_argument("--hands", type=int, default=3, help="hands of the move timing (default 3; 0: none)")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.hands < 0:
        parser.error("--deals must be at least 1 and --hands at least 0")
    figures = {}
    if args.hands:
        figures["move_time"] = solver_core.expert_moves(args.hands, args.ruleset, "expert", {"postpone": 1})
    return harness.arena_pair("expert:postpone=1", "expert", args, figures)


if __name__ == "__main__":
    sys.exit(main())
