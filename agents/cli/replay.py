"""``schnapsen-replay``: replay recorded hands (JSON Lines, :mod:`schnapsen_env.records`) in the terminal.

    schnapsen-replay games.jsonl                 # every record, both hands shown
    schnapsen-replay games.jsonl --index 2 --viewer player_1 --step

Each record starts with its players (the names it stores, e.g. the arena's agent labels), dealer and result; each
action is printed with the table after it, the seats named by the stored players. ``--step`` waits for Enter
between actions (``q`` and Enter stops). A bad record stops the replay with a message naming its line and first bad
action; a file without one complete record is an error.
"""

from __future__ import annotations

import sys
import warnings

from agents.cli.console import ArgumentParser, console_main, fail
from schnapsen_env.errors import one_line
from schnapsen_env.records import IncompleteLineWarning, RecordError, read_records, replay
from schnapsen_env.render import render_text
from schnapsen_env.rules import PLAYERS

PROG = "schnapsen-replay"


@console_main(PROG)
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``schnapsen-replay``; returns the exit status.

    A user's mistake is one line on stderr, never a traceback: bad flags and a file that is missing, a folder, or
    holds a bad record (naming its line) exit with status 2. An incomplete last line (a write that was cut off) is
    skipped with a one-line warning; the complete records before it are replayed.
    """
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("path", help="JSON Lines file of records")
    p.add_argument("--index", type=int, default=None, help="replay only this record (0-based)")
    p.add_argument("--viewer", choices=PLAYERS, default="player_0", help="whose side the table is drawn from")
    p.add_argument("--hide", action="store_true", help="hide the other player's cards (default: show them)")
    p.add_argument("--step", action="store_true", help="wait for Enter after each action")
    args = p.parse_args(argv)
    if args.step and sys.stdin is None:  # started with standard input closed (<&-)
        p.error("--step: standard input is closed: expected a terminal (or a file) to read the Enter presses from")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", IncompleteLineWarning)
            records = read_records(args.path)
    except RecordError as e:
        return fail(PROG, e, 2)
    for w in caught:
        if issubclass(w.category, IncompleteLineWarning):
            print(f"{PROG}: warning: {one_line(w.message)}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if not records:
        return fail(PROG, f"{args.path} holds no complete record: expected JSON Lines records (schnapsen-play "
                          "--record, schnapsen-arena --records)", 2)
    if args.index is not None and not 0 <= args.index < len(records):
        p.error(f"--index {args.index}: the file holds {len(records)} record(s): expected 0 to {len(records) - 1}"
                if records else f"--index {args.index}: the file holds no records")
    chosen = range(len(records)) if args.index is None else [args.index]
    viewer = PLAYERS.index(args.viewer)
    for k in chosen:
        record = records[k]
        players = record.players or {}
        labels = tuple(str(players.get(PLAYERS[s]) or ("viewer" if s == viewer else "other")) for s in
                       (viewer, 1 - viewer))
        who = ", ".join(f"{seat} = {players[seat]}" for seat in PLAYERS if players.get(seat)) or "players not recorded"
        result = record.result or {}
        ended = (f"{result.get('winner') or 'nobody'} won {result.get('game_points')} game point(s), "
                 f"{result.get('reason')}") if result else "unfinished"
        print(f"=== record {k}: {who}; {record.dealer} deals; {ended} ===")
        for state, action in replay(record, f"{args.path} record {k}"):
            if action is not None:
                print(f"-- {action}")
            print(render_text(state, viewer, reveal=not args.hide, labels=labels))
            if args.step and state.result is None:
                print("[Enter: next action, q: stop] ", end="", flush=True)
                try:  # an Enter press; bounded, for an input without newlines (< /dev/zero)
                    pressed = sys.stdin.readline(1000)
                except (OSError, UnicodeDecodeError):  # input that fails or is not text: finish without waiting
                    pressed = ""
                if not pressed:  # no more Enter presses
                    args.step = False
                elif pressed.strip().lower() in ("q", "quit"):
                    return 0
    return 0


def run() -> int:
    """Console-script entry (``[project.scripts]``): :func:`main`, which already ends quietly when the reader of the
    output goes away (``| head``) and in one line on Ctrl-C or a full disk behind standard output."""
    return main()


if __name__ == "__main__":
    sys.exit(run())
