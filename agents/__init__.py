"""Agents from random play to strong search, all behind one protocol: ``act(observation_dict) -> int``.

Build one by name with :func:`make_agent`.
"""

from __future__ import annotations

from typing import Any, Callable

from agents.base import Agent, legal_ids
from agents.heuristic import HeuristicAgent
from agents.pimc import PIMCAgent
from agents.random_agent import RandomAgent
from agents.rollout import RolloutAgent

def _shipped(file: str, seed: int | None = None, greedy: bool = True, rules=None):
    """A policy shipped in ``agents/data`` (schnapsen20), loaded lazily so that torch is imported only here."""
    from agents.learned import DATA_DIR, PolicyAgent

    if rules is not None and getattr(rules, "name", rules) != "schnapsen20":
        raise ValueError(f"the shipped policy plays schnapsen20, not {getattr(rules, 'name', rules)}")
    return PolicyAgent.load(DATA_DIR / file, greedy=greedy, seed=seed)


def _trained(seed: int | None = None, greedy: bool = True, rules=None):
    """The default run's policy (``python train.py``, about 15 minutes): ``agents/data/schnapsen20_policy.pt``."""
    return _shipped("schnapsen20_policy.pt", seed=seed, greedy=greedy, rules=rules)


def _trained_long(seed: int | None = None, greedy: bool = True, rules=None):
    """The long run's policy (36M decisions, README "Training"): ``agents/data/schnapsen20_policy_long.pt``."""
    return _shipped("schnapsen20_policy_long.pt", seed=seed, greedy=greedy, rules=rules)


_REGISTRY: dict[str, Callable[..., Any]] = {
    "random": RandomAgent,
    "heuristic": HeuristicAgent,
    "rollout": RolloutAgent,
    "pimc": PIMCAgent,
    "trained": _trained,
    "trained-long": _trained_long,
}


def agent_names() -> list[str]:
    """Names accepted by :func:`make_agent`."""
    return sorted(_REGISTRY)


def make_agent(name: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """Build an agent by name, e.g. ``make_agent("random", seed=0)``.

    Raises:
        ValueError: an unknown name; the message lists the valid names.
    """
    try:
        factory = _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown agent {name!r}: expected one of {agent_names()}") from None
    return factory(seed=seed, **kwargs)


__all__ = ["Agent", "HeuristicAgent", "PIMCAgent", "RandomAgent", "RolloutAgent", "agent_names", "legal_ids",
           "make_agent"]
