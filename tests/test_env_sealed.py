"""Sealed information (RULES.md R27) of the observations of the AEC env.

States are taken at every decision point of seeded random playouts (biased towards exchanges, closes and
marriage announcements) in both rulesets. From each state's ``position()`` dict we build positions that differ
ONLY in what one seat cannot see:

(a) the face-down stock cards are permuted (the turn-up, the stock's last card, stays);
(b) unseen cards are swapped between the opponent's hand and the face-down stock (cards the opponent has made
    public, ``position()["known"]``, stay in the hand);
(c) both at once.

That seat's observation (``encoding.observation`` and ``raw_env.observe`` after ``reset(options={"position":
...})``, action mask included) must be identical. Conversely, positions that differ in something the seat sees
(its own hand, the turn-up, the table card, points, the closing snapshot, the match score, a card the opponent
showed) must give a different observation. Finally, the ``unseen`` plane is exactly the opponent's hidden cards
plus the face-down stock, and none of them is in the ``hand``/``opp_known``/``turn_up`` planes.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from schnapsen_env import GameState, InvalidPositionError, RuleSet, encoding, schnapsen_v0

PLAYERS = ("player_0", "player_1")

# (id, ruleset, knobs). The third variant lets the trump jack be exchanged at S = 2, so that a card made public by
# an exchange can also end up drawn by the trick-5 loser.
CONFIGS = [
    ("schnapsen20", "schnapsen20", {}),
    ("sixtysix24", "sixtysix24", {}),
    ("schnapsen20-min2", "schnapsen20", {"exchange_min_stock": 2, "close_min_stock": 2, "false_claim": "mirror"}),
]
CONFIG_IDS = [c[0] for c in CONFIGS]
N_GAMES = {"schnapsen20": 30, "sixtysix24": 24, "schnapsen20-min2": 16}
TAGS = ("open", "closed", "exchange", "marriage", "announced", "table", "exhausted", "known")


# ---------------------------------------------------------------------------------------------------- sampling
def loadable_position(st: GameState) -> dict:
    """``st.position()``, with ``exchanged`` cleared once a card is on the table.

    The engine keeps ``exchanged`` true after the exchanger's lead until the trick ends, but
    ``from_position`` refuses ``exchanged`` with a table card (a round-trip bug tested strictly in
    test_env_properties.py); the flag only matters before the lead, so both sides of every pair get it cleared.
    """
    pos = st.position()
    if pos["exchanged"] and pos["table"] is not None:
        pos["exchanged"] = False
    return pos


def _choose(st: GameState, rng: np.random.Generator) -> int:
    """Random legal action, preferring exchange / close / marriage so that those states are common."""
    legal = st.legal_actions()
    n = st.deck.size
    special = [a for a in legal if n <= a < n + 5]  # marriages, exchange
    if special and rng.random() < 0.6:
        return int(rng.choice(special))
    if n + 5 in legal and rng.random() < 0.12:  # close
        return n + 5
    plays = [a for a in legal if a < n]
    if plays and rng.random() < 0.9:
        return int(rng.choice(plays))
    return int(rng.choice(legal))


@functools.cache
def _samples(config_id: str) -> tuple[RuleSet, list[tuple[dict, frozenset]]]:
    """(rules, [(position dict, tags)]) at every decision point of seeded random playouts."""
    _, name, knobs = CONFIGS[CONFIG_IDS.index(config_id)]
    rules = RuleSet.make(name, **knobs)
    rng = np.random.default_rng(20240 + CONFIG_IDS.index(config_id))
    out = []
    for _ in range(N_GAMES[config_id]):
        st = GameState.new_hand(rules, rng)
        exchanged_in_hand = False
        while st.result is None:
            pos = loadable_position(st)
            if rng.random() < 0.3:  # a match score and carry, the same on both sides of every pair
                pos["match_points"] = {p: int(rng.integers(0, 7)) for p in PLAYERS}
                if rules.tie == "carry":  # a carry exists only in sixtysix24 (R66-10)
                    pos["carry"] = int(rng.integers(0, 3))
            tags = set()
            if st.closed_by >= 0:
                tags.add("closed")
            elif st.stock:
                tags.add("open")
            if exchanged_in_hand:
                tags.add("exchange")
            if st.marriage_suits[0] or st.marriage_suits[1]:
                tags.add("marriage")
            if st.announced >= 0:
                tags.add("announced")
            if st.table >= 0:
                tags.add("table")
            if not st.stock:
                tags.add("exhausted")
            if st.known[0] or st.known[1]:
                tags.add("known")
            out.append((pos, frozenset(tags)))
            a = _choose(st, rng)
            exchanged_in_hand |= rules.action_names[a] == "exchange"
            st.step(a)
    return rules, out


@functools.cache
def _env(config_id: str):
    _, name, knobs = CONFIGS[CONFIG_IDS.index(config_id)]
    return schnapsen_v0.raw_env(ruleset=name, **knobs)


# ------------------------------------------------------------------------------------------- position edits
def _copy(pos: dict) -> dict:
    out = dict(pos)
    out["stock"] = list(pos["stock"])
    out["hands"] = {p: list(v) for p, v in pos["hands"].items()}
    out["won"] = {p: list(v) for p, v in pos["won"].items()}
    out["known"] = {p: list(v) for p, v in pos["known"].items()}
    out["history"] = [{**t, "cards": list(t["cards"])} for t in pos["history"]]
    if pos.get("closing_snapshot") is not None:
        out["closing_snapshot"] = dict(pos["closing_snapshot"])
    return out


def _permute_stock(pos: dict, rng: np.random.Generator) -> dict | None:
    """(a) A non-identity permutation of the face-down stock cards; None if fewer than 2 face down."""
    face_down = pos["stock"][:-1]
    if len(face_down) < 2:
        return None
    while True:
        perm = [face_down[i] for i in rng.permutation(len(face_down))]
        if perm != face_down:
            break
    out = _copy(pos)
    out["stock"] = perm + [pos["stock"][-1]]
    return out


def _swap_hidden(pos: dict, seat: int, rng: np.random.Generator) -> dict | None:
    """(b) Swap 1..k unseen opponent hand cards (not in ``known``) with face-down stock cards."""
    opp = PLAYERS[1 - seat]
    hidden = [c for c in pos["hands"][opp] if c not in pos["known"][opp]]
    face_down = pos["stock"][:-1]
    k_max = min(len(hidden), len(face_down))
    if k_max == 0:
        return None
    k = int(rng.integers(1, k_max + 1))
    out_cards = [hidden[i] for i in rng.choice(len(hidden), k, replace=False)]
    slots = sorted(int(i) for i in rng.choice(len(face_down), k, replace=False))
    out = _copy(pos)
    in_cards = [face_down[i] for i in slots]
    for i, c in zip(slots, out_cards):
        out["stock"][i] = c
    out["hands"][opp] = [c for c in pos["hands"][opp] if c not in out_cards] + in_cards
    return out


def _load(rules: RuleSet, pos: dict) -> GameState:
    return GameState.from_position(rules, pos)


def _env_obs(config_id: str, pos: dict, seat: int) -> dict:
    env = _env(config_id)
    env.reset(options={"position": pos})
    o = env.observe(PLAYERS[seat])
    return {"observation": o["observation"].copy(), "action_mask": o["action_mask"].copy()}


def _diff_slices(rules: RuleSet, a: np.ndarray, b: np.ndarray) -> list[str]:
    lay = encoding.layout(rules)
    return [name for name, sl in lay.items() if not np.array_equal(a[sl], b[sl])]


@functools.cache
def _original_view(config_id: str, index: int, seat: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """(state vector, encoding.observation, env.observe) of sample ``index`` for ``seat``."""
    rules, samples = _samples(config_id)
    st = _load(rules, samples[index][0])
    obs = encoding.observation(st, seat)
    e = _env_obs(config_id, samples[index][0], seat)
    assert np.array_equal(e["observation"], obs), "env.observe() disagrees with encoding.observation()"
    return encoding.state_vector(st), obs, e


def _assert_same_view(config_id: str, rules: RuleSet, index: int, var: dict, seat: int, what: str) -> None:
    pos = _samples(config_id)[1][index][0]
    s1, o1, e1 = _original_view(config_id, index, seat)
    sv = _load(rules, var)
    assert not np.array_equal(s1, encoding.state_vector(sv)), "variant is not different"
    o2 = encoding.observation(sv, seat)
    assert np.array_equal(o1, o2), (
        f"{what}: observation of {PLAYERS[seat]} differs in {_diff_slices(rules, o1, o2)}\n"
        f"original: {pos}\nvariant:  {var}")
    e2 = _env_obs(config_id, var, seat)
    assert np.array_equal(e1["observation"], e2["observation"]), (
        f"{what}: env.observe({PLAYERS[seat]}) differs in {_diff_slices(rules, e1['observation'], e2['observation'])}")
    assert np.array_equal(e1["action_mask"], e2["action_mask"]), (
        f"{what}: action mask of {PLAYERS[seat]} differs: {e1['action_mask']} vs {e2['action_mask']}")


# ------------------------------------------------------------------------------------------------ (a) (b) (c)
def _run_sealed(config_id: str, kind: str, seed: int) -> dict:
    rules, samples = _samples(config_id)
    rng = np.random.default_rng(seed)
    done = {t: 0 for t in TAGS}
    n_pairs = 0
    for index, (pos, tags) in enumerate(samples):
        for seat in (0, 1):
            if kind == "stock":
                var = _permute_stock(pos, rng)
            elif kind == "hand":
                var = _swap_hidden(pos, seat, rng)
            else:
                var = _permute_stock(pos, rng)
                var = _swap_hidden(var, seat, rng) if var is not None else None
            if var is None:
                continue
            _assert_same_view(config_id, rules, index, var, seat, kind)
            n_pairs += 1
            for t in tags:
                done[t] += 1
    done["pairs"] = n_pairs
    return done


def _check_coverage(done: dict, kind: str) -> None:
    assert done["pairs"] >= 200, done
    for tag in ("open", "closed", "exchange", "marriage", "announced", "table", "known"):
        assert done[tag] >= 5, f"{kind}: too few pairs with {tag!r}: {done}"


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_sealed_stock_order(config_id):
    """(a) Neither seat sees the order of the face-down stock (R27), also after closing."""
    done = _run_sealed(config_id, "stock", 1)
    _check_coverage(done, "stock")


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_sealed_opponent_hand(config_id):
    """(b) A seat cannot tell which unseen cards the opponent holds and which lie in the stock (R27)."""
    done = _run_sealed(config_id, "hand", 2)
    _check_coverage(done, "hand")


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_sealed_stock_order_and_opponent_hand(config_id):
    """(c) Both at once."""
    done = _run_sealed(config_id, "both", 3)
    _check_coverage(done, "both")


S42 = {  # RULES.md S42 (B = player_1 leads, trump S)
    "trump": "S", "stock": "TH KH QH JH AD TD KD AC TC AS".split(), "closed_by": None, "closing_snapshot": None,
    "hands": {"player_0": "JD QD KC QC JC".split(), "player_1": "JS TS KS QS AH".split()},
    "won": {"player_0": [], "player_1": []}, "marriages": {"player_0": [], "player_1": []}, "announced": None,
    "leader": "player_1", "table": None, "dealer": "player_0",
}


def test_sealed_hand_made_exchange_close_marriage():
    """S42: B exchanges JS for AS, closes, announces 40 in spades. A knows AS, KS, QS are in B's hand, nothing more:
    every placement of B's other cards (TS, AH) among the dead stock gives A the same observation."""
    rules = RuleSet.make("schnapsen20")
    st = GameState.from_position(rules, S42)
    for a in ("exchange", "close", "marriage S"):
        st.step(a)
    pos = st.position()
    assert set(pos["known"]["player_1"]) == {"AS", "KS", "QS"}
    base = encoding.observation(st, 0)
    env = _env("schnapsen20")
    env.reset(options={"position": pos})
    base_env = env.observe("player_0")["observation"].copy()
    assert np.array_equal(base, base_env)
    face_down = pos["stock"][:-1]
    n = 0
    for _i, hidden in enumerate(("TS", "AH")):
        for j, dead in enumerate(face_down):
            var = _copy(pos)
            var["stock"][j] = hidden
            var["hands"]["player_1"] = [dead if c == hidden else c for c in pos["hands"]["player_1"]]
            sv = GameState.from_position(rules, var)
            assert np.array_equal(encoding.observation(sv, 0), base), (hidden, dead)
            env.reset(options={"position": var})
            assert np.array_equal(env.observe("player_0")["observation"], base_env), (hidden, dead)
            n += 1
    assert n == 2 * len(face_down) == 18


# ------------------------------------------------------------------------------------------------- converse
def _converse_variants(pos: dict, seat: int, rules: RuleSet, rng: np.random.Generator):
    """(kind, variant, slice that must differ) for edits of what ``seat`` sees."""
    me, opp = PLAYERS[seat], PLAYERS[1 - seat]
    d = rules.deck
    hidden_opp = [c for c in pos["hands"][opp] if c not in pos["known"][opp]]
    face_down = pos["stock"][:-1]
    unseen = hidden_opp + face_down

    def put(out: dict, old: str, new: str) -> None:
        """Exchange the places of unseen card ``new`` and card ``old`` (new -> old's place)."""
        if new in out["hands"][opp]:
            out["hands"][opp] = [old if c == new else c for c in out["hands"][opp]]
        else:
            out["stock"] = [old if c == new else c for c in out["stock"]]

    # Own hand: swap one of my cards (not a shown marriage partner) with an unseen card.
    mine = [c for c in pos["hands"][me] if c not in pos["known"][me]]
    if mine and unseen:
        old, new = mine[int(rng.integers(len(mine)))], unseen[int(rng.integers(len(unseen)))]
        out = _copy(pos)
        put(out, old, new)
        out["hands"][me] = [new if c == old else c for c in out["hands"][me]]
        yield "own_hand", out, "hand"
    # Turn-up: swap it with an unseen trump.
    if pos["stock"]:
        trumps = [c for c in unseen if c[1] == pos["trump"]]
        if trumps:
            old, new = pos["stock"][-1], trumps[int(rng.integers(len(trumps)))]
            out = _copy(pos)
            put(out, old, new)
            out["stock"][-1] = new
            yield "turn_up", out, "turn_up"
    # Table card: swap it with an unseen card.
    if pos["table"] is not None and unseen:
        old, new = pos["table"], unseen[int(rng.integers(len(unseen)))]
        out = _copy(pos)
        put(out, old, new)
        out["table"] = new
        yield "table", out, "table"
    # Card points: replace a played card by an unseen card of another point value, same trick winner.
    played = [(k, j) for k, t in enumerate(pos["history"]) for j in (0, 1)]
    if played and unseen:
        k, j = played[int(rng.integers(len(played)))]
        old = pos["history"][k]["cards"][j]
        others = [c for c in unseen if d.points[d.index(c)] != d.points[d.index(old)]]
        if others:
            new = others[int(rng.integers(len(others)))]
            out = _copy(pos)
            put(out, old, new)
            out["history"][k]["cards"][j] = new
            w = out["history"][k]["winner"]
            out["won"][w] = [new if c == old else c for c in out["won"][w]]
            out.pop("points")
            yield "card_points", out, "points"
    # Closing snapshot.
    if pos["closing_snapshot"] is not None:
        out = _copy(pos)
        snap = out["closing_snapshot"]
        other = PLAYERS[1 - PLAYERS.index(pos["closed_by"])]
        # Keep it reachable (the loader checks R19): lower the points, or credit a trick the non-closer has now.
        if snap["points"]:
            snap["points"] -= 1
            yield "snapshot", out, "snapshot"
        elif pos["tricks"][other]:
            snap["points"], snap["tricks"] = pos["points"][other], 1
            yield "snapshot", out, "snapshot"
    # Match score.
    out = _copy(pos)
    mp = dict(pos.get("match_points") or {p: 0 for p in PLAYERS})
    mp[opp] = (mp[opp] + 1) % 7
    out["match_points"] = mp
    yield "match", out, "match"
    # A card the opponent showed (old turn-up taken by an exchange, turn-up drawn at trick 5), not a marriage partner.
    kq = {f"{r}{s}" for s in pos["marriages"][opp] for r in "KQ"}
    shown = [c for c in pos["known"][opp] if c not in kq]
    if shown:
        out = _copy(pos)
        out["known"][opp] = [c for c in pos["known"][opp] if c != shown[0]]
        yield "opp_known", out, "opp_known"


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_observation_differs_when_visible_state_differs(config_id):
    rules, samples = _samples(config_id)
    lay = encoding.layout(rules)
    rng = np.random.default_rng(4)
    counts: dict[str, int] = {}
    for pos, _ in samples[::3]:
        for seat in (0, 1):
            base = encoding.observation(_load(rules, pos), seat)
            for kind, var, slice_name in _converse_variants(pos, seat, rules, rng):
                try:
                    sv = _load(rules, var)
                except InvalidPositionError:
                    continue  # e.g. the new card changes the trick winner or breaks a marriage
                o = encoding.observation(sv, seat)
                assert not np.array_equal(base[lay[slice_name]], o[lay[slice_name]]), (
                    f"{kind}: slice {slice_name!r} of {PLAYERS[seat]} unchanged\n{pos}\n{var}")
                e = _env_obs(config_id, var, seat)["observation"]
                assert np.array_equal(e, o)
                counts[kind] = counts.get(kind, 0) + 1
    expected = {"own_hand", "turn_up", "table", "card_points", "snapshot", "match"}
    assert expected <= set(counts), counts
    assert all(counts[k] >= 3 for k in expected), counts
    if config_id == "schnapsen20-min2":
        assert counts.get("opp_known", 0) >= 1, counts


# --------------------------------------------------------------------------------------------- hidden cards
@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_observation_never_holds_hidden_cards(config_id):
    rules, samples = _samples(config_id)
    lay = encoding.layout(rules)
    d = rules.deck
    for pos, _ in samples:
        st = _load(rules, pos)
        for seat in (0, 1):
            me, opp = PLAYERS[seat], PLAYERS[1 - seat]
            obs = encoding.observation(st, seat)
            hidden = {c for c in pos["hands"][opp] if c not in pos["known"][opp]}
            face_down = set(pos["stock"][:-1])
            plane = {name: {d.codes[i] for i in np.flatnonzero(obs[lay[name]] > 0.5)} for name in encoding.PLANES}
            assert plane["unseen"] == hidden | face_down, (me, pos)
            assert plane["hand"] == set(pos["hands"][me])
            assert plane["opp_known"] == set(pos["known"][opp])
            assert plane["turn_up"] == set(pos["stock"][-1:])
            for name in encoding.PLANES:
                if name != "unseen":
                    assert not plane[name] & (hidden | face_down), (name, me, pos)
