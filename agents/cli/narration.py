"""What ``schnapsen-play`` says after each move and at the end of a hand: who won each trick and for how many card
points, the card the player drew, marriages, the exchange, closing and what follows from it, why a typed move is
not legal, and how the hand's game points came about. Cited by rule number (RULES.md).

The narration of a move reads only the player's own observations before and after it
(:func:`agents.web.view.describe_move`, the web app's log, so the terminal and the page use the same terms): it
names the opponent's drawn card only when the player may know it (the turn-up, R27).
"""

from __future__ import annotations

from agents.web.view import OPPONENT, YOU, describe_move
from schnapsen_env.cards import SUIT_LETTERS
from schnapsen_env.render import card_text
from schnapsen_env.rules import GameState, Result
from schnapsen_env.ruleset import RuleSet

SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
_RANK_NAMES = {"J": "jack", "9": "nine"}


def _strict(rules: RuleSet) -> str:
    """The strict phase's rule of following (R9-R11; Sixty-Six without heading by default, R66-5)."""
    if rules.must_head:
        return "follow suit and head the trick if you can, else trump if you can"
    return "follow suit if you can, else trump if you can"


def _who(side: str) -> str:
    return "you" if side == YOU else "the opponent"


def _verb(side: str, you: str, other: str) -> str:
    return you if side == YOU else other


def narrate_move(rules: RuleSet, by: str, action: int, before, after, stock_before: int, stock_after: int,
                 trump: int, turn_up: str | None = None, mover_has_trick: bool = False) -> list[str]:
    """Lines that say what the action did, from the player's side.

    Args:
        rules: the rules of the hand.
        by: ``"you"`` or ``"opponent"`` (:data:`agents.web.view.YOU` / ``OPPONENT``).
        action: the action id.
        before: the player's observation vector before the action, float32 ``(obs_size,)``.
        after: the player's observation vector after it.
        stock_before: cards on the stock before the action (public).
        stock_after: cards on the stock after it.
        trump: the trump suit's index (public).
        turn_up: the turn-up's code before the action (public), or None once the stock is exhausted.
        mover_has_trick: whether the player who acted had won a trick (a marriage then counts at once, R14).
    """
    entry = describe_move(rules, by, action, before, after)
    name = rules.action_names[action]
    who = _who(by)
    lines = []
    if "won_by" in entry:
        lead, follow = entry["cards"]
        points = rules.deck.points[rules.deck.index(lead)] + rules.deck.points[rules.deck.index(follow)]
        winner = _who(entry["won_by"])
        lines.append(f"trick {entry['trick']}: {_who(entry['led_by'])} led {card_text(lead)}, "
                     f"{_who(OPPONENT if entry['led_by'] == YOU else YOU)} followed {card_text(follow)}: "
                     f"{winner} {_verb(entry['won_by'], 'win', 'wins')} the trick, {points} card points (R8)")
        if stock_after < stock_before:
            drew = [f"you drew {card_text(entry['drew'])}" if "drew" in entry else "you drew a card"]
            if "opponent_drew" in entry:
                drew.append(f"the opponent drew the turn-up {card_text(entry['opponent_drew'])}")
            else:
                drew.append("the opponent drew a card")
            if entry["won_by"] == OPPONENT:
                drew.reverse()
            lines.append("; ".join(drew) + " (R7)" + (": the stock is exhausted, the strict rules of play apply "
                                                      "from now on (R9-R11)" if stock_after == 0 else ""))
    elif name.startswith("marriage "):
        suit = SUIT_LETTERS.index(name.split()[1])
        points = rules.marriage_points(1 << suit, trump)
        counted = ("counted at once" if mover_has_trick else
                   f"counted once {who} {_verb(by, 'have', 'has')} won a trick")
        lines.append(f"{who} {_verb(by, 'announce', 'announces')} the marriage in {SUIT_NAMES[suit]}: {points} "
                     f"points, {counted}; the king or queen of {SUIT_NAMES[suit]} leads now (R12-R14)")
    elif name == "exchange":
        lines.append(f"{who} {_verb(by, 'exchange', 'exchanges')} the trump {_RANK_NAMES[rules.exchange_rank]} for the "
                     f"turn-up{' ' + card_text(turn_up) if turn_up else ''} (R16)")
    elif name == "close":
        lines.append(f"{who} {_verb(by, 'close', 'closes')} the stock: no more cards are drawn, the strict rules of "
                     f"play apply ({_strict(rules)}: R9-R11), and unless the closer reaches "
                     f"{rules.claim_target}, the other player scores at least 2 (R18, R19, R23)")
    elif name == "claim":
        lines.append(f"{who} {_verb(by, 'claim', 'claims')} {rules.claim_target} (R20)")
    return lines


def why_illegal(state: GameState, action: int) -> str:
    """Why ``action`` is not legal for the player to move, in the rule's words."""
    rules = state.rules
    names = rules.action_names
    name = names[action]
    legal = {names[a] for a in state.legal_actions()}
    if action < rules.n_cards:
        code = rules.deck.codes[action]
        if not state.hands[state.to_move] >> action & 1:
            return f"you do not hold {card_text(code)}"
        suit = code[1]
        if f"marriage {suit}" in legal and code[0] in "KQ":
            return (f"{card_text(code)} belongs to a marriage: announce it first (type 'marriage {suit}'), then "
                    f"play the king or queen (R12, R13)")
        if state.table >= 0:
            return (f"{card_text(code)} is not allowed: the stock is closed or exhausted, so you must "
                    f"{_strict(rules)} (R9-R11)")
        if state.announced >= 0:
            return "after announcing a marriage you lead its king or queen (R13)"
        return f"{card_text(code)} cannot be played now"
    if name.startswith("marriage "):
        return ("a marriage is announced by the leader holding its king and queen, before leading, while the "
                "marriage window is open (R12, R13)")
    if name == "exchange":
        return (f"the exchange is the leader's, holding the trump {_RANK_NAMES[rules.exchange_rank]}, while the stock is "
                f"open with at least {rules.exchange_min_stock} cards (R16)")
    if name == "close":
        return (f"closing is the leader's, before leading, while the stock is open with at least "
                f"{rules.close_min_stock} cards (R18)")
    if name == "claim":
        return f"a claim is possible when you have won a trick and may count {rules.claim_target} (R20, R21)"
    return f"{name!r} is not legal now"


def claim_hint(state: GameState, human: int) -> str | None:
    """A reminder when the player may claim (R20): the hand ends at once in their favour."""
    names = state.rules.action_names
    if state.to_move != human or names.index("claim") not in state.legal_actions():
        return None
    return (f"you may claim: you count {state.counted(human)} points, at least {state.rules.claim_target}; "
            "type 'claim' to end the hand now (R20)")


def _seat(seat: int, human: int) -> str:
    return "you" if seat == human else "the opponent"


def result_text(result: Result, state: GameState, human: int) -> str:
    """How the hand ended and what its game points come from, from the player's side (R22 for an open hand, R23 for a
    closed one; the knobs that change a rule are named where they apply)."""
    rules = state.rules
    if result.winner is None:
        return f"the hand is a tie: nobody scores ({result.reason}, R66-10)"
    w = result.winner
    winner, verb = _seat(w, human), ("win" if w == human else "wins")
    gp = result.game_points
    points = f"{gp} game point{'s' if gp != 1 else ''}"
    claim_typed = bool(state.actions) and rules.action_names[state.actions[-1]] == "claim"
    reason = str(result.reason)
    v = (f"3 if that player took no trick, 2 with fewer than {rules.schneider_below} points, else 1")
    if state.closed_by < 0:
        loser = 1 - w
        how = {
            "claim": (f"{winner} claimed with {state.counted(w)} points (R20, R22)" if claim_typed else
                      f"{winner} won the last trick counting {state.counted(w)} points, which claims (W3, R20)"),
            "false_claim": f"{_seat(loser, human)} claimed with fewer than {rules.claim_target} points (R21a, R22)",
            "last_trick": "every trick was played and nobody claimed: the last trick's winner wins (R22)",
            "count": f"the loser of the last trick counted {rules.claim_target} (R66-10)",
        }.get(reason, reason)
        value = (f"{_seat(loser, human)} took {state.tricks[loser]} trick(s) and {state.counted(loser)} points: {v}"
                 if reason != "false_claim" else "the false_claim knob sets it (R21a)")
    else:
        closer = state.closed_by
        snap_points, snap_tricks = state.closing_snapshot or (0, 0)
        snap = (f"{_seat(1 - closer, human)} had {snap_points} points and {snap_tricks} trick(s) when "
                f"{_seat(closer, human)} closed")
        how = {
            "claim": (f"{winner} claimed with {state.counted(w)} points" if claim_typed else
                      f"{winner} won the last trick counting {state.counted(w)} points, which claims (W3)"),
            "false_claim": f"{_seat(1 - w, human)} claimed with fewer than {rules.claim_target} points",
            "closed_hand": (f"every card was played without a claim and the closer counted {state.counted(closer)} "
                            f"points" + (f", at least {rules.claim_target}" if state.counted(closer) >= rules.claim_target
                                         else f", fewer than {rules.claim_target}")),
        }.get(reason, reason)
        if w == closer:
            value = f"the closer wins the value of that snapshot: {snap}; {v} (R23)"
        else:
            value = (f"the closer failed, so the other player wins the snapshot's value but at least 2: {snap}; {v} "
                     f"(R23; the failed_close_value knob can make it 3)")
    return (f"{winner} {verb} {points}: {how}; {value}. Points at the end: you {state.counted(human)}, the opponent "
            f"{state.counted(1 - human)}")


__all__ = ["SUIT_NAMES", "claim_hint", "narrate_move", "result_text", "why_illegal"]
