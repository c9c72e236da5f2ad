"""Agents from random play to strong search, all behind one contract (:mod:`agents.base`).

Build one by name with :func:`make_agent`, giving the env's rules: ``make_agent("pimc", env.rules, seed=0)``.
Every registered factory has the signature ``(rules: RuleSet, seed: int | None, **options)``.

Importing this package registers its agents (:data:`BUILT_IN`) in :mod:`schnapsen_env.agent_registry`, where the
envs look up a named ``opponent=``; the project's entry point (``pyproject.toml``, group
``"schnapsen_env.agents"``) has the registry import this package when a name is asked for first, so the env
itself never imports it. To add an agent, add its factory to :data:`BUILT_IN`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from agents.base import Agent, as_rules, legal_ids
from agents.expert import ExpertAgent
from agents.heuristic import HeuristicAgent
from agents.hybrid import PolicySearchAgent
from agents.openspiel_bots import INSTALL_HINT, OpenSpielISMCTSAgent, OpenSpielMCTSAgent, openspiel_available
from agents.pimc import PIMCAgent
from agents.random_agent import RandomAgent
from agents.rollout import RolloutAgent
from schnapsen_env import agent_registry
from schnapsen_env.ruleset import RuleSet

#: The ruleset the shipped policies were trained for (the observation layout of another ruleset differs).
SHIPPED_RULESET = "schnapsen20"


def _shipped(file: str, rules: RuleSet | str, seed: int | None = None, greedy: bool = True):
    """A policy shipped in ``agents/data`` (schnapsen20), loaded lazily so that torch is imported only here.

    It plays ``schnapsen20`` under any knobs (the observation layout is the same); another ruleset is refused.
    """
    rules = as_rules(rules)
    if rules.name != SHIPPED_RULESET:
        raise ValueError(f"the shipped policy {file} plays {SHIPPED_RULESET}, not {rules.name}: choose another agent "
                         f"for {rules.name} or train a policy for it (train.py --ruleset {rules.name})")
    from agents.policy import DATA_DIR, PolicyAgent

    return PolicyAgent.load(DATA_DIR / file, rules=rules, greedy=greedy, seed=seed)


#: The shipped policies (``schnapsen20``): registered name -> file in ``agents/data``. How each was trained and how
#: strong it is: README, "Training" and "Strength of the agents".
SHIPPED_POLICIES: dict[str, str] = {
    "trained": "schnapsen20_policy.pt",  # the default run of commit b341ce3: 6M decisions
    "trained-long": "schnapsen20_policy_long.pt",  # the long run of commit 1ea76dd: 36M decisions
    "trained-100m": "schnapsen20_policy_100m.pt",  # the long run of commit 5bc141a: 100M decisions
    "trained-220m": "schnapsen20_policy_220m.pt",  # that run resumed to 220M decisions (163 minutes in all)
}
#: The strongest shipped policy (the web app's default opponent).
STRONGEST_POLICY = "trained-220m"


#: This package's agents by name, registered in :mod:`schnapsen_env.agent_registry` on import.
BUILT_IN: dict[str, Callable[..., Any]] = {
    "random": RandomAgent,
    "heuristic": HeuristicAgent,
    "rollout": RolloutAgent,
    "pimc": PIMCAgent,
    "expert": ExpertAgent,
    # partial of a module-level function: the factories pickle (spawned workers, Windows), as agents/specs.py says
    **{name: functools.partial(_shipped, file) for name, file in SHIPPED_POLICIES.items()},
    "policy+expert": PolicySearchAgent,
}
#: Registered agents that play ``schnapsen20`` only with their default options (they play a shipped policy).
SCHNAPSEN20_ONLY = (*SHIPPED_POLICIES, "policy+expert")
#: OpenSpiel's search bots (:mod:`agents.openspiel_bots`), registered only where ``pyspiel`` imports (the optional
#: extra ``openspiel``); elsewhere :func:`make_agent` names the extra to install.
OPENSPIEL_AGENTS: dict[str, Callable[..., Any]] = {
    "openspiel-ismcts": OpenSpielISMCTSAgent,
    "openspiel-mcts": OpenSpielMCTSAgent,
}
if openspiel_available():
    BUILT_IN.update(OPENSPIEL_AGENTS)

for _name, _factory in BUILT_IN.items():
    agent_registry.register_agent(_name, _factory)
del _name, _factory


def agent_names() -> list[str]:
    """Names accepted by :func:`make_agent`: this package's agents and any other registered ones."""
    return agent_registry.agent_names()


def make_agent(name: str, rules: RuleSet | str, seed: int | None = None, **kwargs: Any) -> Agent:
    """Build an agent by name for the given rules, e.g. ``make_agent("pimc", env.rules, seed=0, n_samples=4)``.

    Args:
        name: a name of :func:`agent_names`.
        rules: the env's :class:`RuleSet`, knobs included (or a ruleset name, meaning its default knobs).
        seed: seed of the agent's generator.
        **kwargs: the agent's own options.

    Raises:
        ValueError: an unknown name (the message lists the valid names), or an agent that cannot play these rules
            (the shipped policies play ``schnapsen20`` only).
        TypeError: ``rules`` is missing or not a RuleSet / ruleset name.
    """
    if name in OPENSPIEL_AGENTS and name not in agent_registry.agent_names():
        raise ValueError(f"agent {name!r} needs OpenSpiel, which is not installed: {INSTALL_HINT}")
    factory = agent_registry.agent_factory(name)
    return factory(rules=as_rules(rules), seed=seed, **kwargs)


def can_play(name: str, rules: RuleSet | str) -> bool:
    """Whether the registered agent ``name`` plays ``rules`` with its default options (the shipped policies, and
    ``policy+expert``, which plays one, play ``schnapsen20`` only)."""
    agent_registry.agent_factory(name)  # ValueError for an unknown name
    return name not in SCHNAPSEN20_ONLY or as_rules(rules).name == SHIPPED_RULESET


__all__ = ["SHIPPED_POLICIES", "STRONGEST_POLICY", "Agent", "ExpertAgent", "HeuristicAgent", "OpenSpielISMCTSAgent", "OpenSpielMCTSAgent", "PIMCAgent", "PolicySearchAgent", "RandomAgent", "RolloutAgent", "agent_names", "can_play",
           "legal_ids", "make_agent"]
