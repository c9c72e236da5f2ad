"""``RandomAgent``: uniform over the legal actions."""

from __future__ import annotations

import numpy as np

from agents.base import legal_ids


class RandomAgent:
    """Picks uniformly among the actions the mask allows.

    Args:
        seed: seed of the agent's ``numpy.random.Generator``.
    """

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict) -> int:
        """Return a legal action id (int)."""
        ids = legal_ids(observation)
        return int(ids[self.rng.integers(ids.size)])

    def reset(self) -> None:
        pass
