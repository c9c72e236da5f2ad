"""The compiled heuristic: :class:`agents.scripted.heuristic.HeuristicAgent`'s rules of thumb over a batch of observations.

The readable reference is :mod:`agents.scripted.heuristic` (its class docstring states the rules); this module is the same
decision procedure, step for step, compiled with numba so that a trainer can play the heuristic on a whole batch of
rows in one call (:meth:`HeuristicAgent.act_batch <agents.scripted.heuristic.HeuristicAgent.act_batch>`, about a microsecond
a row instead of tens of microseconds a call). ``tests/test_heuristic_batch.py`` checks the two in lockstep on many
thousands of positions under every rule knob of both rulesets, and on scrambled observations and masks.

Everything the kernel needs to know about the rules and the observation comes in as arrays built by
:func:`tables` (the deck's per-card tables, the action ids, the observation offsets of :func:`encoding.layout
<schnapsen_env.encoding.layout>`, the scales and bounds); no constant of another module is read inside a compiled
function. So a change elsewhere (a new observation layout in ``encoding.py``, another claim target) reaches the
kernel through :func:`tables` and cannot leave a stale numba cache behind: numba checks this file's own source
before reusing its cache, and that is all the compiled code depends on (unlike :mod:`schnapsen_env.rules_core` and
:mod:`agents.search.solver_core`, which freeze the core's layout and need :func:`~schnapsen_env.jit.drop_stale_cache`).

The kernel trusts its arrays (numba does not check bounds): ``HeuristicAgent.act_batch`` checks shapes and dtypes
before calling it. Rows it cannot decide are marked with a negative code (:data:`NO_LEGAL_ACTION`, ...) for the
caller to turn into an error naming the row.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from schnapsen_env.encoding import PENDING_SCALE, POINTS_SCALE, layout, obs_bounds
from schnapsen_env.ruleset import RuleSet

#: Entries of the integer parameter table (:func:`tables`), declared once: deck size and full mask, the action ids
#: of marriage C (the others follow), exchange, close and claim, the points rules, then the start of each
#: observation slice the heuristic reads.
INT_FIELDS = ("n", "full", "marriage", "exchange", "close", "claim", "claim_target", "close_opp_points",
              "trump_marriage_points", "marriage_points",
              "hand", "table", "unseen", "me_won", "opp_won", "trump", "stock_size", "closed", "points", "pending")
I = namedtuple("IntOffsets", INT_FIELDS)(*range(len(INT_FIELDS)))
#: Entries of the float parameter table: observation scales of points and pending points, the bounds of those two
#: entries (the observation space's), and the "stock is empty" threshold on the ``stock_size`` entry.
FLOAT_FIELDS = ("points_scale", "pending_scale", "points_high", "pending_high", "empty_stock")
X = namedtuple("FloatOffsets", FLOAT_FIELDS)(*range(len(FLOAT_FIELDS)))
#: Columns of the per-card table: suit, rank, card points, the cards of the same suit that beat it (a mask).
SUIT, RANK, POINTS, HIGHER = range(4)
#: Columns of the per-suit table: the suit's cards, its king and queen (the marriage pair).
SUIT_CARDS, PAIR = range(2)

#: Codes the kernel writes for a row it cannot decide (action ids are >= 0).
NO_LEGAL_ACTION = -1  # the mask has no legal action
BAD_POINTS = -2  # the counted-points entry is not a number in the observation space
BAD_PENDING = -3  # the pending-points entry is not a number in the observation space
NO_CARD_TO_FOLLOW = -4  # a card lies on the table, yet no card is legal (and more than one action is)

#: The threshold under which the observation's ``stock_size`` entry reads as an empty stock.
EMPTY_STOCK = 1e-6

Tables = namedtuple("Tables", ("ints", "floats", "cards", "suits"))


def tables(rules: RuleSet, close_opp_points: int) -> Tables:
    """The arrays the kernel reads for ``rules``: ``ints`` (int64, :data:`INT_FIELDS`), ``floats`` (float64,
    :data:`FLOAT_FIELDS`), ``cards`` (int64 ``(n, 4)``: suit, rank, points, higher) and ``suits`` (int64 ``(4, 2)``:
    suit mask, king-queen mask), all from the deck, the action table and :func:`encoding.layout
    <schnapsen_env.encoding.layout>`.

    Args:
        rules: the agent's rules (deck, action ids, observation layout).
        close_opp_points: card points credited for the opponent's card in each sure trick of the close rule
            (:data:`agents.scripted.heuristic.CLOSE_OPP_CARD_POINTS`).
    """
    deck = rules.deck
    lay = layout(rules)
    _, high = obs_bounds(rules)
    values = dict(
        n=deck.size, full=deck.full, marriage=rules.marriage_action(0), exchange=rules.exchange_action,
        close=rules.close_action, claim=rules.claim_action, claim_target=rules.claim_target,
        close_opp_points=close_opp_points, trump_marriage_points=rules.shape.marriage[1],
        marriage_points=rules.shape.marriage[0],
        **{name: lay[name].start for name in ("hand", "table", "unseen", "me_won", "opp_won", "trump", "stock_size",
                                              "closed", "points", "pending")},
    )
    ints = np.array([values[k] for k in INT_FIELDS], dtype=np.int64)
    fvalues = dict(points_scale=POINTS_SCALE, pending_scale=PENDING_SCALE, points_high=float(high[lay["points"].start]),
                   pending_high=float(high[lay["pending"].start]), empty_stock=EMPTY_STOCK)
    floats = np.array([fvalues[k] for k in FLOAT_FIELDS], dtype=np.float64)
    cards = np.array([[deck.suit[c], deck.rank[c], deck.points[c], deck.higher[c]] for c in range(deck.size)],
                     dtype=np.int64)
    suits = np.array([[deck.suit_bits[s], deck.pair_bits[s]] for s in range(4)], dtype=np.int64)
    return Tables(ints, floats, cards, suits)


# ---------------------------------------------------------------------------------------------- card sets
@njit(cache=True)
def _popcount(m):
    k = 0
    while m:
        m &= m - 1
        k += 1
    return k


@njit(cache=True, inline="always")
def _by_points(cards, pool, sign):
    """Card of a non-empty set with the fewest points (``sign`` 1) or the most (``sign`` -1), the lowest id on
    ties."""
    best = -1
    best_key = 1 << 30
    c = 0
    while pool >> c:
        if pool >> c & 1 and sign * cards[c, POINTS] < best_key:
            best = c
            best_key = sign * cards[c, POINTS]
        c += 1
    return best


@njit(cache=True)
def _cheapest(cards, pool):
    """Card of a non-empty set with the fewest points (lowest id on ties)."""
    return _by_points(cards, pool, 1)


@njit(cache=True)
def _dearest(cards, pool):
    """Card of a non-empty set with the most points (lowest id on ties)."""
    return _by_points(cards, pool, -1)


@njit(cache=True)
def _points_of(cards, m):
    total = 0
    c = 0
    while m >> c:
        if m >> c & 1:
            total += cards[c, POINTS]
        c += 1
    return total


@njit(cache=True)
def _pairs(suits, hand):
    """Kings and queens of ``hand`` that form a marriage pair."""
    out = 0
    for s in range(4):
        kq = suits[s, PAIR]
        if hand & kq == kq:
            out |= kq
    return out


@njit(cache=True)
def _sure_winners(cards, hand, gone):
    """Cards of ``hand`` such that every higher card of their suit is in ``hand`` or gone (rule 3)."""
    out = 0
    mine_or_gone = hand | gone
    c = 0
    while hand >> c:
        if hand >> c & 1 and cards[c, HIGHER] & ~mine_or_gone == 0:
            out |= 1 << c
        c += 1
    return out


@njit(cache=True)
def _plane(obs, row, start, n):
    """The 0/1 card plane at ``obs[row, start:start + n]`` as a bit set (entries > 0.5)."""
    m = 0
    for c in range(n):
        if obs[row, start + c] > 0.5:
            m |= 1 << c
    return m


@njit(cache=True)
def _argmax4(obs, row, start):
    """``np.argmax`` of the 4 entries at ``start`` (first maximum; a NaN counts as the maximum, as in numpy)."""
    best = 0
    if np.isnan(obs[row, start]):
        return 0
    for k in range(1, 4):
        x = obs[row, start + k]
        if np.isnan(x):
            return k
        if x > obs[row, start + best]:
            best = k
    return best


# ---------------------------------------------------------------------------------------------- the rules
@njit(cache=True)
def _lead(cards, suits, trump, strict, hand, unseen, gone, legal_cards):
    """Rules 4 (after announcing) and 5 of the reference: the card to lead, from at least two legal cards."""
    trumps = legal_cards & suits[trump, SUIT_CARDS]
    kq = legal_cards & _pairs(suits, legal_cards)
    if kq == legal_cards and _popcount(kq) == 2:  # after announcing: only the K and Q of that suit
        k = 0
        while not legal_cards >> k & 1:
            k += 1  # the king (rank 2); the queen (rank 3) is the next card id
        return k if strict else k + 1
    if strict:
        sure = _sure_winners(cards, hand, gone) & legal_cards
        if sure:
            pick = sure & trumps
            if not pick:
                pick = sure
            return _dearest(cards, pick)
        return _cheapest(cards, legal_cards)
    plain = legal_cards & ~trumps
    if plain:
        keep = _pairs(suits, hand)
        # a ten whose ace is still unseen is a present for the opponent's ace
        exposed = 0
        c = 0
        while plain >> c:
            if plain >> c & 1 and cards[c, RANK] == 1:
                if unseen >> (c - 1) & 1:  # the ace (rank 0) is the card id before the ten (rank 1)
                    exposed |= 1 << c
            c += 1
        pool = plain & ~keep & ~exposed
        if pool:
            return _cheapest(cards, pool)
        pool = plain & ~keep
        if pool:
            return _cheapest(cards, pool)
        return _cheapest(cards, plain)
    return _cheapest(cards, legal_cards)


@njit(cache=True)
def _follow(cards, suits, ints, trump, strict, lead, hand, me_points, me_pending, legal_cards):
    """Rules 6 and 7 of the reference: the card to play on ``lead``."""
    if not legal_cards:
        return NO_CARD_TO_FOLLOW
    lead_suit = cards[lead, SUIT]
    winners = 0
    c = 0
    while legal_cards >> c:
        if legal_cards >> c & 1:
            if cards[c, SUIT] == lead_suit:
                beats = cards[c, RANK] < cards[lead, RANK]
            else:
                beats = cards[c, SUIT] == trump
            if beats:
                winners |= 1 << c
        c += 1
    if strict:
        if winners:
            return _cheapest(cards, winners)
        return _cheapest(cards, legal_cards)
    # OPEN phase: any card is legal (R9)
    if winners:
        need = ints[I.claim_target] - me_points - me_pending
        cheap = _cheapest(cards, winners)
        if cards[lead, POINTS] + cards[cheap, POINTS] >= need:
            return cheap
        if cards[lead, RANK] <= 1:  # a led ace or ten
            same = winners & suits[lead_suit, SUIT_CARDS]
            if same:
                return _cheapest(cards, same)
            if lead_suit != trump:
                low_trump = winners & suits[trump, SUIT_CARDS]
                if low_trump:
                    return _cheapest(cards, low_trump)
    plain = legal_cards & ~suits[trump, SUIT_CARDS]
    if plain:
        pool = plain & ~_pairs(suits, hand)
        if not pool:
            pool = plain
        return _cheapest(cards, pool)
    return _cheapest(cards, legal_cards)


@njit(cache=True)
def _act_row(obs, legal, row, ints, floats, cards, suits):
    """``HeuristicAgent.act`` on row ``row``: an action id, or a negative code (module docstring)."""
    mask = 0
    first = -1
    count = 0
    for a in range(legal.shape[1]):
        if legal[row, a]:
            mask |= 1 << a
            count += 1
            if first < 0:
                first = a
    if count == 0:
        return NO_LEGAL_ACTION
    if count == 1:
        return first
    # the view of the observation (the reference's _View), in its order
    n = ints[I.n]
    x = np.float64(obs[row, ints[I.points]])
    if not (0.0 <= x <= floats[X.points_high]):  # False for NaN too
        return BAD_POINTS
    me_points = np.int64(np.rint(x * floats[X.points_scale]))  # rint: half to even, as Python's round
    x = np.float64(obs[row, ints[I.pending]])
    if not (0.0 <= x <= floats[X.pending_high]):
        return BAD_PENDING
    me_pending = np.int64(np.rint(x * floats[X.pending_scale]))
    hand = _plane(obs, row, ints[I.hand], n)
    table = -1
    for c in range(n):
        if obs[row, ints[I.table] + c] > 0.5:
            table = c  # the highest set entry, as the reference's bit_length() - 1
    unseen = _plane(obs, row, ints[I.unseen], n)
    gone = _plane(obs, row, ints[I.me_won], n) | _plane(obs, row, ints[I.opp_won], n)
    trump = _argmax4(obs, row, ints[I.trump])
    strict = obs[row, ints[I.closed]] > 0.5 or np.float64(obs[row, ints[I.stock_size]]) < floats[X.empty_stock]

    marriage, exchange, close, claim = ints[I.marriage], ints[I.exchange], ints[I.close], ints[I.claim]
    legal_cards = mask & ints[I.full]
    # 1. claim
    if mask >> claim & 1 and me_points >= ints[I.claim_target]:
        return claim
    if table >= 0:
        return _follow(cards, suits, ints, trump, strict, table, hand, me_points, me_pending, legal_cards)
    # 2. exchange
    if mask >> exchange & 1:
        return exchange
    marriages = (mask >> marriage) & 15  # suit s legal <=> bit s
    # 3. close
    if mask >> close & 1:
        best_marriage = 0
        if marriages >> trump & 1:
            best_marriage = ints[I.trump_marriage_points]
        elif marriages:
            best_marriage = ints[I.marriage_points]
        sure = _sure_winners(cards, hand, gone)
        n_sure = _popcount(sure)
        estimate = (me_points + best_marriage + me_pending + _points_of(cards, sure)
                    + ints[I.close_opp_points] * n_sure)
        if n_sure and estimate >= ints[I.claim_target]:
            return close
    # 4. marriages
    if marriages:
        if marriages >> trump & 1:
            return marriage + trump
        s = 0
        while not marriages >> s & 1:
            s += 1
        return marriage + s
    if not legal_cards:
        return first
    if legal_cards & (legal_cards - 1) == 0:  # a single card to lead
        c = 0
        while legal_cards >> c != 1:
            c += 1
        return c
    return _lead(cards, suits, trump, strict, hand, unseen, gone, legal_cards)


@njit(cache=True)
def act_rows(obs, legal, ints, floats, cards, suits, out):
    """``out[i]`` = the heuristic's action for row ``i`` (or a negative code, module docstring).

    Args:
        obs: float32 ``(B, obs_size)``, C-contiguous.
        legal: uint8 ``(B, n_actions)``, nonzero = legal.
        ints, floats, cards, suits: :func:`tables` of the agent's rules.
        out: int64 ``(B,)``, overwritten.
    """
    for row in range(obs.shape[0]):
        out[row] = _act_row(obs, legal, row, ints, floats, cards, suits)


__all__ = ["BAD_PENDING", "BAD_POINTS", "NO_CARD_TO_FOLLOW", "NO_LEGAL_ACTION", "Tables", "act_rows", "tables"]
