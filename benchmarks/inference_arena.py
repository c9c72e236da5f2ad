"""``expert`` with world inference against plain ``expert``, on duplicate deals (the arena's method).

Run:

    python benchmarks/inference_arena.py --deals 200 --seed 7001 --json benchmarks/inference_arena_schnapsen20.json

Plays ``expert:inference=MODEL`` (default ``policy``, the shipped policy ``SEARCH_POLICY`` as the opponent model; see
``agents/search/inference.py``) against ``expert`` with :func:`agents.evaluation.arena.play_match`: every deal twice
with the seats swapped, the mean game points a hand of the first agent with its 95% confidence interval. ``--json``
writes the arena's result with the command, commit and machine (``benchmarks/harness.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402


def main(argv=None) -> int:
    parser = harness.arena_parser(__doc__.splitlines()[0], seed=7001)
    parser.add_argument("--model", default="policy", help="the opponent model of inference (default policy)")
    args = parser.parse_args(argv)
    return harness.arena_pair(f"expert:inference={args.model}", "expert", args)


if __name__ == "__main__":
    sys.exit(main())
