"""The shipped policies of every ruleset (agents/learned/data): each file is the one declared (checksum, ruleset),
loads by name, plays only legal actions in every env of its ruleset, and refuses another ruleset."""

from __future__ import annotations

import hashlib
import io

import gymnasium
import numpy as np
import pytest

from agents import SHIPPED, STRONGEST_POLICIES, can_play, make_agent
from agents.learned.checkpoint import load_checkpoint
from agents.learned.data import DATA_DIR, SEARCH_POLICIES, SEARCH_POLICY, SHIPPED_BY_NAME, shipped_policies
from schnapsen_env import schnapsen_v0
from schnapsen_env.ruleset import RULESETS, RuleSet
from schnapsen_env.vector import SchnapsenVectorEnv
from tests.helpers.play import assert_legal_hands

NAMES = [p.name for p in SHIPPED]


def test_every_file_is_declared_once_and_matches_its_checksum():
    assert sorted(p.name for p in DATA_DIR.glob("*.pt")) == sorted(p.file for p in SHIPPED)
    assert len(set(NAMES)) == len(NAMES) and len({p.file for p in SHIPPED}) == len(SHIPPED)
    for p in SHIPPED:
        assert hashlib.sha256(p.path.read_bytes()).hexdigest() == p.sha256, p.file
        assert p.commands and all(c.startswith(("python train.py ", "cp ")) for c in p.commands), p.name


@pytest.mark.parametrize("name", NAMES)
def test_declared_ruleset_is_the_checkpoints(name):
    p = SHIPPED_BY_NAME[name]
    assert load_checkpoint(p.path)["rules"]["ruleset"] == p.ruleset
    assert p.file.startswith(p.ruleset + "_")  # the file name says the ruleset too


def test_every_ruleset_has_a_strongest_shipped_policy():
    assert set(STRONGEST_POLICIES) == set(RULESETS)
    for ruleset, name in STRONGEST_POLICIES.items():
        assert name in shipped_policies(ruleset)


def test_the_searches_with_a_policy_play_a_shipped_policy_of_each_ruleset():
    """``policy+expert``, ``expert+`` and ``policy-rollout`` play the policy their results were measured with, of the
    ruleset they play, by default."""
    from agents.learned.hybrid import ExpertPlusAgent, PolicySearchAgent
    from agents.learned.rollouts import PolicyRolloutAgent

    assert set(SEARCH_POLICIES) == set(RULESETS)
    for ruleset, name in SEARCH_POLICIES.items():
        assert name in shipped_policies(ruleset)
    assert PolicySearchAgent("schnapsen20").policy_name == SEARCH_POLICY
    for ruleset, name in SEARCH_POLICIES.items():
        assert ExpertPlusAgent(ruleset).policy_name == name
    assert PolicyRolloutAgent("schnapsen20").policy_name == SEARCH_POLICY


@pytest.mark.parametrize("name", NAMES)
def test_plays_its_ruleset_and_refuses_the_others(name):
    own = SHIPPED_BY_NAME[name].ruleset
    for ruleset in RULESETS:
        assert can_play(name, ruleset) == (ruleset == own)
        if ruleset != own:
            with pytest.raises(ValueError, match=f"plays {own}, not {ruleset}"):
                make_agent(name, ruleset, seed=0)
    assert make_agent(name, own, seed=0).rules == RuleSet.make(own)


@pytest.mark.parametrize("name", [n for n in NAMES if SHIPPED_BY_NAME[n].ruleset != "schnapsen20"])
def test_legal_in_the_aec_env(name):
    # the schnapsen20 policies: tests/test_agents.py
    ruleset = SHIPPED_BY_NAME[name].ruleset
    assert_legal_hands(make_agent(name, ruleset, seed=0), 5, schnapsen_v0.raw_env(ruleset=ruleset))


@pytest.mark.parametrize("name", NAMES)
def test_legal_in_the_gymnasium_env_on_both_sides(name):
    ruleset = SHIPPED_BY_NAME[name].ruleset
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", ruleset=ruleset, opponent=name)  # the policy as opponent
    learner = make_agent(name, ruleset, seed=1)  # and as the learner
    for hand in range(4):
        obs, info = env.reset(seed=hand)
        terminated = False
        while not terminated:
            a = learner.act(obs)
            assert obs["action_mask"][a] == 1
            obs, reward, terminated, truncated, info = env.step(a)
            assert not truncated


@pytest.mark.parametrize("name", NAMES)
def test_legal_in_the_vector_env(name):
    ruleset = SHIPPED_BY_NAME[name].ruleset
    agent = make_agent(name, ruleset, seed=0)
    venv = SchnapsenVectorEnv(4, ruleset=ruleset)
    obs, masks, _ = venv.reset(seed=3)
    finished = 0
    while finished < 8:
        actions = np.array([agent.act({"observation": obs[i], "action_mask": masks[i]}) for i in range(4)])
        assert all(masks[i, a] == 1 for i, a in enumerate(actions))
        obs, masks, _, _, dones, _ = venv.step(actions)  # IllegalActionError on an illegal action
        finished += int(np.sum(dones))


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_play_program_default_opponent_is_the_rulesets_strongest_policy(monkeypatch, ruleset):
    import agents.cli.play
    from agents.cli.play import main as play_main

    asked = []
    real = agents.cli.play.resolve_agent

    def spy(name, rules):
        asked.append(name)
        return real(name, rules)

    monkeypatch.setattr(agents.cli.play, "resolve_agent", spy)
    out = io.StringIO()
    assert play_main(["--seed", "2", "--ruleset", ruleset], inp=io.StringIO(""), out=out) == 0
    assert asked == [STRONGEST_POLICIES[ruleset]] and "bye" in out.getvalue()
    # the player is told whom they play
    assert out.getvalue().splitlines()[0] == (f"{ruleset}: you against {STRONGEST_POLICIES[ruleset]} (the strongest "
                                              "shipped policy of this ruleset)")
