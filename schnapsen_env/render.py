"""Text rendering of a hand seen by one player (suit symbols, hand, table, stock, turn-up, scores).

The opponent's hidden cards are shown only with ``reveal=True``; cards the opponent made
public (R27: a shown marriage partner, the old turn-up taken by an exchange) are always shown.
"""

from __future__ import annotations

from schnapsen_env.cards import SUIT_LETTERS, SUIT_SYMBOLS, iter_bits
from schnapsen_env.rules import PLAYERS, GameState


def card_text(code: str) -> str:
    """``"TH"`` -> ``"10♥"``."""
    rank = "10" if code[0] == "T" else code[0]
    return rank + SUIT_SYMBOLS[SUIT_LETTERS.index(code[1])]


def tricks_text(n: int) -> str:
    return f"{n} trick" if n == 1 else f"{n} tricks"


def hand_tricks(completed: int, n_tricks: int, closed: bool, cards_in_play: int) -> int:
    """The number of tricks a hand lasts when played to its end: ``n_tricks`` unless the stock was closed, when its
    cards are dead (R19) and the hand ends once the cards in the hands are played: the ``completed`` tricks and one
    for every two of the ``cards_in_play`` (both hands and the table). A claim (R20) may end it sooner."""
    return completed + cards_in_play // 2 if closed else n_tricks


def render_text(s: GameState, viewer: int, reveal: bool = False, labels: tuple[str, str] = ("you", "opponent")) -> str:
    """A compact multi-line table of ``s`` as ``viewer`` (seat 0/1) sees it.

    Args:
        s: the game state.
        viewer: seat whose hand is shown.
        reveal: also show the opponent's hidden cards and the face-down stock order.
        labels: how the two seats are named beside their seat names: the viewer's, the other's (a replay names
            the recorded players).
    """
    d = s.deck
    codes = d.codes
    opp = 1 - viewer

    def cards(bits: int) -> str:
        return " ".join(card_text(codes[c]) for c in iter_bits(bits)) or "-"

    width = max(10, *(len(label) + 2 for label in labels))
    trump = SUIT_SYMBOLS[s.trump]
    if s.stock:
        state = "closed" if s.closed_by >= 0 else "open"
        stock = f"{len(s.stock)} cards ({state}), turn-up {card_text(codes[s.stock[-1]])}"
        if reveal:
            stock += " | order: " + " ".join(card_text(codes[c]) for c in s.stock)
    else:
        stock = "exhausted"
    if reveal:
        opp_hand = cards(s.hands[opp])
    else:
        hidden = s.hands[opp] & ~s.known[opp]
        opp_hand = " ".join([card_text(codes[c]) for c in iter_bits(s.known[opp])] + ["??"] * hidden.bit_count())
    table = card_text(codes[s.table]) + f" (led by {PLAYERS[s.leader]})" if s.table >= 0 else "-"
    played = s.tricks[0] + s.tricks[1]
    n_tricks = hand_tricks(played, s.rules.n_tricks, s.closed_by >= 0,
                           s.hands[0].bit_count() + s.hands[1].bit_count() + (s.table >= 0))
    # the trick being played, of those the hand lasts; once the hand is over (a claim, R20), the last trick played
    trick = f"after trick {played}/{n_tricks}" if s.result is not None and played else \
        f"trick {min(s.trick_number, n_tricks)}/{n_tricks}"
    lines = [
        f"{s.rules.name}  trump {trump}  {trick}  stock: {stock}",
        f"  {PLAYERS[opp]:9} {'(' + labels[1] + ')':<{width}}: {opp_hand:32} points {s.counted(opp):3}  "
        f"{tricks_text(s.tricks[opp])}",
        f"  table: {table}",
        f"  {PLAYERS[viewer]:9} {'(' + labels[0] + ')':<{width}}: {cards(s.hands[viewer]):32} points "
        f"{s.counted(viewer):3}  "
        f"{tricks_text(s.tricks[viewer])}",
    ]
    extra = []
    for p in (viewer, opp):
        pend = s.pending_marriage_points(p)
        if pend:
            extra.append(f"{PLAYERS[p]} pending marriage {pend}")
    if s.closed_by >= 0:
        points, tricks = s.closing_snapshot if s.closing_snapshot is not None else (0, 0)
        extra.append(f"closed by {PLAYERS[s.closed_by]}; {PLAYERS[1 - s.closed_by]} had {points} points and "
                     f"{tricks_text(tricks)} then, which set the hand's value if the closer fails (R19, R23)")
    if any(s.match_points) or s.carry:
        extra.append(f"match {s.match_points[viewer]}-{s.match_points[opp]} ({labels[0]}-{labels[1]})"
                     + (f", carry {s.carry}" if s.carry else ""))
    if s.result is not None:
        w = s.result.winner
        who = "nobody (tie)" if w is None else PLAYERS[w]
        extra.append(f"hand over: {who} wins {s.result.game_points} game point(s), reason {s.result.reason}")
    elif s.to_move == viewer:
        mover = "your move" if labels[0] == "you" else f"{labels[0]} to move"
        extra.append(f"{mover}: " + ", ".join(s.legal_action_names()))
    else:
        extra.append(f"{PLAYERS[opp]} to move")
    return "\n".join(lines + ["  " + e for e in extra])
