"""``policy+expert``: a learned policy while the stock is open, the expert search once it is closed or exhausted.

The two halves are each strongest where the other is weakest. The policy (one network call a move) plays the
open-stock game, where PIMC's worlds are least alike and strategy fusion costs it most; the expert search
(:class:`agents.expert.ExpertAgent`, every world solved to the end of the hand) plays once the stock is closed
(RULES.md R18, R19) or exhausted (R7, R11), where the worlds left are few and, with the stock exhausted, every
card is known (R27: the unseen cards are the opponent's hand), so the search is exact. ``benchmarks/policy_vs_expert.py``
measured where a policy loses against the expert's judgement: open-stock leads above all, then leads after a close
and, by a little, the exhausted stock, which is what this agent hands to search.

Which half moves is read from the observation's ``closed`` and ``stock_size`` entries
(:func:`schnapsen_env.encoding.layout`), so the agent sees only what the player may know, like every agent.
"""

from __future__ import annotations

import numpy as np

from agents.base import as_rules, legal_ids
from agents.expert import ExpertAgent
from schnapsen_env.encoding import layout, obs_size
from schnapsen_env.ruleset import RuleSet


class PolicySearchAgent:
    """A policy for the open stock, full-depth PIMC (:class:`~agents.expert.ExpertAgent`) after it.

    Args:
        rules: the env's RuleSet (or a ruleset name: default knobs).
        seed: seed of both halves' generators (the policy's is used only when it samples; the expert draws worlds).
        policy: the open-stock player: a shipped policy's name (``agents.SHIPPED_POLICIES``) or a ``.pt`` policy
            written by ``train.py``; None: ``agents.STRONGEST_POLICY``. Any agent spec of :mod:`agents.specs`
            without ``:`` options works too.
        worlds: the expert's worlds a decision (:class:`ExpertAgent`'s ``worlds``); None: its default.

    Raises:
        ValueError: an unknown policy name or missing file, a policy that cannot play ``rules`` (the shipped ones
            play ``schnapsen20`` only), ``worlds`` out of the expert's range.
        TypeError: ``rules`` missing.
    """

    name = "policy+expert"

    def __init__(self, rules: RuleSet | str, seed: int | None = None, policy: str | None = None,
                 worlds: int | None = None) -> None:
        from agents import STRONGEST_POLICY  # the package imports this module
        from agents.specs import resolve_agent

        self.rules = as_rules(rules)
        if policy is not None and not isinstance(policy, str):
            raise ValueError(f"policy must be a shipped policy's name or a .pt file, got {policy!r}")
        self.policy_name = STRONGEST_POLICY if policy is None else policy
        _, factory = resolve_agent(self.policy_name, self.rules)
        self.policy = factory(seed=seed)
        self.expert = ExpertAgent(self.rules, seed=seed) if worlds is None else \
            ExpertAgent(self.rules, seed=seed, worlds=worlds)
        lay = layout(self.rules)
        self._closed, self._stock, self._size = lay["closed"].start, lay["stock_size"].start, obs_size(self.rules)
        #: Decisions made by each half since construction: ``{"policy": n, "expert": m}`` (forced moves included).
        self.decisions = {"policy": 0, "expert": 0}

    def searches(self, observation: dict) -> bool:
        """Whether the expert decides here: the stock is closed (R18) or exhausted (R7).

        Raises:
            ValueError: an observation that is not the env's dict with a vector of this ruleset's length.
        """
        try:
            obs = np.asarray(observation["observation"])
        except (KeyError, TypeError, IndexError):
            raise ValueError("observation must be the env's dict with an 'observation' entry") from None
        if obs.shape != (self._size,):
            raise ValueError(f"observation must have shape ({self._size},) for {self.rules.name}, got {obs.shape}")
        return bool(obs[self._closed] > 0.5 or obs[self._stock] <= 0.0)

    def act(self, observation: dict) -> int:
        """The chosen legal action id: the expert's once the stock is closed or exhausted, else the policy's."""
        legal_ids(observation)  # ValueError before either half sees a position where this player is not to move
        half = "expert" if self.searches(observation) else "policy"
        self.decisions[half] += 1
        return int((self.expert if half == "expert" else self.policy).act(observation))

    def reset(self) -> None:
        for half in (self.policy, self.expert):
            if hasattr(half, "reset"):
                half.reset()
