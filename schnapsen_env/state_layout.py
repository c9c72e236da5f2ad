"""The compiled twin's state array and rule table: the rules as data (:data:`schnapsen_env.rules.FIELDS`) laid out
as integers, and the conversion between that array and :class:`~schnapsen_env.rules.GameState`.

Plain Python and numpy, no numba: the compiled rules (:mod:`schnapsen_env.rules_core`), the vector env, the search
agents and the exact tools read the layout from here, and a module that only needs an offset (``F.to_move``)
imports it without compiling anything.

**State array** (``np.ndarray`` of ``int64``, shape ``(STATE_SIZE,)``; a batch is ``(N, STATE_SIZE)``). The
fields, their sizes and offsets are declared once, in :data:`STATE_FIELDS`, derived from ``GameState``'s
``FIELDS`` (so a field added there appears in both engines); :data:`F` holds the offsets (``st[F.hands + seat]``).
Seats are 0/1, cards are card ids, card sets are bit sets, as in ``GameState``:

* ``hands``, ``won``, ``known``, ``led``, ``followed`` (2 each): card sets per seat; ``led``/``followed`` are the
  cards the seat led / followed with in completed tricks (the observation's lead and follow planes);
* ``card_points``, ``tricks``, ``marriage_points``, ``marriage_suits``, ``bonus``, ``match_points`` (2 each);
* ``stock`` (12): card ids, the stock is ``stock[stock_top:stock_end]``, top first, turn-up last (R19: still
  listed after closing);
* ``trump``, ``leader``, ``to_move``, ``dealer``, ``table`` (-1 = empty), ``closed_by`` (-1),
  ``snap_points``/``snap_tricks`` (the closing snapshot, R19), ``announced`` (-1), ``exchanged`` (0/1),
  ``carry``;
* ``over`` (0/1), ``res_winner`` (-1 = none or tie), ``res_points``, ``res_reason`` (index into
  :data:`schnapsen_env.rules.RESULT_REASONS`);
* ``history_len`` and ``history`` (48 = 12 tricks x ``(leader, lead, follow, winner)``), last, so that a search
  can copy only the fields before it (:data:`SEARCH_SIZE`): the solver never reads the history.

**Rule table**: :func:`rule_table` turns a :class:`~schnapsen_env.ruleset.RuleSet` into a small ``int64`` array
(offsets in :data:`K`) that every compiled function takes.

**Conversion**: :func:`from_game_state` and :func:`to_game_state` (and :func:`result_of`) go between the engines;
the compiled functions trust their arrays (numba does not check bounds), so a hand-made array goes through
:func:`check_state` first, since a malformed array can corrupt memory.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from schnapsen_env.errors import InvalidPositionError
from schnapsen_env.rules import FIELDS, RESULT_REASONS, GameState, Reason, Result, Trick
from schnapsen_env.ruleset import RuleSet, SpecialAction

MAX_STOCK = 12  # sixtysix24: 24 - 2 * 6
#: Offsets of the non-play actions after the card ids (:class:`SpecialAction`), as plain ints for numba.
EXCHANGE, CLOSE, CLAIM = int(SpecialAction.EXCHANGE), int(SpecialAction.CLOSE), int(SpecialAction.CLAIM)
MAX_TRICKS = 12

#: :class:`GameState` fields (:data:`schnapsen_env.rules.FIELDS`) that the array stores in another form: the
#: stock as ids with two cursors, the closing snapshot and the result as separate integers.
_CONVERTED = ("stock", "closing_snapshot", "result")
#: GameState fields stored as they are, one integer (two for per-seat fields) each, in the order of ``FIELDS``.
SHARED_FIELDS = tuple((name, per_seat) for name, per_seat, _ in FIELDS if name not in _CONVERTED)

#: Fields that no search reads (what only observations, positions and records need): the array keeps them after the
#: searched fields, so that a search copies only those (:data:`SEARCH_SIZE`).
UNSEARCHED = ("won", "known", "marriage_suits", "dealer", "match_points", "carry", "led", "followed", "history_len",
              "history")
_ALL_FIELDS = tuple((name, 2 if per_seat else 1) for name, per_seat in SHARED_FIELDS) + (
    ("led", 2), ("followed", 2), ("stock", MAX_STOCK), ("stock_top", 1), ("stock_end", 1), ("snap_points", 1),
    ("snap_tricks", 1), ("over", 1), ("res_winner", 1), ("res_points", 1), ("res_reason", 1),
    ("history_len", 1), ("history", 4 * MAX_TRICKS),
)
#: The state array's fields and their sizes, declared once (see the module docstring): the shared GameState
#: fields and the array's own, those a search reads first, then :data:`UNSEARCHED` (``history`` last).
STATE_FIELDS = tuple(f for f in _ALL_FIELDS if f[0] not in UNSEARCHED) + tuple(
    f for name in UNSEARCHED for f in _ALL_FIELDS if f[0] == name)


def _offsets(fields):
    names, offs, at = [], [], 0
    for name, size in fields:
        names.append(name)
        offs.append(at)
        at += size
    return namedtuple("StateOffsets", names)(*offs), at


#: Offsets of :data:`STATE_FIELDS` in the state array.
F, STATE_SIZE = _offsets(STATE_FIELDS)


def _fresh_state() -> np.ndarray:
    """The state array of every field at its default (:data:`schnapsen_env.rules.FIELDS`; no stock, no closing
    snapshot, no result), on which :func:`schnapsen_env.rules_core.deal` lays out a deal."""
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    for name, per_seat, default in FIELDS:
        if name not in _CONVERTED:
            at = getattr(F, name)
            st[at:at + (2 if per_seat else 1)] = int(default)
    st[F.res_winner] = st[F.res_reason] = -1  # no result (result_of)
    return st


#: Every field at its default (see :func:`_fresh_state`), int64 ``(STATE_SIZE,)``.
FRESH = _fresh_state()

#: The fields a search copies from node to node (those before :data:`UNSEARCHED`).
SEARCH_SIZE = getattr(F, UNSEARCHED[0])

#: The rule table's entries (:func:`rule_table`), declared once.
RULE_FIELDS = ("n", "rps", "hand", "n_tricks", "stock0", "claim_target", "schneider_below", "marriage_plain",
               "marriage_trump", "schnapsen_family", "exchange_min_stock", "close_min_stock", "marriage_automatic",
               "marriage_on_opening_lead", "marriage_window", "must_head", "claim_auto", "false_claim",
               "last_trick_one", "must_claim", "reference_at_end", "failed_flat3", "last_trick_bonus",
               "bonus_when_closed", "exchange_rank", "tie_last_trick", "match_target")
K = namedtuple("RuleOffsets", RULE_FIELDS)(*range(len(RULE_FIELDS)))

_WINDOWS = ("any", "first_6_tricks", "stock_open")
_FALSE_CLAIMS = ("reject", "mirror", "pagat")
#: Result reasons as the integers the array stores (``res_reason``: the index in ``RESULT_REASONS``).
REASON = namedtuple("Reasons", RESULT_REASONS)(*range(len(RESULT_REASONS)))


def rule_table(rules: RuleSet) -> np.ndarray:
    """The rule knobs of ``rules`` as the ``int64`` array (``(len(RULE_FIELDS),)``) the compiled rules read."""
    r = rules
    values = dict(
        n=r.n_cards, rps=r.deck.ranks_per_suit, hand=r.hand_size, n_tricks=r.n_tricks, stock0=r.stock0,
        claim_target=r.claim_target, schneider_below=r.schneider_below, marriage_plain=r.shape.marriage[0],
        marriage_trump=r.shape.marriage[1], schnapsen_family=int(r.shape.family == "schnapsen"),
        exchange_min_stock=r.exchange_min_stock, close_min_stock=r.close_min_stock,
        marriage_automatic=int(r.marriage_declaration == "automatic"),
        marriage_on_opening_lead=int(r.marriage_on_opening_lead), marriage_window=_WINDOWS.index(r.marriage_window),
        must_head=int(r.must_head), claim_auto=int(r.claim_mode == "auto"),
        false_claim=_FALSE_CLAIMS.index(r.false_claim), last_trick_one=int(r.unclaimed_last_trick_value == "one"),
        must_claim=int(r.closed_hand_end == "must_claim"), reference_at_end=int(r.closing_reference == "at_end"),
        failed_flat3=int(r.failed_close_value == "flat3"), last_trick_bonus=r.last_trick_bonus,
        bonus_when_closed=int(r.last_trick_bonus_when_closed), exchange_rank=r.exchange_rank_index,
        tie_last_trick=int(r.tie == "last_trick"), match_target=r.match_target,
    )
    return np.array([values[k] for k in RULE_FIELDS], dtype=np.int64)


# ---------------------------------------------------------------------------------------------- conversion
def from_game_state(g: GameState, out: np.ndarray | None = None) -> np.ndarray:
    """The state array of a :class:`GameState` (its undo stack is not kept).

    Raises:
        ValueError: a stock longer than :data:`MAX_STOCK` (impossible for a valid state).
    """
    v = [0] * STATE_SIZE  # filled as Python ints and copied once: item by item into the array is slower
    for name, per_seat in SHARED_FIELDS:
        at = getattr(F, name)
        if per_seat:
            v[at], v[at + 1] = getattr(g, name)
        else:
            v[at] = int(getattr(g, name))
    if len(g.stock) > MAX_STOCK:
        raise ValueError(f"stock of {len(g.stock)} cards, at most {MAX_STOCK} fit")
    v[F.stock:F.stock + len(g.stock)] = g.stock
    v[F.stock_end] = len(g.stock)
    if g.closing_snapshot is not None:
        v[F.snap_points], v[F.snap_tricks] = g.closing_snapshot
    for t in g.history:
        v[F.led + t.leader] |= 1 << t.lead
        v[F.followed + 1 - t.leader] |= 1 << t.follow
    hist = g.history[-MAX_TRICKS:]
    for k, t in enumerate(hist):
        v[F.history + 4 * k:F.history + 4 * k + 4] = (t.leader, t.lead, t.follow, t.winner)
    v[F.history_len] = len(hist)
    r = g.result
    v[F.over] = int(r is not None)
    v[F.res_winner] = -1 if r is None or r.winner is None else r.winner
    v[F.res_points] = 0 if r is None else r.game_points
    v[F.res_reason] = -1 if r is None else RESULT_REASONS.index(r.reason)
    if out is None:
        return np.array(v, dtype=np.int64)
    out[:] = v
    return out


def check_state(st, rules: RuleSet) -> np.ndarray:
    """A state array the compiled functions can trust: int64 ``(STATE_SIZE,)`` with every field in range, every
    card in at most one place (hands, tricks won, the table, the stock), hands of at most the ruleset's hand size
    (so at most 12 legal actions, as the solver's packed move lists assume), two cards won a trick, and no
    last-trick bonus before the end of the hand.

    Returns:
        ``st`` as a contiguous int64 array (a copy when it had another dtype).

    Raises:
        InvalidPositionError: the wrong shape or dtype, or a field out of range; the message names the field.
    """
    arr = np.asarray(st)
    if arr.shape != (STATE_SIZE,) or arr.dtype.kind not in "iu":
        raise InvalidPositionError(f"a state array must be integer with shape ({STATE_SIZE},), got {arr.dtype} "
                                   f"{arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    n = rules.n_cards
    full = (1 << n) - 1
    last_suit = rules.deck.n_suits - 1  # schnapsen10: clubs and diamonds only (RS1)

    def bad(what: str) -> InvalidPositionError:
        return InvalidPositionError(f"malformed state array: {what}")

    vals = arr.tolist()  # Python ints: a list is read several times faster than the array, item by item
    for name in ("hands", "won", "known", "led", "followed"):
        for p in (0, 1):
            v = vals[getattr(F, name) + p]
            if not (0 <= v <= full):
                raise bad(f"{name}[{p}] = {v} is not a set of {rules.name}'s {n} cards")
    for name, low, high in (("to_move", 0, 1), ("leader", 0, 1), ("dealer", 0, 1), ("table", -1, n - 1),
                            ("closed_by", -1, 1), ("announced", -1, last_suit), ("trump", 0, last_suit),
                            ("exchanged", 0, 1), ("over", 0, 1), ("stock_top", 0, MAX_STOCK), ("stock_end", 0, MAX_STOCK),
                            ("history_len", 0, MAX_TRICKS)):
        v = vals[getattr(F, name)]
        if not (low <= v <= high):
            raise bad(f"{name} = {v}, expected {low}..{high}")
    if vals[F.stock_top] > vals[F.stock_end]:
        raise bad("stock_top after stock_end")
    for name, high in (("card_points", 200), ("tricks", MAX_TRICKS), ("marriage_points", 200),
                       ("marriage_suits", (1 << (last_suit + 1)) - 1), ("bonus", 100)):
        for p in (0, 1):
            v = vals[getattr(F, name) + p]
            if not (0 <= v <= high):
                raise bad(f"{name}[{p}] = {v}, expected 0..{high}")
    for p in (0, 1):
        size = vals[F.hands + p].bit_count()
        if size > rules.hand_size:
            raise bad(f"hands[{p}] holds {size} cards, at most {rules.hand_size} in {rules.name}")
        won = vals[F.won + p].bit_count()
        if won != 2 * vals[F.tricks + p]:
            raise bad(f"tricks[{p}] = {vals[F.tricks + p]}, but won[{p}] holds {won} cards (a trick adds 2)")
        if vals[F.bonus + p] and not vals[F.over]:
            raise bad(f"bonus[{p}] = {vals[F.bonus + p]} while the hand is in progress (the last-trick bonus comes "
                      "at its end, R66-7)")
    stock = vals[F.stock + vals[F.stock_top]:F.stock + vals[F.stock_end]]
    if not all(0 <= c < n for c in stock):
        raise bad(f"stock card ids {stock} outside 0..{n - 1}")
    seen = 0
    table = vals[F.table]
    for m in (vals[F.hands], vals[F.hands + 1], vals[F.won], vals[F.won + 1], (1 << table) if table >= 0 else 0,
              *[1 << c for c in stock]):
        if seen & m:
            raise bad("a card is in two places (hands, tricks won, table, stock)")
        seen |= m
    return arr


def result_of(st: np.ndarray) -> Result | None:
    """The :class:`Result` of a state array (None while the hand runs)."""
    if not st[F.over]:
        return None
    w = int(st[F.res_winner])
    return Result(None if w < 0 else w, int(st[F.res_points]), Reason(RESULT_REASONS[int(st[F.res_reason])]))


def to_game_state(st: np.ndarray, rules: RuleSet) -> GameState:
    """A :class:`GameState` equal to the state array (the history holds the tricks the array recorded)."""
    fields = {}
    for name, per_seat in SHARED_FIELDS:
        at = getattr(F, name)
        fields[name] = [int(st[at]), int(st[at + 1])] if per_seat else int(st[at])
    fields["exchanged"] = bool(fields["exchanged"])
    fields["stock"] = tuple(int(c) for c in st[F.stock + st[F.stock_top]:F.stock + st[F.stock_end]])
    closed = fields["closed_by"] >= 0
    fields["closing_snapshot"] = (int(st[F.snap_points]), int(st[F.snap_tricks])) if closed else None
    fields["result"] = result_of(st)
    fields["history"] = [Trick(*(int(x) for x in st[F.history + 4 * k:F.history + 4 * k + 4]))
                         for k in range(int(st[F.history_len]))]
    return GameState.from_fields(rules, **fields)


__all__ = ["CLAIM", "CLOSE", "EXCHANGE", "F", "FRESH", "K", "MAX_STOCK", "MAX_TRICKS", "REASON", "RULE_FIELDS",
           "SEARCH_SIZE", "SHARED_FIELDS", "STATE_FIELDS", "STATE_SIZE", "UNSEARCHED", "check_state", "from_game_state",
           "result_of", "rule_table", "to_game_state"]
