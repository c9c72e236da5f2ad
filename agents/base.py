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
