"""The agent protocol (API.md): ``act(observation_dict) -> int``.

An agent sees only the env's ``{"observation", "action_mask"}`` dict of the player to move,
so no agent can peek at hidden cards. Randomness comes from a ``numpy.random.Generator``
created from the ``seed=`` keyword at construction.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act(observation: dict) -> int`` (and optionally ``reset()`` between hands)."""

    def act(self, observation: dict) -> int: ...


def legal_ids(observation: dict) -> np.ndarray:
    """Action ids whose mask entry is 1: ``np.ndarray`` int64 of shape ``(k,)``, k >= 1.

    Raises:
        ValueError: the mask is missing or has no legal action (the agent is not to move).
    """
    try:
        mask = observation["action_mask"]
    except (KeyError, TypeError, IndexError):
        raise ValueError("observation must be the env's dict with an 'action_mask' entry") from None
    ids = np.flatnonzero(np.asarray(mask))
    if ids.size == 0:
        raise ValueError("the action mask has no legal action: this agent is not to move")
    return ids


def best_action(values: dict[int, float]) -> int:
    """The action id with the highest value; ties go to the lowest id."""
    return max(values, key=lambda a: (values[a], -a))


def resolve_rules(rules, observation: dict | None = None):
    """The :class:`RuleSet` an agent plays under.

    Args:
        rules: a RuleSet, a ruleset name, or None (then inferred from the observation's length with the
            ruleset's default knobs: 255 entries is ``schnapsen20``, 299 is ``sixtysix24``).
        observation: the env's observation dict (needed when ``rules`` is None).

    Raises:
        ValueError: ``rules`` is None and the observation length matches neither ruleset.
    """
    from schnapsen_env.encoding import obs_size
    from schnapsen_env.ruleset import RuleSet

    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, str):
        return RuleSet.make(rules)
    size = np.asarray(observation["observation"]).shape[-1]
    for name in ("schnapsen20", "sixtysix24"):
        r = RuleSet.make(name)
        if obs_size(r) == size:
            return r
    raise ValueError(f"cannot infer the ruleset from an observation of length {size}: pass rules=")
