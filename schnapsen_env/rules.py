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

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from schnapsen_env.cards import SUIT_LETTERS, bits_of, bits_to_array, iter_bits
from schnapsen_env.errors import IllegalActionError, InvalidPositionError
from schnapsen_env.position import load_position, to_position
from schnapsen_env.ruleset import RuleSet, SpecialAction
from schnapsen_env.scoring import CLAIM_TARGET, RESULT_REASONS, Reason, Result, Trick, game_value
from schnapsen_env.seats import PLAYERS, seat_of

# Offsets of the non-play actions after the card ids, as plain ints for the hot paths.
_EXCHANGE, _CLOSE, _CLAIM = int(SpecialAction.EXCHANGE), int(SpecialAction.CLOSE), int(SpecialAction.CLAIM)

#: The fields of a hand, declared once, as ``(name, per_seat, default)``: ``per_seat`` fields are two-element
#: lists indexed by seat, the others hold immutable values. :data:`PLAY_FIELDS` are the fields an action
#: changes (:meth:`GameState.push` saves them, :meth:`GameState.pop` restores them); :data:`HAND_FIELDS` are
#: set when the hand is dealt or loaded and never change. ``__slots__``, construction, undo, copying, equality
#: and :meth:`GameState.from_fields` are derived from these tables; so are the compiled core's conversions
#: (:func:`schnapsen_env.state_layout.from_game_state`). Besides them a state keeps ``history`` (its completed tricks),
#: ``deal`` and ``actions`` (its record) and caches derived from the fields (:meth:`GameState._derive`).
PLAY_FIELDS = (
    ("hands", True, 0), ("won", True, 0), ("card_points", True, 0), ("tricks", True, 0),
    ("marriage_points", True, 0), ("marriage_suits", True, 0), ("bonus", True, 0), ("known", True, 0),
    ("stock", False, ()), ("leader", False, 0), ("to_move", False, 0), ("table", False, -1),
    ("closed_by", False, -1), ("closing_snapshot", False, None), ("announced", False, -1),
    ("exchanged", False, False), ("result", False, None),
)
HAND_FIELDS = (("trump", False, 0), ("dealer", False, 1), ("match_points", True, 0), ("carry", False, 0))
FIELDS = PLAY_FIELDS + HAND_FIELDS
_FIELD_NAMES = frozenset(name for name, _, _ in FIELDS) | {"history"}


def _check_seat(seat: Any, what: str) -> None:
    """Raise ValueError unless ``seat`` is a seat index, 0 or 1."""
    if isinstance(seat, bool) or seat not in (0, 1):
        raise ValueError(f"{what}({seat!r}): expected a seat, 0 or 1")


def _undo_functions() -> tuple[Callable[[GameState], tuple], Callable[[GameState, tuple], None]]:
    """``(save, restore)`` for :data:`PLAY_FIELDS`, generated from the table (as :mod:`dataclasses` generates
    ``__init__``) so that the hot path of search reads and writes the fields inline."""
    parts = [f"s.{name}[0], s.{name}[1]" if per_seat else f"s.{name}" for name, per_seat, _ in PLAY_FIELDS]
    fields = ", ".join(parts)
    source = (f"def save(s):\n    return ({fields}, len(s.history))\n"
              f"def restore(s, saved):\n    ({fields}, n_history) = saved\n    del s.history[n_history:]\n")
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 (source built above from the constant field table only)
    return namespace["save"], namespace["restore"]


_save, _restore = _undo_functions()


class GameState:
    """One hand in progress (RULES.md sections 2–4).

    Public read-only attributes (seats are 0/1, cards are card ids, card sets bit sets):

    * ``rules``: the :class:`RuleSet`.
    * ``hands``, ``won``: per seat, bit sets of the hand and of the cards in its tricks.
    * ``card_points``, ``tricks``: per seat, card points in tricks and number of tricks won.
    * ``marriage_points``: per seat, points of all marriages announced (pending or not, R14).
    * ``marriage_suits``: per seat, a 4-bit set of the suits announced.
    * ``bonus``: per seat, the last-trick bonus received (R66-7).
    * ``stock``: tuple of card ids, top first, turn-up last (still listed after closing, R19).
    * ``trump``: suit index. ``leader``, ``to_move``, ``dealer``: seats.
    * ``table``: card id led in the unfinished trick, or -1.
    * ``closed_by``: seat or -1. ``closing_snapshot``: ``(points, tricks)`` of the non-closer, or None.
    * ``announced``: suit announced this turn whose card is not yet led, or -1.
    * ``exchanged``: the player to lead exchanged earlier this turn.
    * ``known``: per seat, bit set of that seat's hand cards the other player knows (R27).
    * ``history``: list of :class:`Trick`, the most recent tricks (all of them unless the state was loaded
      from a position without ``history``; count tricks with ``tricks``). ``result``: :class:`Result` or None.
    * ``match_points``: game points of each seat before this hand; ``carry``: tie carry (R66-10).
    * ``deal``: ``(deck order, dealer)`` the hand was dealt from (card ids, R2), or None for a state loaded from a
      position or built from fields. ``actions``: the action ids pushed since then, in order (undone by
      :meth:`pop`), as python-chess keeps ``move_stack``; a deal and its actions are the hand's game record.

    The fields are declared once, in :data:`FIELDS`.
    """

    __slots__ = ("rules", "deck") + tuple(name for name, _, _ in FIELDS) + (
        "history", "deal", "actions", "_stack", "_exchange_card")

    # The types of the FIELDS for the type checker: __init__ sets the fields from the table with setattr, which
    # mypy cannot follow. Bare annotations create no class attributes, so they do not clash with __slots__; keep
    # them in step with FIELDS (tests/test_lint.py checks that they name the same fields).
    hands: list[int]
    won: list[int]
    card_points: list[int]
    tricks: list[int]
    marriage_points: list[int]
    marriage_suits: list[int]
    bonus: list[int]
    known: list[int]
    stock: tuple[int, ...]
    leader: int
    to_move: int
    table: int
    closed_by: int
    closing_snapshot: tuple[int, int] | None
    announced: int
    exchanged: bool
    result: Result | None
    trump: int
    dealer: int
    match_points: list[int]
    carry: int

    def __init__(self, rules: RuleSet | None = None) -> None:
        """An empty state; use :meth:`new_hand`, :meth:`from_deck`, :meth:`from_position` or :meth:`from_fields`."""
        self.rules = rules if rules is not None else RuleSet.make()
        self.deck = self.rules.deck
        for name, per_seat, default in FIELDS:
            setattr(self, name, [default, default] if per_seat else default)
        self.history: list[Trick] = []
        self.deal: tuple[tuple[int, ...], int] | None = None
        self.actions: list[int] = []
        self._stack: list[tuple] = []
        self._derive()

    def _derive(self) -> None:
        """Recompute the caches derived from the fields (the exchange card of the trump suit); every builder
        calls it after setting the fields."""
        self._exchange_card = self.rules.exchange_card(self.trump)

    @classmethod
    def from_fields(cls, rules: RuleSet, **fields: Any) -> GameState:
        """A state with the given fields (names of :data:`FIELDS`, plus ``history``); the others keep their
        defaults. Per-seat fields take two-element sequences. The builder behind positions, determinisation and
        the compiled core's conversion: it checks names and per-seat sizes only, so use :meth:`from_position`
        for input that needs validating.

        Raises:
            TypeError: an unknown field name. ValueError: a per-seat field that does not hold two values.
        """
        unknown = sorted(set(fields) - _FIELD_NAMES)
        if unknown:
            raise TypeError(f"unknown GameState field(s) {unknown}: expected names of {sorted(_FIELD_NAMES)}")
        s = cls(rules)
        for name, per_seat, _ in FIELDS:
            if name in fields:
                value = fields[name]
                if per_seat:
                    value = list(value)
                    if len(value) != 2:
                        raise ValueError(f"field {name!r} holds one value per seat: expected 2, got {len(value)}")
                elif name == "stock":
                    value = tuple(value)  # the state's stock is a tuple (equality, exchange), whatever sequence came
                setattr(s, name, value)
        if "history" in fields:
            s.history = list(fields["history"])
        s._derive()
        return s

    # ------------------------------------------------------------------ dealing
    @classmethod
    def from_deck(cls, rules: RuleSet, deck: list[str], dealer: str | int) -> GameState:
        """Deal a hand from a full deck order (R2, R66-2).

        Args:
            rules: the rule set.
            deck: card codes c0…c19 (c0…c23 for ``sixtysix24``, c0…c9 for ``schnapsen10``), each card once.
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
                 dealer: int | None = None) -> GameState:
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
    def _deal(cls, rules: RuleSet, ids: list[int], dealer: int) -> GameState:
        hs = rules.hand_size
        second = hs - 3
        non_dealer = 1 - dealer
        hands = [0, 0]
        hands[non_dealer] = bits_of(ids[0:3] + ids[7:7 + second])
        hands[dealer] = bits_of(ids[3:6] + ids[7 + second:7 + 2 * second])
        s = cls.from_fields(rules, hands=hands, stock=tuple(ids[7 + 2 * second:]) + (ids[6],),
                            trump=rules.deck.suit[ids[6]], dealer=dealer, leader=non_dealer, to_move=non_dealer)
        s.deal = (tuple(ids), dealer)
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
    def legal_bits(self) -> int:
        """Legal actions as an int bit set (bit ``a`` set = action id ``a`` legal). 0 after the end."""
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
            same = hand & d.suit_bits[d.suit[led]]
            if same:
                if rules.must_head:  # R10(a) / R66-5
                    head = same & d.higher[led]
                    return head if head else same
                return same
            trumps = hand & d.suit_bits[self.trump]  # R10(b)
            return trumps if trumps else hand  # R10(c)
        # Leader (R3, R4, R12–R20).
        n = d.size
        claim = 0
        if rules.claim_mode == "manual":  # R21
            if (self.announced >= 0 or self.tricks[0] + self.tricks[1]) and (  # W2 / W1 (R20)
                    rules.false_claim != "reject" or self.counted(me) >= rules.claim_target):  # R21a
                claim = 1 << (n + _CLAIM)
        pairs = d.pair_bits
        if self.announced >= 0:
            return pairs[self.announced] | claim  # R4
        bits = hand
        if self.marriage_window_open():
            automatic = rules.marriage_declaration == "automatic"
            for s in range(4):
                kq = pairs[s]
                if hand & kq == kq:
                    bits |= 1 << (n + SpecialAction.MARRIAGE_C + s)
                    if automatic:  # R12: playing K or Q of a held pair *is* the announcement
                        bits &= ~kq
        if self.closed_by < 0 and self.stock:
            size = len(self.stock)
            if size >= rules.exchange_min_stock and hand >> self._exchange_card & 1:  # R16, R66-3
                bits |= 1 << (n + _EXCHANGE)
            if size >= rules.close_min_stock:  # R18, R66-4
                bits |= 1 << (n + _CLOSE)
        return bits | claim

    def marriage_window_open(self) -> bool:
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
        return list(iter_bits(self.legal_bits()))

    def action_mask(self) -> np.ndarray:
        """Legal actions as ``np.ndarray`` of shape ``(n_actions,)``, dtype int8, 1 = legal."""
        return bits_to_array(self.legal_bits(), self.rules.n_actions)

    def is_legal(self, action: int | str) -> bool:
        """Whether an action (id or name) is legal now; unknown names and ids are simply not legal."""
        if isinstance(action, str):
            if action not in self.rules.action_names:
                return False
            action = self.rules.action_names.index(action)
        if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
            return False
        return 0 <= action < self.rules.n_actions and bool(self.legal_bits() >> int(action) & 1)

    def legal_action_names(self) -> list[str]:
        """Names of the legal actions, in action-id order."""
        names = self.rules.action_names
        return [names[a] for a in iter_bits(self.legal_bits())]

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
        if not self.legal_bits() >> action_id & 1:
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
        """Apply an action id **without** checking legality (search code checks :meth:`legal_bits` first);
        :meth:`pop` undoes it.

        Raises:
            ValueError: ``action`` is not an action id of this ruleset (``0 <= action < n_actions``); the state
                is unchanged.
        """
        if not 0 <= action < self.rules.n_actions:
            raise ValueError(f"push({action!r}): not an action id of {self.rules.name}, expected 0.."
                             f"{self.rules.n_actions - 1} (use step() for checked input)")
        self._stack.append(_save(self))
        self.actions.append(action)
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
        elif action < n + _EXCHANGE:  # marriage (R12)
            suit = action - n - SpecialAction.MARRIAGE_C
            self.marriage_suits[me] |= 1 << suit
            self.marriage_points[me] += self.rules.marriage_points(1 << suit, self.trump)
            self.announced = suit
            self.known[me] |= self.deck.pair_bits[suit]  # both cards shown (R27)
            if self.rules.claim_mode == "auto" and self.counted(me) >= self.rules.claim_target:  # R21 (W2)
                self._claim(me)
        elif action == n + _EXCHANGE:  # exchange (R15–R17)
            jack = self._exchange_card
            old = self.stock[-1]
            self.hands[me] = (self.hands[me] & ~(1 << jack)) | (1 << old)
            self.known[me] |= 1 << old  # R27: the old turn-up is known to be in the exchanger's hand
            self.stock = self.stock[:-1] + (jack,)
            self.exchanged = True
        elif action == n + _CLOSE:  # close (R18, R19)
            other = 1 - me
            self.closed_by = me
            self.closing_snapshot = (self.counted(other), self.tricks[other])
        else:  # claim (R20)
            self._claim(me)

    def pop(self) -> None:
        """Undo the last :meth:`push`. Raises IndexError when there is nothing to undo."""
        _restore(self, self._stack.pop())
        self.actions.pop()

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
        elif rules.claim_mode == "auto" and self.counted(winner) >= rules.claim_target:  # R21 (W1)
            self._claim(winner)

    # ------------------------------------------------------------------ scoring
    def _snapshot_value(self) -> int:
        """v(snap) with the closing snapshot, or O's state at the end (``closing_reference``, R23a)."""
        if self.rules.closing_reference == "at_end":
            other = 1 - self.closed_by
            return self.rules.game_value(self.counted(other), self.tricks[other])
        snapshot = self.closing_snapshot
        assert snapshot is not None  # closed (closed_by >= 0, R19): the close stored the snapshot
        points, tricks = snapshot
        return self.rules.game_value(points, tricks)

    def _failed_close_value(self) -> int:
        """max(2, v(snap)), or 3 under ``failed_close_value="flat3"`` (R23, R23a)."""
        if self.rules.failed_close_value == "flat3":
            return 3
        return max(2, self._snapshot_value())

    def _claim(self, x: int) -> None:
        """Claim 66 by seat ``x`` (R20–R23)."""
        o = 1 - x
        rules = self.rules
        correct = self.counted(x) >= rules.claim_target
        false_claim = rules.false_claim
        if self.closed_by < 0:  # R22
            if correct:
                self.result = Result(x, rules.game_value(self.counted(o), self.tricks[o]), Reason.CLAIM)
            elif false_claim == "pagat":
                self.result = Result(o, 3 if self.tricks[o] == 0 else 2, Reason.FALSE_CLAIM)
            else:  # "mirror" (and "reject", where the action is never offered)
                self.result = Result(o, rules.game_value(self.counted(o), self.tricks[o]), Reason.FALSE_CLAIM)
            return
        closer = self.closed_by  # R23
        if x == closer:
            if correct:
                self.result = Result(x, self._snapshot_value(), Reason.CLAIM)
            else:
                self.result = Result(o, self._failed_close_value(), Reason.FALSE_CLAIM)
        elif correct:
            self.result = Result(x, self._failed_close_value(), Reason.CLAIM)
        elif false_claim == "pagat":
            self.result = Result(closer, 3 if self.tricks[closer] == 0 else 2, Reason.FALSE_CLAIM)
        else:
            self.result = Result(closer, self._failed_close_value(), Reason.FALSE_CLAIM)

    def _end_of_hand(self, w: int) -> None:
        """All cards played; ``w`` took the last trick (R20 W3, R22, R23, R66-10)."""
        rules = self.rules
        if self.counted(w) >= rules.claim_target:  # W3: the engine claims for the last-trick winner
            self._claim(w)
            return
        o = 1 - w
        if self.closed_by < 0:
            if rules.shape.family == "schnapsen":  # R22 (schnapsen20, schnapsen10)
                value = 1 if rules.unclaimed_last_trick_value == "one" else rules.game_value(
                    self.counted(o), self.tricks[o])
                self.result = Result(w, value, Reason.LAST_TRICK)
            elif self.counted(o) >= rules.claim_target:  # R66-10
                self.result = Result(o, rules.game_value(self.counted(w), self.tricks[w]), Reason.COUNT)
            elif rules.tie == "last_trick":
                self.result = Result(w, 1, Reason.LAST_TRICK)
            else:
                self.result = Result(None, 0, Reason.TIE)
            return
        closer = self.closed_by  # R23 without a claim
        if rules.closed_hand_end == "closer_score" and self.counted(closer) >= rules.claim_target:
            self.result = Result(closer, self._snapshot_value(), Reason.CLOSED_HAND)
        else:
            self.result = Result(1 - closer, self._failed_close_value(), Reason.CLOSED_HAND)

    def result_of_claim(self, seat: int) -> Result:
        """The :class:`Result` a claim of 66 by ``seat`` would give now (R20-R23a; correct or false), without
        changing the state.

        Raises:
            ValueError: ``seat`` is not 0 or 1.
        """
        _check_seat(seat, "result_of_claim")
        return self._result_on_a_copy("_claim", seat)

    def result_of_last_trick(self, winner: int) -> Result:
        """The :class:`Result` of a played-out hand whose last trick ``winner`` took (R20 W3, R22, R23,
        R66-10), computed from the current points without changing the state.

        Raises:
            ValueError: ``winner`` is not 0 or 1.
        """
        _check_seat(winner, "result_of_last_trick")
        return self._result_on_a_copy("_end_of_hand", winner)

    def _result_on_a_copy(self, end: str, seat: int) -> Result:
        """The result that the method ``end`` (one that ends the hand for ``seat``) gives on a copy with no result."""
        t = self.copy()
        t.result = None
        getattr(t, end)(seat)
        # the end method always sets a result; mypy still sees the None assigned above (a call does not undo narrowing)
        return cast(Result, t.result)

    # ------------------------------------------------------------------ copying
    def copy(self) -> GameState:
        """An independent copy (the undo stack included)."""
        s = GameState.__new__(GameState)
        for name in GameState.__slots__:
            value = getattr(self, name)
            setattr(s, name, list(value) if isinstance(value, list) else value)
        return s

    def _key(self) -> tuple:
        """The fields (:data:`FIELDS`) and history, per-seat lists as tuples: what equality compares."""
        return (self.rules, tuple(self.history)) + tuple(
            tuple(getattr(self, name)) if per_seat else getattr(self, name) for name, per_seat, _ in FIELDS)

    def __eq__(self, other: object) -> bool:
        """Value equality of the game: the fields and the history (not the record of ``deal`` and ``actions``,
        nor the undo stack)."""
        if not isinstance(other, GameState):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, the idiom mypy types as a clash with object

    def __repr__(self) -> str:
        p = self.position()
        return (f"GameState({self.rules.name}, trump={p['trump']}, to_move={PLAYERS[self.to_move]}, "
                f"hands={p['hands']}, stock={p['stock']}, table={p['table']}, points={p['points']}, "
                f"result={p['result']})")

    # ------------------------------------------------------------------ positions
    def position(self) -> dict[str, Any]:
        """The JSON-compatible position dict (the keys every position holds plus API.md's optional keys;
        :func:`schnapsen_env.position.to_position`). :meth:`from_position` of the result gives back an equal
        state (round trip exact). Card lists are in card-id order except ``stock`` (top first, turn-up last)
        and ``history`` (play order)."""
        return to_position(self)

    @classmethod
    def from_position(cls, rules: RuleSet, position: dict[str, Any]) -> GameState:
        """Load a position dict (see :meth:`position` for the keys;
        :func:`schnapsen_env.position.load_position`).

        Raises:
            InvalidPositionError: an unknown or missing key, an unknown card code, a missing or
                duplicate card, an odd ``won`` size, impossible hand or stock sizes, a turn-up that is not
                of the trump suit, inconsistent closing, marriage, history, known, points or result data.
                The message names the key and what was expected.
        """
        return load_position(cls, rules, position)


__all__ = ["CLAIM_TARGET", "FIELDS", "HAND_FIELDS", "PLAY_FIELDS", "PLAYERS", "RESULT_REASONS", "GameState",
           "Reason", "Result", "Trick", "game_value", "bits_to_array", "seat_of"]
