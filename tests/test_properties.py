"""Property tests: seeded random playouts in both rulesets and several knob variants.

Each example draws a seed and a rule variant, deals with ``numpy.random.default_rng(seed)`` and plays a whole
hand choosing uniformly among the legal actions with the same generator. At every decision point the engine is
checked against independent re-implementations of RULES.md written here (card conservation, R6 trick winner,
R7 drawing, R9-R11 / R66-5 following, the section 4 leader action model, counted points, R19 snapshot and the
end-of-hand scoring R20-R23a / R66-10), plus the API properties (mask == legal_actions, push/pop, position round
trip, determinism, illegal steps rejected without side effects).

Hypothesis runs derandomized and without an example database, so the set of examples is fixed.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schnapsen_env import GameState, IllegalActionError, RuleSet

PLAYERS = ("player_0", "player_1")
RANKS = "ATKQJ9"
SUITS = "CDHS"
CARD_POINTS = {"A": 11, "T": 10, "K": 4, "Q": 3, "J": 2, "9": 0}

# (ruleset, knob overrides): both presets plus the knob values the engine must support (RULES.md section 5).
VARIANTS = [
    ("schnapsen20", {}),
    ("schnapsen20", {"false_claim": "mirror"}),
    ("schnapsen20", {"false_claim": "pagat"}),
    ("schnapsen20", {"claim_mode": "auto"}),
    ("schnapsen20", {"marriage_declaration": "optional"}),
    ("schnapsen20", {"exchange_min_stock": 2, "close_min_stock": 2}),
    ("schnapsen20", {"closed_hand_end": "must_claim", "closing_reference": "at_end",
                     "failed_close_value": "flat3", "unclaimed_last_trick_value": "one"}),
    ("schnapsen20", {"marriage_on_opening_lead": False, "marriage_window": "stock_open", "must_head": False}),
    ("sixtysix24", {}),
    ("sixtysix24", {"false_claim": "mirror"}),
    ("sixtysix24", {"false_claim": "pagat", "claim_mode": "manual", "tie": "none"}),
    ("sixtysix24", {"claim_mode": "auto"}),
    ("sixtysix24", {"marriage_declaration": "optional", "exchange_min_stock": 4, "close_min_stock": 4}),
    ("sixtysix24", {"must_head": True, "exchange_rank": "J", "tie": "last_trick"}),
    ("sixtysix24", {"marriage_window": "any", "last_trick_bonus_when_closed": True,
                    "closing_reference": "at_end", "failed_close_value": "flat3"}),
    ("sixtysix24", {"marriage_window": "stock_open", "closed_hand_end": "must_claim",
                    "marriage_on_opening_lead": False}),
]
RULES = [RuleSet.make(name, **kw) for name, kw in VARIANTS]
VARIANT_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'defaults'}" for name, kw in VARIANTS]

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
VARIANT_INDEX = st.integers(min_value=0, max_value=len(VARIANTS) - 1)


def _settings(n: int):
    return settings(max_examples=n, derandomize=True, database=None, deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- independent rule model
def deck_codes(rules: RuleSet) -> list[str]:
    ranks = RANKS if rules.n_cards == 24 else RANKS[:5]
    return [r + s for s in SUITS for r in ranks]


def beats(lead: str, follow: str, trump: str) -> bool:
    """R6: does the follower's card win the trick?"""
    if lead[1] == follow[1]:
        return RANKS.index(follow[0]) < RANKS.index(lead[0])
    return follow[1] == trump


def game_value(points: int, tricks: int) -> int:
    """Section 1: v = 3 without a trick, else 2 below 33, else 1."""
    return 3 if tricks == 0 else (2 if points < 33 else 1)


def expected_follow(hand: list[str], led: str, trump: str, must_head: bool) -> set[str]:
    """R10 / R66-5, written from the rule text: follow (and head if must_head), else trump, else anything."""
    same = [c for c in hand if c[1] == led[1]]
    if same:
        if must_head:
            higher = [c for c in same if RANKS.index(c[0]) < RANKS.index(led[0])]
            return set(higher or same)
        return set(same)
    trumps = [c for c in hand if c[1] == trump]
    return set(trumps or hand)


def is_strict(pos: dict) -> bool:
    """Section 1 / R11: STRICT once the stock is closed or exhausted."""
    return pos["closed_by"] is not None or not pos["stock"]


def played_out(pos: dict) -> bool:
    return not pos["hands"]["player_0"] and not pos["hands"]["player_1"] and pos["table"] is None


def expected_counted(rules: RuleSet, pos: dict) -> dict[str, int]:
    """Section 1, R14, R66-7: card points + marriages once a trick is won + last-trick bonus of a played-out hand."""
    out = {}
    last_winner = pos["history"][-1]["winner"] if pos["history"] else None
    bonus_ok = played_out(pos) and (pos["closed_by"] is None or rules.last_trick_bonus_when_closed)
    for p in PLAYERS:
        cardpts = sum(CARD_POINTS[c[0]] for c in pos["won"][p])
        tricks = len(pos["won"][p]) // 2
        mar = sum(40 if s == pos["trump"] else 20 for s in pos["marriages"][p])
        bonus = rules.last_trick_bonus if (bonus_ok and p == last_winner) else 0
        out[p] = cardpts + (mar if tricks else 0) + bonus
    return out


def expected_leader_actions(rules: RuleSet, pos: dict) -> set[str]:
    """Section 4 action model for the leader (R3, R4, R12-R13, R16, R18, R20-R21a, R66-3/4/6)."""
    me = pos["leader"]
    hand = pos["hands"][me]
    trump = pos["trump"]
    trick_no = len(pos["history"]) + 1
    stock_open = pos["closed_by"] is None and bool(pos["stock"])
    counted = expected_counted(rules, pos)[me]
    acts: set[str] = set()
    claim_window = pos["announced"] is not None or trick_no > 1  # W2 / W1 (R20)
    if rules.claim_mode == "manual" and claim_window and (rules.false_claim != "reject" or counted >= 66):
        acts.add("claim")
    if pos["announced"] is not None:  # R4
        s = pos["announced"]
        return acts | {"play K" + s, "play Q" + s}
    plays = set(hand)
    if trick_no == 1 and not rules.marriage_on_opening_lead:
        window = False
    elif rules.marriage_window == "any":
        window = True
    elif rules.marriage_window == "first_6_tricks":
        window = trick_no <= 6
    else:
        window = stock_open
    if window:
        for s in SUITS:
            if "K" + s in hand and "Q" + s in hand:
                acts.add("marriage " + s)
                if rules.marriage_declaration == "automatic":
                    plays -= {"K" + s, "Q" + s}
    acts |= {"play " + c for c in plays}
    if stock_open:
        S = len(pos["stock"])
        if S >= rules.exchange_min_stock and rules.exchange_rank + trump in hand:
            acts.add("exchange")
        if S >= rules.close_min_stock:
            acts.add("close")
    return acts


def closed_values(rules: RuleSet, pos: dict) -> tuple:
    """R23 for the closed hand of the final position ``pos``: the closer, the other player, the value of the
    closer's win (the other player's game value at the reference moment) and of its failure."""
    c = pos["closed_by"]
    other = PLAYERS[1 - PLAYERS.index(c)]
    pts, tr = pos["points"], pos["tricks"]
    if rules.closing_reference == "at_end":
        snapv = game_value(pts[other], tr[other])
    else:
        snapv = game_value(pos["closing_snapshot"]["points"], pos["closing_snapshot"]["tricks"])
    fail = 3 if rules.failed_close_value == "flat3" else max(2, snapv)
    return c, other, snapv, fail


def score_claim(rules: RuleSet, pos: dict, x: str) -> tuple:
    """R22 / R23 / R23a for a claim by ``x`` on the final position ``pos``."""
    o = PLAYERS[1 - PLAYERS.index(x)]
    pts, tr = pos["points"], pos["tricks"]
    correct = pts[x] >= 66
    if pos["closed_by"] is None:  # R22
        if correct:
            return x, game_value(pts[o], tr[o]), "claim"
        assert rules.false_claim != "reject", "a false claim happened under false_claim='reject'"
        if rules.false_claim == "pagat":
            return o, 3 if tr[o] == 0 else 2, "false_claim"
        return o, game_value(pts[o], tr[o]), "false_claim"
    c, other, snapv, fail = closed_values(rules, pos)
    if x == c:
        return (c, snapv, "claim") if correct else (other, fail, "false_claim")
    if correct:
        return x, fail, "claim"
    assert rules.false_claim != "reject"
    if rules.false_claim == "pagat":
        return c, 3 if tr[c] == 0 else 2, "false_claim"
    return c, fail, "false_claim"


def score_played_out(rules: RuleSet, pos: dict) -> tuple:
    """W3, R22, R23 (no claim), R66-10 for a played-out hand."""
    w = pos["history"][-1]["winner"]
    lo = PLAYERS[1 - PLAYERS.index(w)]
    pts, tr = pos["points"], pos["tricks"]
    if pts[w] >= 66:  # W3 comes first (R20)
        return score_claim(rules, pos, w)
    if pos["closed_by"] is None:
        if rules.n_cards == 20:  # R22
            return w, 1 if rules.unclaimed_last_trick_value == "one" else game_value(pts[lo], tr[lo]), "last_trick"
        if pts[lo] >= 66:  # R66-10
            return lo, game_value(pts[w], tr[w]), "count"
        if rules.tie == "last_trick":
            return w, 1, "last_trick"
        return None, 0, "tie"
    c, other, snapv, fail = closed_values(rules, pos)
    if rules.closed_hand_end == "closer_score" and pts[c] >= 66:
        return c, snapv, "closed_hand"
    return other, fail, "closed_hand"


# --------------------------------------------------------------------------- playout driver
def random_hand(rules: RuleSet, seed: int) -> tuple[GameState, list[int]]:
    """Deal with default_rng(seed) and play uniformly random legal actions; returns the final state and actions."""
    rng = np.random.default_rng(seed)
    s = GameState.new_hand(rules, rng=rng)
    actions = []
    while s.result is None:
        legal = s.legal_actions()
        a = legal[int(rng.integers(len(legal)))]
        s.step(a)
        actions.append(a)
        assert len(actions) <= max_steps(rules)
    return s, actions


def max_steps(rules: RuleSet) -> int:
    # every card played once, at most 4 marriages, 1 exchange (the jack then lies under the stock), 1 close, 1 claim
    return rules.n_cards + 4 + 1 + 1 + 1


def check_cards(rules: RuleSet, pos: dict) -> None:
    """Every card in exactly one place: hands, won piles, stock (dead cards after closing too), table."""
    places = (pos["hands"]["player_0"] + pos["hands"]["player_1"] + pos["won"]["player_0"]
              + pos["won"]["player_1"] + pos["stock"] + ([pos["table"]] if pos["table"] else []))
    assert len(places) == rules.n_cards, places
    assert sorted(places) == sorted(deck_codes(rules))
    assert sum(CARD_POINTS[c[0]] for c in places) == 120


def check_decision_point(rules: RuleSet, s: GameState, pos: dict, stats: dict) -> None:
    names = rules.action_names
    legal = s.legal_actions()
    assert legal, "R4 section 4: a decision point without a legal action"
    assert legal == sorted(legal)
    mask = s.action_mask()
    assert mask.dtype == np.int8 and mask.shape == (rules.n_actions,)
    assert np.flatnonzero(mask).tolist() == legal
    assert s.legal_bits() == sum(1 << a for a in legal)
    assert s.legal_action_names() == [names[a] for a in legal]
    legal_names = {names[a] for a in legal}
    me = PLAYERS[s.to_move]
    assert pos["points"] == expected_counted(rules, pos)
    assert pos["tricks"] == {p: len(pos["won"][p]) // 2 for p in PLAYERS}
    if pos["table"] is not None:  # follower (R5, R9-R11, R66-5)
        assert me != pos["leader"]
        hand = pos["hands"][me]
        if is_strict(pos):
            expect = expected_follow(hand, pos["table"], pos["trump"], rules.must_head)
            stats["strict_follow"] += 1
        else:
            expect = set(hand)  # R9
            stats["open_follow"] += 1
        assert legal_names == {"play " + c for c in expect}, (pos, legal_names)
    else:
        assert me == pos["leader"]
        assert legal_names == expected_leader_actions(rules, pos), pos
        stats["lead"] += 1


def check_illegal_steps(rules: RuleSet, s: GameState, legal: list[int]) -> None:
    """Every action outside the mask is refused with IllegalActionError and leaves the state unchanged."""
    before = s.copy()
    pos = s.position()
    legal_set = set(legal)
    for a in range(rules.n_actions):
        if a in legal_set:
            continue
        with pytest.raises(IllegalActionError):
            s.step(a)
        assert s == before
    with pytest.raises(IllegalActionError):
        s.step(rules.n_actions)
    assert s.position() == pos


def check_transition(rules: RuleSet, before: dict, name: str, after: dict) -> None:
    """R6 trick winner, R7 drawing, R19 closing snapshot, R16 exchange, checked on position dicts."""
    if before["table"] is None:
        me = before["leader"]
    else:
        me = PLAYERS[1 - PLAYERS.index(before["leader"])]
    if name == "close":
        other = PLAYERS[1 - PLAYERS.index(me)]
        assert after["closed_by"] == me
        assert after["closing_snapshot"] == {"points": before["points"][other], "tricks": before["tricks"][other]}
        assert after["stock"] == before["stock"]  # R19: dead cards stay, trump unchanged
        assert after["trump"] == before["trump"]
    elif name == "exchange":
        card = rules.exchange_rank + before["trump"]
        assert after["stock"] == before["stock"][:-1] + [card]
        assert set(after["hands"][me]) == set(before["hands"][me]) - {card} | {before["stock"][-1]}
    elif name.startswith("play") and before["table"] is not None:
        lead, follow = before["table"], name[5:]
        leader = before["leader"]
        follower = me
        winner = follower if beats(lead, follow, before["trump"]) else leader
        loser = PLAYERS[1 - PLAYERS.index(winner)]
        assert after["history"][-1] == {"leader": leader, "cards": [lead, follow], "winner": winner}
        assert after["leader"] == winner
        assert set(after["won"][winner]) == set(before["won"][winner]) | {lead, follow}
        stock = before["stock"]
        hand_w = set(before["hands"][winner]) - {follow}
        hand_l = set(before["hands"][loser]) - {follow}
        if before["closed_by"] is None and stock:  # R7: winner draws the top card, loser the next
            assert after["stock"] == stock[2:]
            assert set(after["hands"][winner]) == hand_w | {stock[0]}
            assert set(after["hands"][loser]) == hand_l | {stock[1]}
        else:
            assert after["stock"] == stock
            assert set(after["hands"][winner]) == hand_w
            assert set(after["hands"][loser]) == hand_l


def check_result(rules: RuleSet, s: GameState, before: dict, name: str, pos: dict, stats: dict) -> None:
    res = s.result
    assert res is not None
    assert 0 <= res.game_points <= 3
    if res.reason == "tie":
        assert res.winner is None and res.game_points == 0
        assert rules.n_cards == 24
    else:
        assert res.winner in (0, 1) and res.game_points >= 1
    assert res.reason in ("claim", "false_claim", "last_trick", "closed_hand", "count", "tie")
    assert pos["result"] == {"winner": None if res.winner is None else PLAYERS[res.winner],
                             "game_points": res.game_points, "reason": res.reason}
    assert pos["points"] == expected_counted(rules, pos)
    # Independent scoring of how the hand ended.
    if name == "claim":
        assert rules.claim_mode == "manual"
        expect = score_claim(rules, pos, before["leader"])
    elif name.startswith("marriage"):
        assert rules.claim_mode == "auto"
        assert pos["points"][before["leader"]] >= 66
        expect = score_claim(rules, pos, before["leader"])
    elif played_out(pos):
        expect = score_played_out(rules, pos)
        # Card points of a played-out unclosed hand: both won piles hold all 120.
        if pos["closed_by"] is None:
            assert sum(CARD_POINTS[c[0]] for p in PLAYERS for c in pos["won"][p]) == 120
    else:
        assert rules.claim_mode == "auto" and name.startswith("play") and before["table"] is not None
        w = pos["history"][-1]["winner"]
        assert pos["points"][w] >= 66
        expect = score_claim(rules, pos, w)
    got = (None if res.winner is None else PLAYERS[res.winner], res.game_points, res.reason)
    assert got == expect, (pos, name)
    stats["reason:" + res.reason] += 1
    # Finished: mask all zero, every action refused, state unchanged.
    assert s.legal_actions() == []
    assert s.legal_bits() == 0
    assert not s.action_mask().any() and s.action_mask().shape == (rules.n_actions,)
    frozen = s.copy()
    for a in list(range(rules.n_actions)) + ["claim", "play " + deck_codes(rules)[0]]:
        with pytest.raises(IllegalActionError):
            s.step(a)
    assert s == frozen and s.position() == pos


def play_and_check(rules: RuleSet, seed: int, stats: dict, illegal: bool = True) -> list[int]:
    """Play one random hand, checking every invariant at every step; returns the actions."""
    rng = np.random.default_rng(seed)
    s = GameState.new_hand(rules, rng=rng)
    names = rules.action_names
    actions: list[int] = []
    pos = s.position()
    assert len(pos["stock"]) == rules.n_cards - 2 * rules.hand_size
    while True:
        check_cards(rules, pos)
        # Round trip: reload anywhere gives an equal state with an identical position.
        r = GameState.from_position(rules, pos)
        assert r == s
        assert r.position() == pos
        if s.result is not None:
            break
        assert len(actions) < max_steps(rules), "hand did not end within the bound"
        check_decision_point(rules, s, pos, stats)
        legal = s.legal_actions()
        assert r.legal_actions() == legal
        if illegal:
            check_illegal_steps(rules, s, legal)
        a = legal[int(rng.integers(len(legal)))]
        # push/pop restores an equal state
        c = s.copy()
        s.push(a)
        s.pop()
        assert s == c and s.position() == pos
        s.step(a)
        actions.append(a)
        # the reloaded state plays on identically
        r.step(a)
        after = s.position()
        assert r == s and r.position() == after
        check_transition(rules, pos, names[a], after)
        if s.result is not None:
            check_result(rules, s, pos, names[a], after, stats)
        pos = after
    return actions


def new_stats() -> dict:
    from collections import Counter
    return Counter()


# --------------------------------------------------------------------------- hypothesis tests
@_settings(700)
@given(seed=SEEDS, variant=VARIANT_INDEX)
@pytest.mark.slow
def test_random_hand_invariants(seed, variant):
    """Cards conserved, mask == legal_actions == independent model (R9-R11, R66-5, section 4), counted points,
    R6/R7/R19 transitions, position round trip at every step, push/pop, illegal steps refused, scoring oracle."""
    play_and_check(RULES[variant], seed, new_stats())


@_settings(1200)
@given(seed=SEEDS, variant=VARIANT_INDEX)
@pytest.mark.slow
def test_random_hand_fast_invariants(seed, variant):
    """The same checks without the (slow) exhaustive illegal-action sweep, over more hands."""
    play_and_check(RULES[variant], seed, new_stats(), illegal=False)


@_settings(300)
@given(seed=SEEDS, variant=VARIANT_INDEX)
def test_same_seed_same_hand(seed, variant):
    rules = RULES[variant]
    s1, a1 = random_hand(rules, seed)
    s2, a2 = random_hand(rules, seed)
    assert a1 == a2
    assert s1 == s2 and s1.position() == s2.position()
    assert GameState.new_hand(rules, rng=np.random.default_rng(seed)) == \
        GameState.new_hand(rules, rng=np.random.default_rng(seed))


@_settings(120)
@given(seed=SEEDS, variant=VARIANT_INDEX)
def test_reload_at_every_point_plays_on_identically(seed, variant):
    """position() dumped at any point reloads to an equal state that plays on identically; also when the
    optional 'history' key is dropped (API.md), the hand plays on to the same end."""
    rules = RULES[variant]
    _, actions = random_hand(rules, seed)
    ref = GameState.new_hand(rules, rng=np.random.default_rng(seed))
    states = [ref.copy()]
    for a in actions:
        ref.step(a)
        states.append(ref.copy())
    trajectory = [st_.position() for st_ in states]
    for k in range(len(actions) + 1):
        r = GameState.from_position(rules, trajectory[k])
        assert r == states[k]
        for j, a in enumerate(actions[k:], start=k):
            assert r.legal_actions() == states[j].legal_actions()
            r.step(a)
            assert r == states[j + 1]
            assert r.position() == trajectory[j + 1]
        assert r.result == ref.result
        if k == len(actions):
            continue
        stripped = {key: v for key, v in trajectory[k].items() if key != "history"}
        h = GameState.from_position(rules, stripped)
        assert h.position()["points"] == trajectory[k]["points"]
        for j, a in enumerate(actions[k:], start=k):
            assert h.legal_actions() == states[j].legal_actions()
            h.step(a)
            want, got = trajectory[j + 1], h.position()
            for key in ("hands", "won", "stock", "points", "tricks", "known", "result", "closing_snapshot"):
                assert got[key] == want[key], key
            assert GameState.from_position(rules, got) == h
        assert h.result == ref.result


@_settings(150)
@given(seed=SEEDS, variant=VARIANT_INDEX)
def test_push_pop_whole_hand(seed, variant):
    """Pushing a whole hand and popping every action restores the deal; stepping then pop works too."""
    rules = RULES[variant]
    _, actions = random_hand(rules, seed)
    s = GameState.new_hand(rules, rng=np.random.default_rng(seed))
    states = [s.copy()]
    for a in actions:
        s.push(a)
        states.append(s.copy())
    assert s.result is not None
    for k in range(len(actions), 0, -1):
        assert s == states[k]
        s.pop()
    assert s == states[0] and s.position() == states[0].position()
    with pytest.raises(IndexError):
        s.pop()
    for a in actions:
        s.step(a)
    assert s == states[-1]


@_settings(150)
@given(seed=SEEDS, variant=st.integers(min_value=0, max_value=len(VARIANTS)))
def test_observation_sets_at_most_obs_nonzero_bound_entries(seed, variant):
    """At every decision of a random hand, for both players, at most ``encoding.obs_nonzero_bound`` entries of the
    observation are non-zero, and no card is set in more than two card planes (the bound's reasoning; the trainer's
    memory estimate counts the float32 update's non-zero entries with it); the last variant is schnapsen10."""
    from schnapsen_env import encoding
    rules = RULES[variant] if variant < len(VARIANTS) else RuleSet.make("schnapsen10")
    n, bound = rules.n_cards, encoding.obs_nonzero_bound(rules)
    _, actions = random_hand(rules, seed)
    s = GameState.new_hand(rules, rng=np.random.default_rng(seed))
    for a in [*actions, None]:
        for player in (0, 1):
            obs = encoding.observation(s, player)
            assert np.count_nonzero(obs) <= bound
            planes = obs[:len(encoding.PLANES) * n].reshape(len(encoding.PLANES), n)
            assert np.count_nonzero(planes, axis=0).max() <= 2
        if a is not None:
            s.step(a)


# --------------------------------------------------------------------------- coverage of the checks
@pytest.mark.parametrize("variant", range(len(VARIANTS)), ids=VARIANT_IDS)
def test_checks_are_exercised(variant):
    """Fixed seeds per variant: the strict follower rule, leads and several endings really are reached."""
    rules = RULES[variant]
    stats = new_stats()
    for seed in range(40):
        play_and_check(rules, 10_000 + seed, stats, illegal=False)
    assert stats["strict_follow"] > 20, stats
    assert stats["open_follow"] > 20, stats
    assert stats["lead"] > 100, stats
    assert sum(v for k, v in stats.items() if k.startswith("reason:")) == 40
