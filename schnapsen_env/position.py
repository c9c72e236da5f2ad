"""Position dicts (the keys every position holds, API.md optional keys): writing them and loading them with validation.

:meth:`GameState.position <schnapsen_env.rules.GameState.position>` and
:meth:`GameState.from_position <schnapsen_env.rules.GameState.from_position>` call :func:`to_position` and
:func:`load_position`. Every check raises :class:`~schnapsen_env.errors.InvalidPositionError` with a message
naming the key and what was expected, and nothing is loaded unless all checks pass.

This module does not import the engine (:mod:`schnapsen_env.rules` imports it): :func:`load_position` is given
the state class and uses its public builder (``from_fields``) and methods only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schnapsen_env.cards import SUIT_LETTERS, Deck
from schnapsen_env.cards import bits_of as _mask
from schnapsen_env.errors import InvalidPositionError
from schnapsen_env.scoring import RESULT_REASONS, Reason, Result, Trick
from schnapsen_env.seats import PLAYERS, seat_of

if TYPE_CHECKING:
    from schnapsen_env.rules import GameState
    from schnapsen_env.ruleset import RuleSet

#: Keys every position holds.
POSITION_KEYS = frozenset({"trump", "stock", "closed_by", "closing_snapshot", "hands", "won", "marriages",
                           "announced", "leader", "table"})
#: Optional keys (API.md), all written by :func:`to_position` so that a position round-trips exactly.
OPTIONAL_KEYS = frozenset({"dealer", "match_points", "history", "known", "exchanged", "carry", "points", "tricks",
                           "result"})


def _bad(msg: str) -> InvalidPositionError:
    return InvalidPositionError(f"invalid position: {msg}")


def _card_list(deck: Deck, value: Any, key: str) -> list[int]:
    if not isinstance(value, (list, tuple)):
        raise _bad(f"{key} must be a list of card codes, got {value!r}")
    ids = []
    for c in value:
        try:
            ids.append(deck.index(c))
        except InvalidPositionError:
            raise _bad(f"{key} holds unknown card code {c!r}: expected one of {' '.join(deck.codes)}") from None
    return ids


def _per_player(value: Any, key: str) -> dict:
    if not isinstance(value, dict) or set(value) != set(PLAYERS):
        raise _bad(f"{key} must be a dict with exactly the keys 'player_0' and 'player_1', got {value!r}")
    return value


def _nonneg_int(value: Any, key: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _bad(f"{key} must be an int >= 0, got {value!r}")
    return value


def _suit(value: Any, key: str, d: Deck) -> int:
    """A suit letter of the deck ``d`` (``schnapsen10`` has clubs and diamonds only, RS1)."""
    letters = SUIT_LETTERS[:d.n_suits]
    if not isinstance(value, str) or value not in letters or len(value) != 1:
        raise _bad(f"{key} must be a suit letter of this deck (one of {' '.join(letters)}), got {value!r}")
    return SUIT_LETTERS.index(value)


def to_position(s: GameState) -> dict[str, Any]:
    """The JSON-compatible position dict of a state (see :meth:`GameState.position`)."""
    d = s.deck
    codes = d.codes
    res = None
    if s.result is not None:
        w = s.result.winner
        res = {"winner": None if w is None else PLAYERS[w], "game_points": s.result.game_points,
               "reason": str(s.result.reason)}
    return {
        "trump": SUIT_LETTERS[s.trump],
        "stock": [codes[c] for c in s.stock],
        "closed_by": None if s.closed_by < 0 else PLAYERS[s.closed_by],
        "closing_snapshot": None if s.closing_snapshot is None else {
            "points": s.closing_snapshot[0], "tricks": s.closing_snapshot[1]},
        "hands": {PLAYERS[p]: d.codes_of(s.hands[p]) for p in (0, 1)},
        "won": {PLAYERS[p]: d.codes_of(s.won[p]) for p in (0, 1)},
        "marriages": {PLAYERS[p]: [SUIT_LETTERS[su] for su in range(4) if s.marriage_suits[p] >> su & 1]
                      for p in (0, 1)},
        "announced": None if s.announced < 0 else SUIT_LETTERS[s.announced],
        "leader": PLAYERS[s.leader],
        "table": None if s.table < 0 else codes[s.table],
        "dealer": PLAYERS[s.dealer],
        "match_points": {PLAYERS[p]: s.match_points[p] for p in (0, 1)},
        "carry": s.carry,
        "history": [{"leader": PLAYERS[t.leader], "cards": [codes[t.lead], codes[t.follow]],
                     "winner": PLAYERS[t.winner]} for t in s.history],
        "known": {PLAYERS[p]: d.codes_of(s.known[p]) for p in (0, 1)},
        "exchanged": s.exchanged,
        "points": {PLAYERS[p]: s.counted(p) for p in (0, 1)},
        "tricks": {PLAYERS[p]: s.tricks[p] for p in (0, 1)},
        "result": res,
    }


def load_position(state_class: type[GameState], rules: RuleSet, pos: Any) -> GameState:
    """A new ``state_class`` (:class:`GameState`) state loaded from ``pos`` after validating it; see
    :meth:`GameState.from_position`."""
    d = rules.deck
    if not isinstance(pos, dict):
        raise _bad(f"expected a dict, got {type(pos).__name__}")
    missing = sorted(POSITION_KEYS - set(pos))
    if missing:
        raise _bad(f"missing key(s) {missing}")
    unknown = sorted(map(repr, set(pos) - POSITION_KEYS - OPTIONAL_KEYS))
    if unknown:
        raise _bad(f"unknown key(s) {unknown}: expected {sorted(POSITION_KEYS | OPTIONAL_KEYS)}")

    trump = _suit(pos["trump"], "trump", d)
    stock = _card_list(d, pos["stock"], "stock")
    hands_in = _per_player(pos["hands"], "hands")
    won_in = _per_player(pos["won"], "won")
    hands = [_card_list(d, hands_in[p], f"hands[{p!r}]") for p in PLAYERS]
    won = [_card_list(d, won_in[p], f"won[{p!r}]") for p in PLAYERS]
    table = None if pos["table"] is None else _card_list(d, [pos["table"]], "table")[0]
    leader = seat_of(pos["leader"], "leader")

    # Every card exactly once.
    seen: dict[int, str] = {}
    dups = []
    places = [("stock", stock)] + [(f"hands[{PLAYERS[p]!r}]", hands[p]) for p in (0, 1)] + \
             [(f"won[{PLAYERS[p]!r}]", won[p]) for p in (0, 1)] + [("table", [] if table is None else [table])]
    for where, ids in places:
        for c in ids:
            if c in seen:
                dups.append(f"{d.codes[c]} (in {seen[c]} and {where})")
            else:
                seen[c] = where
    if dups:
        raise _bad(f"duplicate card(s): {', '.join(dups)}")
    if len(seen) != d.size:
        absent = [d.codes[c] for c in range(d.size) if c not in seen]
        raise _bad(f"missing card(s) {absent}: every one of the {d.size} cards of {rules.name} must appear once")

    # Sizes.
    for p in (0, 1):
        if len(won[p]) % 2:
            raise _bad(f"won[{PLAYERS[p]!r}] has {len(won[p])} cards: a trick adds 2, so the size must be even")
    follower = 1 - leader
    n_lead, n_follow = len(hands[leader]), len(hands[follower])
    if table is None and n_lead != n_follow:
        raise _bad(f"impossible hand sizes {len(hands[0])} and {len(hands[1])}: with no card on the table "
                   "both hands hold the same number of cards")
    if table is not None and n_lead + 1 != n_follow:
        raise _bad(f"impossible hand sizes: the leader {PLAYERS[leader]} led {d.codes[table]}, so it must hold "
                   f"one card fewer than the follower; got {n_lead} and {n_follow}")
    if n_follow > rules.hand_size:
        raise _bad(f"impossible hand size {n_follow}: at most {rules.hand_size} cards in {rules.name}")
    if len(stock) % 2:
        raise _bad(f"stock has {len(stock)} cards: the stock shrinks by 2 per trick, so its size must be even")
    if len(stock) > d.size - 2 * rules.hand_size:
        raise _bad(f"stock has {len(stock)} cards: at most {d.size - 2 * rules.hand_size} in {rules.name}")
    if stock and d.suit[stock[-1]] != trump:
        raise _bad(f"the turn-up {d.codes[stock[-1]]} (last stock card) is not of the trump suit "
                   f"{SUIT_LETTERS[trump]}")

    # Closing (R19).
    closed_by = pos["closed_by"]
    snap = pos["closing_snapshot"]
    if closed_by is None:
        closer = -1
        if snap is not None:
            raise _bad("closing_snapshot must be null when closed_by is null")
        if stock and n_follow != rules.hand_size:
            raise _bad(f"impossible hand sizes: while the stock is open hands hold {rules.hand_size} cards "
                       f"(before the lead), got {n_follow}")
    else:
        closer = seat_of(closed_by, "closed_by")
        if not stock:
            raise _bad("closed_by is set but the stock is empty: a closed stock keeps its cards (R19)")
        if not isinstance(snap, dict) or set(snap) != {"points", "tricks"}:
            raise _bad(f"closing_snapshot must be {{'points': int, 'tricks': int}} when closed_by is set, "
                       f"got {snap!r}")
        snap = (_nonneg_int(snap["points"], "closing_snapshot.points"),
                _nonneg_int(snap["tricks"], "closing_snapshot.tricks"))

    # Marriages (R12).
    mar_in = _per_player(pos["marriages"], "marriages")
    msuits = [0, 0]
    kq = d.pair_bits
    for p in (0, 1):
        suits = mar_in[PLAYERS[p]]
        if not isinstance(suits, (list, tuple)):
            raise _bad(f"marriages[{PLAYERS[p]!r}] must be a list of suit letters, got {suits!r}")
        for letter in suits:
            su = _suit(letter, f"marriages[{PLAYERS[p]!r}]", d)
            if msuits[p] >> su & 1:
                raise _bad(f"marriages[{PLAYERS[p]!r}] lists suit {letter} twice")
            if msuits[1 - p] >> su & 1:
                raise _bad(f"both players announced the marriage in {letter}: there is one K and one Q per suit")
            opp_or_stock = _mask(hands[1 - p]) | _mask(stock)
            if kq[su] & opp_or_stock:
                raise _bad(f"{PLAYERS[p]} announced marriage {letter}, but its K or Q is in the opponent's hand "
                           "or in the stock")
            msuits[p] |= 1 << su
    announced = -1
    if pos["announced"] is not None:
        announced = _suit(pos["announced"], "announced", d)
        if table is not None:
            raise _bad("announced must be null once a card is on the table (the announced card is led, R4)")
        if not msuits[leader] >> announced & 1:
            raise _bad(f"announced {pos['announced']!r} is not in marriages[{PLAYERS[leader]!r}]")
        if _mask(hands[leader]) & kq[announced] != kq[announced]:
            raise _bad(f"announced {pos['announced']!r}: the leader must still hold its K and Q")

    exchanged = pos.get("exchanged", False)
    if not isinstance(exchanged, bool):
        raise _bad(f"exchanged must be true or false, got {exchanged!r}")
    if exchanged and (table is not None or not stock):
        raise _bad("exchanged can be true only before the lead with a stock (R16)")

    # History (API.md): must agree with won and the trick rules.
    history: list[Trick] = []
    if "history" in pos:
        hist_in = pos["history"]
        if not isinstance(hist_in, list):
            raise _bad(f"history must be a list of tricks, got {hist_in!r}")
        won_by = [0, 0]
        prev_winner = None
        for k, t in enumerate(hist_in):
            if not isinstance(t, dict) or set(t) != {"leader", "cards", "winner"}:
                raise _bad(f"history[{k}] must be {{'leader', 'cards', 'winner'}}, got {t!r}")
            tl = seat_of(t["leader"], f"history[{k}].leader")
            tw = seat_of(t["winner"], f"history[{k}].winner")
            cards = _card_list(d, t["cards"], f"history[{k}].cards")
            if len(cards) != 2:
                raise _bad(f"history[{k}].cards must hold [lead, follow], got {t['cards']!r}")
            lead, follow = cards
            ls, fs = d.suit[lead], d.suit[follow]
            if ls == fs:
                expect = (1 - tl) if d.rank[follow] < d.rank[lead] else tl
            else:
                expect = (1 - tl) if fs == trump else tl
            if expect != tw:
                raise _bad(f"history[{k}]: {d.codes[lead]} then {d.codes[follow]} with trump "
                           f"{SUIT_LETTERS[trump]} is won by {PLAYERS[expect]}, not {t['winner']} (R6)")
            if prev_winner is not None and tl != prev_winner:
                raise _bad(f"history[{k}] is led by {t['leader']}, but {PLAYERS[prev_winner]} won the trick "
                           "before (R6)")
            prev_winner = tw
            both = (1 << lead) | (1 << follow)
            if (won_by[0] | won_by[1]) & both or lead == follow:
                raise _bad(f"history[{k}] repeats a card played in an earlier trick")
            won_by[tw] |= both
            history.append(Trick(tl, lead, follow, tw))
        # history lists the most recent tricks: all of them, or (after loading a position without history
        # and playing on) the ones played since; its cards must lie in the winners' won piles.
        complete = len(history) == (len(won[0]) + len(won[1])) // 2
        for p in (0, 1):
            if (won_by[p] != _mask(won[p])) if complete else (won_by[p] & ~_mask(won[p])):
                raise _bad(f"history does not agree with won[{PLAYERS[p]!r}]: history gives "
                           f"{d.codes_of(won_by[p])} to {PLAYERS[p]}, won holds {d.codes_of(_mask(won[p]))}")
        if history and history[-1].winner != leader:
            raise _bad(f"leader is {PLAYERS[leader]}, but the last trick in history was won by "
                       f"{PLAYERS[history[-1].winner]}")

    # Known cards (R27, API.md): derived from shown marriage partners, plus what the position gives.
    known = [0, 0]
    for p in (0, 1):
        for su in range(4):
            if msuits[p] >> su & 1:
                known[p] |= kq[su] & _mask(hands[p])
    if "known" in pos:
        known_in = _per_player(pos["known"], "known")
        for p in (0, 1):
            ids = _card_list(d, known_in[PLAYERS[p]], f"known[{PLAYERS[p]!r}]")
            m = _mask(ids)
            if m & ~_mask(hands[p]):
                raise _bad(f"known[{PLAYERS[p]!r}] lists {d.codes_of(m & ~_mask(hands[p]))}, which are not in "
                           f"{PLAYERS[p]}'s hand")
            known[p] |= m

    if "dealer" in pos:
        dealer = seat_of(pos["dealer"], "dealer")
    else:  # unknown: the player with a pending marriage led trick 1 (R14), else the leader did
        pending = [p for p in (0, 1) if msuits[p] and not won[p]]
        dealer = 1 - (pending[0] if len(pending) == 1 else leader)
    match_points = [0, 0]
    if "match_points" in pos:
        mp = _per_player(pos["match_points"], "match_points")
        match_points = [_nonneg_int(mp[p], f"match_points[{p!r}]") for p in PLAYERS]
    carry = _nonneg_int(pos.get("carry", 0), "carry")

    # Build the state.
    won_masks = [_mask(w) for w in won]
    s = state_class.from_fields(
        rules, hands=[_mask(h) for h in hands], won=won_masks, card_points=[d.points_of(m) for m in won_masks],
        tricks=[len(w) // 2 for w in won], marriage_suits=msuits,
        marriage_points=[rules.marriage_points(msuits[p], trump) for p in (0, 1)],
        stock=tuple(stock), trump=trump, leader=leader, to_move=leader if table is None else follower,
        dealer=dealer, table=-1 if table is None else table, closed_by=closer,
        closing_snapshot=snap if closer >= 0 else None, announced=announced, exchanged=exchanged, known=known,
        history=history, match_points=match_points, carry=carry)

    played_out = not hands[0] and not hands[1] and table is None
    if played_out and rules.last_trick_bonus and (closer < 0 or rules.last_trick_bonus_when_closed):
        # R66-7: the last-trick winner holds the bonus; learn who from history or points.
        if history:
            s.bonus[history[-1].winner] = rules.last_trick_bonus
        elif isinstance(pos.get("points"), dict):
            for p in (0, 1):
                if pos["points"].get(PLAYERS[p]) == s.counted(p) + rules.last_trick_bonus:
                    s.bonus[p] = rules.last_trick_bonus
        if not any(s.bonus):
            raise _bad("a played-out hand needs 'history' or 'points' to know who took the last trick (R66-7)")

    _check_reachable(s, pos, played_out)
    for key, values in (("points", [s.counted(p) for p in (0, 1)]), ("tricks", s.tricks)):
        if key in pos:
            given = _per_player(pos[key], key)
            for p in (0, 1):
                v = given[PLAYERS[p]]
                if not isinstance(v, int) or isinstance(v, bool) or v != values[p]:
                    raise _bad(f"{key}[{PLAYERS[p]!r}] is {given[PLAYERS[p]]!r}, but the won cards and "
                               f"marriages give {values[p]}")

    res = pos.get("result")
    if res is not None:
        if not isinstance(res, dict) or set(res) != {"winner", "game_points", "reason"}:
            raise _bad(f"result must be null or {{'winner', 'game_points', 'reason'}}, got {res!r}")
        winner = None if res["winner"] is None else seat_of(res["winner"], "result.winner")
        gp = res["game_points"]
        if not isinstance(gp, int) or isinstance(gp, bool) or not 0 <= gp <= 3:
            raise _bad(f"result.game_points must be an int 0..3, got {gp!r}")
        if res["reason"] not in RESULT_REASONS:
            raise _bad(f"result.reason must be one of {list(RESULT_REASONS)}, got {res['reason']!r}")
        if (winner is None) != (res["reason"] == "tie") or (winner is None and gp != 0):
            raise _bad(f"result {res!r}: only a 'tie' has no winner, and it scores 0")
        s.result = Result(winner, gp, Reason(res["reason"]))
        _check_result(s, played_out)
    elif played_out:
        raise _bad("all cards are played but result is null: a played-out hand always has a result")
    return s


def _check_reachable(s: GameState, pos: dict, played_out: bool) -> None:
    """Refuse positions no legal play reaches (the state ``s`` is filled, ``result`` not yet)."""
    rules = s.rules
    d = s.deck
    n_done = s.tricks[0] + s.tricks[1]
    leader = s.leader
    if n_done and not s.tricks[leader]:
        raise _bad(f"{PLAYERS[leader]} leads trick {n_done + 1} but has won no trick: the winner of a trick "
                   "leads the next (R6)")
    if not n_done and s.dealer == leader:
        raise _bad(f"the dealer {PLAYERS[leader]} cannot lead trick 1: the non-dealer does (R1)")
    for p in (0, 1):
        if s.marriage_suits[p] and not s.tricks[p]:
            if s.marriage_suits[p].bit_count() > 1 or p == s.dealer or not rules.marriage_on_opening_lead:
                raise _bad(f"{PLAYERS[p]} has no trick, so its only possible marriage is one announced by the "
                           "non-dealer on the opening lead (R14)")
        for su in range(4):
            kq = d.pair_bits[su]
            if s.marriage_suits[p] >> su & 1 and s.hands[p] & kq == kq and not (
                    s.announced == su and leader == p and s.table < 0):
                raise _bad(f"{PLAYERS[p]} announced marriage {SUIT_LETTERS[su]} but still holds both its K and Q: "
                           "after an announcement the leader leads one of them (R4)")
        trumps_and_pairs = d.suit_bits[s.trump] | sum(d.pair_bits[su] for su in range(4) if s.marriage_suits[p] >> su & 1)
        if s.known[p] & ~trumps_and_pairs:
            raise _bad(f"known[{PLAYERS[p]!r}] lists {d.codes_of(s.known[p] & ~trumps_and_pairs)}: only shown marriage "
                       "partners and trumps taken from the turn-up can be known (R27)")
    if s.announced >= 0 and not s.marriage_window_open():
        raise _bad(f"announced {SUIT_LETTERS[s.announced]!r} on trick {n_done + 1}, where the marriage window "
                   f"({rules.marriage_window!r}, marriage_on_opening_lead={rules.marriage_on_opening_lead}) is "
                   "closed (R13, R66-6)")
    if s.carry and (rules.tie != "carry"):
        raise _bad(f"carry is {s.carry}, but only sixtysix24 with tie='carry' carries game points (R66-10)")
    target = rules.match_target
    if s.carry > target:
        raise _bad(f"carry is {s.carry}: at most match_target ({target}) is supported")
    if max(s.match_points) >= target:
        raise _bad(f"match_points {s.match_points} reach match_target {target}: that match is over (R25)")
    full_stock = rules.stock0
    if s.closed_by >= 0:
        size = len(s.stock)
        other = 1 - s.closed_by
        snapshot = s.closing_snapshot
        assert snapshot is not None  # load_position gives a closed hand its snapshot (checked with closed_by)
        snap_points, snap_tricks = snapshot
        if size < rules.close_min_stock:
            raise _bad(f"closed with {size} stock cards, but close_min_stock is {rules.close_min_stock} (R18)")
        if snap_tricks > s.tricks[other] or snap_points > s.counted(other) or (snap_tricks == 0 and snap_points):
            raise _bad(f"closing_snapshot ({snap_points} points, {snap_tricks} tricks) is impossible: "
                       f"{PLAYERS[other]} now has {s.counted(other)} points and {s.tricks[other]} tricks, and "
                       "points need a trick (R19)")
        if n_done == (full_stock - size) // 2 and leader != s.closed_by:
            raise _bad(f"no trick was played since {PLAYERS[s.closed_by]} closed, so it must still be the leader (R18)")
    if s.exchanged:
        if s.stock[-1] != rules.exchange_card(s.trump) or len(s.stock) < rules.exchange_min_stock:
            raise _bad("exchanged is true, but the turn-up is not the exchange card or the stock is below "
                       f"exchange_min_stock ({rules.exchange_min_stock}) (R16)")
    if rules.claim_mode == "auto" and n_done and s.counted(leader) >= rules.claim_target and pos.get("result") is None:
        raise _bad(f"{PLAYERS[leader]} leads with {s.counted(leader)} points under claim_mode='auto': the engine "
                   "would have claimed already (R21)")


def _check_result(s: GameState, played_out: bool) -> None:
    """The given result must be what the rules give for this position (R20-R23a, R66-10)."""
    given = s.result
    assert given is not None  # load_position sets the result before checking it
    if played_out:
        expected = s.result_of_last_trick(s.leader)  # after the last trick its winner leads
        if expected != given:
            raise _bad(f"result {given} disagrees with the played-out cards, which give {expected}")
        return
    if given.reason not in ("claim", "false_claim"):
        raise _bad(f"result reason {given.reason!r} needs a played-out hand; with cards in hand only 'claim' or "
                   "'false_claim' can end it (R20-R23)")
    if given.reason == "false_claim" and s.rules.false_claim == "reject":
        raise _bad("result reason 'false_claim' cannot happen under false_claim='reject' (R21a)")
    winner = given.winner
    assert winner is not None  # only a tie has no winner (load_position checks it), and a tie is no claim
    claimant = winner if given.reason == "claim" else 1 - winner
    expected = s.result_of_claim(claimant)
    if expected != given:
        raise _bad(f"result {given} disagrees with a claim by {PLAYERS[claimant]} here, which gives {expected}")
