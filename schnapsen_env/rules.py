"""The rules engine: one hand of Schnapsen / Sixty-Six as a mutable state machine.

:class:`GameState` implements RULES.md R1–R27 and R66-1–R66-11 with the action
model of RULES.md section 4. It knows nothing of PettingZoo, Gymnasium or torch.

Conventions:

* Seats are ``0`` and ``1`` (``"player_0"``/``"player_1"`` in position dicts);
  roles (dealer, leader, closer) are stored separately from seats.
* Card ids and action ids are as in :mod:`schnapsen_env.cards` and
  :class:`~schnapsen_env.ruleset.RuleSet`: ``play XX`` has the id of card XX, then
  ``marriage C D H S``, ``exchange``, ``close``, ``claim``.
* :meth:`GameState.step` checks legality and raises :class:`IllegalActionError`
  leaving the state unchanged; :meth:`GameState.push` does not check (fast path for
  search) and :meth:`GameState.pop` undoes the last push, like python-chess.

Example::

    >>> import numpy as np
    >>> s = GameState.new_hand(RuleSet.make(), rng=np.random.default_rng(0))
    >>> while s.result is None:
    ...     s.push(s.legal_actions()[0])
    >>> s.result.game_points in (1, 2, 3)
    True
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from schnapsen_env.cards import SUIT_LETTERS, iter_bits
from schnapsen_env.errors import IllegalActionError, InvalidPositionError
from schnapsen_env.ruleset import RuleSet

PLAYERS = ("player_0", "player_1")
RESULT_REASONS = ("claim", "false_claim", "last_trick", "closed_hand", "count", "tie")
CLAIM_TARGET = 66  # R20: a claim is correct with counted >= 66


class Result(NamedTuple):
    """How a hand ended (RULES.md R20–R23, R66-10).

    Attributes:
        winner: seat 0 or 1, or ``None`` for a ``sixtysix24`` 65–65 tie.
        game_points: game points won by ``winner`` (0 for a tie), excluding any carry.
        reason: one of :data:`RESULT_REASONS`.
    """

    winner: int | None
    game_points: int
    reason: str


class Trick(NamedTuple):
    """A completed trick: seats of leader and winner, card ids of lead and follow."""

    leader: int
    lead: int
    follow: int
    winner: int


def game_value(points: int, tricks: int) -> int:
    """Game value ``v(points, tricks)`` (RULES.md section 1): 3 if no trick, 2 below 33, else 1."""
    if tricks == 0:
        return 3
    return 2 if points < 33 else 1


def seat_of(player: Any, what: str = "player") -> int:
    """Seat 0/1 of ``"player_0"``/``"player_1"``; raises InvalidPositionError otherwise."""
    if player == "player_0":
        return 0
    if player == "player_1":
        return 1
    raise InvalidPositionError(f"{what} must be 'player_0' or 'player_1', got {player!r}")


_POSITION_KEYS = {"trump", "stock", "closed_by", "closing_snapshot", "hands", "won", "marriages", "announced",
                  "leader", "table"}
_OPTIONAL_KEYS = {"dealer", "match_points", "history", "known", "exchanged", "carry", "points", "tricks", "result"}


class GameState:
    """One hand in progress (RULES.md sections 2–4).

    Public read-only attributes (seats are 0/1, cards are card ids, card sets bit masks):

    * ``rules``: the :class:`RuleSet`.
    * ``hands``, ``won``: per seat, bit masks of the hand and of the cards in its tricks.
    * ``card_points``, ``tricks``: per seat, card points in tricks and number of tricks won.
    * ``marriage_points``: per seat, points of all marriages announced (pending or not, R14).
    * ``marriage_suits``: per seat, a 4-bit mask of the suits announced.
    * ``bonus``: per seat, the last-trick bonus received (R66-7).
    * ``stock``: tuple of card ids, top first, turn-up last (still listed after closing, R19).
    * ``trump``: suit index. ``leader``, ``to_move``, ``dealer``: seats.
    * ``table``: card id led in the unfinished trick, or -1.
    * ``closed_by``: seat or -1. ``closing_snapshot``: ``(points, tricks)`` of the non-closer, or None.
    * ``announced``: suit announced this turn whose card is not yet led, or -1.
    * ``exchanged``: the player to lead exchanged earlier this turn.
    * ``known``: per seat, bit mask of that seat's hand cards the other player knows (R27).
    * ``history``: list of :class:`Trick`, the most recent tricks (all of them unless the state was loaded
      from a position without ``history``; count tricks with ``tricks``). ``result``: :class:`Result` or None.
    * ``match_points``: game points of each seat before this hand; ``carry``: tie carry (R66-10).
    """

    __slots__ = ("rules", "deck", "hands", "won", "card_points", "tricks", "marriage_points", "marriage_suits",
                 "bonus", "stock", "trump", "leader", "to_move", "dealer", "table", "closed_by",
                 "closing_snapshot", "announced", "exchanged", "known", "history", "result", "match_points",
                 "carry", "_stack", "_kq", "_exchange_card")

    def __init__(self, rules: RuleSet | None = None) -> None:
        """An empty state; use :meth:`new_hand`, :meth:`from_deck` or :meth:`from_position`."""
        self.rules = rules if rules is not None else RuleSet.make()
        self.deck = self.rules.deck
        self.hands = [0, 0]
        self.won = [0, 0]
        self.card_points = [0, 0]
        self.tricks = [0, 0]
        self.marriage_points = [0, 0]
        self.marriage_suits = [0, 0]
        self.bonus = [0, 0]
        self.stock: tuple[int, ...] = ()
        self.trump = 0
        self.leader = 0
        self.to_move = 0
        self.dealer = 1
        self.table = -1
        self.closed_by = -1
        self.closing_snapshot: tuple[int, int] | None = None
        self.announced = -1
        self.exchanged = False
        self.known = [0, 0]
        self.history: list[Trick] = []
        self.result: Result | None = None
        self.match_points = [0, 0]
        self.carry = 0
        self._stack: list[tuple] = []
        d = self.deck
        self._kq = tuple((1 << d.card(s, 2)) | (1 << d.card(s, 3)) for s in range(4))
        self._exchange_card = -1

    # ------------------------------------------------------------------ dealing
    @classmethod
    def from_deck(cls, rules: RuleSet, deck: list[str], dealer: str | int) -> "GameState":
        """Deal a hand from a full deck order (R2, R66-2).

        Args:
            rules: the rule set.
            deck: card codes c0…c19 (c0…c23 for ``sixtysix24``), each card once.
            dealer: ``"player_0"``/``"player_1"`` (or seat 0/1). The non-dealer leads trick 1 (R1).

        Raises:
            InvalidPositionError: a card code unknown to the ruleset, a missing or duplicate card,
                the wrong length, or a bad dealer.
        """
        d = rules.deck
        if not isinstance(deck, (list, tuple)):
            raise InvalidPositionError(f"deck must be a list of {d.size} card codes, got {type(deck).__name__}")
        ids = [d.index(c) for c in deck]
        if len(ids) != d.size or len(set(ids)) != d.size:
            missing = [d.codes[i] for i in range(d.size) if i not in ids]
            dups = sorted({deck[k] for k, i in enumerate(ids) if ids.count(i) > 1})
            raise InvalidPositionError(
                f"deck must hold each of the {d.size} cards of {rules.name} exactly once: got {len(ids)} cards, "
                f"missing {missing or 'none'}, duplicated {dups or 'none'}"
            )
        if isinstance(dealer, (int, np.integer)) and not isinstance(dealer, bool) and dealer in (0, 1):
            dseat = int(dealer)
        else:
            dseat = seat_of(dealer, "dealer")
        return cls._deal(rules, ids, dseat)

    @classmethod
    def new_hand(cls, rules: RuleSet | None = None, rng: np.random.Generator | None = None,
                 dealer: int | None = None) -> "GameState":
        """Shuffle with ``rng`` and deal (R1, R2). ``dealer=None`` draws the dealer from ``rng`` too.

        Args:
            rules: the rule set (default ``schnapsen20``).
            rng: a seeded ``numpy.random.Generator``; a fresh unseeded one if None.
            dealer: seat 0/1 or None.
        """
        rules = rules if rules is not None else RuleSet.make()
        if dealer is not None and (not isinstance(dealer, (int, np.integer)) or isinstance(dealer, bool)
                                   or dealer not in (0, 1)):
            raise InvalidPositionError(f"dealer must be seat 0, 1 or None, got {dealer!r}")
        rng = rng if rng is not None else np.random.default_rng()
        order = rng.permutation(rules.deck.size).tolist()
        if dealer is None:
            dealer = int(rng.integers(2))
        return cls._deal(rules, order, dealer)

    @classmethod
    def _deal(cls, rules: RuleSet, ids: list[int], dealer: int) -> "GameState":
        s = cls(rules)
        hs = rules.hand_size
        second = hs - 3
        non_dealer = 1 - dealer
        hand_n = ids[0:3] + ids[7:7 + second]
        hand_d = ids[3:6] + ids[7 + second:7 + 2 * second]
        s.stock = tuple(ids[7 + 2 * second:]) + (ids[6],)
        s.hands[non_dealer] = _mask(hand_n)
        s.hands[dealer] = _mask(hand_d)
        s.trump = rules.deck.suit[ids[6]]
        s.dealer = dealer
        s.leader = s.to_move = non_dealer
        s._exchange_card = rules.deck.card(s.trump, rules.exchange_rank_index)
        return s

    # ------------------------------------------------------------------ scores
    def counted(self, seat: int) -> int:
        """Counted points of a seat (RULES.md section 1): card points, plus marriages once it has a trick
        (R14), plus the last-trick bonus (R66-7)."""
        if self.tricks[seat]:
            return self.card_points[seat] + self.marriage_points[seat] + self.bonus[seat]
        return self.card_points[seat] + self.bonus[seat]

    def pending_marriage_points(self, seat: int) -> int:
        """Marriage points announced by a seat with no trick yet (R14), else 0."""
        return 0 if self.tricks[seat] else self.marriage_points[seat]

    @property
    def stock_size(self) -> int:
        """S: stock cards including the turn-up (frozen at closing, R19)."""
        return len(self.stock)

    @property
    def is_strict(self) -> bool:
        """STRICT phase: stock closed or exhausted (R10, R11)."""
        return self.closed_by >= 0 or not self.stock

    @property
    def stock_open(self) -> bool:
        """Not closed and S > 0."""
        return self.closed_by < 0 and bool(self.stock)

    @property
    def turn_up(self) -> int:
        """Card id of the turn-up while it lies in the stock (also face down after closing), else -1."""
        return self.stock[-1] if self.stock else -1

    @property
    def trick_number(self) -> int:
        """1-based number of the trick being played."""
        return self.tricks[0] + self.tricks[1] + 1

    # ------------------------------------------------------------------ legality
    def legal_mask(self) -> int:
        """Legal actions as an int bit mask (bit ``a`` set = action id ``a`` legal). 0 after the end."""
        if self.result is not None:
            return 0
        me = self.to_move
        hand = self.hands[me]
        rules = self.rules
        d = self.deck
        if self.table >= 0:
            # Follower (R5, R9–R11).
            if self.closed_by < 0 and self.stock:
                return hand  # R9: OPEN phase, any card
            led = self.table
            same = hand & d.suit_mask[d.suit[led]]
            if same:
                if rules.must_head:  # R10(a) / R66-5
                    head = same & d.higher[led]
                    return head if head else same
                return same
            trumps = hand & d.suit_mask[self.trump]  # R10(b)
            return trumps if trumps else hand  # R10(c)
        # Leader (R3, R4, R12–R20).
        n = d.size
        claim = 0
        if rules.claim_mode == "manual":  # R21
            if (self.announced >= 0 or self.tricks[0] + self.tricks[1]) and (  # W2 / W1 (R20)
                    rules.false_claim != "reject" or self.counted(me) >= CLAIM_TARGET):  # R21a
                claim = 1 << (n + 6)
        if self.announced >= 0:
            return self._kq[self.announced] | claim  # R4
        bits = hand
        if self._marriage_window_open():
            automatic = rules.marriage_declaration == "automatic"
            for s in range(4):
                kq = self._kq[s]
                if hand & kq == kq:
                    bits |= 1 << (n + s)
                    if automatic:  # R12: playing K or Q of a held pair *is* the announcement
                        bits &= ~kq
        if self.closed_by < 0 and self.stock:
            size = len(self.stock)
            if size >= rules.exchange_min_stock and hand >> self._exchange_card & 1:  # R16, R66-3
                bits |= 1 << (n + 4)
            if size >= rules.close_min_stock:  # R18, R66-4
                bits |= 1 << (n + 5)
        return bits | claim

    def _marriage_window_open(self) -> bool:
        """May the leader announce a marriage on this lead? (R13, R66-6, knobs of section 5)."""
        rules = self.rules
        trick_no = self.tricks[0] + self.tricks[1] + 1  # not len(history): a loaded position may lack it
        if trick_no == 1 and not rules.marriage_on_opening_lead:
            return False
        window = rules.marriage_window
        if window == "any":
            return True
        if window == "first_6_tricks":
            return trick_no <= 6
        return self.closed_by < 0 and bool(self.stock)  # "stock_open"

    def legal_actions(self) -> list[int]:
        """Sorted list of legal action ids (empty only after the hand ended)."""
        return list(iter_bits(self.legal_mask()))

    def action_mask(self) -> np.ndarray:
        """Legal actions as ``np.ndarray`` of shape ``(n_actions,)``, dtype int8, 1 = legal."""
        return mask_to_array(self.legal_mask(), self.rules.n_actions)

    def is_legal(self, action: int | str) -> bool:
        """Whether an action (id or name) is legal now; unknown names and ids are simply not legal."""
        if isinstance(action, str):
            if action not in self.rules.action_names:
                return False
            action = self.rules.action_names.index(action)
        if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
            return False
        return 0 <= action < self.rules.n_actions and bool(self.legal_mask() >> int(action) & 1)

    def legal_action_names(self) -> list[str]:
        """Names of the legal actions, in action-id order."""
        names = self.rules.action_names
        return [names[a] for a in iter_bits(self.legal_mask())]

    # ------------------------------------------------------------------ stepping
    def step(self, action: int | str) -> None:
        """Apply a legal action, given by id or by name (``"play KS"``, ``"claim"``, …).

        Raises:
            IllegalActionError: the hand is over, the id or name is unknown, or the action is not
                legal here; the message names the action, the player to move and the legal actions.
                The state is unchanged.
        """
        rules = self.rules
        if isinstance(action, str):
            action_id = rules.action_id(action)
        elif isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            action_id = int(action)
        else:
            raise IllegalActionError(f"action must be an int id or an action name, got {action!r}")
        if self.result is not None:
            raise IllegalActionError(f"the hand is over ({self.result}); no action is legal")
        if not 0 <= action_id < rules.n_actions:
            raise IllegalActionError(
                f"action id {action_id} out of range: expected 0..{rules.n_actions - 1} for {rules.name}")
        if not self.legal_mask() >> action_id & 1:
            raise IllegalActionError(
                f"illegal action {rules.action_names[action_id]!r} (id {action_id}) for {PLAYERS[self.to_move]} "
                f"({self._situation()}): legal are {self.legal_action_names()}"
            )
        self.push(action_id)

    def _situation(self) -> str:
        d = self.deck
        if self.table >= 0:
            return (f"following {d.codes[self.table]} in the {'STRICT' if self.is_strict else 'OPEN'} phase, "
                    "R9-R11")
        if self.announced >= 0:
            return f"after announcing marriage {SUIT_LETTERS[self.announced]}, R4"
        return f"leading trick {self.trick_number}, R3"

    def push(self, action: int) -> None:
        """Apply an action id **without** checking legality; :meth:`pop` undoes it."""
        self._stack.append((
            self.hands[0], self.hands[1], self.won[0], self.won[1], self.card_points[0], self.card_points[1],
            self.tricks[0], self.tricks[1], self.marriage_points[0], self.marriage_points[1],
            self.marriage_suits[0], self.marriage_suits[1], self.bonus[0], self.bonus[1], self.known[0],
            self.known[1], self.stock, self.leader, self.to_move, self.table, self.closed_by,
            self.closing_snapshot, self.announced, self.exchanged, len(self.history), self.result))
        me = self.to_move
        n = self.deck.size
        if action < n:
            bit = 1 << action
            if self.table < 0:  # lead
                self.hands[me] &= ~bit
                self.known[me] &= ~bit
                self.announced = -1
                self.exchanged = False  # the turn ends with the lead (R3)
                self.table = action
                self.to_move = 1 - me
            else:
                self._finish_trick(action)
        elif action < n + 4:  # marriage (R12)
            suit = action - n
            self.marriage_suits[me] |= 1 << suit
            self.marriage_points[me] += 40 if suit == self.trump else 20
            self.announced = suit
            self.known[me] |= self._kq[suit]  # both cards shown (R27)
            if self.rules.claim_mode == "auto" and self.counted(me) >= CLAIM_TARGET:  # R21 (W2)
                self._claim(me)
        elif action == n + 4:  # exchange (R15–R17)
            jack = self._exchange_card
            old = self.stock[-1]
            self.hands[me] = (self.hands[me] & ~(1 << jack)) | (1 << old)
            self.known[me] |= 1 << old  # R27: the old turn-up is known to be in the exchanger's hand
            self.stock = self.stock[:-1] + (jack,)
            self.exchanged = True
        elif action == n + 5:  # close (R18, R19)
            other = 1 - me
            self.closed_by = me
            self.closing_snapshot = (self.counted(other), self.tricks[other])
        else:  # claim (R20)
            self._claim(me)

    def pop(self) -> None:
        """Undo the last :meth:`push`. Raises IndexError when there is nothing to undo."""
        (self.hands[0], self.hands[1], self.won[0], self.won[1], self.card_points[0], self.card_points[1],
         self.tricks[0], self.tricks[1], self.marriage_points[0], self.marriage_points[1],
         self.marriage_suits[0], self.marriage_suits[1], self.bonus[0], self.bonus[1], self.known[0],
         self.known[1], self.stock, self.leader, self.to_move, self.table, self.closed_by,
         self.closing_snapshot, self.announced, self.exchanged, n_hist, self.result) = self._stack.pop()
        del self.history[n_hist:]

    def _finish_trick(self, follow: int) -> None:
        """Resolve the trick (R6), draw (R7), and check the end of the hand (R20 W3, R22, R23, R66-10)."""
        d = self.deck
        me = self.to_move
        lead_seat = self.leader
        lead = self.table
        bit = 1 << follow
        self.hands[me] &= ~bit
        self.known[me] &= ~bit
        ls, fs = d.suit[lead], d.suit[follow]
        if ls == fs:
            winner = me if d.rank[follow] < d.rank[lead] else lead_seat
        else:
            winner = me if fs == self.trump else lead_seat
        loser = 1 - winner
        self.won[winner] |= (1 << lead) | bit
        self.card_points[winner] += d.points[lead] + d.points[follow]
        self.tricks[winner] += 1
        self.history.append(Trick(lead_seat, lead, follow, winner))
        self.table = -1
        self.announced = -1
        self.exchanged = False
        self.leader = self.to_move = winner
        stock = self.stock
        if self.closed_by < 0 and stock:  # R7
            self.hands[winner] |= 1 << stock[0]
            self.hands[loser] |= 1 << stock[1]
            if len(stock) == 2:
                self.known[loser] |= 1 << stock[1]  # the turn-up, drawn by the loser (R27)
            self.stock = stock[2:]
        rules = self.rules
        if not self.hands[winner]:  # last trick played
            if rules.last_trick_bonus and (self.closed_by < 0 or rules.last_trick_bonus_when_closed):
                self.bonus[winner] = rules.last_trick_bonus  # R66-7
            self._end_of_hand(winner)
        elif rules.claim_mode == "auto" and self.counted(winner) >= CLAIM_TARGET:  # R21 (W1)
            self._claim(winner)

    # ------------------------------------------------------------------ scoring
    def _snapshot_value(self) -> int:
        """v(snap) with the closing snapshot, or O's state at the end (``closing_reference``, R23a)."""
        if self.rules.closing_reference == "at_end":
            other = 1 - self.closed_by
            return game_value(self.counted(other), self.tricks[other])
        points, tricks = self.closing_snapshot
        return game_value(points, tricks)

    def _failed_close_value(self) -> int:
        """max(2, v(snap)), or 3 under ``failed_close_value="flat3"`` (R23, R23a)."""
        if self.rules.failed_close_value == "flat3":
            return 3
        return max(2, self._snapshot_value())

    def _claim(self, x: int) -> None:
        """Claim 66 by seat ``x`` (R20–R23)."""
        o = 1 - x
        correct = self.counted(x) >= CLAIM_TARGET
        false_claim = self.rules.false_claim
        if self.closed_by < 0:  # R22
            if correct:
                self.result = Result(x, game_value(self.counted(o), self.tricks[o]), "claim")
            elif false_claim == "pagat":
                self.result = Result(o, 3 if self.tricks[o] == 0 else 2, "false_claim")
            else:  # "mirror" (and "reject", where the action is never offered)
                self.result = Result(o, game_value(self.counted(o), self.tricks[o]), "false_claim")
            return
        closer = self.closed_by  # R23
        if x == closer:
            if correct:
                self.result = Result(x, self._snapshot_value(), "claim")
            else:
                self.result = Result(o, self._failed_close_value(), "false_claim")
        elif correct:
            self.result = Result(x, self._failed_close_value(), "claim")
        elif false_claim == "pagat":
            self.result = Result(closer, 3 if self.tricks[closer] == 0 else 2, "false_claim")
        else:
            self.result = Result(closer, self._failed_close_value(), "false_claim")

    def _end_of_hand(self, w: int) -> None:
        """All cards played; ``w`` took the last trick (R20 W3, R22, R23, R66-10)."""
        if self.counted(w) >= CLAIM_TARGET:  # W3: the engine claims for the last-trick winner
            self._claim(w)
            return
        o = 1 - w
        rules = self.rules
        if self.closed_by < 0:
            if self.deck.size == 20:  # R22
                value = 1 if rules.unclaimed_last_trick_value == "one" else game_value(
                    self.counted(o), self.tricks[o])
                self.result = Result(w, value, "last_trick")
            elif self.counted(o) >= CLAIM_TARGET:  # R66-10
                self.result = Result(o, game_value(self.counted(w), self.tricks[w]), "count")
            elif rules.tie == "last_trick":
                self.result = Result(w, 1, "last_trick")
            else:
                self.result = Result(None, 0, "tie")
            return
        closer = self.closed_by  # R23 without a claim
        if rules.closed_hand_end == "closer_score" and self.counted(closer) >= CLAIM_TARGET:
            self.result = Result(closer, self._snapshot_value(), "closed_hand")
        else:
            self.result = Result(1 - closer, self._failed_close_value(), "closed_hand")

    # ------------------------------------------------------------------ copying
    def copy(self) -> "GameState":
        """An independent copy (the undo stack included)."""
        s = GameState.__new__(GameState)
        for name in GameState.__slots__:
            value = getattr(self, name)
            setattr(s, name, list(value) if isinstance(value, list) else value)
        return s

    def _key(self) -> tuple:
        return (self.rules, tuple(self.hands), tuple(self.won), tuple(self.card_points), tuple(self.tricks),
                tuple(self.marriage_points), tuple(self.marriage_suits), tuple(self.bonus), self.stock,
                self.trump, self.leader, self.to_move, self.dealer, self.table, self.closed_by,
                self.closing_snapshot, self.announced, self.exchanged, tuple(self.known), tuple(self.history),
                self.result, tuple(self.match_points), self.carry)

    def __eq__(self, other: object) -> bool:
        """Value equality of the game (the undo stack is not compared)."""
        if not isinstance(other, GameState):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        p = self.position()
        return (f"GameState({self.rules.name}, trump={p['trump']}, to_move={PLAYERS[self.to_move]}, "
                f"hands={p['hands']}, stock={p['stock']}, table={p['table']}, points={p['points']}, "
                f"result={p['result']})")

    # ------------------------------------------------------------------ positions
    def position(self) -> dict[str, Any]:
        """The JSON-compatible position dict (issue 2 keys plus API.md's optional keys).

        :meth:`from_position` of the result gives back an equal state (round trip exact). Card lists
        are in card-id order except ``stock`` (top first, turn-up last) and ``history`` (play order).
        """
        d = self.deck
        codes = d.codes
        res = None
        if self.result is not None:
            w = self.result.winner
            res = {"winner": None if w is None else PLAYERS[w], "game_points": self.result.game_points,
                   "reason": self.result.reason}
        return {
            "trump": SUIT_LETTERS[self.trump],
            "stock": [codes[c] for c in self.stock],
            "closed_by": None if self.closed_by < 0 else PLAYERS[self.closed_by],
            "closing_snapshot": None if self.closing_snapshot is None else {
                "points": self.closing_snapshot[0], "tricks": self.closing_snapshot[1]},
            "hands": {PLAYERS[p]: d.codes_of(self.hands[p]) for p in (0, 1)},
            "won": {PLAYERS[p]: d.codes_of(self.won[p]) for p in (0, 1)},
            "marriages": {PLAYERS[p]: [SUIT_LETTERS[s] for s in range(4) if self.marriage_suits[p] >> s & 1]
                          for p in (0, 1)},
            "announced": None if self.announced < 0 else SUIT_LETTERS[self.announced],
            "leader": PLAYERS[self.leader],
            "table": None if self.table < 0 else codes[self.table],
            "dealer": PLAYERS[self.dealer],
            "match_points": {PLAYERS[p]: self.match_points[p] for p in (0, 1)},
            "carry": self.carry,
            "history": [{"leader": PLAYERS[t.leader], "cards": [codes[t.lead], codes[t.follow]],
                         "winner": PLAYERS[t.winner]} for t in self.history],
            "known": {PLAYERS[p]: d.codes_of(self.known[p]) for p in (0, 1)},
            "exchanged": self.exchanged,
            "points": {PLAYERS[p]: self.counted(p) for p in (0, 1)},
            "tricks": {PLAYERS[p]: self.tricks[p] for p in (0, 1)},
            "result": res,
        }

    @classmethod
    def from_position(cls, rules: RuleSet, position: dict[str, Any]) -> "GameState":
        """Load a position dict (see :meth:`position` and issue 2 for the keys).

        Raises:
            InvalidPositionError: an unknown or missing key, an unknown card code, a missing or
                duplicate card, an odd ``won`` size, impossible hand or stock sizes, a turn-up that is not
                of the trump suit, inconsistent closing, marriage, history, known, points or result data.
                The message names the key and what was expected.
        """
        from schnapsen_env.position import load_position

        return load_position(cls(rules), position)


def _mask(ids) -> int:
    m = 0
    for i in ids:
        m |= 1 << i
    return m


_BIT_TABLE = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.int8)


def mask_to_array(bits: int, n: int) -> np.ndarray:
    """Int bit mask -> ``np.ndarray`` of shape ``(n,)``, dtype int8 (1 where the bit is set)."""
    nbytes = (n + 7) // 8
    return _BIT_TABLE[np.frombuffer(bits.to_bytes(nbytes, "little"), dtype=np.uint8)].reshape(-1)[:n]
