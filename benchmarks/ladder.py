"""Add arena results to a ladder record and refit its Elo ratings.

Run:

    schnapsen-arena expert+ expert --deals 1000 --seed 2026 --json pair.json
    python benchmarks/ladder.py benchmarks/ladder_schnapsen20.json pair.json [more.json ...]

A ladder record (``benchmarks/ladder_<ruleset>.json``, rendered by the docs' strength tables) holds every pair's
arena result (``schnapsen-arena --json``: deals, seed, mean, 95% CI, hand counts) and the Elo ratings fitted to the
hand wins of all pairs (:func:`agents.evaluation.ratings.fit_elo`, anchored at ``random``). Each added pair replaces
a pair of the same two agents (in either order); a new agent joins the list. Every pair must share the ladder's
ruleset; a pair of another seed or deal count is refused unless ``--any-deals`` says it is meant. Bad input (an
unreadable file, a result that is not one arena pair) is one line and exit 2; the ladder is rewritten only once
every pair has been read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.evaluation.ratings import fit_elo  # noqa: E402

PAIR_KEYS = ("agent_a", "agent_b", "ruleset", "seed", "deals", "hands_won_a", "hands_won_b", "ties", "mean",
             "ci_low", "ci_high")


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: cannot read it as JSON ({e})") from None


def add_pairs(ladder: dict, pairs: list[dict], any_deals: bool = False) -> dict:
    """``ladder`` with ``pairs`` added (a pair of the same two agents replaced) and Elo refitted.

    Raises:
        ValueError: a pair without the arena's keys, of another ruleset, or (without ``any_deals``) of another seed
            or deal count than the ladder's first pair.
    """
    first = ladder["pairs"][0]
    out = [dict(p) for p in ladder["pairs"]]
    agents = list(ladder["agents"])
    for p in pairs:
        missing = [k for k in PAIR_KEYS if k not in p]
        if missing:
            raise ValueError(f"not an arena pair (schnapsen-arena A B --json): missing {', '.join(missing)}")
        if p["ruleset"] != first["ruleset"]:
            raise ValueError(f"pair {p['agent_a']} vs {p['agent_b']} is {p['ruleset']}, the ladder {first['ruleset']}")
        if not any_deals and (p["seed"], p["deals"]) != (first["seed"], first["deals"]):
            raise ValueError(f"pair {p['agent_a']} vs {p['agent_b']} has seed {p['seed']} and {p['deals']} deals, the "
                             f"ladder seed {first['seed']} and {first['deals']} (--any-deals to add it anyway)")
        names = {p["agent_a"], p["agent_b"]}
        out = [q for q in out if {q["agent_a"], q["agent_b"]} != names] + [p]
        agents += [n for n in (p["agent_a"], p["agent_b"]) if n not in agents]
    wins: dict[tuple[str, str], float] = {}
    for q in out:
        a, b, half = q["agent_a"], q["agent_b"], q["ties"] / 2
        wins[(a, b)] = wins.get((a, b), 0.0) + q["hands_won_a"] + half
        wins[(b, a)] = wins.get((b, a), 0.0) + q["hands_won_b"] + half
    anchor = ladder.get("anchor", "random")
    return {**ladder, "agents": agents, "elo": fit_elo(agents, wins, anchor=anchor), "pairs": out}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ladder", type=Path, help="the ladder record, e.g. benchmarks/ladder_schnapsen20.json")
    parser.add_argument("pairs", type=Path, nargs="+", help="arena results (schnapsen-arena A B --json PATH)")
    parser.add_argument("--any-deals", action="store_true", help="accept pairs of another seed or deal count")
    args = parser.parse_args(argv)
    try:
        ladder = _read(args.ladder)
        if not isinstance(ladder, dict) or not ladder.get("pairs") or "agents" not in ladder:
            raise ValueError(f"{args.ladder}: not a ladder record (no 'agents' and 'pairs')")
        pairs = []
        for path in args.pairs:
            p = _read(path)
            pairs.append(p.get("result", p) if isinstance(p, dict) else p)
            if not isinstance(pairs[-1], dict):
                raise ValueError(f"{path}: not an arena pair (schnapsen-arena A B --json)")
        new = add_pairs(ladder, pairs, args.any_deals)
    except ValueError as e:
        print(f"ladder.py: {e}", file=sys.stderr)
        return 2
    args.ladder.write_text(json.dumps(new, indent=2) + "\n", encoding="utf-8")
    for p in pairs:
        print(f"{p['agent_a']} vs {p['agent_b']}: {p['mean']:+.3f} [{p['ci_low']:+.3f}, {p['ci_high']:+.3f}]")
    print("Elo: " + ", ".join(f"{n} {new['elo'][n]:.0f}" for n in sorted(new["elo"], key=new["elo"].get,
                                                                          reverse=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
