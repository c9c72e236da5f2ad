"""``schnapsen-arena``: the arena's command line (see :mod:`agents.arena`).

Examples::

    schnapsen-arena random heuristic --deals 1000 --ruleset schnapsen20 --seed 0 --json out.json
    schnapsen-arena --round-robin random heuristic rollout pimc --deals 2000 --json table.json
    schnapsen-arena rollout:n_samples=8,depth=2 runs/ppo/final.pt --knob false_claim=mirror
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from agents import agent_names
from agents.arena import EPISODES, play_match, round_robin
from agents.specs import parse_value
from schnapsen_env.errors import IllegalActionError
from schnapsen_env.ruleset import RULESETS


def _knob(text: str) -> tuple[str, object]:
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, parse_value(value)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="schnapsen-arena",
        description="Play duplicate deals between Schnapsen agents and report mean game points per hand "
                    "(95% CI over deals), hand and match win rates, or a round robin with Elo ratings.",
        epilog=f"An agent is a name ({', '.join(agent_names())}), optionally with arguments "
               "(rollout:n_samples=8,depth=2), or a checkpoint path ending in .pt.")
    p.add_argument("agents", nargs="*", metavar="AGENT", help="two agents: A and B")
    p.add_argument("--round-robin", nargs="+", metavar="AGENT", help="play every pair of these agents, fit Elo")
    p.add_argument("--deals", type=int, default=1000, help="duplicate deals per pair (each played twice; "
                                                            "default 1000)")
    p.add_argument("--ruleset", choices=RULESETS, default="schnapsen20")
    p.add_argument("--seed", type=int, default=0, help="seeds the deals and the agents (default 0)")
    p.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    p.add_argument("--episode", choices=EPISODES, default="hand", help="one hand or a whole match per deal")
    p.add_argument("--chunk-size", type=int, default=10, help="deals per task (default 10)")
    p.add_argument("--knob", type=_knob, action="append", default=[], metavar="KEY=VALUE",
                   help="a rule knob of RULES.md section 5 (repeatable)")
    p.add_argument("--json", metavar="PATH", help="also write the result as JSON to PATH ('-' for stdout)")
    p.add_argument("--records", metavar="PATH", help="write every hand as a game record (JSON Lines; two-agent mode)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``schnapsen-arena`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.round_robin and args.agents:
        parser.error("give either two agents or --round-robin AGENT..., not both")
    if not args.round_robin and len(args.agents) != 2:
        parser.error(f"expected two agents (or --round-robin), got {len(args.agents)}")
    if args.records and args.round_robin:
        parser.error("--records works with two agents, not with --round-robin")
    for flag, path in (("--records", args.records), ("--json", args.json if args.json != "-" else None)):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            parser.error(f"{flag} {path!r}: folder {os.path.dirname(os.path.abspath(path))!r} does not exist")
    if args.json and args.json != "-":
        folder = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(folder):  # fail before a long run, not after it
            parser.error(f"--json {args.json!r}: folder {folder!r} does not exist")
    common = dict(ruleset=args.ruleset, seed=args.seed, workers=args.workers, episode=args.episode,
                  progress=not args.no_progress, chunk_size=args.chunk_size, **dict(args.knob))
    try:
        if args.round_robin:
            result = round_robin(args.round_robin, args.deals, **common)
        else:
            result = play_match(args.agents[0], args.agents[1], args.deals, records_path=args.records, **common)
    except IllegalActionError as e:  # an agent broke the rules during play
        print(f"schnapsen-arena: error: {e}", file=sys.stderr)
        return 1
    except ValueError as e:  # bad agent names or paths, bad knobs (RulesError is a ValueError)
        parser.error(str(e))
    print(result.table())
    if args.json:
        text = json.dumps(result.to_dict(), indent=2)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
