"""The compiled twin of :mod:`schnapsen_env.rules`: one hand as a flat ``int64`` array, stepped by numba-compiled
functions.

This is the project's second implementation of the rules (the first, readable reference is
:class:`schnapsen_env.rules.GameState`). It implements RULES.md R1–R27 and R66-1–R66-11 with every knob of
section 5, and drives the vectorised env (:mod:`schnapsen_env.vector`), the AEC env's observations
(:mod:`schnapsen_env.mirror`), the exact solver (:mod:`agents.search.solver_core`) and the search agents.
``tests/test_core_lockstep.py`` plays it in lockstep with ``GameState`` over every knob of both rulesets, comparing
legal actions, whole states, observations and results.

The array it steps and the rule table it reads are laid out in :mod:`schnapsen_env.state_layout` (derived from
``GameState``'s ``FIELDS``: the rules as data drive both engines), which also converts between the engines; the
numba plumbing (cache guard, uncounted views, bit intrinsics, seeded deals) is :mod:`schnapsen_env.jit`. The names of
both that a caller of this module needs with it (``F``, ``STATE_SIZE``, ``rule_table``, ``from_game_state``, ...)
are importable from here too.

Compiled with numba (``cache=True``: the JIT cost, about a minute on first import on a new machine, is paid
once and cached beside the module; :func:`schnapsen_env.jit.drop_stale_cache` drops it when another source of the
package changed). numba installs from wheels on every platform, so no toolchain is needed.

:func:`apply` does not check legality (like ``GameState.push``); callers check :func:`legal_bits` first. The
compiled functions trust their arrays (numba does not check bounds): build state arrays with
:func:`~schnapsen_env.state_layout.from_game_state` or :func:`deal`, and pass a hand-made one through
:func:`~schnapsen_env.state_layout.check_state` first, since a malformed array can corrupt memory.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from schnapsen_env import encoding
from schnapsen_env.cards import RANK_POINTS
from schnapsen_env.encoding import PENDING_SCALE, POINTS_SCALE
from schnapsen_env.jit import draw_deal, drop_stale_cache, trailing_zeros, uncounted
from schnapsen_env.state_layout import (
    CLAIM,
    CLOSE,
    EXCHANGE,
    FRESH,
    MAX_STOCK,
    MAX_TRICKS,
    REASON,
    RULE_FIELDS,
    SEARCH_SIZE,
    STATE_FIELDS,
    STATE_SIZE,
    UNSEARCHED,
    F,
    K,
    check_state,
    from_game_state,
    result_of,
    rule_table,
    to_game_state,
)

# ---------------------------------------------------------------------------------------------- card helpers
#: Per card id, its suit, rank and card points, for 5 and 6 ranks a suit (row ``rps - 5``): table look-ups instead
#: of divisions by the run-time ``rps`` in the hot loops.
_CARD_SUIT = np.array([[c // rps for c in range(24)] for rps in (5, 6)], dtype=np.int64)
_CARD_RANK = np.array([[c % rps for c in range(24)] for rps in (5, 6)], dtype=np.int64)
_CARD_POINTS = np.array([[RANK_POINTS[c % rps] for c in range(24)] for rps in (5, 6)], dtype=np.int64)


@njit(cache=True)
def suit_of(card, rps):
    return _CARD_SUIT[rps - 5, card]


@njit(cache=True)
def rank_of(card, rps):
    return _CARD_RANK[rps - 5, card]


@njit(cache=True)
def suit_bits(suit, rps):
    return ((1 << rps) - 1) << (suit * rps)


@njit(cache=True)
def kq_bits(suit, rps):
    """King and queen of ``suit`` (ranks 2 and 3)."""
    return (1 << (suit * rps + 2)) | (1 << (suit * rps + 3))


@njit(cache=True)
def card_points(card, rps):
    return _CARD_POINTS[rps - 5, card]


@njit(cache=True)
def points_of(bits, rps):
    """Card points of a card set (bits)."""
    total = 0
    while bits:
        total += card_points(trailing_zeros(bits), rps)
        bits &= bits - 1
    return total


@njit(cache=True)
def game_value(points, tricks, R):
    """v(points, tricks) of RULES.md section 1: 3 if no trick, 2 below the ruleset's bound (33; RS3: 17), else 1."""
    if tricks == 0:
        return 3
    return 2 if points < R[K.schneider_below] else 1


@njit(cache=True)
def counted(st, p):
    """Counted points of seat ``p`` (card points, marriages once it has a trick (R14), last-trick bonus)."""
    if st[F.tricks + p]:
        return st[F.card_points + p] + st[F.marriage_points + p] + st[F.bonus + p]
    return st[F.card_points + p] + st[F.bonus + p]


# ---------------------------------------------------------------------------------------------- legality
@njit(cache=True)
def marriage_window_open(st, R):
    """R13, R66-6 and the ``marriage_window`` / ``marriage_on_opening_lead`` knobs."""
    return _marriage_window(st[F.tricks] + st[F.tricks + 1],
                            st[F.closed_by] < 0 and st[F.stock_end] > st[F.stock_top], R)


@njit(cache=True, inline="always")
def _marriage_window(played, stock_open, R):
    """:func:`marriage_window_open` of a state with ``played`` tricks played."""
    trick_no = played + 1
    if trick_no == 1 and not R[K.marriage_on_opening_lead]:
        return False
    w = R[K.marriage_window]
    if w == 0:
        return True
    if w == 1:
        return trick_no <= 6
    return stock_open


@njit(cache=True)
def legal_bits(st, R):
    """Legal actions as an ``int64`` bit set (bit ``a`` = action id ``a``), exactly ``GameState.legal_bits``."""
    if st[F.over]:
        return 0
    me = st[F.to_move]
    hand = st[F.hands + me]
    table = st[F.table]
    stock_open = st[F.closed_by] < 0 and st[F.stock_end] > st[F.stock_top]
    if table >= 0:  # follower (R5, R9-R11)
        if stock_open:
            return hand  # R9
        return follow_bits(hand, table, st[F.trump], R)
    return lead_bits(hand, counted(st, me), st[F.announced], st[F.tricks] + st[F.tricks + 1], stock_open,
                     st[F.stock_end] - st[F.stock_top], st[F.trump], R)


@njit(cache=True, inline="always")
def follow_bits(hand, table, trump, R):
    """The follower's legal cards once the stock is closed or exhausted (R10, R66-5), ``table`` the lead."""
    rps = R[K.rps]
    ts = suit_of(table, rps)
    same = hand & suit_bits(ts, rps)
    if same:
        if R[K.must_head]:  # R10(a), R66-5
            head = same & (((1 << rank_of(table, rps)) - 1) << (ts * rps))
            return head if head else same
        return same
    trumps = hand & suit_bits(trump, rps)  # R10(b)
    return trumps if trumps else hand  # R10(c)


@njit(cache=True, inline="always")
def lead_bits(hand, mine, announced, played, stock_open, stock_size, trump, R):
    """The leader's legal actions (R3, R4, R12-R18, R20, R21): ``mine`` its counted points, ``played`` the tricks
    played, ``stock_size`` the cards left in the stock (read only while ``stock_open``)."""
    n = R[K.n]
    rps = R[K.rps]
    claim_bit = 0
    if not R[K.claim_auto]:  # R21
        if (announced >= 0 or played > 0) and (R[K.false_claim] != 0 or mine >= R[K.claim_target]):  # R20 W1/W2, R21a
            claim_bit = 1 << (n + CLAIM)
    if announced >= 0:
        return kq_bits(announced, rps) | claim_bit  # R4
    bits = hand
    if _marriage_window(played, stock_open, R):
        for s in range(4):
            kq = kq_bits(s, rps)
            if hand & kq == kq:
                bits |= 1 << (n + s)
                if R[K.marriage_automatic]:  # R12
                    bits &= ~kq
    if stock_open:
        exchange_card = trump * rps + R[K.exchange_rank]
        if stock_size >= R[K.exchange_min_stock] and (hand >> exchange_card) & 1:  # R16, R66-3
            bits |= 1 << (n + EXCHANGE)
        if stock_size >= R[K.close_min_stock]:  # R18, R66-4
            bits |= 1 << (n + CLOSE)
    return bits | claim_bit


@njit(cache=True, inline="always")
def trick_winner(lead, follow, leader, trump, rps):
    """The seat that takes the trick ``lead``, ``follow`` led by seat ``leader`` (R6)."""
    ls = suit_of(lead, rps)
    fs = suit_of(follow, rps)
    if ls == fs:
        return 1 - leader if rank_of(follow, rps) < rank_of(lead, rps) else leader
    return 1 - leader if fs == trump else leader


@njit(cache=True, inline="always")
def marriage_value(suit, trump, R):
    """Points of a marriage in ``suit`` (R12; RS3)."""
    return R[K.marriage_trump] if suit == trump else R[K.marriage_plain]


# ---------------------------------------------------------------------------------------------- scoring
@njit(cache=True)
def _set_result(st, winner, points, reason):
    st[F.over] = 1
    st[F.res_winner] = winner
    st[F.res_points] = points
    st[F.res_reason] = reason


@njit(cache=True)
def _snapshot_value(st, R):
    """v(snap), or the non-closer's state at the end under ``closing_reference="at_end"`` (R23a)."""
    if R[K.reference_at_end]:
        other = 1 - st[F.closed_by]
        return game_value(counted(st, other), st[F.tricks + other], R)
    return game_value(st[F.snap_points], st[F.snap_tricks], R)


@njit(cache=True)
def _failed_close_value(st, R):
    """max(2, v(snap)), or 3 under ``failed_close_value="flat3"`` (R23, R23a)."""
    if R[K.failed_flat3]:
        return 3
    return max(2, _snapshot_value(st, R))


@njit(cache=True)
def claim(st, R, x):
    """Claim 66 by seat ``x`` (R20-R23)."""
    o = 1 - x
    correct = counted(st, x) >= R[K.claim_target]
    pagat = R[K.false_claim] == 2
    closer = st[F.closed_by]
    if closer < 0:  # R22
        if correct:
            _set_result(st, x, game_value(counted(st, o), st[F.tricks + o], R), REASON.claim)
        elif pagat:
            _set_result(st, o, 3 if st[F.tricks + o] == 0 else 2, REASON.false_claim)
        else:
            _set_result(st, o, game_value(counted(st, o), st[F.tricks + o], R), REASON.false_claim)
        return
    if x == closer:  # R23
        if correct:
            _set_result(st, x, _snapshot_value(st, R), REASON.claim)
        else:
            _set_result(st, o, _failed_close_value(st, R), REASON.false_claim)
    elif correct:
        _set_result(st, x, _failed_close_value(st, R), REASON.claim)
    elif pagat:
        _set_result(st, closer, 3 if st[F.tricks + closer] == 0 else 2, REASON.false_claim)
    else:
        _set_result(st, closer, _failed_close_value(st, R), REASON.false_claim)


@njit(cache=True)
def last_trick(st, R, w):
    """Seat ``w`` took the last trick: its bonus (R66-7), then the end of the hand (:func:`_end_of_hand`)."""
    if R[K.last_trick_bonus] and (st[F.closed_by] < 0 or R[K.bonus_when_closed]):
        st[F.bonus + w] = R[K.last_trick_bonus]  # R66-7
    _end_of_hand(st, R, w)


@njit(cache=True)
def _end_of_hand(st, R, w):
    """All cards played; ``w`` took the last trick (R20 W3, R22, R23, R66-10)."""
    if counted(st, w) >= R[K.claim_target]:  # W3
        claim(st, R, w)
        return
    o = 1 - w
    closer = st[F.closed_by]
    if closer < 0:
        if R[K.schnapsen_family]:  # R22 (schnapsen20, schnapsen10)
            value = 1 if R[K.last_trick_one] else game_value(counted(st, o), st[F.tricks + o], R)
            _set_result(st, w, value, REASON.last_trick)
        elif counted(st, o) >= R[K.claim_target]:  # R66-10
            _set_result(st, o, game_value(counted(st, w), st[F.tricks + w], R), REASON.count)
        elif R[K.tie_last_trick]:
            _set_result(st, w, 1, REASON.last_trick)
        else:
            _set_result(st, -1, 0, REASON.tie)
        return
    if not R[K.must_claim] and counted(st, closer) >= R[K.claim_target]:  # R23
        _set_result(st, closer, _snapshot_value(st, R), REASON.closed_hand)
    else:
        _set_result(st, 1 - closer, _failed_close_value(st, R), REASON.closed_hand)


# ---------------------------------------------------------------------------------------------- stepping
@njit(cache=True, inline="always")
def _finish_trick(st, R, follow, record):
    """Resolve the trick (R6), draw (R7), and check the end of the hand; ``record``: also the fields no search
    reads (:data:`UNSEARCHED`)."""
    rps = R[K.rps]
    me = st[F.to_move]
    lead_seat = st[F.leader]
    lead = st[F.table]
    bit = 1 << follow
    st[F.hands + me] &= ~bit
    winner = trick_winner(lead, follow, lead_seat, st[F.trump], rps)
    loser = 1 - winner
    st[F.card_points + winner] += card_points(lead, rps) + card_points(follow, rps)
    st[F.tricks + winner] += 1
    if record:
        st[F.known + me] &= ~bit
        st[F.won + winner] |= (1 << lead) | bit
        st[F.led + lead_seat] |= 1 << lead
        st[F.followed + me] |= bit
        h = st[F.history_len]
        if h < MAX_TRICKS:
            k = F.history + 4 * h
            st[k] = lead_seat
            st[k + 1] = lead
            st[k + 2] = follow
            st[k + 3] = winner
            st[F.history_len] = h + 1
    st[F.table] = -1
    st[F.announced] = -1
    st[F.exchanged] = 0
    st[F.leader] = winner
    st[F.to_move] = winner
    top = st[F.stock_top]
    size = st[F.stock_end] - top
    if st[F.closed_by] < 0 and size > 0:  # R7
        st[F.hands + winner] |= 1 << st[F.stock + top]
        c2 = st[F.stock + top + 1]
        st[F.hands + loser] |= 1 << c2
        if size == 2 and record:
            st[F.known + loser] |= 1 << c2  # the turn-up, drawn by the loser (R27)
        st[F.stock_top] = top + 2
    if st[F.hands + winner] == 0:  # last trick played
        last_trick(st, R, winner)
    elif R[K.claim_auto] and counted(st, winner) >= R[K.claim_target]:  # R21 (W1)
        claim(st, R, winner)


@njit(cache=True)
def apply(st, R, action):
    """Apply action id ``action`` for the player to move, in place, **without** checking legality."""
    _step(st, R, action, True)


@njit(cache=True)
def apply_searched(st, R, action):
    """:func:`apply` for a search: writes only the searched fields (those before :data:`UNSEARCHED`: no tricks won,
    known cards, marriage suits, led and followed cards or history), the same values there as :func:`apply`."""
    _step(st, R, action, False)


@njit(cache=True, inline="always")
def _step(st, R, action, record):
    """:func:`apply`; ``record`` False skips the fields of :data:`UNSEARCHED` (inlined, so the flag is a constant)."""
    me = st[F.to_move]
    n = R[K.n]
    rps = R[K.rps]
    if action < n:
        if st[F.table] < 0:  # lead
            bit = 1 << action
            st[F.hands + me] &= ~bit
            if record:
                st[F.known + me] &= ~bit
            st[F.announced] = -1
            st[F.exchanged] = 0  # the turn ends with the lead (R3)
            st[F.table] = action
            st[F.to_move] = 1 - me
        else:
            _finish_trick(st, R, action, record)
    elif action < n + EXCHANGE:  # marriage (R12)
        suit = action - n
        st[F.marriage_points + me] += marriage_value(suit, st[F.trump], R)
        st[F.announced] = suit
        if record:
            st[F.marriage_suits + me] |= 1 << suit
            st[F.known + me] |= kq_bits(suit, rps)  # both cards shown (R27)
        if R[K.claim_auto] and counted(st, me) >= R[K.claim_target]:  # R21 (W2)
            claim(st, R, me)
    elif action == n + EXCHANGE:  # exchange (R15-R17)
        jack = st[F.trump] * rps + R[K.exchange_rank]
        end = F.stock + st[F.stock_end] - 1
        old = st[end]
        st[F.hands + me] = (st[F.hands + me] & ~(1 << jack)) | (1 << old)
        if record:
            st[F.known + me] |= 1 << old  # R27
        st[end] = jack
        st[F.exchanged] = 1
    elif action == n + CLOSE:  # close (R18, R19)
        other = 1 - me
        st[F.closed_by] = me
        st[F.snap_points] = counted(st, other)
        st[F.snap_tricks] = st[F.tricks + other]
    else:  # claim (R20)
        claim(st, R, me)


@njit(cache=True)
def deal(st, R, order, dealer):
    """Deal a fresh hand from a deck order (card ids, ``(n,)``) exactly as ``GameState.from_deck`` (R1, R2,
    R66-2); every other field takes its default (:data:`FRESH`: match points and carry 0)."""
    for j in range(STATE_SIZE):
        st[j] = FRESH[j]
    n = R[K.n]
    second = R[K.hand] - 3
    non_dealer = 1 - dealer
    hn = 0
    hd = 0
    for k in range(3):
        hn |= 1 << order[k]
        hd |= 1 << order[3 + k]
    for k in range(second):
        hn |= 1 << order[7 + k]
        hd |= 1 << order[7 + second + k]
    st[F.hands + non_dealer] = hn
    st[F.hands + dealer] = hd
    m = 0
    for k in range(7 + 2 * second, n):
        st[F.stock + m] = order[k]
        m += 1
    st[F.stock + m] = order[6]
    st[F.stock_top] = 0
    st[F.stock_end] = m + 1
    st[F.trump] = order[6] // R[K.rps]
    st[F.dealer] = dealer
    st[F.leader] = non_dealer
    st[F.to_move] = non_dealer


# ---------------------------------------------------------------------------------------------- observation
#: Offsets of the observation's scalar entries after the card planes, from :data:`encoding.SCALARS`.
_scalar_names = [name for name, _ in encoding.SCALARS]
_scalar_offsets, _at = [], 0
for _name, _size in encoding.SCALARS:
    _scalar_offsets.append(_at)
    _at += _size
O = namedtuple("ObsOffsets", _scalar_names)(*_scalar_offsets)
N_PLANES = len(encoding.PLANES)
del _at, _name, _size, _scalar_offsets, _scalar_names


@njit(cache=True)
def _write_bits(out, start, bits, count):
    """``out[start + c] = bit c of bits`` for ``c < count``. Through a slice, whose indices numba knows are not
    negative: indexing ``out`` with ``start + c`` adds a check for negative indices that turned the loop into
    scatter stores, the slowest part of a vector-env step (``benchmarks/vector.py`` measures it)."""
    seg = out[start:start + count]
    for c in range(count):
        seg[c] = (bits >> c) & 1


@njit(cache=True)
def observe(st, R, me, out):
    """Write ``encoding.observation(state, me)`` into ``out`` (float32 ``(obs_size,)``), exactly."""
    n = R[K.n]
    n_tricks = R[K.n_tricks]
    opp = 1 - me
    top = st[F.stock_top]
    end = st[F.stock_end]
    turn_up = (1 << st[F.stock + end - 1]) if end > top else 0
    table = (1 << st[F.table]) if st[F.table] >= 0 else 0
    hand = st[F.hands + me]
    opp_known = st[F.known + opp]
    full = (1 << n) - 1
    unseen = full & ~(hand | turn_up | st[F.won] | st[F.won + 1] | table | opp_known)
    # The planes of encoding.PLANES in order, two a loop (2 n <= 48 bits): half as many short loops as one plane
    # a loop, measured faster (benchmarks/vector.py).
    _write_bits(out, 0, hand | (turn_up << n), 2 * n)
    _write_bits(out, 2 * n, st[F.led + me] | (st[F.followed + me] << n), 2 * n)
    _write_bits(out, 4 * n, st[F.led + opp] | (st[F.followed + opp] << n), 2 * n)
    _write_bits(out, 6 * n, table | (opp_known << n), 2 * n)
    _write_bits(out, 8 * n, unseen | (st[F.won + me] << n), 2 * n)
    _write_bits(out, 10 * n, st[F.won + opp], n)
    x = out[N_PLANES * n:]  # the scalars, through a slice (see _write_bits)
    for s in range(4):
        x[O.trump + s] = 1.0 if st[F.trump] == s else 0.0
    x[O.stock_size] = (end - top) / R[K.stock0]
    closer = st[F.closed_by]
    if closer >= 0:
        x[O.closed] = 1.0
        x[O.closer] = 1.0 if closer == me else 0.0
        x[O.closer + 1] = 0.0 if closer == me else 1.0
        x[O.snapshot] = st[F.snap_points] / POINTS_SCALE
        x[O.snapshot + 1] = st[F.snap_tricks] / n_tricks
    else:
        for k in range(5):
            x[O.closed + k] = 0.0
    x[O.points] = counted(st, me) / POINTS_SCALE
    x[O.points + 1] = counted(st, opp) / POINTS_SCALE
    x[O.tricks] = st[F.tricks + me] / n_tricks
    x[O.tricks + 1] = st[F.tricks + opp] / n_tricks
    x[O.pending] = (0 if st[F.tricks + me] else st[F.marriage_points + me]) / PENDING_SCALE
    x[O.pending + 1] = (0 if st[F.tricks + opp] else st[F.marriage_points + opp]) / PENDING_SCALE
    for s in range(4):
        x[O.marriages + s] = (st[F.marriage_suits + me] >> s) & 1
        x[O.marriages + 4 + s] = (st[F.marriage_suits + opp] >> s) & 1
    leader = st[F.leader] == me
    x[O.exchanged] = 1.0 if leader and st[F.exchanged] else 0.0
    for s in range(4):
        x[O.announced + s] = 1.0 if leader and st[F.announced] == s else 0.0
    x[O.leader] = 1.0 if leader else 0.0
    x[O.dealer] = 1.0 if st[F.dealer] == me else 0.0
    x[O.trick] = (st[F.tricks] + st[F.tricks + 1]) / n_tricks
    target = R[K.match_target]
    x[O.match] = st[F.match_points + me] / target
    x[O.match + 1] = st[F.match_points + opp] / target
    x[O.match + 2] = st[F.carry] / target


@njit(cache=True)
def observe_masked(st, R, me, legal, obs, mask):
    """``observe(st, R, me, obs)``, and the action bit set ``legal`` as 0/1 entries into ``mask`` (int8
    ``(n_actions,)``): the AEC env's ``observe()`` in one compiled call (:class:`schnapsen_env.mirror.CoreMirror`)."""
    observe(st, R, me, obs)
    for a in range(mask.shape[0]):
        mask[a] = (legal >> a) & 1


@njit(cache=True)
def state_vector(st, R, out):
    """Write ``encoding.state_vector(state)`` into ``out`` (float32 ``(4 * n + obs_size,)``), exactly: both
    hands, the stock cards and their order ((k + 1) / S for the k-th from the top), then seat 0's observation."""
    n = R[K.n]
    _write_bits(out, 0, st[F.hands] | (st[F.hands + 1] << n), 2 * n)
    for c in range(2 * n, 4 * n):
        out[c] = 0.0
    top = st[F.stock_top]
    size = st[F.stock_end] - top
    for k in range(size):
        c = st[F.stock + top + k]
        out[2 * n + c] = 1.0
        out[3 * n + c] = (k + 1) / size
    observe(st, R, 0, out[4 * n:])


# ---------------------------------------------------------------------------------------------- batches
@njit(cache=True)
def legal_bits_rows(states, R, out):
    """``out[i] = legal_bits(states[i])`` for every row (int64 ``(N,)``)."""
    states = uncounted(states)
    R = uncounted(R)
    for i in range(states.shape[0]):
        out[i] = legal_bits(states[i], R)


@njit(cache=True)
def masks_into(bits, width, out):
    """Bit sets ``(N,)`` -> 0/1 ``out`` ``(N, width)`` (int8)."""
    for i in range(bits.shape[0]):
        b = bits[i]
        for a in range(width):
            out[i, a] = (b >> a) & 1


@njit(cache=True)
def apply_all(states, R, actions):
    """``apply(states[i], actions[i])`` for every row whose hand is not over (no legality check)."""
    states = uncounted(states)
    R = uncounted(R)
    for i in range(states.shape[0]):
        if not states[i, F.over]:
            apply(states[i], R, actions[i])


@njit(cache=True)
def refresh_row(st, R, i, legal, masks, to_move, obs):
    """Row ``i``'s legal action bits, 0/1 mask, seat to move and that seat's observation (the vector env's outputs)."""
    bits = legal_bits(st, R)
    legal[i] = bits
    row = masks[i]
    for a in range(row.shape[0]):
        row[a] = (bits >> a) & 1
    me = st[F.to_move]
    to_move[i] = me
    observe(st, R, me, obs[i])


@njit(cache=True)
def step_rows(states, R, actions, legal, fns, bitgens, results, rewards, dones, masks, to_move, obs):
    """One vector-env step over every row, in one call: check, apply, score, deal and observe.

    Returns the first row whose action is not legal (``legal`` holds each row's legal action bits), **before**
    changing anything; else -1 after, for every row: ``apply``; where the hand ended, ``dones[i] = 1``, the
    game points into ``rewards[i]`` (float32, seats 0 and 1, zero-sum), the result into ``results[i]``
    (``(winner, game_points, reason)``, winner -1 for a tie) and, when ``fns`` is not empty, a new hand dealt
    from row ``i``'s numpy generator (:func:`draw_deal` with ``fns[i]``, ``bitgens[i]``); then
    :func:`refresh_row`. With ``fns`` empty, finished rows keep their finished hand and are not refreshed (the
    caller deals and refreshes them)."""
    states = uncounted(states)
    R = uncounted(R)
    obs = uncounted(obs)
    n_rows = states.shape[0]
    n_actions = masks.shape[1]
    for i in range(n_rows):
        a = actions[i]
        if a < 0 or a >= n_actions or not (legal[i] >> a) & 1:
            return i
    deal_here = fns.shape[0] > 0
    order = np.empty(R[K.n], np.int64)
    for i in range(n_rows):
        st = states[i]
        apply(st, R, actions[i])
        rewards[i, 0] = 0.0
        rewards[i, 1] = 0.0
        if st[F.over]:
            dones[i] = True
            w = st[F.res_winner]
            p = st[F.res_points]
            results[i, 0] = w
            results[i, 1] = p
            results[i, 2] = st[F.res_reason]
            if w >= 0:
                rewards[i, w] = p
                rewards[i, 1 - w] = -p
            if not deal_here:
                continue
            dealer = draw_deal(fns[i], bitgens[i], order)
            deal(st, R, order, dealer)
        else:
            dones[i] = False
        refresh_row(st, R, i, legal, masks, to_move, obs)
    return -1


@njit(cache=True)
def deal_rows(states, R, rows, orders, dealers):
    """Deal ``orders[k]`` with dealer ``dealers[k]`` into row ``rows[k]``."""
    states = uncounted(states)
    orders = uncounted(orders)
    for k in range(rows.shape[0]):
        deal(states[rows[k]], R, orders[k], dealers[k])


@njit(cache=True)
def observe_all(states, R, seats, out):
    """``observe(states[i], seats[i], out[i])`` for every row."""
    states = uncounted(states)
    R = uncounted(R)
    out = uncounted(out)
    for i in range(states.shape[0]):
        observe(states[i], R, seats[i], out[i])


@njit(cache=True)
def state_vectors(states, R, out):
    """``state_vector(states[i], out[i])`` for every row."""
    states = uncounted(states)
    R = uncounted(R)
    out = uncounted(out)
    for i in range(states.shape[0]):
        state_vector(states[i], R, out[i])


drop_stale_cache(apply)  # before any cached function loads (see drop_stale_cache)


#: The compiled rules, and the layout names re-exported with them (see the module docstring).
__all__ = ["CLAIM", "CLOSE", "EXCHANGE", "F", "K", "MAX_STOCK", "MAX_TRICKS", "N_PLANES", "O", "REASON", "RULE_FIELDS",
           "SEARCH_SIZE", "STATE_FIELDS", "STATE_SIZE", "UNSEARCHED", "apply", "apply_all", "apply_searched",
           "card_points", "check_state", "claim", "counted", "deal", "deal_rows", "follow_bits", "from_game_state",
           "game_value", "kq_bits", "last_trick", "lead_bits", "legal_bits", "legal_bits_rows", "marriage_value",
           "marriage_window_open", "masks_into", "observe", "observe_all", "observe_masked", "points_of", "rank_of",
           "refresh_row", "result_of", "rule_table", "state_vector", "state_vectors", "step_rows", "suit_bits",
           "suit_of", "to_game_state", "trick_winner"]
