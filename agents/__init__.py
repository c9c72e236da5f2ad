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
import importlib
from collections.abc import Callable
from typing import Any

from agents import moved
from agents.base import Agent, as_rules, legal_ids
from agents.game_theory.lbr import LocalBestResponse
from agents.learned.hybrid import ExpertPlusAgent, PolicySearchAgent
from agents.learned.rollouts import PolicyRolloutAgent
from agents.learned.shipped import (
    SHIPPED,
    SHIPPED_POLICIES,
    STRONGEST_POLICIES,
    STRONGEST_POLICY,
    load_checkpoint_agent,
    load_shipped,
    shipped_policies,
)
from agents.scripted.heuristic import HeuristicAgent
from agents.scripted.random_agent import RandomAgent
from agents.search.expert import ExpertAgent
from agents.search.openspiel_bots import INSTALL_HINT, OpenSpielISMCTSAgent, OpenSpielMCTSAgent, openspiel_available
from agents.search.pimc import PIMCAgent
from agents.search.rollout import RolloutAgent
from schnapsen_env import agent_registry
from schnapsen_env.ruleset import RuleSet

#: This package's agents by name, registered in :mod:`schnapsen_env.agent_registry` on import.
BUILT_IN: dict[str, Callable[..., Any]] = {
    "random": RandomAgent,
    "heuristic": HeuristicAgent,
    "rollout": RolloutAgent,
    "pimc": PIMCAgent,
    "expert": ExpertAgent,
    # partial of a module-level function: the factories pickle (spawned workers, Windows), as agents/specs.py says
    **{p.name: functools.partial(load_shipped, p.name) for p in SHIPPED},
    "policy+expert": PolicySearchAgent,
    "expert+": ExpertPlusAgent,
    "policy-rollout": PolicyRolloutAgent,
    "lbr": LocalBestResponse,
}
#: Registered agents that play one ruleset only with their default options: name -> that ruleset (the shipped
#: policies, each its own; ``policy+expert``, which plays a ``schnapsen20`` policy,
#: ``agents.learned.data.SEARCH_POLICY``).
ONE_RULESET: dict[str, str] = {**{p.name: p.ruleset for p in SHIPPED}, "policy+expert": "schnapsen20"}
#: Registered agents that cannot be built without an option: name -> that option (``lbr`` responds to a target
#: named by ``target=``). They play no ruleset with their default options (:func:`can_play`), so opponent lists
#: (the web app's) leave them out; the arena takes them with the option.
NEEDS_OPTION: dict[str, str] = {"lbr": "target"}
#: OpenSpiel's search bots (:mod:`agents.search.openspiel_bots`), registered only where ``pyspiel`` imports (the
#: optional extra ``openspiel``); elsewhere they are declared unavailable, and asking for one names the extra.
OPENSPIEL_AGENTS: dict[str, Callable[..., Any]] = {
    "openspiel-ismcts": OpenSpielISMCTSAgent,
    "openspiel-mcts": OpenSpielMCTSAgent,
}
if openspiel_available():
    BUILT_IN.update(OPENSPIEL_AGENTS)
else:
    for _name in OPENSPIEL_AGENTS:
        agent_registry.register_unavailable(
            _name, f"agent {_name!r} needs OpenSpiel, which is not installed: {INSTALL_HINT}")
agent_registry.register_checkpoint_loader(load_checkpoint_agent)

moved.install()  # old module paths (agents.pimc, ...) work for one release, with a warning

for _name, _factory in BUILT_IN.items():
    agent_registry.register_agent(_name, _factory)
del _name, _factory


def __getattr__(name: str):
    """``agents.pimc`` and the other moved submodules as attributes, as before they moved (with the warning of
    :mod:`agents.moved`)."""
    if f"agents.{name}" in moved.MOVED:
        return importlib.import_module(f"agents.{name}")
    raise AttributeError(f"module 'agents' has no attribute {name!r}")


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
            (a shipped policy plays its own ruleset only, :data:`ONE_RULESET`).
        TypeError: ``rules`` is missing or not a RuleSet / ruleset name.
    """
    factory = agent_registry.agent_factory(name)
    return factory(rules=as_rules(rules), seed=seed, **kwargs)


def can_play(name: str, rules: RuleSet | str) -> bool:
    """Whether the registered agent ``name`` plays ``rules`` with its default options (a shipped policy plays its own
    ruleset only, and ``policy+expert`` ``schnapsen20`` only: :data:`ONE_RULESET`; an agent of :data:`NEEDS_OPTION`
    none).

    Raises:
        ValueError: an unknown name.
    """
    agent_registry.agent_factory(name)  # ValueError for an unknown name
    if name in NEEDS_OPTION:
        return False
    return ONE_RULESET.get(name, as_rules(rules).name) == as_rules(rules).name


__all__ = ["NEEDS_OPTION", "ONE_RULESET", "SHIPPED", "SHIPPED_POLICIES", "STRONGEST_POLICIES", "STRONGEST_POLICY", "Agent", "ExpertAgent", "ExpertPlusAgent", "HeuristicAgent", "LocalBestResponse", "OpenSpielISMCTSAgent", "OpenSpielMCTSAgent", "PIMCAgent", "PolicyRolloutAgent", "PolicySearchAgent", "RandomAgent", "RolloutAgent", "agent_names", "can_play",
           "legal_ids", "make_agent", "shipped_policies"]
