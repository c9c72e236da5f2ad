"""A numpy-batched rules engine: N hands as arrays, stepped together (for :mod:`schnapsen_env.vector`).

:class:`BatchState` holds N hands of one :class:`~schnapsen_env.ruleset.RuleSet` in ``(N, ...)`` numpy
arrays and implements exactly the rules of :class:`~schnapsen_env.rules.GameState` (RULES.md R1–R27,
R66-1–R66-11 and every knob of section 5) with array operations over the batch: legality
(:meth:`BatchState.legal_masks`), one action per row (:meth:`BatchState.step`), the observation of
:func:`schnapsen_env.encoding.observation` (:meth:`BatchState.observations_into`) and the omniscient
state vector (:meth:`BatchState.state_vectors`). Rows convert to and from :class:`GameState`
(:meth:`BatchState.to_game_state`, :meth:`BatchState.from_game_states`, :meth:`BatchState.set_row`), so a
row can always be checked against the reference engine (``tests/test_vector_exact.py`` does so in
lockstep for both rulesets and every knob value).

Representation (seats 0/1; card sets are int64 bit masks over card ids, as in ``GameState``):

* ``hands``, ``won``, ``known`` ``(N, 2)``; ``led``/``followed`` ``(N, 2)``: the cards each seat led /
  followed with in the tricks of ``history`` (the observation's lead and follow planes);
* ``card_points``, ``tricks``, ``marriage_points``, ``marriage_suits``, ``bonus``, ``match_points`` ``(N, 2)``;
* ``stock`` ``(N, S0)`` card ids with ``stock_top``/``stock_end`` ``(N,)``: the stock is
  ``stock[i, stock_top[i]:stock_end[i]]``, top first, turn-up last (``S0`` = initial stock size);
* ``trump``, ``leader``, ``to_move``, ``dealer``, ``table`` (-1 = empty), ``closed_by`` (-1), ``snap_points``,
  ``snap_tricks`` (the closing snapshot), ``announced`` (-1), ``exchanged`` (bool), ``carry`` ``(N,)``;
* ``history`` ``(N, n_tricks, 4)`` rows ``(leader, lead, follow, winner)`` with ``history_len`` ``(N,)``;
* ``over`` (bool), ``res_winner`` (-1 = none / tie), ``res_points``, ``res_reason`` (index into
  :data:`~schnapsen_env.rules.RESULT_REASONS`) ``(N,)``.

:meth:`BatchState.step` does not check legality (like ``GameState.push``); the caller validates with
:meth:`BatchState.legal_masks` first.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from schnapsen_env import encoding
from schnapsen_env.rules import CLAIM_TARGET, RESULT_REASONS, GameState, Result, Trick
from schnapsen_env.ruleset import RuleSet

_I64 = np.int64
_REASON = {name: k for k, name in enumerate(RESULT_REASONS)}
_CLAIM, _FALSE_CLAIM, _LAST_TRICK, _CLOSED_HAND, _COUNT, _TIE = (_REASON[r] for r in RESULT_REASONS)


def _game_value(points: np.ndarray, tricks: np.ndarray) -> np.ndarray:
    """Vectorised ``game_value``: 3 if no trick, 2 below 33 points, else 1 (RULES.md section 1)."""
    return np.where(tricks == 0, 3, np.where(points < 33, 2, 1))


_FAST_DRAWS: list[bool] = []


def _fast_draws_ok() -> bool:
    """Whether ``shuffle(arange(n))`` and ``random(dtype=float32) >= 0.5`` draw exactly what ``permutation(n)``
    and ``integers(2)`` draw with the installed numpy (same values, same generator state); checked once."""
    if not _FAST_DRAWS:
        ok = True
        for seed in range(8):
            a, b = np.random.default_rng(seed), np.random.default_rng(seed)
            for n in (20, 24, 20, 24, 20):
                p, d = a.permutation(n), int(a.integers(2))
                q = np.arange(n)
                b.shuffle(q)
                ok &= bool(np.array_equal(p, q)) and d == int(b.random(None, np.float32) >= 0.5)
            ok &= a.bit_generator.state == b.bit_generator.state
        _FAST_DRAWS.append(ok)
    return _FAST_DRAWS[0]


def bits_to_array(bits: np.ndarray, width: int, out: np.ndarray | None = None) -> np.ndarray:
    """Int bit masks ``(N,)`` (< 2**32) -> ``(N, width)`` 0/1 array (int8 unless ``out`` is given)."""
    b = np.ascontiguousarray(bits, dtype="<u4").view(np.uint8).reshape(len(bits), 4)
    unpacked = np.unpackbits(b, axis=1, bitorder="little")[:, :width]
    if out is None:
        return unpacked.view(np.int8)
    np.copyto(out, unpacked, casting="unsafe")
    return out


class BatchState:
    """N hands of one rule set as numpy arrays (see the module docstring for the fields).

    Args:
        rules: the rule set shared by all rows.
        num: N >= 1. Rows start empty: deal them with :meth:`deal` or :meth:`set_row`.
    """

    def __init__(self, rules: RuleSet, num: int) -> None:
        self.rules = rules
        self.num = int(num)
        d = rules.deck
        self.deck = d
        n = self.n = d.size
        self.n_actions = rules.n_actions
        self.n_tricks = rules.n_tricks
        self.stock0 = n - 2 * rules.hand_size
        self.obs_size = encoding.obs_size(rules)
        # ---- lookup tables (per card id)
        self.SUIT = np.array(d.suit, dtype=_I64)
        self.RANK = np.array(d.rank, dtype=_I64)
        self.PTS = np.array(d.points, dtype=_I64)
        self.BIT = np.left_shift(1, np.arange(n, dtype=_I64))
        self.SUIT_MASK = np.array(d.suit_mask, dtype=_I64)
        self.SUIT_MASK_OF = self.SUIT_MASK[self.SUIT]
        self.HIGHER = np.array(d.higher, dtype=_I64)
        self.KQ = np.array([(1 << d.card(s, 2)) | (1 << d.card(s, 3)) for s in range(4)], dtype=_I64)
        self.KQ_ANN = np.concatenate([self.KQ, [0]])  # index announced (-1 -> 0)
        self.K_ALL = int(sum(1 << d.card(s, 2) for s in range(4)))
        self.EXCHANGE_CARD = np.array([d.card(s, rules.exchange_rank_index) for s in range(4)], dtype=_I64)
        # FOLLOW_WINS[lead, follow, trump]: the follower wins the trick (R6)
        ls, fs = self.SUIT[:, None, None], self.SUIT[None, :, None]
        lr, fr = self.RANK[:, None, None], self.RANK[None, :, None]
        tr = np.arange(4)[None, None, :]
        self.FOLLOW_WINS = np.where(ls == fs, fr < lr, fs == tr)
        self.MARRIAGE_VALUE = np.where(np.arange(4)[:, None] == np.arange(4)[None, :], 40, 20)  # [suit, trump]
        # ---- per-row state
        N = self.num
        self.hands = np.zeros((N, 2), dtype=_I64)
        # The per-seat arrays that a deal zeroes share one block (one fancy assignment resets a row).
        self._zeroed = np.zeros((10, N, 2), dtype=_I64)
        (self.won, self.known, self.led, self.followed, self.card_points, self.tricks, self.marriage_points,
         self.marriage_suits, self.bonus, self.match_points) = self._zeroed
        self.stock = np.zeros((N, max(self.stock0, 1)), dtype=_I64)
        self.stock_top = np.zeros(N, dtype=_I64)
        self.stock_end = np.zeros(N, dtype=_I64)
        self.trump = np.zeros(N, dtype=_I64)
        self.leader = np.zeros(N, dtype=_I64)
        self.to_move = np.zeros(N, dtype=_I64)
        self.dealer = np.ones(N, dtype=_I64)
        self.table = np.full(N, -1, dtype=_I64)
        self.closed_by = np.full(N, -1, dtype=_I64)
        self.snap_points = np.zeros(N, dtype=_I64)
        self.snap_tricks = np.zeros(N, dtype=_I64)
        self.announced = np.full(N, -1, dtype=_I64)
        self.exchanged = np.zeros(N, dtype=bool)
        self.carry = np.zeros(N, dtype=_I64)
        self.history = np.zeros((N, self.n_tricks, 4), dtype=_I64)
        self.history_len = np.zeros(N, dtype=_I64)
        self.over = np.zeros(N, dtype=bool)
        self.res_winner = np.full(N, -1, dtype=_I64)
        self.res_points = np.zeros(N, dtype=_I64)
        self.res_reason = np.full(N, -1, dtype=_I64)
        self._arange = np.arange(N, dtype=_I64)
        self._arange2 = 2 * self._arange
        self._stock_base = self._arange * self.stock.shape[1]
        self._match_any = False
        self._claims: list[tuple[np.ndarray, np.ndarray]] = []  # (rows, seats) to resolve at the end of step
        # observations_into packs the 11 card planes (plane k at bits k*n..) and every 0/1 scalar entry into
        # 64-bit words per row, unpacks all words at once, then writes the few other scalar entries.
        lay = encoding.layout(rules)
        self._lay = {name: sl.start for name, sl in lay.items()}
        starts = [k * n for k in range(11)]
        self._n_words = (self.obs_size + 63) // 64
        self._plane_shift = np.array([s % 64 for s in starts], dtype=np.uint64)[:, None]
        first = [min(k for k in range(11) if starts[k] // 64 == w) for w in range(starts[-1] // 64 + 1)]
        self._word_groups = list(zip(first, first[1:] + [11]))  # planes starting in word w: range(a, b)
        self._straddle = [(k, s // 64 + 1, np.uint64(64 - s % 64)) for k, s in enumerate(starts) if s % 64 + n > 64]
        self._flag_word = lay["trump"].start // 64
        for name in ("trump", "closed", "closer", "marriages", "exchanged", "announced", "leader", "dealer"):
            assert lay[name].start // 64 == (lay[name].stop - 1) // 64 == self._flag_word, name
        self._flag_shift = {name: lay[name].start - 64 * self._flag_word for name in
                            ("trump", "closed", "closer", "marriages", "exchanged", "announced", "leader", "dealer")}

    # ------------------------------------------------------------------ dealing
    def deal(self, rows: np.ndarray, orders: np.ndarray, dealers: np.ndarray) -> None:
        """Deal fresh hands into ``rows`` from deck orders ``(k, n)`` and dealer seats ``(k,)`` (R1, R2, R66-2),
        exactly as ``GameState._deal``. Match points and carry are reset to 0."""
        rows = np.asarray(rows, dtype=_I64)
        if len(rows) == 0:
            return
        orders = np.asarray(orders, dtype=_I64)
        dealers = np.asarray(dealers, dtype=_I64)
        second = self.rules.hand_size - 3
        bits = self.BIT[orders]
        hand_n = np.bitwise_or.reduce(bits[:, 0:3], axis=1) | np.bitwise_or.reduce(bits[:, 7:7 + second], axis=1)
        hand_d = np.bitwise_or.reduce(bits[:, 3:6], axis=1) | np.bitwise_or.reduce(
            bits[:, 7 + second:7 + 2 * second], axis=1)
        nd = 1 - dealers
        hands = np.empty((len(rows), 2), dtype=_I64)
        hands[np.arange(len(rows)), nd] = hand_n
        hands[np.arange(len(rows)), dealers] = hand_d
        self.hands[rows] = hands
        self._zeroed[:, rows] = 0
        s0 = self.stock0
        self.stock[rows, :s0 - 1] = orders[:, 7 + 2 * second:]
        self.stock[rows, s0 - 1] = orders[:, 6]
        self.stock_top[rows] = 0
        self.stock_end[rows] = s0
        self.trump[rows] = self.SUIT[orders[:, 6]]
        self.dealer[rows] = dealers
        self.leader[rows] = nd
        self.to_move[rows] = nd
        self.table[rows] = -1
        self.closed_by[rows] = -1
        self.snap_points[rows] = 0
        self.snap_tricks[rows] = 0
        self.announced[rows] = -1
        self.exchanged[rows] = False
        self.carry[rows] = 0
        self.history_len[rows] = 0
        self.over[rows] = False
        self.res_winner[rows] = -1
        self.res_points[rows] = 0
        self.res_reason[rows] = -1

    def new_hands(self, rows: Sequence[int], rngs: Sequence[np.random.Generator]) -> None:
        """Deal a new hand into each row with its own generator, drawing exactly as
        ``GameState.new_hand(rules, rng)``: ``rng.permutation(n)`` then ``rng.integers(2)`` for the dealer.

        Two equivalent, faster calls are used (same values, same generator state afterwards; a test checks
        this): ``rng.shuffle`` of ``arange(n)`` is what ``permutation(n)`` does, and ``integers(2)`` is the top
        bit of one 32-bit draw (Lemire's method with range 2 never rejects), which
        ``random(dtype=float32) >= 0.5`` reads from the same single draw. This is checked once against the
        installed numpy (:func:`_fast_draws_ok`); if it ever differs, the plain calls are used.
        """
        if len(rows) == 0:
            return
        n = self.n
        orders = np.empty((len(rows), n), dtype=_I64)
        dealers = []
        if _fast_draws_ok():
            orders[:] = np.arange(n)
            f32 = np.float32
            for row, rng in zip(orders, rngs):
                rng.shuffle(row)
                dealers.append(rng.random(None, f32) >= 0.5)
        else:  # a numpy whose streams differ: draw as GameState.new_hand does
            for row, rng in zip(orders, rngs):
                row[:] = rng.permutation(n)
                dealers.append(rng.integers(2))
        self.deal(np.asarray(rows, dtype=_I64), orders, np.array(dealers, dtype=_I64))

    # ------------------------------------------------------------------ GameState conversion
    def set_row(self, i: int, g: GameState) -> None:
        """Load row ``i`` from a :class:`GameState` of the same rule set (its undo stack is not kept)."""
        if g.rules != self.rules:
            raise ValueError(f"row {i}: state has rules {g.rules}, batch has {self.rules}")
        for p in (0, 1):
            self.hands[i, p] = g.hands[p]
            self.won[i, p] = g.won[p]
            self.known[i, p] = g.known[p]
            self.card_points[i, p] = g.card_points[p]
            self.tricks[i, p] = g.tricks[p]
            self.marriage_points[i, p] = g.marriage_points[p]
            self.marriage_suits[i, p] = g.marriage_suits[p]
            self.bonus[i, p] = g.bonus[p]
            self.match_points[i, p] = g.match_points[p]
        size = len(g.stock)
        if size > self.stock.shape[1]:
            raise ValueError(f"row {i}: stock of {size} cards, at most {self.stock.shape[1]} fit")
        self.stock[i] = 0
        self.stock[i, :size] = g.stock
        self.stock_top[i] = 0
        self.stock_end[i] = size
        self.trump[i] = g.trump
        self.leader[i] = g.leader
        self.to_move[i] = g.to_move
        self.dealer[i] = g.dealer
        self.table[i] = g.table
        self.closed_by[i] = g.closed_by
        snap = g.closing_snapshot if g.closing_snapshot is not None else (0, 0)
        self.snap_points[i], self.snap_tricks[i] = snap
        self.announced[i] = g.announced
        self.exchanged[i] = g.exchanged
        self.carry[i] = g.carry
        if g.carry or any(g.match_points):
            self._match_any = True
        hist = g.history[-self.n_tricks:] if g.history else []
        self.history_len[i] = len(hist)
        led, followed = [0, 0], [0, 0]
        for k, t in enumerate(hist):
            self.history[i, k] = (t.leader, t.lead, t.follow, t.winner)
        for t in g.history:
            led[t.leader] |= 1 << t.lead
            followed[1 - t.leader] |= 1 << t.follow
        self.led[i] = led
        self.followed[i] = followed
        r = g.result
        self.over[i] = r is not None
        self.res_winner[i] = -1 if r is None or r.winner is None else r.winner
        self.res_points[i] = 0 if r is None else r.game_points
        self.res_reason[i] = -1 if r is None else _REASON[r.reason]

    @classmethod
    def from_game_states(cls, states: Sequence[GameState]) -> "BatchState":
        """A batch holding ``states`` (all of one rule set) as its rows, in order."""
        if not states:
            raise ValueError("from_game_states needs at least one state")
        b = cls(states[0].rules, len(states))
        for i, g in enumerate(states):
            b.set_row(i, g)
        return b

    def result(self, i: int) -> Result | None:
        """The :class:`Result` of row ``i``, or None while the hand runs."""
        if not self.over[i]:
            return None
        w = int(self.res_winner[i])
        return Result(None if w < 0 else w, int(self.res_points[i]), RESULT_REASONS[int(self.res_reason[i])])

    def results(self, rows: np.ndarray) -> list[Result]:
        """The :class:`Result` of each of ``rows`` (rows that are over)."""
        names = RESULT_REASONS
        return [Result(None if w < 0 else w, p, names[k]) for w, p, k in
                zip(self.res_winner[rows].tolist(), self.res_points[rows].tolist(), self.res_reason[rows].tolist())]

    def to_game_state(self, i: int) -> GameState:
        """Row ``i`` as an independent :class:`GameState` (equal to the reference engine's state)."""
        g = GameState(self.rules)
        i = int(i)
        pair = lambda a: [int(a[i, 0]), int(a[i, 1])]  # noqa: E731
        g.hands, g.won, g.known = pair(self.hands), pair(self.won), pair(self.known)
        g.card_points, g.tricks = pair(self.card_points), pair(self.tricks)
        g.marriage_points, g.marriage_suits = pair(self.marriage_points), pair(self.marriage_suits)
        g.bonus, g.match_points = pair(self.bonus), pair(self.match_points)
        g.stock = tuple(int(c) for c in self.stock[i, self.stock_top[i]:self.stock_end[i]])
        g.trump = int(self.trump[i])
        g.leader = int(self.leader[i])
        g.to_move = int(self.to_move[i])
        g.dealer = int(self.dealer[i])
        g.table = int(self.table[i])
        g.closed_by = int(self.closed_by[i])
        g.closing_snapshot = (int(self.snap_points[i]), int(self.snap_tricks[i])) if g.closed_by >= 0 else None
        g.announced = int(self.announced[i])
        g.exchanged = bool(self.exchanged[i])
        g.carry = int(self.carry[i])
        g.history = [Trick(*(int(x) for x in self.history[i, k])) for k in range(int(self.history_len[i]))]
        g.result = self.result(i)
        g._exchange_card = self.deck.card(g.trump, self.rules.exchange_rank_index)
        return g

    # ------------------------------------------------------------------ scores
    def counted(self) -> np.ndarray:
        """Counted points ``(N, 2)`` (RULES.md section 1, R14, R66-7)."""
        return self.card_points + self.bonus + np.where(self.tricks > 0, self.marriage_points, 0)

    def _counted_at(self, flat: np.ndarray) -> np.ndarray:
        """Counted points at flat (row * 2 + seat) indices."""
        tr = self.tricks.ravel()[flat]
        return (self.card_points.ravel()[flat] + self.bonus.ravel()[flat]
                + np.where(tr > 0, self.marriage_points.ravel()[flat], 0))

    # ------------------------------------------------------------------ legality
    def legal_masks(self) -> np.ndarray:
        """Legal actions of every row as int64 bit masks ``(N,)`` (bit ``a`` = action id ``a``); 0 when over.
        Equals ``GameState.legal_mask()`` row by row (R3–R5, R9–R21a)."""
        rules = self.rules
        n = self.n
        me_flat = self._arange2 + self.to_move
        hand = self.hands.ravel()[me_flat]
        size = self.stock_end - self.stock_top
        stock_open = (self.closed_by < 0) & (size > 0)
        # ---- follower (R5, R9–R11)
        table = self.table
        following = table >= 0
        led = np.where(following, table, 0)
        same = hand & self.SUIT_MASK_OF[led]
        if rules.must_head:  # R10(a) / R66-5
            head = same & self.HIGHER[led]
            same_choice = np.where(head != 0, head, same)
        else:
            same_choice = same
        trumps = hand & self.SUIT_MASK[self.trump]  # R10(b)
        strict = np.where(same != 0, same_choice, np.where(trumps != 0, trumps, hand))
        follow_bits = np.where(stock_open, hand, strict)
        # ---- leader (R3, R4, R12–R20)
        n_tricks_done = self.tricks[:, 0] + self.tricks[:, 1]
        announced = self.announced
        if rules.claim_mode == "manual":  # R21
            window = (announced >= 0) | (n_tricks_done > 0)  # W2 / W1 (R20)
            if rules.false_claim == "reject":  # R21a
                window &= self._counted_at(me_flat) >= CLAIM_TARGET
            claim = np.where(window, 1 << (n + 6), 0)
        else:
            claim = 0
        bits = hand
        mw = self._marriage_window(n_tricks_done, stock_open)
        if mw is not False:
            pairs = hand & (hand >> 1) & self.K_ALL  # K bit set where K and Q of the suit are held
            if mw is not True:
                pairs = np.where(mw, pairs, 0)
            rps = self.deck.ranks_per_suit
            t = pairs >> 2
            mbits = (t & 1) | ((t >> (rps - 1)) & 2) | ((t >> (2 * rps - 2)) & 4) | ((t >> (3 * rps - 3)) & 8)
            bits = bits | (mbits << n)
            if rules.marriage_declaration == "automatic":  # R12: a held pair's K/Q is led by announcing
                bits = bits & ~(pairs | (pairs << 1))
        ex_ok = (stock_open & (size >= rules.exchange_min_stock)
                 & (((hand >> self.EXCHANGE_CARD[self.trump]) & 1) == 1))  # R16, R66-3
        bits = bits | np.where(ex_ok, 1 << (n + 4), 0)
        bits = bits | np.where(stock_open & (size >= rules.close_min_stock), 1 << (n + 5), 0)  # R18, R66-4
        lead_bits = np.where(announced >= 0, self.KQ_ANN[announced], bits) | claim  # R4
        out = np.where(following, follow_bits, lead_bits)
        out[self.over] = 0
        return out

    def _marriage_window(self, n_tricks_done: np.ndarray, stock_open: np.ndarray):
        """May the leader announce on this lead (R13, R66-6)? A bool array, or True/False for all rows."""
        rules = self.rules
        window = rules.marriage_window
        if window == "any":
            ok = True
        elif window == "first_6_tricks":
            ok = n_tricks_done < 6
        else:  # "stock_open"
            ok = stock_open
        if not rules.marriage_on_opening_lead:
            ok = (n_tricks_done > 0) & ok
        return ok

    # ------------------------------------------------------------------ stepping
    def step(self, actions: np.ndarray) -> None:
        """Apply one action id per row **without** checking legality (as ``GameState.push``).

        Rows already over (and rows given action -1) are left unchanged. Afterwards ``over`` and the
        ``res_*`` arrays tell which hands ended and how."""
        a = np.asarray(actions, dtype=_I64)
        n = self.n
        if self.over.any():  # finished rows are left alone
            a = np.where(self.over, -1, a)
        play = (a < n) & (a >= 0)
        following = self.table >= 0
        rows = np.flatnonzero(play & ~following)
        if len(rows):
            self._lead(rows, a[rows])
        rows = np.flatnonzero(play & following)
        if len(rows):
            self._follow(rows, a[rows])
        if not play.all():
            rows = np.flatnonzero((a >= n) & (a < n + 4))
            if len(rows):
                self._marriage(rows, a[rows] - n)
            rows = np.flatnonzero(a == n + 4)
            if len(rows):
                self._exchange(rows)
            rows = np.flatnonzero(a == n + 5)
            if len(rows):
                self._close(rows)
            rows = np.flatnonzero(a == n + 6)
            if len(rows):
                self._claims.append((rows, self.to_move[rows]))
        if self._claims:  # all claims of this step (actions, W1/W2 auto claims, W3), resolved at once
            claims, self._claims = self._claims, []
            if len(claims) == 1:
                self._claim(*claims[0])
            else:
                self._claim(np.concatenate([c[0] for c in claims]), np.concatenate([c[1] for c in claims]))

    def _lead(self, r: np.ndarray, card: np.ndarray) -> None:
        me = self.to_move[r]
        f = 2 * r + me
        keep = ~self.BIT[card]
        self.hands.ravel()[f] &= keep
        self.known.ravel()[f] &= keep
        self.announced[r] = -1
        self.exchanged[r] = False  # the turn ends with the lead (R3)
        self.table[r] = card
        self.to_move[r] = 1 - me

    def _follow(self, r: np.ndarray, follow: np.ndarray) -> None:
        """Resolve the trick (R6), draw (R7), and check the end of the hand (R20 W3, R21, R22, R23, R66-10)."""
        rules = self.rules
        me = self.to_move[r]
        lead_seat = self.leader[r]
        lead = self.table[r]
        hands, known = self.hands.ravel(), self.known.ravel()
        fbit = self.BIT[follow]
        lbit = self.BIT[lead]
        f_me = 2 * r + me
        hands[f_me] &= ~fbit
        known[f_me] &= ~fbit
        winner = np.where(self.FOLLOW_WINS[lead, follow, self.trump[r]], me, lead_seat)
        loser = 1 - winner
        f_w = 2 * r + winner
        f_l = 2 * r + loser
        self.won.ravel()[f_w] |= lbit | fbit
        self.card_points.ravel()[f_w] += self.PTS[lead] + self.PTS[follow]
        self.tricks.ravel()[f_w] += 1
        self.led.ravel()[2 * r + lead_seat] |= lbit
        self.followed.ravel()[f_me] |= fbit
        hl = self.history_len[r]
        hist = self.history.reshape(-1, 4)
        hrow = r * self.n_tricks + np.minimum(hl, self.n_tricks - 1)
        hist[hrow, 0] = lead_seat
        hist[hrow, 1] = lead
        hist[hrow, 2] = follow
        hist[hrow, 3] = winner
        self.history_len[r] = np.minimum(hl + 1, self.n_tricks)
        self.table[r] = -1
        self.announced[r] = -1
        self.exchanged[r] = False
        self.leader[r] = winner
        self.to_move[r] = winner
        top = self.stock_top[r]
        size = self.stock_end[r] - top
        closed = self.closed_by[r] >= 0
        draw = ~closed & (size > 0)  # R7
        if draw.any():
            k = np.flatnonzero(draw)
            rk, tk = r[k], top[k]
            c1 = self.stock[rk, tk]
            c2 = self.stock[rk, tk + 1]
            hands[f_w[k]] |= self.BIT[c1]
            b2 = self.BIT[c2]
            hands[f_l[k]] |= b2
            known[f_l[k]] |= np.where(size[k] == 2, b2, 0)  # the turn-up, drawn by the loser (R27)
            self.stock_top[rk] = tk + 2
        last = hands[f_w] == 0
        if last.any():  # last trick played
            k = np.flatnonzero(last)
            if rules.last_trick_bonus:  # R66-7
                if rules.last_trick_bonus_when_closed:
                    self.bonus.ravel()[f_w[k]] = rules.last_trick_bonus
                else:
                    kk = k[~closed[k]]
                    self.bonus.ravel()[f_w[kk]] = rules.last_trick_bonus
            self._end_of_hand(r[k], winner[k])
        if rules.claim_mode == "auto":  # R21 (W1)
            k = np.flatnonzero(~last)
            if len(k):
                k = k[self._counted_at(f_w[k]) >= CLAIM_TARGET]
                if len(k):
                    self._claims.append((r[k], winner[k]))

    def _marriage(self, r: np.ndarray, suit: np.ndarray) -> None:
        """R12: announce; W2 auto claim under ``claim_mode="auto"`` (R21)."""
        me = self.to_move[r]
        f = 2 * r + me
        self.marriage_suits.ravel()[f] |= np.left_shift(1, suit)
        self.marriage_points.ravel()[f] += self.MARRIAGE_VALUE[suit, self.trump[r]]
        self.announced[r] = suit
        self.known.ravel()[f] |= self.KQ[suit]  # both cards shown (R27)
        if self.rules.claim_mode == "auto":
            k = np.flatnonzero(self._counted_at(f) >= CLAIM_TARGET)
            if len(k):
                self._claims.append((r[k], me[k]))

    def _exchange(self, r: np.ndarray) -> None:
        """R15–R17: swap the exchange card for the turn-up."""
        me = self.to_move[r]
        f = 2 * r + me
        jack = self.EXCHANGE_CARD[self.trump[r]]
        end = self.stock_end[r] - 1
        old = self.stock[r, end]
        self.hands.ravel()[f] = (self.hands.ravel()[f] & ~self.BIT[jack]) | self.BIT[old]
        self.known.ravel()[f] |= self.BIT[old]  # R27
        self.stock[r, end] = jack
        self.exchanged[r] = True

    def _close(self, r: np.ndarray) -> None:
        """R18, R19: close; snapshot of the other player."""
        me = self.to_move[r]
        other = 1 - me
        self.closed_by[r] = me
        f_o = 2 * r + other
        self.snap_points[r] = self._counted_at(f_o)
        self.snap_tricks[r] = self.tricks.ravel()[f_o]

    # ------------------------------------------------------------------ scoring
    def _snapshot_value(self, r: np.ndarray) -> np.ndarray:
        """v(snap), or O's state at the end (``closing_reference="at_end"``, R23a). Rows must be closed."""
        if self.rules.closing_reference == "at_end":
            f_o = 2 * r + 1 - np.maximum(self.closed_by[r], 0)
            return _game_value(self._counted_at(f_o), self.tricks.ravel()[f_o])
        return _game_value(self.snap_points[r], self.snap_tricks[r])

    def _failed_close_value(self, snapv: np.ndarray) -> np.ndarray:
        """max(2, v(snap)), or 3 under ``failed_close_value="flat3"`` (R23, R23a)."""
        if self.rules.failed_close_value == "flat3":
            return np.full_like(snapv, 3)
        return np.maximum(2, snapv)

    def _set_result(self, r: np.ndarray, winner: np.ndarray, points: np.ndarray, reason: np.ndarray) -> None:
        self.over[r] = True
        self.res_winner[r] = winner
        self.res_points[r] = points
        self.res_reason[r] = reason

    def _claim(self, r: np.ndarray, x: np.ndarray) -> None:
        """Claim 66 by seat ``x`` in rows ``r`` (R20–R23)."""
        o = 1 - x
        f_o = 2 * r + o
        correct = self._counted_at(2 * r + x) >= CLAIM_TARGET
        tricks_o = self.tricks.ravel()[f_o]
        v_o = _game_value(self._counted_at(f_o), tricks_o)
        pagat = self.rules.false_claim == "pagat"
        closer = self.closed_by[r]
        closed = closer >= 0
        # R22 (not closed): correct -> v(O); false: "pagat" 3/2, else ("mirror") v(O)
        pagat_value = np.where(tricks_o == 0, 3, 2)
        points = np.where(correct | (not pagat), v_o, pagat_value)
        if closed.any():  # R23
            snapv = np.where(closed, self._snapshot_value(r), 0)
            fcv = self._failed_close_value(snapv)
            by_closer = x == closer
            # O's false claim under "pagat": the closer (= o) wins 3 if it has no trick else 2
            closed_points = np.where(by_closer & correct, snapv,
                                     np.where(~by_closer & ~correct & pagat, pagat_value, fcv))
            points = np.where(closed, closed_points, points)
        self._set_result(r, np.where(correct, x, o), points, np.where(correct, _CLAIM, _FALSE_CLAIM))

    def _end_of_hand(self, r: np.ndarray, w: np.ndarray) -> None:
        """All cards played; ``w`` took the last trick (R20 W3, R22, R23, R66-10)."""
        f_w = 2 * r + w
        cw = self._counted_at(f_w)
        claim = cw >= CLAIM_TARGET  # W3: the engine claims for the last-trick winner
        if claim.any():
            self._claims.append((r[claim], w[claim]))
        rest = ~claim
        if not rest.any():
            return
        r, w, cw = r[rest], w[rest], cw[rest]
        rules = self.rules
        o = 1 - w
        f_o = 2 * r + o
        co = self._counted_at(f_o)
        tricks_o = self.tricks.ravel()[f_o]
        closer = self.closed_by[r]
        closed = closer >= 0
        if self.n == 20:  # R22
            if rules.unclaimed_last_trick_value == "one":
                value = np.ones_like(w)
            else:
                value = _game_value(co, tricks_o)
            winner, points, reason = w, value, np.full_like(w, _LAST_TRICK)
        else:  # R66-10
            count = co >= CLAIM_TARGET
            v_w = _game_value(cw, self.tricks.ravel()[2 * r + w])
            if rules.tie == "last_trick":
                tie_w, tie_p, tie_r = w, 1, _LAST_TRICK
            else:
                tie_w, tie_p, tie_r = -1, 0, _TIE
            winner = np.where(count, o, tie_w)
            points = np.where(count, v_w, tie_p)
            reason = np.where(count, _COUNT, tie_r)
        if closed.any():  # R23 without a claim
            snapv = np.where(closed, self._snapshot_value(r), 0)
            fcv = self._failed_close_value(snapv)
            safe_closer = np.where(closed, closer, 0)
            c_counted = self._counted_at(2 * r + safe_closer)
            if rules.closed_hand_end == "closer_score":  # R23; "must_claim" (R23a): only a claim wins for C
                closer_wins = c_counted >= CLAIM_TARGET
            else:
                closer_wins = np.zeros_like(closed)
            winner = np.where(closed, np.where(closer_wins, closer, 1 - closer), winner)
            points = np.where(closed, np.where(closer_wins, snapv, fcv), points)
            reason = np.where(closed, _CLOSED_HAND, reason)
        self._set_result(r, winner, points, reason)

    # ------------------------------------------------------------------ observations
    def observations_into(self, out: np.ndarray, seats: np.ndarray | None = None) -> np.ndarray:
        """Write ``encoding.observation(row_state, seat)`` of every row into ``out`` (float32 ``(N, obs_size)``),
        exactly; ``seats`` defaults to ``to_move``."""
        N = self.num
        rules = self.rules
        n_tricks = self.n_tricks
        me = self.to_move if seats is None else np.asarray(seats, dtype=_I64)
        f_me = self._arange2 + me
        f_opp = self._arange2 + 1 - me
        hands, won = self.hands.ravel(), self.won.ravel()
        hand = hands[f_me]
        size = self.stock_end - self.stock_top
        turn_up_card = self.stock.ravel()[self._stock_base + np.maximum(self.stock_end - 1, 0)]
        turn_up = np.where(size > 0, self.BIT[turn_up_card], 0)
        table = np.where(self.table >= 0, self.BIT[np.maximum(self.table, 0)], 0)
        opp_known = self.known.ravel()[f_opp]
        won0, won1 = self.won[:, 0], self.won[:, 1]
        planes = np.empty((11, N), dtype=np.uint64)  # transposed: rows are written whole
        planes[0] = hand
        planes[1] = turn_up
        planes[2] = self.led.ravel()[f_me]
        planes[3] = self.followed.ravel()[f_me]
        planes[4] = self.led.ravel()[f_opp]
        planes[5] = self.followed.ravel()[f_opp]
        planes[6] = table
        planes[7] = opp_known
        planes[8] = self.deck.full & ~(hand | turn_up | won0 | won1 | table | opp_known)
        planes[9] = won[f_me]
        planes[10] = won[f_opp]
        words_t = np.zeros((self._n_words, N), dtype=np.uint64)
        lo = planes << self._plane_shift
        for w, (a, b) in enumerate(self._word_groups):
            row = words_t[w]
            row |= lo[a]
            for k in range(a + 1, b):
                row |= lo[k]
        for k, w, sh in self._straddle:
            words_t[w] |= planes[k] >> sh
        # The 0/1 scalar entries: trump, closed, closer, marriages, exchanged, announced, leader, dealer.
        fs = self._flag_shift
        closed = self.closed_by >= 0
        mine = self.closed_by == me
        is_leader = self.leader == me
        ms = self.marriage_suits.ravel()
        flags = np.left_shift(1, self.trump + fs["trump"])
        flags |= closed.astype(_I64) << fs["closed"]
        flags |= mine.astype(_I64) << fs["closer"]
        flags |= (closed & ~mine).astype(_I64) << (fs["closer"] + 1)
        flags |= ms[f_me] << fs["marriages"]
        flags |= ms[f_opp] << (fs["marriages"] + 4)
        flags |= (is_leader & self.exchanged).astype(_I64) << fs["exchanged"]
        ann = is_leader & (self.announced >= 0)
        flags |= np.where(ann, np.left_shift(1, np.maximum(self.announced, 0) + fs["announced"]), 0)
        flags |= is_leader.astype(_I64) << fs["leader"]
        flags |= (self.dealer == me).astype(_I64) << fs["dealer"]
        words_t[self._flag_word] |= flags.astype(np.uint64)
        words = np.ascontiguousarray(words_t.T)
        unpacked = np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")
        out[...] = unpacked[:, :self.obs_size]
        # The other scalar entries (zero in the unpacked bits).
        lay = self._lay
        out[:, lay["stock_size"]] = size / self.stock0
        if closed.any():
            k = lay["snapshot"]
            out[:, k] = np.where(closed, self.snap_points, 0) / 66.0
            out[:, k + 1] = np.where(closed, self.snap_tricks, 0) / n_tricks
        pair = np.empty((N, 2), dtype=_I64)  # flat indices of [me, opp] per row
        pair[:, 0] = f_me
        pair[:, 1] = f_opp
        tricks = self.tricks.ravel()[pair]
        mp = self.marriage_points.ravel()[pair]
        has = tricks > 0
        k = lay["points"]
        out[:, k:k + 2] = (self.card_points.ravel()[pair] + self.bonus.ravel()[pair] + np.where(has, mp, 0)) / 66.0
        k = lay["tricks"]
        out[:, k:k + 2] = tricks / n_tricks
        k = lay["pending"]
        out[:, k:k + 2] = np.where(has, 0, mp) / 40.0
        out[:, lay["trick"]] = (self.tricks[:, 0] + self.tricks[:, 1]) / n_tricks
        if self._match_any:  # match points or carry loaded by set_row (new deals have none)
            target = rules.match_target
            mpts = self.match_points.ravel()
            k = lay["match"]
            out[:, k] = mpts[f_me] / target
            out[:, k + 1] = mpts[f_opp] / target
            out[:, k + 2] = self.carry / target
        return out

    def state_vectors(self, out: np.ndarray | None = None) -> np.ndarray:
        """``encoding.state_vector`` of every row, exactly: float32 ``(N, state_size)``."""
        N, n = self.num, self.n
        if out is None:
            out = np.empty((N, encoding.state_size(self.rules)), dtype=np.float32)
        bits_to_array(self.hands[:, 0], n, out[:, 0:n])
        bits_to_array(self.hands[:, 1], n, out[:, n:2 * n])
        out[:, 2 * n:4 * n] = 0.0
        size = self.stock_end - self.stock_top
        for k in range(self.stock.shape[1]):
            rows = np.flatnonzero(size > k)
            if not len(rows):
                break
            cards = self.stock[rows, self.stock_top[rows] + k]
            out[rows, 2 * n + cards] = 1.0
            out[rows, 3 * n + cards] = (k + 1) / size[rows]
        self.observations_into(out[:, 4 * n:], np.zeros(N, dtype=_I64))
        return out


__all__ = ["BatchState", "bits_to_array"]
