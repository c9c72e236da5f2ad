"""The compiled heuristic (``HeuristicAgent.act_batch``, agents/scripted/heuristic_core.py) against the readable one
(``HeuristicAgent.act``, agents/scripted/heuristic.py).

* Lockstep: seeded hands of the vector env under every knob set of helpers/knob_cases.py (both rulesets), the
  slots moved by a mix of the heuristic and biased random play (from all heuristic to all random, slot by slot),
  so that open, closed and exhausted stocks, exchanges, marriages and claims arise; on every decision row of every
  step, ``act_batch`` equals ``act``. A coverage test checks that the runs reach every rule of the heuristic often.
* Scrambled rows: random card planes, scalars and masks (far from any real position, NaN entries included): the
  same actions, and the same rows refused.
* Bad input: wrong shapes, dtypes, a row with no legal action, out-of-range points, a card on the table with no
  card to follow with: ValueError naming what was wrong and what was expected.
"""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np
import pytest

from agents.scripted import heuristic_core
from agents.scripted.heuristic import HeuristicAgent
from helpers.knob_cases import CASES, case_seed
from schnapsen_env.encoding import layout, obs_bounds, obs_size
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.vector import SchnapsenVectorEnv

N_SLOTS = 48
N_STEPS = 80
# Chance of a random move taking each kind of special action when legal (as in test_vector_exact.py): marriage,
# exchange, close, claim.
_SPECIAL_P = (0.5, 0.5, 0.1, 0.2)


def _case_id(case) -> str:
    ruleset, knobs = case
    return ruleset + ("-" + "-".join(f"{k}={v}" for k, v in knobs.items()) if knobs else "-defaults")


def _random_move(rng: np.random.Generator, mask: np.ndarray, n_cards: int) -> int:
    legal = np.flatnonzero(mask)
    for a in legal[legal >= n_cards]:
        kind = 0 if a < n_cards + 4 else int(a) - n_cards - 3  # marriage, exchange, close, claim
        if rng.random() < _SPECIAL_P[kind]:
            return int(a)
    return int(legal[rng.integers(len(legal))])


def _situation(agent: HeuristicAgent, obs: np.ndarray, action: int) -> str:
    """Which rule of the heuristic decided a row: the action's kind and, for a card, lead or follow and the phase."""
    rules = agent.rules
    n = rules.n_cards
    if action >= n:
        return rules.action_names[action].split()[0]  # marriage, exchange, close, claim
    lay = layout(rules)
    following = obs[lay["table"]].max() > 0.5
    phase = ("closed" if obs[lay["closed"]][0] > 0.5 else "exhausted" if obs[lay["stock_size"]][0] < 1e-6
             else "open")
    if obs[lay["announced"]].max() > 0.5:  # the K-Q rule tells only the open stock from the STRICT phase
        return "lead-announced-" + ("open" if phase == "open" else "strict")
    return ("follow-" if following else "lead-") + phase


def _assert_rows_equal(agent: HeuristicAgent, obs: np.ndarray, masks: np.ndarray, where: str) -> np.ndarray:
    """``act_batch`` on all rows equals ``act`` row by row; returns the actions."""
    batch = agent.act_batch(obs, masks)
    assert batch.dtype == np.int64 and batch.shape == (len(obs),)
    ref = np.array([agent.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)], dtype=np.int64)
    if not np.array_equal(batch, ref):
        i = int(np.flatnonzero(batch != ref)[0])
        names = agent.rules.action_names
        raise AssertionError(f"{where}, row {i}: act_batch chose {names[batch[i]]!r}, act {names[ref[i]]!r}")
    return batch


@functools.cache
def _lockstep(case_index: int) -> Counter:
    """N_SLOTS seeded hands of ``CASES[case_index]`` for N_STEPS steps, comparing act_batch with act on every row
    (both seats); returns the count of each situation (:func:`_situation`) the heuristic decided. Memoised, so the
    coverage test reuses the lockstep tests' runs in any order."""
    ruleset, knobs = CASES[case_index]
    rules = RuleSet.make(ruleset, **knobs)
    seed0 = 6271 + case_seed(CASES[case_index])
    agent = HeuristicAgent(rules, seed=0)
    env = SchnapsenVectorEnv(N_SLOTS, ruleset=ruleset, **knobs)
    obs, masks, _ = env.reset(seed=seed0)
    rng = np.random.default_rng(seed0)
    # slot i plays the heuristic's move with chance i / (N_SLOTS - 1): from all random to all heuristic
    p_heuristic = np.linspace(0.0, 1.0, N_SLOTS)
    seen: Counter = Counter()
    for t in range(N_STEPS):
        batch = _assert_rows_equal(agent, obs, masks, f"{_case_id(CASES[case_index])} step {t}")
        seen.update(_situation(agent, o, int(a)) for o, a, m in zip(obs, batch, masks) if m.sum() > 1)
        seen["rows"] += len(batch)
        seen["decisions"] += int((masks.sum(axis=1) > 1).sum())
        actions = np.array([a if rng.random() < p else _random_move(rng, m, rules.n_cards)
                            for a, p, m in zip(batch.tolist(), p_heuristic, masks)], dtype=np.int64)
        obs, masks, _, _, _, _ = env.step(actions)
    return seen


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
@pytest.mark.slow
def test_act_batch_equals_act_in_lockstep(case):
    seen = _lockstep(CASES.index(case))
    assert seen["rows"] == N_SLOTS * N_STEPS


def test_lockstep_runs_reach_every_rule_of_the_heuristic():
    """Over all knob sets, the lockstep runs compare thousands of rows in each ruleset and reach each rule of the
    heuristic often (claim, exchange, close, marriages, leading after a marriage, leading and following with the
    stock open, closed and exhausted), so that the equality above covers them. Computed here if run alone."""
    per_ruleset = {ruleset: Counter() for ruleset, _ in CASES}
    assert len(per_ruleset) == 3
    for i, (ruleset, _) in enumerate(CASES):
        per_ruleset[ruleset] += _lockstep(i)
    kinds = ["claim", "exchange", "close", "marriage", "lead-announced-open", "lead-announced-strict"] + [
        f"{how}-{phase}" for how in ("lead", "follow") for phase in ("open", "closed", "exhausted")]
    for ruleset, seen in per_ruleset.items():
        assert seen["decisions"] >= (10_000 if ruleset == "schnapsen10" else 40_000), (ruleset, seen)
        thin = {k: seen[k] for k in kinds if seen[k] < 100}
        assert not thin, (ruleset, thin, seen)


# ------------------------------------------------------------------------------------------------ scrambled rows
def _scrambled(rules: RuleSet, n_rows: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Observations with random 0/1 card planes (a few NaN and fractional entries), random scalars within the
    observation space (points near the claim target, empty and non-empty stocks, trump one-hot or not), and
    random masks, some with only special actions."""
    size, n = obs_size(rules), rules.n_cards
    lay = layout(rules)
    _, high = obs_bounds(rules)
    obs = (rng.random((n_rows, size)) < 0.3).astype(np.float32)
    obs[rng.random((n_rows, size)) < 0.01] = np.nan
    obs[rng.random((n_rows, size)) < 0.01] = 0.5
    scalars = slice(lay["trump"].start, size)
    obs[:, scalars] = rng.random((n_rows, size - scalars.start)) * high[scalars]
    trump = rng.integers(4, size=n_rows)
    one_hot = rng.random(n_rows) < 0.8
    obs[one_hot, lay["trump"]] = 0.0
    obs[one_hot, lay["trump"].start + trump[one_hot]] = 1.0
    obs[rng.random(n_rows) < 0.02, lay["trump"].start + 2] = np.nan
    obs[:, lay["closed"].start] = rng.random(n_rows) < 0.3
    stock = obs[:, lay["stock_size"].start]
    stock[rng.random(n_rows) < 0.3] = 0.0
    stock[rng.random(n_rows) < 0.05] = 5e-7
    obs[:, lay["points"].start] = rng.integers(0, 100, size=n_rows) / 66
    obs[:, lay["pending"].start] = rng.choice([0, 20, 40, 60], size=n_rows) / 40
    no_table = rng.random(n_rows) < 0.5
    obs[no_table, lay["table"]] = 0.0
    masks = (rng.random((n_rows, rules.n_actions)) < rng.choice([0.05, 0.2, 0.5], size=(n_rows, 1))).astype(np.int8)
    specials_only = rng.random(n_rows) < 0.05
    masks[specials_only, :n] = 0
    return obs, masks


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_act_batch_equals_act_on_scrambled_rows(ruleset):
    """Far from real positions (hands and masks that disagree, several table cards, NaN entries): the two agree
    on every row act accepts, and refuse the same rows."""
    rules = RuleSet.make(ruleset)
    agent = HeuristicAgent(rules)
    obs, masks = _scrambled(rules, 6000, np.random.default_rng(20 if ruleset == "schnapsen20" else 24))
    accepted, refused = [], []
    for i, (o, m) in enumerate(zip(obs, masks)):
        try:
            agent.act({"observation": o, "action_mask": m})
            accepted.append(i)
        except ValueError:
            refused.append(i)
    assert len(accepted) > 4500 and len(refused) > 100  # masks without legal action, no card to follow with
    _assert_rows_equal(agent, obs[accepted], masks[accepted], f"{ruleset} scrambled")
    for i in refused:
        with pytest.raises(ValueError, match="row 0 of the batch"):
            agent.act_batch(obs[i:i + 1], masks[i:i + 1])


def test_act_batch_takes_other_dtypes_and_layouts_alike():
    rules = RuleSet.make("sixtysix24")
    agent = HeuristicAgent(rules)
    env = SchnapsenVectorEnv(64, ruleset="sixtysix24")
    obs, masks, _ = env.reset(seed=3)
    expect = agent.act_batch(obs, masks)
    for m in (masks.astype(bool), masks.astype(np.float32), masks.astype(np.int64), masks.astype(np.uint8),
              np.asfortranarray(masks), masks.tolist()):
        np.testing.assert_array_equal(agent.act_batch(obs, m), expect)
    for o in (obs.astype(np.float64), np.asfortranarray(obs), obs.tolist()):
        np.testing.assert_array_equal(agent.act_batch(o, masks), expect)
    wide = np.zeros((64, 2 * obs.shape[1]), dtype=np.float32)
    wide[:, ::2] = obs
    np.testing.assert_array_equal(agent.act_batch(wide[:, ::2], masks[::1]), expect)  # a strided view
    np.testing.assert_array_equal(agent.act_batch(obs[::2], masks[::2]), expect[::2])
    empty = agent.act_batch(obs[:0], masks[:0])
    assert empty.dtype == np.int64 and empty.shape == (0,)


def test_kernel_tables_follow_the_observation_layout():
    """The kernel reads the observation at the offsets of encoding.layout, for each ruleset."""
    for ruleset in ("schnapsen20", "sixtysix24", "schnapsen10"):
        rules = RuleSet.make(ruleset)
        lay = layout(rules)
        t = heuristic_core.tables(rules, 2)
        for name in ("hand", "table", "unseen", "me_won", "opp_won", "trump", "stock_size", "closed", "points",
                     "pending"):
            assert t.ints[getattr(heuristic_core.I, name)] == lay[name].start, (ruleset, name)
        assert t.ints[heuristic_core.I.claim] == rules.claim_action and t.cards.shape == (rules.n_cards, 4)


# ------------------------------------------------------------------------------------------------ bad input
@pytest.fixture(scope="module")
def batch20():
    env = SchnapsenVectorEnv(8, ruleset="schnapsen20")
    obs, masks, _ = env.reset(seed=11)
    return HeuristicAgent(env.rules), obs.copy(), masks.copy()


def test_act_batch_refuses_wrong_shapes_and_dtypes(batch20):
    agent, obs, masks = batch20
    cases = [
        ((obs[0], masks), r"observations must have shape \(B, 255\) \(obs_size = 255 for schnapsen20\), got \(255,\)"),
        ((obs[None], masks), r"observations must have shape \(B, 255\).*got \(1, 8, 255\)"),
        ((np.zeros((8, 299), np.float32), masks),
         r"observations must have shape \(B, 255\).*got \(8, 299\).*env's rules"),
        ((obs, masks[:, :-1]), r"masks must have shape \(B, 27\) \(n_actions = 27 for schnapsen20\), got \(8, 26\)"),
        ((obs, masks[0]), r"masks must have shape \(B, 27\).*got \(27,\)"),
        ((obs, masks[:5]), "masks must have one row per observation: got 5 rows of masks for 8 observations"),
        ((obs.astype(str), masks), "observations must be an array of numbers.*got dtype <U"),
        ((obs, masks.astype(object)), "masks must be an array of numbers.*got dtype object"),
        ((obs, [[1, 0], [1]]), r"masks must be an array of shape \(B, 27\)"),
        ((None, masks), "observations must be an array of numbers.*got dtype object"),
    ]
    for args, match in cases:
        with pytest.raises(ValueError, match=match):
            agent.act_batch(*args)


def test_act_batch_names_the_row_with_no_legal_action(batch20):
    agent, obs, masks = batch20
    bad = masks.copy()
    bad[5] = 0
    with pytest.raises(ValueError, match="row 5 of the batch: the action mask has no legal action"):
        agent.act_batch(obs, bad)
    with pytest.raises(ValueError, match="no legal action"):
        agent.act({"observation": obs[5], "action_mask": bad[5]})


@pytest.mark.parametrize("value", [np.nan, np.inf, -1 / 66, 5.0])
@pytest.mark.parametrize("entry", ["points", "pending"])
def test_act_batch_and_act_refuse_points_outside_the_observation_space(batch20, entry, value):
    """The two entries the heuristic reads as integers: act used to fail with a bare "cannot convert float NaN to
    integer" (or an OverflowError for inf) and to read nonsense values as they came."""
    agent, obs, masks = batch20
    rows = np.flatnonzero(masks.sum(axis=1) > 1)
    bad = obs.copy()
    bad[rows[-1], layout(agent.rules)[entry].start] = value
    i = layout(agent.rules)[entry].start
    with pytest.raises(ValueError, match=rf"row {rows[-1]} of the batch: its '{entry}' entry \(index {i}\) is .*"
                                         rf"expected a number from 0 to [34]"):
        agent.act_batch(bad, masks)
    with pytest.raises(ValueError, match=rf"'{entry}' entry \(index {i}\).*expected a number from 0 to [34]"):
        agent.act({"observation": bad[rows[-1]], "action_mask": masks[rows[-1]]})


def test_act_batch_and_act_refuse_a_table_card_with_no_card_to_follow(batch20):
    agent, obs, masks = batch20
    rules = agent.rules
    o = obs[0].copy()
    o[layout(rules)["table"].start + 3] = 1.0
    m = np.zeros(rules.n_actions, dtype=np.int8)
    m[[rules.close_action, rules.claim_action]] = 1
    with pytest.raises(ValueError, match="row 0 of the batch: the observation shows a card on the table but the mask "
                                         "offers no card"):
        agent.act_batch(o[None], m[None])
    with pytest.raises(ValueError, match="offers no card to follow with"):
        agent.act({"observation": o, "action_mask": m})
