"""The vector env, on the compiled core (schnapsen_env.rules_core), agrees exactly with the reference engine GameState:
random hands in lockstep, for both rulesets and every knob value of RULES.md section 5, comparing observations,
masks, to_move, rewards, results and full states; loaded positions and endgames through the core's batch loops."""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np
import pytest

from helpers.engine import differing_fields
from helpers.knob_cases import CASES, case_seed
from helpers.lockstep import action_kind, case_id
from schnapsen_env import encoding, jit, rules_core
from schnapsen_env import vector as vector_module
from schnapsen_env.errors import IllegalActionError, InvalidPositionError
from schnapsen_env.rules import RESULT_REASONS, GameState
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.vector import SchnapsenVectorEnv

N_SLOTS = 32
N_STEPS = 200


# Chance of taking each kind of special action when it is legal (else a uniform legal action): high for
# marriage / exchange / claim so that they happen often, low for close so that many hands are played out.
_SPECIAL_P = (0.5, 0.5, 0.07, 0.2)  # marriage, exchange, close, claim


def _pick(rng: np.random.Generator, mask: np.ndarray, n_cards: int) -> int:
    """A random legal action, biased towards marriage / exchange / claim (and a little close) when legal."""
    legal = np.flatnonzero(mask)
    for a in legal[legal >= n_cards]:
        if rng.random() < _SPECIAL_P[action_kind(int(a), n_cards) - 1]:
            return int(a)
    return int(legal[rng.integers(len(legal))])


@functools.cache
def _lockstep(case_index: int) -> tuple[Counter, Counter]:
    """The vector env and N_SLOTS reference GameStates in lockstep for N_STEPS steps under ``CASES[case_index]``,
    asserting equality all along; returns the result reasons and the action kinds (``_kind``) seen. Seeded, so the
    same every time: memoised, so that the coverage test reuses the runs of the lockstep tests in any order."""
    ruleset, knobs = CASES[case_index]
    rules = RuleSet.make(ruleset, **knobs)
    seed0 = 7919 + case_seed(CASES[case_index])
    reasons, kinds = Counter(), Counter()
    venv = SchnapsenVectorEnv(N_SLOTS, ruleset=ruleset, **knobs)
    obs, masks, to_move = venv.reset(seed=seed0)
    ref_rngs = [np.random.default_rng(seed0 + i) for i in range(N_SLOTS)]
    games = [GameState.new_hand(rules, r) for r in ref_rngs]
    pick_rng = np.random.default_rng(seed0)
    n_cards = rules.n_cards
    hands_done = 0
    ref_obs = np.empty_like(obs)
    for t in range(N_STEPS):
        seats = np.array([g.to_move for g in games])
        encoding.observations_into(games, seats, ref_obs)
        ref_masks = np.stack([g.action_mask() for g in games])
        if not (np.array_equal(to_move, seats) and np.array_equal(masks, ref_masks)
                and np.array_equal(obs, ref_obs)):
            for i, g in enumerate(games):
                assert to_move[i] == g.to_move, (i, t)
                np.testing.assert_array_equal(masks[i], g.action_mask(), err_msg=f"slot {i} step {t}")
                np.testing.assert_array_equal(obs[i], encoding.observation(g, g.to_move),
                                              err_msg=f"slot {i} step {t}")
        actions = np.array([_pick(pick_rng, m, n_cards) for m in masks], dtype=np.int64)
        kinds.update(action_kind(int(a), n_cards) for a in actions)
        if t % 10 == 0:
            for i, g in enumerate(games):
                assert venv.game(i) == g, (i, t, differing_fields(venv.game(i), g))
        if t % 60 == 0:
            np.testing.assert_array_equal(venv.states(), np.stack([encoding.state_vector(g) for g in games]))
        obs, masks, to_move, rewards, dones, infos = venv.step(actions)
        for i, g in enumerate(games):
            g.push(int(actions[i]))
            r = g.result
            assert dones[i] == (r is not None), (i, t)
            if r is None:
                assert infos["results"][i] is None
                assert not rewards[i].any()
                continue
            hands_done += 1
            assert infos["results"][i] == r, (i, t, infos["results"][i], r)
            reasons[r.reason] += 1
            expect = np.zeros(2, dtype=np.float32)
            if r.winner is not None:
                expect[r.winner], expect[1 - r.winner] = r.game_points, -r.game_points
            np.testing.assert_array_equal(rewards[i], expect)
            games[i] = GameState.new_hand(rules, ref_rngs[i])
    assert hands_done > 200
    return reasons, kinds


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
@pytest.mark.slow
def test_vector_env_lockstep_with_reference(case):
    reasons, kinds = _lockstep(CASES.index(case))
    assert sum(reasons.values()) > 200 and sum(kinds.values()) == N_SLOTS * N_STEPS


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_core_round_trip_and_both_seats(ruleset):
    """from_game_state / to_game_state round-trip mid-hand states (also loaded ones with a partial history),
    and observations of both seats (not only the player to move) and legal masks match the reference."""
    rules = RuleSet.make(ruleset, false_claim="mirror")
    rng = np.random.default_rng(5)
    states = []
    for k in range(200):
        g = GameState.new_hand(rules, rng)
        for _ in range(int(rng.integers(0, 2 * rules.n_tricks))):
            if g.result is not None:
                break
            g.push(_pick(rng, g.action_mask(), rules.n_cards))
        if k % 3 == 0 and g.result is None:  # a loaded position keeping only the last two tricks
            pos = g.position()
            pos["history"] = pos["history"][-2:]
            g = GameState.from_position(rules, pos)
        states.append(g)
    R = rules_core.rule_table(rules)
    b = np.stack([rules_core.from_game_state(g) for g in states])
    bits = np.zeros(len(states), dtype=np.int64)
    rules_core.legal_bits_rows(b, R, bits)
    for i, g in enumerate(states):
        assert rules_core.to_game_state(b[i], rules) == g
        assert rules_core.to_game_state(b[i], rules).position() == g.position()
        assert int(bits[i]) == g.legal_bits()
    for seat in (0, 1):
        out = np.empty((len(states), encoding.obs_size(rules)), dtype=np.float32)
        rules_core.observe_all(b, R, np.full(len(states), seat, dtype=np.int64), out)
        np.testing.assert_array_equal(out, np.stack([encoding.observation(g, seat) for g in states]))
    vectors = np.empty((len(states), encoding.state_size(rules)), dtype=np.float32)
    rules_core.state_vectors(b, R, vectors)
    np.testing.assert_array_equal(vectors, np.stack([encoding.state_vector(g) for g in states]))
    # Step every running row once and compare with push; finished rows are left alone.
    actions = np.zeros(len(states), dtype=np.int64)
    for i, g in enumerate(states):
        if g.result is None:
            actions[i] = _pick(rng, g.action_mask(), rules.n_cards)
    before = b.copy()
    rules_core.apply_all(b, R, actions)
    for i, g in enumerate(states):
        if g.result is None:
            g = g.copy()
            g.push(int(actions[i]))
            assert rules_core.to_game_state(b[i], rules) == g
        else:
            np.testing.assert_array_equal(b[i], before[i])


def test_vector_env_illegal_action_changes_nothing():
    venv = SchnapsenVectorEnv(4, false_claim="pagat")
    obs, masks, to_move = venv.reset(seed=11)
    before = venv.get_state()
    obs0, masks0 = obs.copy(), masks.copy()
    actions = np.array([int(np.flatnonzero(m)[0]) for m in masks])
    actions[2] = int(np.flatnonzero(masks[2] == 0)[0])
    with pytest.raises(IllegalActionError, match="slot 2"):
        venv.step(actions)
    actions[2] = 99
    with pytest.raises(IllegalActionError, match="slot 2"):
        venv.step(actions)
    actions[2] = -1
    with pytest.raises(IllegalActionError, match="slot 2"):
        venv.step(actions)
    with pytest.raises(IllegalActionError, match="slot 0"):
        venv.step(np.full(4, 0.5))
    assert venv.get_state() == before
    np.testing.assert_array_equal(venv.obs, obs0)
    np.testing.assert_array_equal(venv.masks, masks0)


def test_vector_env_get_set_state_resumes_identically():
    a = SchnapsenVectorEnv(16, ruleset="sixtysix24", claim_mode="auto")
    _, masks, _ = a.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(25):
        _, masks, _, _, _, _ = a.step(np.array([_pick(rng, m, 24) for m in masks]))
    snap = a.get_state()
    b = SchnapsenVectorEnv(16, ruleset="sixtysix24", claim_mode="auto")
    obs_b, masks_b, to_move_b = b.set_state(snap)
    np.testing.assert_array_equal(obs_b, a.obs)
    np.testing.assert_array_equal(masks_b, a.masks)
    np.testing.assert_array_equal(to_move_b, a.to_move)
    for i in range(16):
        np.testing.assert_array_equal(b.states_row(i), a.states()[i])
    for _ in range(40):
        actions = np.array([_pick(rng, m, 24) for m in a.masks])
        ra = a.step(actions)
        rb = b.step(actions)
        for x, y in zip(ra[:5], rb[:5]):
            np.testing.assert_array_equal(x, y)
        assert ra[5] == rb[5]




def _harvest_endgames(ruleset: str, count: int, seed: int) -> list[dict]:
    """Positions (dicts) with two tricks left and the leader to lead, from random play under the ruleset's
    defaults that rarely closes and never claims, so that many hands reach the end."""
    rules = RuleSet.make(ruleset)
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        g = GameState.new_hand(rules, rng)
        while g.result is None:
            if g.table < 0 and g.hands[0].bit_count() == 2 and g.hands[1].bit_count() == 2:
                out.append(g.position())
                break
            legal = [a for a in g.legal_actions() if a != rules.claim_action]
            if rules.close_action in legal and rng.random() < 0.9:
                legal.remove(rules.close_action)
            g.push(int(legal[rng.integers(len(legal))]))
    return out


@functools.cache
def _endgames(ruleset: str) -> tuple:
    return tuple(_harvest_endgames(ruleset, 250, 21))


@functools.cache
def _endgame_lockstep(case_index: int) -> Counter:
    """The last two tricks of the ``_endgames`` positions under ``CASES[case_index]``, in core state arrays and in
    GameStates in lockstep (asserting equality); returns the result reasons. Seeded and memoised like
    ``_lockstep``."""
    ruleset, knobs = CASES[case_index]
    rules = RuleSet.make(ruleset, **knobs)
    games = []
    for p in _endgames(ruleset):
        try:  # a position reached under the defaults may be impossible under the knobs (e.g. claim_mode="auto")
            games.append(GameState.from_position(rules, p))
        except InvalidPositionError:
            pass
    assert len(games) >= 100
    R = rules_core.rule_table(rules)
    b = np.stack([rules_core.from_game_state(g) for g in games])
    rng = np.random.default_rng(case_index)
    out = np.empty((len(games), encoding.obs_size(rules)), dtype=np.float32)
    bits = np.zeros(len(games), dtype=np.int64)
    reasons = Counter()
    while not b[:, rules_core.F.over].all():
        rules_core.legal_bits_rows(b, R, bits)
        rules_core.observe_all(b, R, b[:, rules_core.F.to_move].copy(), out)
        actions = np.zeros(len(games), dtype=np.int64)
        for i, g in enumerate(games):
            assert int(bits[i]) == g.legal_bits(), i
            if g.result is None:
                np.testing.assert_array_equal(out[i], encoding.observation(g, g.to_move), err_msg=str(i))
                actions[i] = _pick(rng, g.action_mask(), rules.n_cards)
        rules_core.apply_all(b, R, actions)  # rows already over are left alone
        for i, g in enumerate(games):
            if g.result is None:
                g.push(int(actions[i]))
                if g.result is not None:
                    reasons[g.result.reason] += 1
                    assert rules_core.result_of(b[i]) == g.result, i
    for i, g in enumerate(games):
        assert rules_core.to_game_state(b[i], rules) == g, (i, differing_fields(rules_core.to_game_state(b[i], rules), g))
    return reasons


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_core_endgames_every_knob(case):
    """The last two tricks of many hands (R20 W3, R22, R23, R23a, R66-7, R66-10 endings) under every knob set:
    the same positions loaded into core state arrays and into GameStates, played out in lockstep."""
    reasons = _endgame_lockstep(CASES.index(case))
    assert sum(reasons.values()) >= 100  # every loaded hand ends


def test_lockstep_runs_reach_every_reason_and_actionaction_kind():
    """The seeded lockstep and endgame runs of the tests above, over all knob sets, reach every result reason of
    each ruleset and take every kind of action often, so the exactness checks cover them. The runs are computed
    here if this test runs first or alone (memoised: the same runs, not repeated, in a full session)."""
    seen = {ruleset: Counter() for ruleset, _ in CASES}
    kinds_seen = {ruleset: Counter() for ruleset, _ in CASES}
    assert len(seen) == 3
    for i, (ruleset, _) in enumerate(CASES):
        reasons, kinds = _lockstep(i)
        seen[ruleset] += reasons + _endgame_lockstep(i)
        kinds_seen[ruleset] += kinds
    assert set(seen["schnapsen20"]) == {"claim", "false_claim", "last_trick", "closed_hand"}, seen
    assert set(seen["schnapsen10"]) == {"claim", "false_claim", "last_trick", "closed_hand"}, seen
    assert set(seen["sixtysix24"]) == set(RESULT_REASONS), seen
    for ruleset, kinds in kinds_seen.items():
        assert all(kinds[k] >= 500 for k in range(5)), (ruleset, kinds)  # play, marriage, exchange, close, claim


@pytest.mark.parametrize("compiled", [True, False])
def test_new_hands_draw_exactly_as_new_hand(compiled, monkeypatch):
    """The vector env deals in compiled code from each slot's bit generator (jit.draw_deal) or, as a fallback,
    with rng.permutation and rng.integers(2) in Python: the same deals and generator states as
    GameState.new_hand, also several hands in a row per generator, and through step()'s compiled deals."""
    assert vector_module._compiled_draws_ok()
    if not compiled:  # the fallback used if a numpy ever draws differently
        monkeypatch.setattr(vector_module, "_COMPILED_DRAWS", [False])
    for ruleset in ("schnapsen20", "sixtysix24", "schnapsen10"):
        rules = RuleSet.make(ruleset)
        venv = SchnapsenVectorEnv(50, ruleset=ruleset)
        venv.reset(seed=0)
        assert (venv._fns.shape[0] > 0) == compiled
        ref = [np.random.default_rng(s) for s in range(50)]
        venv._set_rngs([np.random.default_rng(s) for s in range(50)])
        for _ in range(8):
            games = [GameState.new_hand(rules, r) for r in ref]
            venv._new_hands(np.arange(50))
            for i, g in enumerate(games):
                assert venv.game(i) == g, differing_fields(venv.game(i), g)
            assert [r.bit_generator.state for r in ref] == [r.bit_generator.state for r in venv._rngs]


def test_compiled_draws_match_numpy_over_many_seeds():
    """jit.draw_deal against rng.permutation(n), rng.integers(2) for 300 seeds, 6 deals of 20, 24 and 10 cards."""
    for seed in range(300):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        fn, state = jit.bitgen_addresses(b)
        for n in (20, 24, 24, 20, 10, 24):
            order = np.empty(n, dtype=np.int64)
            dealer = jit.draw_deal(fn, state, order)
            np.testing.assert_array_equal(order, a.permutation(n))
            assert dealer == a.integers(2)
        assert a.bit_generator.state == b.bit_generator.state


@pytest.mark.parametrize("compiled", [True, False])
def test_step_deals_as_raw_env_hands_in_a_row(compiled, monkeypatch):
    """Slot i seeded with seed + i plays GameState.new_hand(rules, default_rng(seed + i)) and then the next hands
    of that generator, whether step() deals in compiled code or (fallback) in Python."""
    if not compiled:
        monkeypatch.setattr(vector_module, "_COMPILED_DRAWS", [False])
    rules = RuleSet.make()
    venv = SchnapsenVectorEnv(16)
    obs, masks, _ = venv.reset(seed=100)
    ref = [np.random.default_rng(100 + i) for i in range(16)]
    games = [GameState.new_hand(rules, r) for r in ref]
    hands = 0
    while hands < 60:
        actions = masks.argmax(axis=1)
        obs, masks, _, rewards, dones, infos = venv.step(actions)
        for i, g in enumerate(games):
            g.push(int(actions[i]))
            if g.result is not None:
                assert dones[i] and infos["results"][i] == g.result
                games[i] = GameState.new_hand(rules, ref[i])
                hands += 1
            assert venv.game(i) == games[i], differing_fields(venv.game(i), games[i])
            np.testing.assert_array_equal(obs[i], encoding.observation(games[i], games[i].to_move))


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copied_vector_env_deals_from_its_own_generators_bug(how):
    """A copy's compiled deals used to draw through the addresses of the original's generators: the two envs then
    shared (and, once the original was freed, read freed) generator state."""
    import copy
    import pickle
    venv = SchnapsenVectorEnv(8)
    venv.reset(seed=3)
    twin = copy.deepcopy(venv) if how == "deepcopy" else pickle.loads(pickle.dumps(venv))
    rng = np.random.default_rng(0)
    for _ in range(80):  # several hands end and are dealt anew in both
        masks = venv.masks
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        a = venv.step(actions)
        b = twin.step(actions)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[4], b[4])
    assert [r.bit_generator.state for r in venv._rngs] == [r.bit_generator.state for r in twin._rngs]
    assert all(x is not y for x, y in zip(venv._rngs, twin._rngs))
    del venv
    twin.step(twin.masks.argmax(axis=1))  # the copy stands on its own
