"""One agent contract: every agent is built for the env's rules, knobs included.

* Every registered agent, as the Gymnasium env's named opponent, plays whole hands under non-default knobs of
  both rulesets (the learner plays seeded random legal actions); the agent it builds plays the env's own
  RuleSet.
* The regression behind it: ``opponent="pimc", must_head=False`` used to raise KeyError within a few hands,
  because the agent guessed default knobs from the observation length.
* Building an agent without rules fails at construction with a clear error; a shipped policy refuses another
  ruleset.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import schnapsen_env  # noqa: F401  (registers "schnapsen_env/Schnapsen-v0")
from agents import NEEDS_OPTION, ONE_RULESET, agent_names, can_play, make_agent
from agents.scripted.heuristic import HeuristicAgent
from agents.scripted.random_agent import RandomAgent
from agents.search.pimc import PIMCAgent
from agents.search.rollout import RolloutAgent
from helpers.lockstep import case_id
from schnapsen_env import RuleSet

#: Non-default knob sets of both rulesets: (ruleset, knobs).
KNOB_SETS = [
    ("schnapsen20", dict(must_head=False)),
    ("schnapsen20", dict(marriage_declaration="optional")),
    ("schnapsen20", dict(claim_mode="auto")),
    ("schnapsen20", dict(false_claim="pagat")),
    ("schnapsen20", dict(close_min_stock=2, exchange_min_stock=2)),
    ("sixtysix24", dict(must_head=True)),
    ("sixtysix24", dict(exchange_rank="J")),
    ("sixtysix24", dict(tie="last_trick")),
    ("schnapsen10", dict(must_head=False)),
]
#: Cheap options for the search agents, so the whole file stays fast.
CHEAP = {"pimc": dict(n_samples=2, depth=1), "rollout": dict(n_samples=2, depth=1), "expert": dict(worlds=2),
         "policy+expert": dict(worlds=2), "expert+": dict(worlds=2), "policy-rollout": dict(worlds=2),
         "lbr": dict(target="heuristic", worlds=2, depth=1)}  # lbr needs its target (NEEDS_OPTION): it plays with it
HANDS = 3


def play(env, hands: int, seed: int) -> int:
    """Play ``hands`` whole hands, the learner choosing seeded random legal actions; returns the steps taken."""
    rng = np.random.default_rng(seed)
    steps = 0
    for h in range(hands):
        obs, info = env.reset(seed=seed + h)
        # the opponent may end the hand before the learner's first move (e.g. a false claim under "pagat")
        terminated = info.get("result") is not None
        while not terminated:
            legal = np.flatnonzero(obs["action_mask"])
            assert legal.size >= 1
            obs, _, terminated, truncated, info = env.step(int(rng.choice(legal)))
            assert not truncated and not info.get("illegal_action", False)
            steps += 1
        assert info["result"] is not None
    return steps


def _cases():
    for case in KNOB_SETS:
        for name in agent_names():
            if can_play(name, case[0]) or name in NEEDS_OPTION:
                yield pytest.param(name, case, id=f"{name}-{case_id(case)}")


@pytest.mark.parametrize("name, case", list(_cases()))
@pytest.mark.slow
def test_every_agent_plays_the_gym_env_under_other_knobs(name, case):
    ruleset, knobs = case
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=name, ruleset=ruleset,
                         opponent_kwargs=CHEAP.get(name), illegal_action="raise", **knobs)
    assert play(env, HANDS, seed=100) > 0
    inner = env.unwrapped
    assert inner.rules == RuleSet.make(ruleset, **knobs)
    # (d) the opponent plays the env's own rules, knobs included
    assert inner.opponent.rules == inner.rules
    assert all(getattr(inner.rules, k) == v for k, v in knobs.items())


def test_every_agent_is_covered():
    covered = {name for name, _ in (p.values for p in _cases())}
    assert covered == set(agent_names())
    assert not can_play("trained", "sixtysix24") and can_play("trained", RuleSet.make("schnapsen20", must_head=False))


def test_pimc_guessed_default_knobs_bug():
    """opponent="pimc", must_head=False raised KeyError within a few hands: the agent guessed the
    default knobs from the observation length and searched under must_head=True."""
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="pimc", must_head=False, illegal_action="raise")
    assert play(env, 20, seed=0) > 0
    assert env.unwrapped.opponent.rules == env.unwrapped.rules == RuleSet.make("schnapsen20", must_head=False)


@pytest.mark.parametrize("name", ["pimc", "rollout", "random", "heuristic", "trained"])
def test_named_opponent_is_rebuilt_for_the_env_rules_on_seeded_reset(name):
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=name, claim_mode="auto",
                         opponent_kwargs=CHEAP.get(name)).unwrapped
    first = env.opponent
    env.reset(seed=3)
    assert env.opponent is not first and env.opponent.rules == env.rules


def test_opponent_kwargs_need_a_named_opponent():
    with pytest.raises(ValueError, match="opponent_kwargs"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=RandomAgent("schnapsen20", seed=0),
                       opponent_kwargs={"n_samples": 2})
    # an option the agent does not take: the same check and words as "random:n_samples=2"
    with pytest.raises(ValueError, match=r"agent 'random' takes no argument\(s\) \['n_samples'\]"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="random", opponent_kwargs={"n_samples": 2})


def test_trained_opponent_refuses_sixtysix24_in_the_gym_env():
    with pytest.raises(ValueError, match="schnapsen20.*not sixtysix24"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="trained", ruleset="sixtysix24")
    with pytest.raises(ValueError, match="plays schnapsen20, but this env is sixtysix24"):
        gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=HeuristicAgent("schnapsen20"), ruleset="sixtysix24")


# ------------------------------------------------------------------------------------- (c) construction
@pytest.mark.parametrize("name", agent_names())
def test_make_agent_without_rules_fails_at_construction(name):
    with pytest.raises(TypeError, match="rules"):
        make_agent(name)
    with pytest.raises(TypeError, match="RuleSet"):
        make_agent(name, None)
    with pytest.raises(TypeError, match="RuleSet"):
        make_agent(name, rules=None, seed=0)
    with pytest.raises(TypeError, match="RuleSet"):
        make_agent(name, 255)  # an observation length is not rules


@pytest.mark.parametrize("cls", [RandomAgent, HeuristicAgent, PIMCAgent, RolloutAgent])
def test_agent_classes_need_rules(cls):
    with pytest.raises(TypeError, match="rules"):
        cls()
    with pytest.raises(TypeError, match="RuleSet"):
        cls(rules=None, seed=0)
    with pytest.raises(TypeError, match="RuleSet"):
        cls(seed=0, rules=299)
    with pytest.raises(ValueError, match="unknown ruleset"):
        cls("schnapsen66", seed=0)


@pytest.mark.parametrize("cls", [RandomAgent, HeuristicAgent, PIMCAgent, RolloutAgent])
@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_rules_and_seed_keywords_are_uniform(cls, ruleset):
    rules = RuleSet.make(ruleset, must_head=ruleset == "sixtysix24")
    agent = cls(rules=rules, seed=7)
    assert agent.rules is rules
    assert cls(rules=ruleset, seed=7).rules == RuleSet.make(ruleset)  # a name means the default knobs
    assert isinstance(agent.name, str) and callable(agent.act)


@pytest.mark.parametrize("name", [n for n, r in ONE_RULESET.items() if r == "schnapsen20"])
def test_shipped_policies_refuse_another_ruleset(name):
    with pytest.raises(ValueError, match="plays schnapsen20, not sixtysix24"):
        make_agent(name, RuleSet.make("sixtysix24"))
    with pytest.raises(ValueError, match="plays schnapsen20, not schnapsen10"):  # not an option's range first
        make_agent(name, "schnapsen10")
    with pytest.raises(ValueError, match="plays schnapsen20, not sixtysix24"):
        make_agent(name, "sixtysix24", seed=0)
    # other knobs of schnapsen20 are fine: the observation layout is the same
    rules = RuleSet.make("schnapsen20", must_head=False, claim_mode="auto")
    agent = make_agent(name, rules, seed=0)
    assert agent.rules == rules


def test_make_agent_passes_rules_and_seed_to_every_factory():
    rules = RuleSet.make("sixtysix24", tie="last_trick")
    for name in agent_names():
        if not can_play(name, rules):
            continue
        a = make_agent(name, rules, seed=5, **CHEAP.get(name, {}))
        assert a.rules == rules, name
        assert make_agent(name, "sixtysix24", seed=5).rules == RuleSet.make("sixtysix24"), name


def test_heuristic_refuses_an_observation_of_other_rules():
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", ruleset="sixtysix24").unwrapped
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match="built with the env's rules"):
        HeuristicAgent("schnapsen20").act(obs)


def test_arena_and_play_cli_build_agents_for_the_match_rules():
    import functools

    from agents.evaluation.arena import play_match, resolve_agent

    rules = RuleSet.make("schnapsen20", must_head=False)
    for spec in ("pimc:n_samples=2,depth=1", "rollout:n_samples=2", "heuristic", "random", "trained",
                 functools.partial(RolloutAgent, n_samples=2), RandomAgent):
        _, factory = resolve_agent(spec, rules)
        assert factory(seed=1).rules == rules, spec
    with pytest.raises(TypeError, match="RuleSet"):
        resolve_agent("random", None)
    with pytest.raises(ValueError, match="rules"):
        resolve_agent("pimc:rules='schnapsen20'", rules)
    r = play_match("pimc:n_samples=2,depth=1", "random", 2, seed=0, workers=1, progress=False, must_head=False)
    assert r.hands == 4
