"""``expert`` with world inference against plain ``expert``, on duplicate deals (the arena's method).

Run:

    python benchmarks/inference_arena.py --deals 200 --seed 7001 --json benchmarks/inference_arena_schnapsen20.json

Plays ``expert:inference=MODEL`` (default ``policy``, the strongest shipped policy as the opponent model; see
``agents/search/inference.py``) against ``expert`` with :func:`agents.evaluation.arena.play_match`: every deal twice
with the seats swapped, the mean game points a hand of the first agent with its 95% confidence interval. ``--json``
writes the arena's result with the command, commit and machine (``benchmarks/harness.py``).
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

from agents.evaluation.arena import play_match  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=200, help="duplicate deals (default 200)")
    parser.add_argument("--seed", type=int, default=7001, help="seed of the deals and agents (default 7001)")
    parser.add_argument("--model", default="policy", help="the opponent model of inference (default policy)")
    parser.add_argument("--ruleset", default="schnapsen20", help="ruleset (default schnapsen20)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    harness.json_option(parser)
    args = parser.parse_args(argv)
    a = f"expert:inference={args.model}"
    t = time.perf_counter()
    result = play_match(a, "expert", n_deals=args.deals, ruleset=args.ruleset, seed=args.seed,
                        workers=args.workers, progress=False)
    seconds = time.perf_counter() - t
    print(result.table())
    print(f"{seconds:.0f} s")
    if args.json:
        harness.write_json(args.json, {"result": result.to_dict(), "seconds": seconds})
    return 0


if __name__ == "__main__":
    sys.exit(main())
