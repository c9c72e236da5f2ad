"""The compiled alpha-beta solver: the perfect-information game on :mod:`schnapsen_env.rules_core`.

The same search as the readable reference solver of the tests (``tests/helpers/reference_solver.py``: fail-soft
alpha-beta with a transposition table, values in game points for the player to move at the root, an optional
horizon in completed tricks scored by its ``evaluate``), compiled with numba. Full-depth values equal the reference solver's exactly
(``tests/test_solver_core.py``; ``benchmarks/solver.py --exactness`` checks thousands of positions). A *world*
(a determinisation: every hand and the stock order known) is solved to the end of the hand in a few
milliseconds, which is what the expert agent (:mod:`agents.search.expert`) needs thousands of times a move.

Transposition table: ``2 ** tt_bits`` entries of one cache line each (default ``2 ** 14``, 1 MiB, for
``schnapsen20``: a table the size of a core's L2 cache solved fastest, although larger ones search fewer nodes;
``2 ** 20`` for ``sixtysix24``, whose deals need many more nodes) indexed by a hash of the state; an entry
keeps two 64-bit keys (hands and turn state; points, closing snapshot, stock size and a Zobrist hash of the
stock order while it can still be drawn), so a lookup is exact barring a 64-bit hash collision. Entries of an
earlier solve are ignored (a generation counter), so no table is cleared between solves.

Move ordering: the table's move first, then claim, marriages, exchange and close, then cards by card points,
highest first (the reference solver's order).

Two kernels, one tree: while the stock is open, :func:`_search` makes and unmakes moves in one state array
(:func:`schnapsen_env.rules_core.apply_searched`); once it is closed or exhausted and the search reaches the end of the
hand, :func:`_strict` takes over, the state in a dozen scalars passed down a recursive call, with the core's own
rule functions (:func:`~schnapsen_env.rules_core.follow_bits`, :func:`~schnapsen_env.rules_core.lead_bits`,
:func:`~schnapsen_env.rules_core.trick_winner`, and its scoring on a scratch row at the end of the hand). Both keep the
same table entries and move order, so the node counts are those of one kernel alone; about 95% of a full solve's
nodes from trick 1 are in the strict phase, searched about twice as fast per node.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.search.worlds import fill_world
from schnapsen_env.jit import bits_float, drop_stale_cache, float_bits, trailing_zeros, uncounted
from schnapsen_env.rules import GameState
from schnapsen_env.rules_core import (
    apply_searched,
    card_points,
    claim,
    counted,
    follow_bits,
    last_trick,
    lead_bits,
    legal_bits,
    marriage_value,
    rank_of,
    suit_bits,
    suit_of,
    trick_winner,
)
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.state_layout import (
    CLAIM,
    CLOSE,
    EXCHANGE,
    MAX_STOCK,
    SEARCH_SIZE,
    STATE_SIZE,
    F,
    K,
    check_state,
    from_game_state,
    rule_table,
)

INF = 1000.0
EXACT = 10_000  # "no horizon" in completed tricks
MAX_PLY = 96
_Z = np.random.default_rng(20150725).integers(1, 2 ** 63 - 1, size=(16, 32), dtype=np.int64)  # stock Zobrist keys
_M1 = np.int64(0x9E3779B97F4A7C15 - 2 ** 64)  # odd multipliers of the table index hash
_M2 = np.int64(0xBF58476D1CE4E5B9 - 2 ** 64)
#: Bits of the search ``flags``: consider closing below the root; keep the horizon after a close (the reference
#: solver's ``exact_after_close=False``).
CLOSE_BELOW_ROOT, HORIZON_AFTER_CLOSE = 1, 2
#: Indices into a solver's ``counters`` array: nodes searched, the table's generation, and from ``ZOBRIST`` on, per
#: stock position ``k``, the XOR of the Zobrist keys of the face-down stock from ``k`` on, set at each root
#: (:func:`_stock_hashes`: the face-down cards never change within a search, so a node's stock key is one look-up).
#: From ``_XROOT`` on, the context of the strict-phase search below the current node (:func:`_strict_root`).
NODES, GENERATION, ZOBRIST = 0, 1, 2
_XROOT, _XTRUMP, _XCLOSED, _XSNAP_POINTS, _XSNAP_TRICKS, _XSTOCK, _XEXACT = range(ZOBRIST + MAX_STOCK + 1,
                                                                                 ZOBRIST + MAX_STOCK + 8)
#: The node limit of the current call and whether it was reached (see :meth:`CoreSolver.world_values`): past the
#: limit every node answers at once without a search and nothing more is stored in the table, so the call unwinds
#: in a few nodes and its values are void; the table's entries stored before stay exact.
LIMIT, ABORTED = _XEXACT + 1, _XEXACT + 2
COUNTERS = ABORTED + 1
NO_LIMIT = 2 ** 62
#: The row of a solver's ``undo`` array that the strict-phase search scores finished hands in (no ply reaches it).
_SCRATCH = -1


@njit(cache=True)
def _evaluate(st, root):
    """The reference solver's ``evaluate``: counted-point difference (+ half the pending marriages) / 33, clipped to
    +-1.9 game points."""
    opp = 1 - root
    pend_r = 0 if st[F.tricks + root] else st[F.marriage_points + root]
    pend_o = 0 if st[F.tricks + opp] else st[F.marriage_points + opp]
    v = (counted(st, root) - counted(st, opp) + 0.5 * (pend_r - pend_o)) / 33.0
    return max(-1.9, min(1.9, v))


@njit(cache=True)
def _terminal(st, root):
    w = st[F.res_winner]
    if w < 0:
        return 0.0
    return float(st[F.res_points]) if w == root else -float(st[F.res_points])


@njit(cache=True)
def _stock_hashes(st, counters):
    """Set ``counters[ZOBRIST + k]`` for the root ``st``: the XOR of ``_Z[j, stock[j]]`` over the face-down positions
    ``j >= k`` (all but the turn-up, the only stock card an exchange changes)."""
    end = st[F.stock_end]
    acc = 0
    for k in range(MAX_STOCK, max(end - 2, -1), -1):  # not below ZOBRIST: an empty stock has end 0
        counters[ZOBRIST + k] = 0
    for k in range(end - 2, -1, -1):
        acc ^= _Z[k, st[F.stock + k]]
        counters[ZOBRIST + k] = acc


@njit(cache=True)
def _keys(st, counters):
    """Two 64-bit keys of everything that can change a value (see the module docstring); the stock's part from the
    root's :func:`_stock_hashes` and the turn-up."""
    k1 = _key1(st[F.hands], st[F.hands + 1], st[F.to_move], st[F.table], st[F.closed_by], st[F.announced],
               st[F.tricks], st[F.tricks + 1])
    top = st[F.stock_top]
    end = st[F.stock_end]
    k2 = _key2(st[F.card_points], st[F.card_points + 1], st[F.marriage_points], st[F.marriage_points + 1],
               st[F.snap_points], st[F.snap_tricks], end - top)
    if st[F.closed_by] < 0 and top < end:
        k2 ^= counters[ZOBRIST + top] ^ _Z[end - 1, st[F.stock + end - 1]]
    return k1, k2


@njit(cache=True, inline="always")
def _key1(h0, h1, me, table, closed_by, announced, tricks0, tricks1):
    """The first table key: hands and turn state (tricks only as taken / not yet)."""
    return (h0 | (h1 << 24) | (me << 48) | ((table + 1) << 49) | ((closed_by + 1) << 54) | ((announced + 1) << 56)
            | (min(tricks0, 1) << 59) | (min(tricks1, 1) << 60))


@njit(cache=True, inline="always")
def _key2(cp0, cp1, mp0, mp1, snap_points, snap_tricks, stock_size):
    """The second table key, before the stock order's hash: points, closing snapshot, stock size."""
    return (cp0 | (cp1 << 8) | (mp0 << 16) | (mp1 << 24) | (snap_points << 32) | (snap_tricks << 40)
            | (stock_size << 44))


@njit(cache=True, inline="always")
def _order(bits, table, trump, n, rps, tt_move):
    """The legal actions ``bits``, best guesses first, packed 5 bits an action (first in the lowest bits; at most 12
    actions, as many as a leader of 6 cards can have); returns ``(packed, count)``.

    Order (measured on full solves from trick 1; a history heuristic doubled the nodes): the table's move;
    claim; marriages (trump first, then by suit); exchange; close; then cards: a leader's by card points, highest
    first; a follower's winning cards by the points they take, then its cheapest discards; cards of equal points
    by card id. Card points fall with the rank index (A T K Q J 9), so the cards are emitted rank by rank from
    bit sets, with no sort.
    """
    packed = 0
    m = 0
    if tt_move >= 0 and (bits >> tt_move) & 1:
        packed = tt_move
        m = 1
        bits &= ~(1 << tt_move)
    special = bits >> n
    if special:
        if (special >> CLAIM) & 1:
            packed |= (n + CLAIM) << (5 * m)
            m += 1
        mar = special & ((1 << EXCHANGE) - 1)
        if mar:
            if (mar >> trump) & 1:
                packed |= (n + trump) << (5 * m)
                m += 1
                mar &= ~(1 << trump)
            while mar:
                packed |= (n + trailing_zeros(mar)) << (5 * m)
                m += 1
                mar &= mar - 1
        if (special >> EXCHANGE) & 1:
            packed |= (n + EXCHANGE) << (5 * m)
            m += 1
        if (special >> CLOSE) & 1:
            packed |= (n + CLOSE) << (5 * m)
            m += 1
    cards = bits & ((1 << n) - 1)
    if cards:
        column = 1 | (1 << rps) | (1 << 2 * rps) | (1 << 3 * rps)  # the rank-0 card of every suit
        if table < 0:
            first = cards
            rest = 0
        else:
            ls = suit_of(table, rps)
            first = cards & (((1 << rank_of(table, rps)) - 1) << (ls * rps))  # higher cards of the led suit
            if ls != trump:
                first |= cards & suit_bits(trump, rps)
            rest = cards & ~first
        for r in range(rps):  # highest points first
            b = first & (column << r)
            while b:
                packed |= trailing_zeros(b) << (5 * m)
                m += 1
                b &= b - 1
        if rest:
            for r in range(rps - 1, -1, -1):  # cheapest first
                b = rest & (column << r)
                while b:
                    packed |= trailing_zeros(b) << (5 * m)
                    m += 1
                    b &= b - 1
    return packed, m


@njit(cache=True)
def _ordered(st, R, tt_move, moves, p):
    """Legal actions of ``st`` into ``moves[p]`` in :func:`_order`'s order; returns their count."""
    packed, m = _order(legal_bits(st, R), st[F.table], st[F.trump], R[K.n], R[K.rps], tt_move)
    for i in range(m):
        moves[p, i] = (packed >> (5 * i)) & 31
    return m


# Columns of a table entry (int64; the two bounds as float64 bits: jit.float_bits, jit.bits_float).
_TK1, _TK2, _TGEN, _TDEPTH, _TMOVE, _TLOWER, _TUPPER = range(7)
# Per-ply frame of the iterative search (the reference solver's recursion, unrolled: numba caches no recursion).
_ALPHA, _BETA, _A0, _B0, _BEST, _ELOWER, _EUPPER = range(7)
_DEPTH, _IDX, _N, _BESTMOVE, _SLOT, _HAVE, _EDEPTH, _TRICKS, _K1, _K2, _MOVER = range(11)


@njit(cache=True)
def _save(st, undo, p):
    """``undo[p]`` = the searched fields of ``st`` (a loop: a slice copy between views allocated a temporary)."""
    for j in range(SEARCH_SIZE):
        undo[p, j] = st[j]


@njit(cache=True)
def _restore(st, undo, p):
    for j in range(SEARCH_SIZE):
        st[j] = undo[p, j]


@njit(cache=True)
def _enter(st, undo, moves, p, R, root, at_root, flags, tt, counters, fv, fi):
    """Open the node at ply ``p``, whose state is ``st`` (``fv[p, _ALPHA]``, ``fv[p, _BETA]``, ``fi[p, _DEPTH]``
    set by the caller); ``undo[p]`` keeps it while its children are searched in ``st``.
    Returns True with ``fv[p, _BEST]``/``fi[p, _BESTMOVE]`` set when the table answers without a search."""
    if ((st[F.closed_by] >= 0 or st[F.stock_top] == st[F.stock_end])
            and fi[p, _DEPTH] >= R[K.n] // 2 - st[F.tricks] - st[F.tricks + 1]):
        fv[p, _BEST], fi[p, _BESTMOVE] = _strict_root(st, R, root, flags, fv[p, _ALPHA], fv[p, _BETA],
                                                      fi[p, _DEPTH], tt, counters, undo[_SCRATCH])
        return True
    counters[NODES] += 1
    if counters[NODES] > counters[LIMIT]:  # the call's node limit: answer at once, the call's values are void
        counters[ABORTED] = 1
        fv[p, _BEST] = 0.0
        fi[p, _BESTMOVE] = -1
        return True
    me = st[F.to_move]
    if (st[F.table] < 0 and not R[K.claim_auto] and counted(st, me) >= R[K.claim_target]
            and fi[p, _DEPTH] >= R[K.n] // 2 - st[F.tricks] - st[F.tricks + 1]):
        # A correct claim is legal and dominant: the claim value only falls as the opponent takes points and
        # tricks, and a later claim, last trick or closed-hand end pays no more (R20-R23). Only where the search
        # reaches the end of the hand: at a horizon, playing on can score more by the evaluation than the claim.
        _save(st, undo, p)
        apply_searched(st, R, R[K.n] + CLAIM)
        fv[p, _BEST] = _terminal(st, root)
        _restore(st, undo, p)
        fi[p, _BESTMOVE] = R[K.n] + CLAIM
        return True
    k1, k2 = _keys(st, counters)
    slot = _slot(k1, k2, tt)
    have = tt[slot, _TGEN] == counters[GENERATION] and tt[slot, _TK1] == k1 and tt[slot, _TK2] == k2
    fi[p, _SLOT] = slot
    fi[p, _K1] = k1
    fi[p, _K2] = k2
    fi[p, _HAVE] = 1 if have else 0
    first = -1
    if have:
        e_depth = tt[slot, _TDEPTH]
        e_lower = bits_float(tt[slot, _TLOWER])
        e_upper = bits_float(tt[slot, _TUPPER])
        first = tt[slot, _TMOVE]
        fi[p, _EDEPTH] = e_depth
        fv[p, _ELOWER] = e_lower
        fv[p, _EUPPER] = e_upper
        if e_depth >= fi[p, _DEPTH]:
            if e_lower >= fv[p, _BETA] or e_lower == e_upper:
                fv[p, _BEST] = e_lower
                fi[p, _BESTMOVE] = first
                return True
            if e_upper <= fv[p, _ALPHA]:
                fv[p, _BEST] = e_upper
                fi[p, _BESTMOVE] = first
                return True
            fv[p, _ALPHA] = max(fv[p, _ALPHA], e_lower)
            fv[p, _BETA] = min(fv[p, _BETA], e_upper)
    fv[p, _A0] = fv[p, _ALPHA]
    fv[p, _B0] = fv[p, _BETA]
    m = _ordered(st, R, first, moves, p)
    close = R[K.n] + CLOSE
    if not at_root and not (flags & CLOSE_BELOW_ROOT) and m > 1:
        for i in range(m):
            if moves[p, i] == close:
                for j in range(i, m - 1):
                    moves[p, j] = moves[p, j + 1]
                m -= 1
                break
    fi[p, _N] = m
    fi[p, _IDX] = 0
    fv[p, _BEST] = -INF if me == root else INF
    fi[p, _BESTMOVE] = moves[p, 0]
    fi[p, _TRICKS] = st[F.tricks] + st[F.tricks + 1]
    fi[p, _MOVER] = me
    _save(st, undo, p)
    return False


@njit(cache=True)
def _store(p, tt, counters, fv, fi):
    """Close the node at ply ``p``: its bounds into the table (not after the node limit: they are void)."""
    if counters[ABORTED]:
        return
    _put(tt, fi[p, _SLOT], fi[p, _K1], fi[p, _K2], counters[GENERATION], fi[p, _DEPTH], fi[p, _BESTMOVE],
         fv[p, _BEST], fv[p, _A0], fv[p, _B0], fi[p, _HAVE] and fi[p, _EDEPTH] == fi[p, _DEPTH], fv[p, _ELOWER],
         fv[p, _EUPPER])


@njit(cache=True, inline="always")
def _put(tt, slot, k1, k2, generation, depth, move, best, a0, b0, merge, e_lower, e_upper):
    """Write a searched node's entry: fail-soft bounds of ``best`` in the window ``(a0, b0)``, narrowed by the old
    entry's when ``merge`` (it has the same keys and depth)."""
    lower = -INF
    upper = INF
    if best <= a0:
        upper = best
    elif best >= b0:
        lower = best
    else:
        lower = best
        upper = best
    if merge:
        lower = max(lower, e_lower)
        upper = min(upper, e_upper)
    tt[slot, _TK1] = k1
    tt[slot, _TK2] = k2
    tt[slot, _TGEN] = generation
    tt[slot, _TDEPTH] = depth
    tt[slot, _TMOVE] = move
    tt[slot, _TLOWER] = float_bits(lower)
    tt[slot, _TUPPER] = float_bits(upper)


@njit(cache=True, inline="always")
def _slot(k1, k2, tt):
    h = (k1 * _M1 ^ k2) * _M2
    return (h ^ (h >> 29)) & (tt.shape[0] - 1)


# ---------------------------------------------------------------------------------------------- strict phase
@njit(cache=True)
def _strict_root(st, R, root, flags, alpha, beta, depth, tt, counters, scratch):
    """:func:`_strict` from the state array ``st``, whose stock is closed or exhausted and whose search reaches the
    end of the hand (``depth`` >= the tricks left): its context into ``counters`` and ``scratch``."""
    counters[_XROOT] = root
    counters[_XTRUMP] = st[F.trump]
    counters[_XCLOSED] = st[F.closed_by]
    counters[_XSNAP_POINTS] = st[F.snap_points]
    counters[_XSNAP_TRICKS] = st[F.snap_tricks]
    counters[_XSTOCK] = st[F.stock_end] - st[F.stock_top]
    counters[_XEXACT] = 1 if st[F.closed_by] >= 0 and not (flags & HORIZON_AFTER_CLOSE) else 0
    scratch[F.closed_by] = st[F.closed_by]
    scratch[F.snap_points] = st[F.snap_points]
    scratch[F.snap_tricks] = st[F.snap_tricks]
    return _strict(st[F.hands], st[F.hands + 1], st[F.table], st[F.to_move], st[F.card_points],
                   st[F.card_points + 1], st[F.marriage_points], st[F.marriage_points + 1], st[F.tricks],
                   st[F.tricks + 1], st[F.announced], depth, alpha, beta, R, tt, counters, scratch)


@njit(cache=True)
def _strict_score(scratch, R, root, seat, last, cp0, cp1, mp0, mp1, tr0, tr1):
    """The value for ``root`` of the hand ending now: seat ``seat`` took the last trick (``last``) or claims, by the
    core's own scoring (:func:`schnapsen_env.rules_core.last_trick`, :func:`schnapsen_env.rules_core.claim`) on ``scratch``."""
    scratch[F.card_points] = cp0
    scratch[F.card_points + 1] = cp1
    scratch[F.marriage_points] = mp0
    scratch[F.marriage_points + 1] = mp1
    scratch[F.tricks] = tr0
    scratch[F.tricks + 1] = tr1
    scratch[F.bonus] = 0
    scratch[F.bonus + 1] = 0
    if last:
        last_trick(scratch, R, seat)
    else:
        claim(scratch, R, seat)
    return _terminal(scratch, root)


@njit(cache=True)
def _strict(h0, h1, table, me, cp0, cp1, mp0, mp1, tr0, tr1, announced, depth, alpha, beta, R, tt, counters,
            scratch):
    """Fail-soft alpha-beta once the stock is closed or exhausted (R10), the state in scalars: no stock to draw
    from, no exchange or close, every child made in the arguments of a recursive call instead of in a state
    array. The same search as :func:`_search` there (the claim cut, the table's entries and keys, the move order,
    the bounds), so node for node the same tree; about 95% of a full solve's nodes from trick 1 are here.
    Returns ``(value, best action)``; the context (root, trump, closing) is in ``counters`` (:func:`_strict_root`)."""
    counters[NODES] += 1
    n = R[K.n]
    if counters[NODES] > counters[LIMIT]:  # as in _enter
        counters[ABORTED] = 1
        return 0.0, n
    rps = R[K.rps]
    root = counters[_XROOT]
    target = R[K.claim_target]
    if me == 0:
        hand = h0
        mine = cp0 + (mp0 if tr0 else 0)
    else:
        hand = h1
        mine = cp1 + (mp1 if tr1 else 0)
    if table < 0 and not R[K.claim_auto] and mine >= target:  # the claim cut of _enter
        return _strict_score(scratch, R, root, me, False, cp0, cp1, mp0, mp1, tr0, tr1), n + CLAIM
    closed = counters[_XCLOSED]
    k1 = _key1(h0, h1, me, table, closed, announced, tr0, tr1)
    k2 = _key2(cp0, cp1, mp0, mp1, counters[_XSNAP_POINTS], counters[_XSNAP_TRICKS], counters[_XSTOCK])
    slot = _slot(k1, k2, tt)
    generation = counters[GENERATION]
    have = tt[slot, _TGEN] == generation and tt[slot, _TK1] == k1 and tt[slot, _TK2] == k2
    first = -1
    e_depth = 0
    e_lower = -INF
    e_upper = INF
    if have:
        e_depth = tt[slot, _TDEPTH]
        e_lower = bits_float(tt[slot, _TLOWER])
        e_upper = bits_float(tt[slot, _TUPPER])
        first = tt[slot, _TMOVE]
        if e_depth >= depth:
            if e_lower >= beta or e_lower == e_upper:
                return e_lower, first
            if e_upper <= alpha:
                return e_upper, first
            alpha = max(alpha, e_lower)
            beta = min(beta, e_upper)
    a0 = alpha
    b0 = beta
    trump = counters[_XTRUMP]
    if table >= 0:
        bits = follow_bits(hand, table, trump, R)
    else:
        bits = lead_bits(hand, mine, announced, tr0 + tr1, False, 0, trump, R)
    packed, m = _order(bits, table, trump, n, rps, first)
    maximize = me == root
    best = -INF if maximize else INF
    best_move = packed & 31
    exact = counters[_XEXACT]
    none = np.int64(-1)  # no card on the table, no marriage announced (an int64: a literal -1 would compile another
    # specialisation of this function, whose cached call numba leaves unresolved: numba issue #6713)
    for i in range(m):
        if alpha >= beta:
            break
        a = (packed >> (5 * i)) & 31
        if a < n:
            g0 = h0 & ~(1 << a) if me == 0 else h0
            g1 = h1 & ~(1 << a) if me == 1 else h1
            if table < 0:  # lead
                v, _ = _strict(g0, g1, a, 1 - me, cp0, cp1, mp0, mp1, tr0, tr1, none, EXACT if exact else depth,
                               alpha, beta, R, tt, counters, scratch)
            else:  # follow: the trick (R6)
                w = trick_winner(table, a, 1 - me, trump, rps)
                won = card_points(table, rps) + card_points(a, rps)
                if w == 0:
                    c0, c1, t0, t1, left, wins = cp0 + won, cp1, tr0 + 1, tr1, g0, cp0 + won + mp0
                else:
                    c0, c1, t0, t1, left, wins = cp0, cp1 + won, tr0, tr1 + 1, g1, cp1 + won + mp1
                if left == 0:  # the last trick
                    v = _strict_score(scratch, R, root, w, True, c0, c1, mp0, mp1, t0, t1)
                elif R[K.claim_auto] and wins >= target:  # R21 (W1)
                    v = _strict_score(scratch, R, root, w, False, c0, c1, mp0, mp1, t0, t1)
                else:
                    v, _ = _strict(g0, g1, none, w, c0, c1, mp0, mp1, t0, t1, none, EXACT if exact else depth - 1,
                                   alpha, beta, R, tt, counters, scratch)
        elif a < n + EXCHANGE:  # marriage (R12)
            suit = a - n
            q0 = mp0
            q1 = mp1
            if me == 0:
                q0 += marriage_value(suit, trump, R)
                after = cp0 + (q0 if tr0 else 0)
            else:
                q1 += marriage_value(suit, trump, R)
                after = cp1 + (q1 if tr1 else 0)
            if R[K.claim_auto] and after >= target:  # R21 (W2)
                v = _strict_score(scratch, R, root, me, False, cp0, cp1, q0, q1, tr0, tr1)
            else:
                v, _ = _strict(h0, h1, none, me, cp0, cp1, q0, q1, tr0, tr1, suit, EXACT if exact else depth,
                               alpha, beta, R, tt, counters, scratch)
        else:  # claim (R20): the only other action once the stock is closed or exhausted
            v = _strict_score(scratch, R, root, me, False, cp0, cp1, mp0, mp1, tr0, tr1)
        if maximize:
            if v > best:
                best = v
                best_move = a
                if v > alpha:
                    alpha = v
        elif v < best:
            best = v
            best_move = a
            if v < beta:
                beta = v
    if not counters[ABORTED]:
        _put(tt, slot, k1, k2, generation, depth, best_move, best, a0, b0, have and e_depth == depth, e_lower,
             e_upper)
    return best, best_move


@njit(cache=True)
def _search(st, undo, moves, base, R, root, alpha, beta, depth, at_root, flags, tt, counters, fv, fi):
    """Fail-soft alpha-beta from ``st`` (the reference ``Solver._search``, unrolled into a loop over plies; each
    child is made in ``st`` and unmade from ``undo``); returns (value, best action) with ``st`` unchanged."""
    p = base
    fv[p, _ALPHA] = alpha
    fv[p, _BETA] = beta
    fi[p, _DEPTH] = depth
    done = _enter(st, undo, moves, p, R, root, at_root, flags, tt, counters, fv, fi)
    while True:
        if done:  # node p has its value: hand it to the parent
            v = fv[p, _BEST]
            if p == base:
                return v, fi[p, _BESTMOVE]
            p -= 1
            _restore(st, undo, p)
            a = moves[p, fi[p, _IDX] - 1]
        else:
            if fi[p, _IDX] >= fi[p, _N] or fv[p, _ALPHA] >= fv[p, _BETA]:
                _store(p, tt, counters, fv, fi)
                done = True
                continue
            a = moves[p, fi[p, _IDX]]
            fi[p, _IDX] += 1
            apply_searched(st, R, a)
            if st[F.over]:
                v = _terminal(st, root)
                _restore(st, undo, p)
            else:
                nd = fi[p, _DEPTH] - (st[F.tricks] + st[F.tricks + 1] - fi[p, _TRICKS])
                if st[F.closed_by] >= 0 and not (flags & HORIZON_AFTER_CLOSE):
                    nd = EXACT
                if nd <= 0:
                    v = _evaluate(st, root)
                    _restore(st, undo, p)
                else:
                    q = p + 1
                    fv[q, _ALPHA] = fv[p, _ALPHA]
                    fv[q, _BETA] = fv[p, _BETA]
                    fi[q, _DEPTH] = nd
                    p = q
                    done = _enter(st, undo, moves, p, R, root, False, flags, tt, counters, fv, fi)
                    if done:
                        _restore(st, undo, p - 1)  # never opened: back to the parent (its undo row)
                        done = False
                        v = fv[p, _BEST]
                        p -= 1
                    else:
                        continue
        # v is the value of action a at ply p
        done = False
        if fi[p, _MOVER] == root:
            if v > fv[p, _BEST]:
                fv[p, _BEST] = v
                fi[p, _BESTMOVE] = a
                if v > fv[p, _ALPHA]:
                    fv[p, _ALPHA] = v
        else:
            if v < fv[p, _BEST]:
                fv[p, _BEST] = v
                fi[p, _BESTMOVE] = a
                if v < fv[p, _BETA]:
                    fv[p, _BETA] = v
@njit(cache=True)
def _mtd(st, undo, moves, base, R, root, guess, depth, at_root, flags, tt, counters, fv, fi):
    """Exact value and best action from ``st`` (ply ``base``): MTD(f) (Plaat et al. 1996), zero-window searches around
    ``guess`` that share the table, since full-depth values are whole game points in -3..3. A horizon
    (``depth`` < EXACT) gives fractional values: then one full-window search."""
    if depth < EXACT:
        return _search(st, undo, moves, base, R, root, -3.0, 3.0, depth, at_root, flags, tt, counters, fv, fi)
    lo = -3.0
    hi = 3.0
    g = min(max(float(np.round(guess)), lo), hi)
    move = -1
    last = -1
    while lo < hi:
        beta = g + 1.0 if g == lo else g
        g, last = _search(st, undo, moves, base, R, root, beta - 1.0, beta, depth, at_root, flags, tt, counters, fv,
                          fi)
        if counters[ABORTED]:
            break
        if g < beta:
            hi = g
        else:
            lo = g
            move = last
    return lo, (move if move >= 0 else last)


@njit(cache=True)
def _action_values(st, undo, moves, R, actions, out, depth, flags, tt, counters, fv, fi):
    """Value of each of ``actions`` (legal in ``st``) for the player to move, into ``out`` (whose entries on entry
    are the first guesses of the zero-window searches); ``st`` is unchanged on return."""
    root = st[F.to_move]
    tricks = st[F.tricks] + st[F.tricks + 1]
    _stock_hashes(st, counters)
    _save(st, undo, 0)
    for i in range(actions.shape[0]):
        if counters[ABORTED]:
            break
        guess = out[i]
        apply_searched(st, R, actions[i])
        if st[F.over]:
            out[i] = _terminal(st, root)
        else:
            nd = depth - (st[F.tricks] + st[F.tricks + 1] - tricks)
            if st[F.closed_by] >= 0 and not (flags & HORIZON_AFTER_CLOSE):
                nd = EXACT
            if nd <= 0:
                out[i] = _evaluate(st, root)
            else:
                out[i], _ = _mtd(st, undo, moves, 1, R, root, guess, nd, False, flags, tt, counters, fv, fi)
        _restore(st, undo, 0)


@njit(cache=True)
def _world_values(template, worlds, k, R, actions, out, depth, flags, st, undo, moves, tt, counters, fv, fi):
    """Solve every world ``depth`` completed tricks ahead (``EXACT``: to the end of the hand): ``out[w, i]`` = value
    of ``actions[i]`` in world ``w``.

    A world is ``template`` (a state array with seat 1 the opponent) with ``worlds[w, :k]`` added to seat 1's
    hand and ``worlds[w, k:]`` as the face-down stock, top first (the turn-up stays last). Returns the number of
    worlds solved: all of them, or those before the one the node limit stopped (``counters[ABORTED]``)."""
    solved = 0
    for w in range(worlds.shape[0]):
        fill_world(st, template, worlds, w, k, SEARCH_SIZE)
        if w > 0:
            for i in range(out.shape[1]):
                out[w, i] = out[w - 1, i]  # first guesses: the last world's values
        _action_values(st, undo, moves, R, actions, out[w], depth, flags, tt, counters, fv, fi)
        if counters[ABORTED]:
            break
        solved += 1
    return solved


@njit(cache=True)
def _best_bits_rows(states, rows, R, n_actions, flags, st, undo, moves, tt, counters, fv, fi, actions,
                    values, out, best_values):
    """``out[r]`` = the bits of the actions of best exact value in ``states[rows[r]]`` and ``best_values[r]`` that
    value (each searched in ``st`` with a new table generation: stored bounds are relative to the player to move at
    the root)."""
    for r in range(rows.shape[0]):
        row = states[rows[r]]
        for j in range(SEARCH_SIZE):
            st[j] = row[j]
        counters[GENERATION] += 1
        bits = legal_bits(st, R)
        m = 0
        for a in range(n_actions):
            if (bits >> a) & 1:
                actions[m] = a
                values[m] = 0.0
                m += 1
        _action_values(st, undo, moves, R, actions[:m], values[:m], EXACT, flags, tt, counters, fv, fi)
        best = -INF
        for i in range(m):
            best = max(best, values[i])
        ob = 0
        for i in range(m):
            if values[i] == best:
                ob |= 1 << actions[i]
        out[r] = ob
        best_values[r] = best


# Entry points from Python: the arrays as uncounted views (see :func:`schnapsen_env.jit.uncounted`; the search
# passes them down through every call, and counting each pass halved the node rate).
@njit(cache=True)
def _mtd_entry(st, undo, moves, R, root, depth, flags, tt, counters, fv, fi):
    _stock_hashes(st, counters)
    return _mtd(uncounted(st), uncounted(undo), uncounted(moves), 0, uncounted(R), root, 0.0, depth, True, flags, uncounted(tt),
                uncounted(counters), uncounted(fv), uncounted(fi))


@njit(cache=True)
def _action_values_entry(st, undo, moves, R, actions, out, depth, flags, tt, counters, fv, fi):
    _action_values(uncounted(st), uncounted(undo), uncounted(moves), uncounted(R), uncounted(actions), uncounted(out), depth, flags, uncounted(tt),
                   uncounted(counters), uncounted(fv), uncounted(fi))


@njit(cache=True)
def _world_values_entry(template, worlds, k, R, actions, out, depth, flags, st, undo, moves, tt, counters, fv, fi):
    return _world_values(uncounted(template), uncounted(worlds), k, uncounted(R), uncounted(actions), uncounted(out),
                         depth,
                  flags,
                  uncounted(st), uncounted(undo), uncounted(moves), uncounted(tt), uncounted(counters),
                  uncounted(fv), uncounted(fi))


class CoreSolver:
    """Alpha-beta on the compiled core, with the interface and values of the reference solver of the tests
    (``tests/helpers/reference_solver.py``).

    Args:
        rules: the rule set of the positions to solve.
        close_below_root: also consider closing below the root (the reference solver's flag; off there by
            default for speed). The expert agent turns it on: in a world with the stock order known, closing
            later in the hand is a real option for both players.
        exact_after_close: search a closed stock to the end of the hand whatever the horizon (the reference
            solver's flag).
        tt_bits: the transposition table has ``2 ** tt_bits`` entries of 64 bytes; None: 14 (1 MiB) for
            ``schnapsen20``, 20 (64 MiB) for ``sixtysix24``, whose hard deals need millions of nodes from trick 1
            and search fewer nodes with the larger table (both measured with ``benchmarks/solver_core.py``).

    Attributes:
        nodes: nodes searched by the last call.
    """

    def __init__(self, rules: RuleSet, close_below_root: bool = False, exact_after_close: bool = True,
                 tt_bits: int | None = None) -> None:
        if not isinstance(rules, RuleSet):
            raise TypeError(f"rules must be a RuleSet, got {type(rules).__name__}")
        if tt_bits is None:
            tt_bits = 14 if rules.n_cards == 20 else 20
        if not isinstance(tt_bits, int) or not 8 <= tt_bits <= 26:
            raise ValueError(f"tt_bits must be an int from 8 to 26, got {tt_bits!r}")
        self.rules = rules
        self.R = rule_table(rules)
        self.close_below_root = bool(close_below_root)
        self.exact_after_close = bool(exact_after_close)
        self.flags = (CLOSE_BELOW_ROOT if close_below_root else 0) | (0 if exact_after_close else HORIZON_AFTER_CLOSE)
        size = 1 << tt_bits
        table = np.zeros((size, 8), np.int64)  # one 64-byte cache line an entry
        table[:, _TGEN] = -1
        self.tt = table  # the bounds are float64 bits (jit.float_bits) in columns _TLOWER, _TUPPER
        self.counters = np.zeros(COUNTERS, np.int64)
        self.counters[LIMIT] = NO_LIMIT
        self.state = np.zeros(STATE_SIZE, np.int64)  # the searched state, made and unmade in place
        self.undo = np.zeros((MAX_PLY, SEARCH_SIZE), np.int64)  # per ply, the state to unmake to
        self.moves = np.zeros((MAX_PLY, 32), np.int64)
        self.frame = (np.zeros((MAX_PLY, 7), np.float64), np.zeros((MAX_PLY, 11), np.int64))
        self.nodes = 0

    def clear(self) -> None:
        """Forget the table (each solve starts with an empty one anyway: a new generation)."""
        self.counters[GENERATION] += 1

    def _load(self, s) -> np.ndarray:
        """Check a GameState or state array (its rules, every field in range: the compiled search trusts it)."""
        if isinstance(s, GameState):
            if s.rules != self.rules:
                raise ValueError(f"the state is {s.rules.name} with knobs {s.rules.knobs()}, but this solver was "
                                 f"built for {self.rules.name} with {self.rules.knobs()}")
            st = from_game_state(s)
        else:
            st = s
        self.state[:] = check_state(st, self.rules)
        if self.state[F.over]:
            raise ValueError("the hand is over: nothing to solve")
        self.counters[NODES] = 0
        self.counters[GENERATION] += 1
        return self.state

    def solve(self, s, depth: int | None = None) -> tuple[float, int]:
        """``(value, best action)`` of a :class:`GameState` or state array for the player to move; value in game
        points; ``depth`` in completed tricks (None: to the end of the hand). Raises ValueError when the hand
        is over."""
        st = self._load(s)
        d = _depth(depth)
        v, a = _mtd_entry(st, self.undo, self.moves, self.R, int(st[F.to_move]), d, self.flags,
                    self.tt, self.counters, *self.frame)
        self.nodes = int(self.counters[NODES])
        return float(v), int(a)

    def action_values(self, s, depth: int | None = None) -> dict[int, float]:
        """Value (game points for the player to move) of every legal action, as the reference
        ``Solver.action_values``."""
        st = self._load(s)
        bits = legal_bits(st, self.R)
        actions = np.array([a for a in range(self.rules.n_actions) if bits >> a & 1], dtype=np.int64)
        out = np.zeros(len(actions), dtype=np.float64)  # also the first guesses
        d = _depth(depth)
        _action_values_entry(st, self.undo, self.moves, self.R, actions, out, d, self.flags, self.tt,
                       self.counters, *self.frame)
        self.nodes = int(self.counters[NODES])
        return {int(a): float(v) for a, v in zip(actions, out)}


    def best_action_bits(self, states: np.ndarray, rows: np.ndarray, with_values: bool = False):
        """The actions of best exact value (to the end of the hand) in each of ``states[rows]``, as int64 bit sets
        ``(len(rows),)`` (ties: every best action; searched with this solver's ``close_below_root``), in one
        compiled call. For the trainer's endgame teacher (``train.py --endgame-teacher-coef``): ``states`` are the
        vector env's own rows, trusted as they are (no :func:`~schnapsen_env.state_layout.check_state`), each of a hand in
        progress of this solver's rules.

        Args:
            states: int64 ``(N, STATE_SIZE)``, C-contiguous. rows: int64 ``(M,)`` indices into ``states``.
            with_values: also return each position's exact value, float64 ``(M,)`` in game points for the player
                to move (what :meth:`solve` answers), for the trainer's endgame bootstrap
                (``train.py --endgame-bootstrap``).

        Returns:
            The bit sets, or ``(bit sets, values)`` with ``with_values``.
        """
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        out = np.zeros(len(rows), dtype=np.int64)
        best = np.zeros(len(rows), dtype=np.float64)
        if len(rows):
            self.counters[NODES] = 0
            n = self.rules.n_actions
            _best_bits_rows_entry(states, rows, self.R, n, self.flags, self.state, self.undo, self.moves, self.tt,
                                  self.counters, *self.frame, np.zeros(n, np.int64), np.zeros(n, np.float64), out,
                                  best)
            self.nodes = int(self.counters[NODES])
        return (out, best) if with_values else out

    def world_values(self, template: np.ndarray, worlds: np.ndarray, k: int, actions: np.ndarray,
                     depth: int | None = None, max_nodes: int | None = None) -> np.ndarray:
        """Value of each action in each world (see :func:`_world_values`), float64 ``(W', len(actions))``: exact, or
        ``depth`` completed tricks ahead with the horizon scored by ``evaluate`` (as :meth:`action_values`).

        With ``max_nodes``, the search stops at that many nodes (a deterministic bound on the call's time): the
        rows returned are then the worlds solved before it, ``W' < W`` (possibly none), and :attr:`nodes` is
        at most ``max_nodes`` plus the few nodes of unwinding.

        Args:
            template: state array ``(STATE_SIZE,)`` of the observer (seat 0) to move, seat 1's hand holding only
                its known cards and the stock's face-down cards to be filled in.
            worlds: int64 ``(W, u)``: per world, the ``u`` unseen cards, the first ``k`` to seat 1's hand, the
                rest the face-down stock top first.
            actions: int64 ``(A,)``, legal actions of the player to move.
            depth: the horizon in completed tricks (None: to the end of the hand).
            max_nodes: the most nodes the call may search (None: no limit).

        Raises:
            InvalidPositionError: a malformed template. ValueError: worlds, ``k``, actions or ``depth`` that do not
            fit it.
        """
        d = _depth(depth)
        if max_nodes is not None and (isinstance(max_nodes, bool) or not isinstance(max_nodes, (int, np.integer))
                                      or max_nodes < 1):
            raise ValueError(f"max_nodes must be an int >= 1 or None, got {max_nodes!r}")
        template = check_state(template, self.rules)
        worlds = np.asarray(worlds)
        actions = np.asarray(actions)
        n = self.rules.n_cards
        if worlds.ndim != 2 or worlds.dtype.kind not in "iu" or not ((worlds >= 0) & (worlds < n)).all():
            raise ValueError(f"worlds must be an integer array (W, u) of card ids 0..{n - 1}")
        if not (isinstance(k, (int, np.integer)) and 0 <= k <= worlds.shape[1] <= k + MAX_STOCK):
            raise ValueError(f"k must be an int from 0 to u = {worlds.shape[1]}, with at most {MAX_STOCK} stock cards")
        face_down = worlds.shape[1] - k
        if face_down and face_down != template[F.stock_end] - template[F.stock_top] - 1:
            raise ValueError("the worlds' stock cards do not fill the template's face-down stock")
        bits = legal_bits(template, self.R)
        if actions.ndim != 1 or actions.dtype.kind not in "iu" or not all(
                0 <= a < self.rules.n_actions and bits >> int(a) & 1 for a in actions):
            raise ValueError("actions must be an integer array of actions legal in the template")
        if template[F.stock_top] != 0:
            raise ValueError("the template's stock must start at stock_top 0 (build it with from_game_state)")
        placed = int(template[F.hands]) | int(template[F.hands + 1]) | int(template[F.won]) | int(template[F.won + 1])
        if template[F.table] >= 0:
            placed |= 1 << int(template[F.table])
        if template[F.stock_end] > template[F.stock_top]:
            placed |= 1 << int(template[F.stock + template[F.stock_end] - 1])  # the turn-up stays in the template
        me = int(template[F.to_move])  # seat 0, the observer; the opponent led if a card is on the table
        hidden = (int(template[F.hands + me]).bit_count() - (1 if template[F.table] >= 0 else 0)
                  - int(template[F.hands + 1 - me]).bit_count())
        if k != hidden:
            raise ValueError(f"k must be the opponent's {hidden} hidden cards in this template, got {k}")
        for row in worlds:
            cards = 0
            for c in row:
                cards |= 1 << int(c)
            if cards.bit_count() != len(row) or cards & placed:
                raise ValueError("a world repeats a card or holds a card the template already places (hands, "
                                 "tricks won, the table, the turn-up)")
        worlds = np.ascontiguousarray(worlds, dtype=np.int64)
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        self.counters[NODES] = 0
        self.counters[ABORTED] = 0
        self.counters[LIMIT] = NO_LIMIT if max_nodes is None else int(max_nodes)
        self.counters[GENERATION] += 1  # one table for all the worlds: a state's value is the same in each
        out = np.zeros((worlds.shape[0], actions.shape[0]), dtype=np.float64)
        try:
            solved = _world_values_entry(template, worlds, int(k), self.R, actions, out, d, self.flags, self.state,
                                         self.undo, self.moves, self.tt, self.counters, *self.frame)
        finally:
            self.counters[LIMIT] = NO_LIMIT
        self.nodes = int(self.counters[NODES])
        return out[:solved]


@njit(cache=True)
def _best_bits_rows_entry(states, rows, R, n_actions, flags, st, undo, moves, tt, counters, fv, fi,
                          actions, values, out, best_values):
    _best_bits_rows(uncounted(states), uncounted(rows), uncounted(R), n_actions, flags, uncounted(st), uncounted(undo),
                    uncounted(moves), uncounted(tt), uncounted(counters), uncounted(fv), uncounted(fi),
                    uncounted(actions), uncounted(values), uncounted(out), uncounted(best_values))


drop_stale_cache(_search, fill_world)  # before any cached function loads (see drop_stale_cache)


def _depth(depth) -> int:
    """The search horizon in completed tricks: None (to the end) or an int from 1 to 30."""
    if depth is None:
        return EXACT
    if not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or not 1 <= depth <= 30:
        raise ValueError(f"depth must be None (to the end of the hand) or an int from 1 to 30 tricks, got {depth!r}")
    return int(depth)


def perft_nodes(deals: int = 8, deals_66: int = 4) -> dict[str, list[list[float]]]:
    """The solver's perft (as chess engines count nodes to catch regressions): ``[value, nodes]`` of full solves
    from trick 1 of seeded deals (``GameState.new_hand(rules, default_rng(seed))``, seeds 0..; ``deals`` of
    ``schnapsen20``, ``deals_66`` of ``sixtysix24``, whose solves take up to millions of nodes), per ruleset
    (default knobs) and ``close_below_root``. ``benchmarks/solver_core_nodes.json`` records them and
    ``tests/test_solver_core.py`` checks them."""
    out = {}
    for ruleset, count in (("schnapsen20", deals), ("sixtysix24", deals_66)):
        rules = RuleSet.make(ruleset)
        for close in (False, True):
            s = CoreSolver(rules, close_below_root=close)
            counts = []
            for seed in range(count):
                value, _ = s.solve(GameState.new_hand(rules, rng=np.random.default_rng(seed)))
                counts.append([value, s.nodes])
            out[f"{ruleset} close_below_root={close}"] = counts
    return out


__all__ = ["CoreSolver", "perft_nodes"]
