"""``RandomAgent``: uniform over the legal actions."""

from __future__ import annotations

import numpy as np

from agents.base import as_rules, legal_ids
from schnapsen_env.ruleset import RuleSet


class RandomAgent:
    """Picks uniformly among the actions the mask allows.

    Args:
        rules: the env's RuleSet or a ruleset name (required by the agent contract of :mod:`agents.base`; the
            mask alone decides what is legal, so the agent does not read it otherwise).
        seed: seed of the agent's ``numpy.random.Generator``.
    """

    name = "random"

    def __init__(self, rules: RuleSet | str, seed: int | None = None) -> None:
        self.rules = as_rules(rules)
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict) -> int:
        """Return a legal action id (int)."""
        ids = legal_ids(observation)
        return int(ids[self.rng.integers(ids.size)])

    def reset(self) -> None:
        pass
