"""``schnapsen-arena``: the arena's command line (see :mod:`agents.evaluation.arena`).

Examples::

    schnapsen-arena random heuristic --deals 1000 --ruleset schnapsen20 --seed 0 --json out.json
    schnapsen-arena --round-robin random heuristic rollout pimc --deals 2000 --json table.json
    schnapsen-arena rollout:n_samples=8,depth=2 runs/ppo/final.pt --knob false_claim=mirror
"""

from __future__ import annotations

import argparse
import json
import sys

from agents import agent_names
from agents.cli.console import ArgumentParser, console_main, fail
from agents.evaluation.arena import (
    EPISODES,
    MAX_DEALS,
    MAX_SEED,
    MAX_WORKERS,
    RecordsWriteError,
    play_match,
    round_robin,
)
from agents.specs import parse_value
from schnapsen_env.errors import IllegalActionError, one_line
from schnapsen_env.files import WriteError, atomic_write, check_output_file, describe_os_error, same_file
from schnapsen_env.ruleset import RULESETS, RuleSet

PROG = "schnapsen-arena"


def _knob(text: str) -> tuple[str, object]:
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, parse_value(value)


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog=PROG,
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
    p.add_argument("--json", metavar="PATH", help="also write the result as JSON to PATH; '-' writes the JSON alone "
                                                  "to standard output and the table to standard error")
    p.add_argument("--records", metavar="PATH", help="write every hand as a game record (JSON Lines; two-agent mode)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return p


def _check_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse bad flag combinations, values out of range and unusable output paths before any game is played."""
    if args.round_robin and args.agents:
        parser.error("give either two agents or --round-robin AGENT..., not both")
    if not args.round_robin and len(args.agents) != 2:
        parser.error(f"expected two agents (or --round-robin), got {len(args.agents)}")
    if args.records and args.round_robin:
        parser.error("--records works with two agents, not with --round-robin")
    for flag, value, low, high in (("--deals", args.deals, 1, MAX_DEALS), ("--seed", args.seed, 0, MAX_SEED),
                                   ("--workers", args.workers, 1, MAX_WORKERS), ("--chunk-size", args.chunk_size, 1,
                                                                                 MAX_DEALS)):
        if value is not None and not low <= value <= high:
            top = "2**63 - 1" if high == MAX_SEED else f"{high:,}"
            parser.error(f"{flag} {value}: expected an int from {low:,} to {top}")
    for key, value in args.knob:  # a rule knob, not one of the arena's own arguments (seed=, workers=, ...)
        shown = f"--knob {key}={one_line(value, 80)}"
        if key == "ruleset":
            parser.error(f"{shown}: the ruleset is chosen with --ruleset: expected a rule knob of RULES.md section 5")
        try:
            RuleSet.make(args.ruleset, **{key: value})
        except ValueError as e:  # RulesError: an unknown key or a value the knob does not take
            parser.error(f"{shown}: {e}")
    if args.records == "-":
        parser.error("--records '-': expected a file path (game records go to a file; --json - writes the result's "
                     "JSON to standard output)")
    outputs = [("--records", args.records), ("--json", args.json if args.json != "-" else None)]
    for flag, path in outputs:  # fail before a long run, not after it; never over a checkpoint (an agent's, however named)
        if path is not None:
            try:
                check_output_file(path, f"{flag} {path!r}")
            except ValueError as e:
                parser.error(str(e))
    if args.records and args.json and args.json != "-" and same_file(args.records, args.json):
        parser.error(f"--records {args.records!r} and --json {args.json!r} name the same file: expected two "
                     "different files")


@console_main(PROG)
def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``schnapsen-arena`` console script; returns the exit status.

    Every user error is one line on stderr, never a traceback: a bad flag, agent or knob exits with status 2 (before
    any game is played: agents are built and output paths checked first); an agent that breaks the rules or a file
    that cannot be written (the results are still printed; the records file keeps its complete records) exits with
    status 1; Ctrl-C with 130. The --json file is written before the table is printed, and a reader of the output
    that goes away (``| head``) or a full disk behind it ends the program without a traceback
    (:func:`~agents.cli.console.console_main`).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_flags(parser, args)
    common = dict(ruleset=args.ruleset, seed=args.seed, workers=args.workers, episode=args.episode,
                  progress=not args.no_progress, chunk_size=args.chunk_size, **dict(args.knob))
    status, records_error = 0, None
    try:
        if args.round_robin:
            result = round_robin(args.round_robin, args.deals, **common)
        else:
            result = play_match(args.agents[0], args.agents[1], args.deals, records_path=args.records, **common)
    except RecordsWriteError as e:  # the match was played: report the results, then the records' failure
        result, records_error = e.result, e
    except IllegalActionError as e:  # an agent broke the rules during play
        return fail(PROG, e)
    except ValueError as e:  # bad agent names or paths, bad knobs (RulesError is a ValueError)
        parser.error(str(e))
    except OSError as e:  # e.g. no processes left for the workers, the records file cannot be created
        return fail(PROG, f"{e if isinstance(e, WriteError) else describe_os_error(e)}")
    except KeyboardInterrupt:
        return fail(PROG, "interrupted: no result (the records file keeps the records written so far)", 130)
    text = json.dumps(result.to_dict(), indent=2) if args.json else None
    json_error = None
    if args.json and args.json != "-":  # saved before printing: a reader that goes away (| head) loses nothing
        try:
            atomic_write(args.json, text + "\n")
        except WriteError as e:
            json_error = e
    printed = False
    try:
        if args.json == "-":  # standard output holds the JSON alone, so that it pipes into a JSON reader
            print(result.table(), file=sys.stderr)
            print(text)
        else:
            print(result.table())
        if sys.stdout is not None:
            sys.stdout.flush()
        printed = True
    finally:  # the files' failures are reported even when standard output fails too (one full disk)
        if json_error is not None:
            status = fail(PROG, f"--json: {json_error}" + ("; the results are printed above" if printed else ""))
        if records_error is not None:
            status = fail(PROG, f"--records: {records_error}")
    return status


if __name__ == "__main__":
    sys.exit(main())
