"""What the browser is sent about a hand: built from the player's observation, never from the hidden state.

:func:`player_view` turns one seat's observation vector (:func:`schnapsen_env.encoding.observation`, which holds
exactly what that seat may know, RULES.md R27) and its legal-action mask into the JSON the page draws. It is given
no :class:`~schnapsen_env.rules.GameState`, so it cannot read the opponent's hidden cards or the stock order: two
states that differ only there give the same view (``tests/test_web.py`` swaps them and compares). The few facts it
is handed beside the observation are public: whose turn it is, the hand's result, the log of moves (every action
is seen by both players), and, once the hand is over, the opponent's remaining cards (the issue asks to show them).

:func:`describe_move` turns one action into a log entry from the observer's observations before and after it
(the trick it completed and who won it, the card the observer drew). :func:`replay_frames` is the one place that
shows everything: a replay of a game record, whose deck the user holds anyway.

Seats are named from the viewer's side: ``"you"`` and ``"opponent"``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from schnapsen_env.encoding import decode_observation, observation
from schnapsen_env.records import HandRecord, replay
from schnapsen_env.render import hand_tricks
from schnapsen_env.rules import PLAYERS, GameState, Result
from schnapsen_env.ruleset import RuleSet, SpecialAction

YOU, OPPONENT = "you", "opponent"


def side(seat: int | None, viewer: int) -> str | None:
    """``"you"`` for the viewer's seat, ``"opponent"`` for the other, None for None."""
    if seat is None:
        return None
    return YOU if seat == viewer else OPPONENT


def result_view(result: Result | None, viewer: int) -> dict[str, Any] | None:
    """A hand's result from the viewer's side: ``{"winner": "you"/"opponent"/None, "game_points", "reason"}``."""
    if result is None:
        return None
    return {"winner": side(result.winner, viewer), "game_points": int(result.game_points),
            "reason": str(result.reason)}


def action_entry(rules: RuleSet, action: int) -> dict[str, Any]:
    """One action as the page shows it: ``{"id", "name", "kind"}`` plus ``"card"`` (a play) or ``"suit"`` (a
    marriage).

    Args:
        rules: the rule set (its action table).
        action: an action id.

    Returns:
        The entry; ``kind`` is one of ``play``, ``marriage``, ``exchange``, ``close``, ``claim``.
    """
    n = rules.n_cards
    name = rules.action_names[action]
    entry: dict[str, Any] = {"id": int(action), "name": name}
    if action < n:
        entry.update(kind="play", card=rules.deck.codes[action])
    elif action < n + SpecialAction.EXCHANGE:
        entry.update(kind="marriage", suit=name.split()[1])
    else:
        entry["kind"] = name
    return entry


def player_view(rules: RuleSet, obs: np.ndarray, action_mask: np.ndarray, *, to_move: str | None,
                result: dict[str, Any] | None = None, log: Iterable[dict[str, Any]] = (),
                opponent_hand: list[str] | None = None) -> dict[str, Any]:
    """The table as one player sees it, from that player's observation.

    Args:
        rules: the rule set.
        obs: the player's observation vector (:func:`schnapsen_env.encoding.observation`).
        action_mask: the player's legal actions (all zeros when it is not the player's turn).
        to_move: ``"you"``, ``"opponent"`` or None (the hand is over): whose turn it is, which both players know.
        result: the hand's result (:func:`result_view`), None while it runs.
        log: the hand's moves so far (:func:`describe_move` entries), public.
        opponent_hand: the opponent's remaining cards, given only after the hand has ended.

    Returns:
        A JSON-compatible dict: ``hand``, ``trump``, ``table`` (the card led in the trick being played) and
        ``table_led_by``,
        ``last_trick``, ``stock`` (``size``, ``turn_up``, ``closed``, ``closed_by``), ``you`` and ``opponent``
        (points, tricks, pending marriage points, marriages, cards won; the opponent's hand size and its cards
        made public), ``leader``, ``dealer``, ``trick``, ``n_tricks`` (the tricks the hand lasts: fewer once the stock
        is closed, R19), ``to_move``, ``legal`` (:func:`action_entry`
        of each legal action), ``announced``, ``exchanged``, ``snapshot``, ``match_before`` (the match score
        before this hand), ``result``, ``log``, ``opponent_hand``.

    Raises:
        ValueError: an observation of the wrong length for ``rules``, or a hand revealed before its end.
    """
    if opponent_hand is not None and result is None:
        raise ValueError("the opponent's cards are shown only after the hand has ended")
    o = decode_observation(obs, rules)
    n = rules.n_cards
    table = o["table"]
    stock_size = o["stock_size"]
    # Every card is in my hand, in a trick, on the table, in the stock (turn-up included) or in the opponent's hand.
    opp_hand_size = (n - len(o["hand"]) - len(o["me_won"]) - len(o["opp_won"]) - (table is not None)
                     - stock_size)
    # the tricks this hand lasts: fewer once the stock is closed (its cards are dead, R19)
    n_tricks = hand_tricks(o["trick"] - 1, rules.n_tricks, o["closed"],
                           len(o["hand"]) + opp_hand_size + (table is not None))
    log = [dict(e) for e in log]
    last_trick = None
    for e in reversed(log):
        if "won_by" in e:
            last_trick = {"cards": list(e["cards"]), "won_by": e["won_by"], "led_by": e["led_by"]}
            break
    legal = [action_entry(rules, int(a)) for a in np.flatnonzero(np.asarray(action_mask))]
    if legal and to_move != YOU:
        raise ValueError(f"legal actions were given for the viewer, but to_move is {to_move!r}")
    closer = o["closer"]
    leader = YOU if o["leader"] else OPPONENT
    return {
        "ruleset": rules.name,
        # the ruleset's targets, for the page's labels (R12, R20; schnapsen10 halves them, RS3)
        "claim_target": rules.claim_target,
        "marriage_points": {"plain": rules.shape.marriage[0], "trump": rules.shape.marriage[1]},
        "trump": o["trump"],
        "hand": o["hand"],
        "table": table,
        "table_led_by": None if table is None else leader,
        "last_trick": last_trick,
        "stock": {"size": stock_size, "turn_up": o["turn_up"], "closed": o["closed"],
                  "closed_by": {"me": YOU, "opp": OPPONENT}.get(closer)},
        YOU: {"points": o["points"]["me"], "tricks": o["tricks"]["me"], "pending": o["pending"]["me"],
              "marriages": o["marriages"]["me"], "won": o["me_won"]},
        OPPONENT: {"points": o["points"]["opp"], "tricks": o["tricks"]["opp"], "pending": o["pending"]["opp"],
                   "marriages": o["marriages"]["opp"], "won": o["opp_won"], "hand_size": opp_hand_size,
                   "known": o["opp_known"]},
        "leader": leader,
        "dealer": YOU if o["dealer"] else OPPONENT,
        "trick": min(o["trick"], n_tricks),
        "n_tricks": n_tricks,
        "to_move": to_move,
        "legal": legal,
        "announced": o["announced"],
        "exchanged": o["exchanged"],
        "snapshot": o["snapshot"],
        "match_before": {YOU: o["match"]["me"], OPPONENT: o["match"]["opp"], "carry": o["match"]["carry"]},
        "result": result,
        "log": log,
        "opponent_hand": opponent_hand,
    }


def describe_move(rules: RuleSet, by: str, action: int, before: np.ndarray, after: np.ndarray) -> dict[str, Any]:
    """A log entry for one action, from the observer's observation before and after it.

    Args:
        rules: the rule set.
        by: who acted, ``"you"`` or ``"opponent"`` (from the observer's side).
        action: the action id (every action is seen by both players).
        before, after: the observer's observation vectors before and after the action.

    Returns:
        ``{"by", "action", "trick"}``; for the card that completes a trick also ``"cards"`` (lead, follow),
        ``"led_by"`` and ``"won_by"``; ``"drew"``: the card the observer drew after it; ``"opponent_drew"``: the
        turn-up, when the opponent drew it (the last open trick, R27).
    """
    b, a = decode_observation(before, rules), decode_observation(after, rules)
    entry: dict[str, Any] = {"by": by, "action": rules.action_names[action], "trick": min(b["trick"], rules.n_tricks)}
    if action < rules.n_cards and b["table"] is not None:  # the follow: the trick is complete
        won_by = YOU if a["tricks"]["me"] > b["tricks"]["me"] else OPPONENT
        entry.update(cards=[b["table"], rules.deck.codes[action]], led_by=YOU if b["leader"] else OPPONENT,
                     won_by=won_by)
        drawn = sorted(set(a["hand"]) - set(b["hand"]))
        if drawn:
            entry["drew"] = drawn[0]
        if b["turn_up"] is not None and a["turn_up"] is None and b["turn_up"] not in a["hand"]:
            entry["opponent_drew"] = b["turn_up"]
    return entry


def record_summary(record: HandRecord, index: int) -> dict[str, Any]:
    """A line of a records file as the page lists it: its index, ruleset, dealer, players, moves and result.

    Raises:
        RulesError: the record's rules are bad (a record read with ``check=True`` has good ones).
    """
    return {"index": index, "ruleset": RuleSet.from_dict(record.rules).name, "dealer": record.dealer,
            "players": record.players, "moves": len(record.actions), "result": record.result}


def replay_frames(record: HandRecord, viewer: int, where: str = "record") -> list[dict[str, Any]]:
    """The frames of a record's replay, one per position (the deal, then after each action), seen from seat
    ``viewer`` with **every card shown**: the user holds the record and its deck, so nothing is hidden from them.

    Args:
        record: a game record (validated: :func:`schnapsen_env.records.replay` raises on a bad one).
        viewer: the seat drawn at the bottom.
        where: how messages name the record.

    Returns:
        A list of ``len(record.actions) + 1`` frames: :func:`player_view` of the viewer (its ``legal`` empty:
        a replay is watched, not played), with ``opponent_hand`` and ``stock_order`` (top first, turn-up last)
        always filled, ``to_move`` and ``step`` (0 for the deal), and the log up to that step.

    Raises:
        RecordError: the record does not replay (its message names the action).
    """
    frames: list[dict[str, Any]] = []
    log: list[dict[str, Any]] = []
    before, mover = None, None
    for state, name in replay(record, where):
        now = observation(state, viewer)
        if name is not None:
            log.append(describe_move(state.rules, side(mover, viewer), state.rules.action_names.index(name), before,
                                     now))
        frames.append(_full_frame(state, viewer, now, log, len(frames)))
        before, mover = now, state.to_move
    return frames


def _full_frame(state: GameState, viewer: int, obs: np.ndarray, log: list, step: int) -> dict[str, Any]:
    """One replay frame: the viewer's view plus the cards it could not see (see :func:`replay_frames`)."""
    rules = state.rules
    codes = rules.deck.codes
    frame = player_view(rules, obs, np.zeros(rules.n_actions, dtype=np.int8),
                        to_move=None if state.result is not None else side(state.to_move, viewer),
                        result=result_view(state.result, viewer), log=log)
    frame["opponent_hand"] = [codes[c] for c in range(rules.n_cards) if state.hands[1 - viewer] >> c & 1]
    frame["stock_order"] = [codes[c] for c in state.stock]
    frame["step"] = step
    frame["seat"] = PLAYERS[viewer]
    return frame


__all__ = ["OPPONENT", "YOU", "action_entry", "describe_move", "player_view", "record_summary", "replay_frames",
           "result_view", "side"]
