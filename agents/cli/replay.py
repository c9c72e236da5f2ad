"""``schnapsen-replay``: replay recorded hands (JSON Lines, :mod:`schnapsen_env.records`) in the terminal.

    schnapsen-replay games.jsonl                 # every record, both hands shown
    schnapsen-replay games.jsonl --index 2 --viewer player_1 --step

Each action is printed with the table after it. ``--step`` waits for Enter between actions. A bad record
stops the replay with a message naming its line and first bad action.
"""

from __future__ import annotations

import argparse
import os
import sys

from schnapsen_env.records import RecordError, read_records, replay
from schnapsen_env.render import render_text
from schnapsen_env.rules import PLAYERS


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="schnapsen-replay", description=__doc__.split("\n\n")[0])
    p.add_argument("path", help="JSON Lines file of records")
    p.add_argument("--index", type=int, default=None, help="replay only this record (0-based)")
    p.add_argument("--viewer", choices=PLAYERS, default="player_0", help="whose side the table is drawn from")
    p.add_argument("--hide", action="store_true", help="hide the other player's cards (default: show them)")
    p.add_argument("--step", action="store_true", help="wait for Enter after each action")
    args = p.parse_args(argv)
    try:
        records = read_records(args.path)
    except RecordError as e:
        print(f"schnapsen-replay: error: {e}", file=sys.stderr)
        return 2
    chosen = range(len(records)) if args.index is None else [args.index]
    viewer = PLAYERS.index(args.viewer)
    for k in chosen:
        if not 0 <= k < len(records):
            p.error(f"--index {k}: the file holds {len(records)} record(s)")
        print(f"=== record {k} ===")
        for state, action in replay(records[k], f"{args.path} record {k}"):
            if action is not None:
                print(f"-- {action}")
            print(render_text(state, viewer, reveal=not args.hide))
            if args.step:
                try:
                    input()
                except EOFError:  # no more Enter presses: finish without waiting
                    args.step = False
    return 0


def run() -> int:
    """Console-script entry: :func:`main`, quiet when the reader of the output goes away (``| head``)."""
    try:
        return main()
    except BrokenPipeError:
        sys.stdout = open(os.devnull, "w")  # avoid a second error while Python flushes at exit
        return 0


if __name__ == "__main__":
    sys.exit(run())
