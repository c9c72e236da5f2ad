"""``schnapsen-play``: play Schnapsen against an agent in the terminal.

    schnapsen-play                               # one hand against the shipped trained policy
    schnapsen-play --opponent heuristic --hands 3 --record games.jsonl
    schnapsen-play --match --seat player_1

At your turn the table is shown (your hand, the turn-up, the stock, the trick, both scores) with the
legal actions. Type a card code (``QH``), or an action name (``play QH``, ``marriage H``, ``exchange``,
``close``, ``claim``); ``?`` lists the legal actions again, ``quit`` ends. Bad input gets a short
explanation and the legal actions. At the end of each hand the opponent's remaining cards are shown
(``--no-reveal`` hides them).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

import numpy as np

from schnapsen_env.cards import SUIT_LETTERS, SUIT_SYMBOLS
from schnapsen_env.encoding import observation
from schnapsen_env.match import Match
from schnapsen_env.records import Recorder, deck_of, write_records
from schnapsen_env.render import card_text, render_text
from schnapsen_env.rules import PLAYERS, GameState
from schnapsen_env.ruleset import RULESETS, RuleSet


class Quit(Exception):
    """The player typed quit (or the input ended)."""


def parse_action(text: str, state: GameState) -> tuple[int | None, str]:
    """Turn typed text into a legal action id, or ``(None, explanation)``."""
    t = " ".join(text.strip().split())
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
        return None, f"{t!r} is neither a card code (like QH, TS, 9C) nor an action name"
    if not state.is_legal(a):
        return None, f"{rules.action_names[a]!r} is not legal now"
    return a, ""


def play_hand(state: GameState, human: int, opponent, inp: TextIO, out: TextIO, reveal: bool,
              recorder: Recorder | None = None) -> None:
    """Play one hand to its end in place (the human is seat ``human``)."""
    def apply(a: int) -> None:
        if recorder is not None:
            recorder.step(a)
        else:
            state.step(a)

    names = state.rules.action_names
    while state.result is None:
        if state.to_move == human:
            print(render_text(state, human), file=out)
            while True:
                print("> ", end="", file=out, flush=True)
                line = inp.readline()
                if not line:
                    raise Quit()
                if line.strip().lower() in ("quit", "exit", "q"):
                    raise Quit()
                if line.strip() in ("?", "help"):
                    print("legal: " + ", ".join(state.legal_action_names()), file=out)
                    continue
                a, why = parse_action(line, state)
                if a is None:
                    print(f"{why}. Legal: " + ", ".join(state.legal_action_names()), file=out)
                    continue
                apply(a)
                break
        else:
            seat = state.to_move
            obs = {"observation": observation(state, seat), "action_mask": state.action_mask()}
            a = int(opponent.act(obs))
            print(f"{PLAYERS[seat]} (opponent): {names[a]}", file=out)
            apply(a)
    r = state.result
    print(render_text(state, human), file=out)
    if reveal:
        hidden = [card_text(state.deck.codes[c]) for c in range(state.deck.size) if state.hands[1 - human] >> c & 1]
        print("opponent's remaining cards: " + (" ".join(hidden) or "-"), file=out)
    who = "nobody (tie)" if r.winner is None else ("you" if r.winner == human else "the opponent")
    print(f"{who} won {r.game_points} game point(s) ({r.reason})", file=out)


def main(argv: list[str] | None = None, inp: TextIO | None = None, out: TextIO | None = None) -> int:
    """Entry point of ``schnapsen-play``; returns the exit status."""
    inp = inp if inp is not None else sys.stdin
    out = out if out is not None else sys.stdout
    p = argparse.ArgumentParser(prog="schnapsen-play", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--opponent", default="trained",
                   help="agent name or .pt checkpoint (default: the shipped trained policy)")
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
        p.error("--hands must be >= 1")
    from agents.specs import resolve_agent

    rules = RuleSet.make(args.ruleset)
    if args.record:
        folder = os.path.dirname(os.path.abspath(args.record))
        if os.path.isdir(args.record) or not os.path.isdir(folder):  # fail before play, not after it
            p.error(f"--record {args.record!r}: expected a file path in an existing folder")
    try:
        _, factory = resolve_agent(args.opponent, rules)
        opponent = factory(seed=args.seed)
    except ValueError as e:
        p.error(str(e))
    op_rules = getattr(opponent, "rules", None)
    if isinstance(op_rules, RuleSet) and op_rules.name != rules.name:
        p.error(f"--opponent {args.opponent!r} plays {op_rules.name}, but this game is {rules.name} (--ruleset)")
    rng = np.random.default_rng(args.seed)
    records = []
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
            play_hand(state, human, opponent, inp, out, not args.no_reveal, recorder)
            records.append(recorder.record())
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
    except Quit:
        print("\nbye", file=out)
        if recorder is not None and recorder.state.result is None and recorder.actions:
            records.append(recorder.record())  # the unfinished hand, with result null
    if args.record and records:
        write_records(args.record, records)
        print(f"wrote {len(records)} record(s) to {args.record}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
