"""Tricks, results and game values: how a hand is scored (RULES.md section 1, R6, R20-R23a, R66-10).

The vocabulary shared by the rules engine (:mod:`schnapsen_env.rules`), the compiled core
(:mod:`schnapsen_env.rules_core`), positions and game records. It depends on nothing else in the package.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

#: R20: a claim is correct with counted points >= 66 (``schnapsen20``, ``sixtysix24``; ``schnapsen10``'s
#: halved values are in :data:`schnapsen_env.ruleset.SHAPES`, RS3).
CLAIM_TARGET = 66
#: R12: a marriage in the trump suit scores 40, any other 20.
TRUMP_MARRIAGE_POINTS, MARRIAGE_POINTS = 40, 20
#: Section 1: a loser with a trick and fewer than 33 counted points pays 2 game points.
SCHNEIDER_BELOW = 33


class Reason(str, Enum):
    """Why a hand ended: :attr:`Result.reason`. A ``str`` enum, so ``Reason.CLAIM == "claim"`` and it
    serialises as its value (positions, game records)."""

    #: A correct claim of 66 (R20, R21; with a closed stock R23), including the engine's claim for the winner of
    #: the last trick (W3) and automatic claims (``claim_mode="auto"``, R21).
    CLAIM = "claim"
    #: A claim with fewer than 66 points: the opponent scores (R22, R23; ``false_claim`` knob, R21a).
    FALSE_CLAIM = "false_claim"
    #: All cards played and nobody reached 66: the last trick decides (R22; ``sixtysix24`` with
    #: ``tie="last_trick"``, R66-10).
    LAST_TRICK = "last_trick"
    #: The stock was closed and the hand played out without a correct claim (R23, ``closed_hand_end``).
    CLOSED_HAND = "closed_hand"
    #: ``sixtysix24``: the loser of the last trick counted 66 (R66-10).
    COUNT = "count"
    #: ``sixtysix24``: 65-65 or neither player reached 66 under ``tie="carry"`` (R66-10); no winner.
    TIE = "tie"

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:  # as the plain string it equals, so results print as they always did
        return repr(self.value)


#: The reasons' values in a fixed order (the compiled core stores a reason as its index here).
RESULT_REASONS = tuple(r.value for r in Reason)


class Result(NamedTuple):
    """How a hand ended (RULES.md R20-R23, R66-10).

    Attributes:
        winner: seat 0 or 1, or ``None`` for a ``sixtysix24`` tie.
        game_points: game points won by ``winner`` (0 for a tie), excluding any carry.
        reason: a :class:`Reason` (equal to its string value).
    """

    winner: int | None
    game_points: int
    reason: str


class Trick(NamedTuple):
    """A completed trick: seats of leader and winner, card ids of lead and follow (R6)."""

    leader: int
    lead: int
    follow: int
    winner: int


def marriage_points(suits: int, trump: int, plain: int = MARRIAGE_POINTS, in_trump: int = TRUMP_MARRIAGE_POINTS) -> int:
    """Points of the marriages announced in ``suits`` (a 4-bit set of suit indices) with ``trump`` (R12): each
    ``in_trump`` in the trump suit, else ``plain`` (the defaults are R12's 40 and 20; ``RuleSet.marriage_points``
    passes a ruleset's own values)."""
    return sum(in_trump if s == trump else plain for s in range(4) if suits >> s & 1)


def game_value(points: int, tricks: int, schneider_below: int = SCHNEIDER_BELOW) -> int:
    """Game value ``v(points, tricks)`` (RULES.md section 1): 3 if no trick, 2 below ``schneider_below`` (33;
    ``RuleSet.game_value`` passes a ruleset's own bound), else 1."""
    if tricks == 0:
        return 3
    return 2 if points < schneider_below else 1


__all__ = ["CLAIM_TARGET", "MARRIAGE_POINTS", "RESULT_REASONS", "SCHNEIDER_BELOW", "TRUMP_MARRIAGE_POINTS", "Reason", "Result", "Trick",
           "game_value", "marriage_points"]
