"""A match ("Bummerl"): hands played until a player has ``match_target`` game points (R25, R26, R66-10/11).

Example::

    >>> import numpy as np
    >>> from schnapsen_env import RuleSet
    >>> m = Match(RuleSet.make(), rng=np.random.default_rng(1))
    >>> while not m.over:
    ...     s = m.state
    ...     while s.result is None:
    ...         s.push(s.legal_actions()[0])
    ...     gained = m.finish_hand()
    ...     if not m.over:
    ...         s = m.next_hand()
    >>> max(m.points) >= 7
    True
"""

from __future__ import annotations

import numpy as np

from schnapsen_env.rules import GameState, Result
from schnapsen_env.ruleset import RuleSet


def countdown(points: int, target: int = 7) -> int:
    """The count-down display of a match score: game points still needed, shown as 0 below zero (M01)."""
    return max(0, target - points)


def next_dealer(rules: RuleSet, dealer: int, result: Result) -> int:
    """Dealer of the next hand (R1, R26, R66-11): alternate by default; ``"loser"``/``"winner"`` knobs.

    A tie (no winner) always alternates (R66-11).
    """
    if result.winner is None or rules.next_dealer == "alternate":
        return 1 - dealer
    if rules.next_dealer == "winner":
        return result.winner
    return 1 - result.winner


def score_hand(rules: RuleSet, points: list[int], carry: int, result: Result) -> tuple[list[int], int, list[int]]:
    """Add a hand's result to the match score (R25, R66-10).

    Args:
        rules: the rule set.
        points: game points of seats 0 and 1 before the hand.
        carry: game points carried by earlier ``sixtysix24`` ties (``tie="carry"``).
        result: the hand's result.

    Returns:
        ``(new_points, new_carry, gained)``: ``gained[p]`` are the game points seat ``p`` got for this
        hand, the carry included (the winner of the next decided hand takes it).
    """
    gained = [0, 0]
    if result.winner is None:
        if rules.tie == "carry":
            carry += 1
    else:
        gained[result.winner] = result.game_points + carry
        carry = 0
    return [points[0] + gained[0], points[1] + gained[1]], carry, gained


class Match:
    """A match of hands between seats 0 and 1 (R25, R26).

    Attributes:
        rules: the rule set; ``match_target`` game points win.
        points: game points per seat (``list[int]`` of length 2; surplus beyond the target is kept,
            the match ends at the first hand that reaches it).
        carry: game points carried by ties (``sixtysix24``, R66-10).
        state: the :class:`GameState` of the current hand; its ``match_points``/``carry`` are the score
            before that hand.
        winner: seat that won the match, or None while it goes on.
        hands_played: hands finished so far.
    """

    def __init__(self, rules: RuleSet, rng: np.random.Generator, deck: list[str] | None = None,
                 dealer: int | None = None) -> None:
        """Start a match and deal its first hand.

        Args:
            rules: the rule set.
            rng: seeded generator for every shuffle and the first dealer (R1).
            deck: optional deck order of the first hand (R2); later hands are shuffled by ``rng``.
            dealer: optional first dealer (seat); drawn from ``rng`` when None.
        """
        self.rules = rules
        self.rng = rng
        self.points = [0, 0]
        self.carry = 0
        self.winner: int | None = None
        self.hands_played = 0
        self._scored: GameState | None = None
        if dealer is None:
            dealer = int(rng.integers(2))
        self.state = self._deal(deck, dealer)

    @classmethod
    def from_state(cls, rules: RuleSet, rng: np.random.Generator, state: GameState) -> Match:
        """A match whose current hand is ``state`` (its ``match_points`` and ``carry`` are the score)."""
        m = cls.__new__(cls)
        m.rules = rules
        m.rng = rng
        m.points = list(state.match_points)
        m.carry = state.carry
        m.winner = None
        m.hands_played = 0
        m._scored = None
        m.state = state
        target = rules.match_target
        if max(m.points) >= target:
            raise ValueError(f"match_points {m.points} already reach match_target {target}: the match is over")
        return m

    def _deal(self, deck: list[str] | None, dealer: int) -> GameState:
        if deck is not None:
            s = GameState.from_deck(self.rules, deck, dealer)
        else:
            s = GameState.new_hand(self.rules, self.rng, dealer)
        s.match_points = list(self.points)
        s.carry = self.carry
        return s

    @property
    def over(self) -> bool:
        return self.winner is not None

    def finish_hand(self) -> list[int]:
        """Score the finished current hand into the match (R25). Returns the game points gained per seat.

        Raises:
            ValueError: the current hand has no result yet, or it was scored already.
        """
        result = self.state.result
        if result is None:
            raise ValueError("the current hand is not over: play it to its result first")
        if self._scored is self.state:
            raise ValueError("this hand was scored already; call next_hand()")
        self.points, self.carry, gained = score_hand(self.rules, self.points, self.carry, result)
        self.hands_played += 1
        self._scored = self.state
        target = self.rules.match_target
        for p in (0, 1):
            if self.points[p] >= target:
                self.winner = p
        return gained

    def next_hand(self, deck: list[str] | None = None) -> GameState:
        """Deal the next hand (dealer per R26 / ``next_dealer``).

        Raises:
            ValueError: the match is over, or the current hand has not been scored.
        """
        if self.over:
            raise ValueError(f"the match is over: player_{self.winner} won {self.points[0]}-{self.points[1]}")
        if self._scored is not self.state:
            raise ValueError("score the current hand with finish_hand() first")
        result = self.state.result
        assert result is not None  # finish_hand() scored this hand, so it has its result
        self.state = self._deal(deck, next_dealer(self.rules, self.state.dealer, result))
        return self.state
