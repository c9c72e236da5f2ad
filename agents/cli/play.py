"""``schnapsen-play``: play Schnapsen against an agent in the terminal.

    schnapsen-play                               # one hand against the strongest shipped policy (of --ruleset)
    schnapsen-play --opponent heuristic --hands 3 --record games.jsonl
    schnapsen-play --match --seat player_1

At your turn the table is shown (your hand, the turn-up, the stock, the trick, both scores) with the
legal actions. Type a card as the table shows it (``Q♥``, ``10♠``) or by its code (``QH``, ``TS``), or an action name
(``marriage H``, ``exchange``, ``close``, ``claim``); ``?`` lists the legal actions again, ``quit`` ends. A move that
is not legal gets the rule that forbids it. After every move the game says what happened (who won the trick and
its card points, the card you drew, marriages, the exchange, closing), and at the end of a hand how its game points
came about (:mod:`agents.cli.narration`); the opponent's remaining cards are shown (``--no-reveal`` hides them).

With ``--record`` each hand is written to the file as soon as it ends (one complete line per hand), and the hand
in progress when play stops (``quit``, end of input, Ctrl-C, an opponent that fails) is written too, with result
null: no hand played is lost. A write that fails (a full disk) is reported in one line and play goes on.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

import numpy as np

from agents.cli.console import ArgumentParser, console_main, fail
from agents.cli.narration import claim_hint, narrate_move, result_text, why_illegal
from agents.learned.shipped import STRONGEST_POLICIES
from agents.specs import build, resolve_agent
from agents.web.view import OPPONENT, YOU
from schnapsen_env.cards import SUIT_LETTERS, SUIT_SYMBOLS
from schnapsen_env.encoding import observation
from schnapsen_env.errors import one_line
from schnapsen_env.files import WriteError, check_output_file, describe_os_error
from schnapsen_env.match import Match
from schnapsen_env.records import Recorder, RecordWriter, deck_of
from schnapsen_env.render import card_text, render_text
from schnapsen_env.rules import PLAYERS, GameState
from schnapsen_env.ruleset import RULESETS, RuleSet

PROG = "schnapsen-play"
#: Longest input line read as a move (a move is a few characters; a longer line ends play).
MAX_INPUT_LINE = 10_000
#: Largest --seed (numpy takes seeds >= 0; torch up to 2**63 - 1).
MAX_SEED = 2 ** 63 - 1


class Quit(Exception):
    """The player typed quit (or the input ended)."""


class InputError(Exception):
    """Standard input could not be read (e.g. EIO: the terminal went away)."""


class OpponentError(Exception):
    """The opponent agent failed to choose a legal action (it raised, or chose an illegal one)."""


def parse_action(text: str, state: GameState) -> tuple[int | None, str]:
    """Turn typed text into a legal action id, or ``(None, explanation)``."""
    t = " ".join(text.replace("\ufe0f", "").strip().split())  # U+FE0F: an emoji suit's variation selector
    if len(t.split()) == 2 and t.split()[0].upper() in ("A", "10", "T", "K", "Q", "J", "9") and len(t.split()[1]) == 1:
        t = "".join(t.split())  # "Q H", "10 S": a card typed with a space
    if not t:
        return None, "type a card (e.g. QH) or an action name"
    rules = state.rules
    names = {n.lower(): i for i, n in enumerate(rules.action_names)}
    key = t.lower()
    for sym, letter in zip(SUIT_SYMBOLS, SUIT_LETTERS):  # accept what the table shows: A♥, 10♣
        key = key.replace(sym, letter.lower())
    key = key.replace("♡", "h").replace("♢", "d").replace("♤", "s").replace("♧", "c")
    if key in names:
        a = names[key]
    elif "play " + key in names:
        a = names["play " + key]
    elif key.startswith("10") and "play t" + key[2:] in names:
        a = names["play t" + key[2:]]
    else:
        codes = rules.deck.codes
        return None, (f"{t!r} is neither a card code of {rules.name} (like {codes[3]}, {codes[-4]}, {codes[-1]}) nor "
                      "an action name")
    if not state.is_legal(a):
        return None, why_illegal(state, a)
    return a, ""


def legal_text(state: GameState) -> str:
    """The legal actions, cards as the table shows them (``10♠``; typing ``TS`` works too)."""
    codes = state.rules.deck.codes
    names = state.rules.action_names
    return ", ".join(card_text(codes[a]) if a < state.rules.n_cards else names[a] for a in state.legal_actions())


def play_hand(state: GameState, human: int, opponent, inp: TextIO, out: TextIO, reveal: bool,
              recorder: Recorder | None = None) -> None:
    """Play one hand to its end in place (the human is seat ``human``)."""
    def apply(a: int) -> None:
        by = YOU if state.to_move == human else OPPONENT
        before, stock_before = observation(state, human), len(state.stock)
        turn_up = state.deck.codes[state.stock[-1]] if state.stock else None
        has_trick = state.tricks[state.to_move] > 0
        if recorder is not None:
            recorder.step(a)
        else:
            state.step(a)
        for line in narrate_move(state.rules, by, a, before, observation(state, human), stock_before,
                                 len(state.stock), state.trump, turn_up, has_trick):
            print("  " + line, file=out)

    names = state.rules.action_names
    while state.result is None:
        if state.to_move == human:
            board = render_text(state, human).split("\n")
            board[-1] = "  your move: " + legal_text(state)  # cards as the table shows them
            print("\n".join(board), file=out)
            hint = claim_hint(state, human)
            if hint:
                print("  " + hint, file=out)
            while True:
                print("> ", end="", file=out, flush=True)
                try:
                    line = inp.readline(MAX_INPUT_LINE + 1)
                except UnicodeDecodeError:  # bytes that are not text: refused like any bad input
                    print("the input is not text (UTF-8). Legal: " + legal_text(state), file=out)
                    continue
                except OSError as e:
                    raise InputError(f"cannot read your move: {describe_os_error(e)}") from None
                if not line:
                    raise Quit()
                if len(line) > MAX_INPUT_LINE:  # e.g. < /dev/zero: a line without end
                    raise InputError(f"cannot read your move: an input line longer than {MAX_INPUT_LINE:,} characters: "
                                     "expected one move (like QH) per line")
                if line.strip().lower() in ("quit", "exit", "q"):
                    raise Quit()
                if line.strip() in ("?", "help"):
                    print("legal: " + legal_text(state), file=out)
                    continue
                a, why = parse_action(line, state)
                if a is None:
                    print(f"{why}. Legal: " + legal_text(state), file=out)
                    continue
                apply(a)
                break
        else:
            seat = state.to_move
            obs = {"observation": observation(state, seat), "action_mask": state.action_mask()}
            try:
                a = int(opponent.act(obs))
            except Exception as e:  # the agent is the user's (e.g. a checkpoint): report it, keep the hands played
                raise OpponentError(f"{type(e).__name__}: {one_line(e, 300)}") from e
            if not (0 <= a < len(names) and state.is_legal(a)):
                raise OpponentError(f"it chose action {a} ({names[a] if 0 <= a < len(names) else 'unknown'}), which "
                                    f"is not legal: legal are {state.legal_action_names()}")
            shown = card_text(state.deck.codes[a]) if a < state.rules.n_cards else names[a]
            print(f"{PLAYERS[seat]} (opponent) plays {shown}", file=out)
            apply(a)
    r = state.result
    print(render_text(state, human), file=out)
    if reveal:
        hidden = [card_text(state.deck.codes[c]) for c in range(state.deck.size) if state.hands[1 - human] >> c & 1]
        print("opponent's remaining cards: " + (" ".join(hidden) or "-"), file=out)
    print(result_text(r, state, human), file=out)


@console_main(PROG)
def main(argv: list[str] | None = None, inp: TextIO | None = None, out: TextIO | None = None) -> int:
    """Entry point of ``schnapsen-play``; returns the exit status.

    A user's mistake is one line on stderr, never a traceback: bad flags, an unknown opponent or a bad checkpoint
    exit with status 2 before play; an opponent that fails mid-game (e.g. NaN weights) or a record that cannot be
    written ends with status 1, after the hands played are recorded. Output that cannot be written (``| head``, a
    full disk) ends play after the unfinished hand is recorded (:func:`~agents.cli.console.console_main`).
    """
    inp = inp if inp is not None else sys.stdin
    out = out if out is not None else sys.stdout
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0].replace("``", ""),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--opponent", default=None,
                   help="an agent: a name, name:key=value, or a .pt checkpoint (default: the strongest shipped policy "
                        "of --ruleset: " + ", ".join(f"{r} {n}" for r, n in STRONGEST_POLICIES.items()) + ")")
    p.add_argument("--ruleset", choices=RULESETS, default="schnapsen20")
    p.add_argument("--seat", choices=["player_0", "player_1", "alternate"], default="alternate",
                   help="your seat (default: player_0 first, then alternating between hands; a match keeps it)")
    p.add_argument("--hands", type=int, default=1, help="hands to play (ignored with --match)")
    p.add_argument("--match", action="store_true", help="play a whole match to 7 game points")
    p.add_argument("--seed", type=int, default=None, help="seed of the deals and the opponent")
    p.add_argument("--record", metavar="PATH", help="write the hands as JSON Lines records")
    p.add_argument("--no-reveal", action="store_true", help="do not show the opponent's cards after a hand")
    args = p.parse_args(argv)
    if args.hands < 1:
        p.error(f"--hands {args.hands}: expected an int >= 1")
    if args.seed is not None and not 0 <= args.seed <= MAX_SEED:
        p.error(f"--seed {args.seed}: expected an int from 0 to 2**63 - 1")
    if inp is None:  # started with standard input closed (<&-)
        p.error("standard input is closed: expected a terminal or a file to read your moves from")
    rules = RuleSet.make(args.ruleset)
    if args.opponent is None:
        args.opponent = STRONGEST_POLICIES.get(rules.name, "pimc")
    if args.record is not None:
        try:  # fail before play, not after it; never over a checkpoint (the opponent's, however named)
            check_output_file(args.record, f"--record {args.record!r}")
        except ValueError as e:
            p.error(str(e))
    try:  # the words every place that takes an agent uses (schnapsen_env.agent_specs)
        label, factory = resolve_agent(args.opponent, rules)
        opponent = build(factory, label, args.seed)
    except ValueError as e:
        p.error(str(e))
    op_rules = getattr(opponent, "rules", None)
    if isinstance(op_rules, RuleSet) and op_rules.name != rules.name:
        p.error(f"--opponent {args.opponent!r} plays {op_rules.name}, but this game is {rules.name} (--ruleset)")
    writer = None
    if args.record is not None:
        try:
            writer = RecordWriter(args.record, f"--record {args.record!r}")
        except WriteError as e:
            return fail(PROG, e, 2)
    status = 0

    def save(record) -> None:
        nonlocal status
        if writer is None or writer.error is not None:
            return
        try:
            writer.write(record)
        except WriteError as e:
            status = fail(PROG, f"{e}; play goes on without recording")

    print(f"{rules.name}: you against {label}" + (" (the strongest shipped policy of this ruleset)"
                                                   if args.opponent == STRONGEST_POLICIES.get(rules.name) else ""),
          file=out)
    rng = np.random.default_rng(args.seed)
    match = Match(rules, rng) if args.match else None
    n = 0
    recorder = None
    try:
        while True:
            if args.seat != "alternate":
                human = PLAYERS.index(args.seat)
            else:  # alternate seats between single hands; in a match the score is per seat, so keep one seat
                human = 0 if match is not None else n % 2
            if match is not None:
                state = match.state
                recorder = Recorder(rules, deck_of(state), PLAYERS[state.dealer])
                recorder.state = state
            else:
                recorder = Recorder.deal(rules, rng)
                state = recorder.state
            print(f"\n=== hand {n + 1}: you are {PLAYERS[human]}, {PLAYERS[state.dealer]} deals ===", file=out)
            if n == 0:
                print("type a card as the table shows it (10♣) or by its code (TC), or an action (marriage H, exchange, "
                      "close, claim); ? lists the legal moves, quit stops", file=out)
            play_hand(state, human, opponent, inp, out, not args.no_reveal, recorder)
            save(recorder.record())
            n += 1
            if match is not None:
                match.finish_hand()
                print(f"match: you {match.points[human]}, opponent {match.points[1 - human]}", file=out)
                if match.over:
                    print("you won the match" if match.winner == human else "the opponent won the match", file=out)
                    break
                match.next_hand()
            elif n >= args.hands:
                break
    except (Quit, KeyboardInterrupt, OpponentError, InputError, OSError) as e:
        interrupted = isinstance(e, KeyboardInterrupt)
        if recorder is not None and recorder.state.result is None and recorder.actions:
            save(recorder.record())  # the unfinished hand, with result null
        if isinstance(e, OSError):  # the output failed (| head, a full disk): reported by console_main
            raise
        if isinstance(e, OpponentError):
            status = fail(PROG, f"the opponent {args.opponent!r} failed in hand {n + 1}: {e}")
        elif isinstance(e, InputError):
            status = fail(PROG, e)
        elif interrupted:  # Ctrl-C: the same words and status in a hand and in a match
            print("\ninterrupted: bye", file=out)
            status = 130
        else:
            print("\nbye", file=out)
    finally:
        if writer is not None:
            writer.close()
    if writer is not None and writer.count:
        print(f"wrote {writer.count} record(s) to {args.record}", file=out)
    return status


if __name__ == "__main__":
    sys.exit(main())
