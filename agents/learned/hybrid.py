"""``policy+expert``: a learned policy for the first tricks, the expert search once the stock is small, closed or
exhausted.

The two halves are each strongest where the other is weakest. The policy (one network call a move) plays the
opening, where the stock is large, PIMC's worlds are least alike and strategy fusion costs it most; the expert
search (:class:`agents.search.expert.ExpertAgent`, every world solved to the end of the hand) plays once the open stock is
down to ``search_stock`` cards (default 6: from the third trick on in schnapsen20), closed (RULES.md R18, R19) or
exhausted (R7, R11), where the worlds left are fewer and, with the stock exhausted, every card is known (R27: the
unseen cards are the opponent's hand), so the search is exact.

The default was chosen by the arena against the policy alone (``trained-100m``, 1,000 duplicate deals, seed 7, a
seed kept apart from the ladder's 2026): ``search_stock`` 0 +0.019 [-0.005, +0.043] game points a hand, 2 +0.133
[+0.100, +0.165], 4 +0.131 [+0.092, +0.170], **6 +0.168 [+0.120, +0.215]**, 8 (the policy plays the first trick
only) +0.112 [+0.055, +0.168]. ``benchmarks/policy_vs_expert.py`` had found where a policy loses against the
expert's judgement: open-stock leads above all.

Which half moves is read from the observation's ``closed`` and ``stock_size`` entries
(:func:`schnapsen_env.encoding.layout`), so the agent sees only what the player may know, like every agent.
"""

from __future__ import annotations

import numpy as np

from agents.base import as_rules, legal_ids
from agents.learned.shipped import SEARCH_POLICIES, SEARCH_POLICY
from agents.search.expert import ExpertAgent
from agents.specs import resolve_agent
from schnapsen_env.encoding import layout, obs_size
from schnapsen_env.ruleset import RuleSet

#: The default ``search_stock`` (module docstring: the arena's choice for schnapsen20).
SEARCH_STOCK = 6


class PolicySearchAgent:
    """A policy for the first tricks, full-depth PIMC (:class:`~agents.search.expert.ExpertAgent`) from ``search_stock``
    cards left in the stock on, and once it is closed or exhausted (module docstring).

    Args:
        rules: the env's RuleSet (or a ruleset name: default knobs).
        seed: seed of both halves' generators (the policy's is used only when it samples; the expert draws worlds).
        policy: the opening's player: a shipped policy's name (``agents.SHIPPED_POLICIES``) or a ``.pt`` policy
            written by ``train.py``; None: ``agents.learned.data.SEARCH_POLICY``. Another agent spec of :mod:`agents.specs`
            works too (inside a ``name:key=value`` spec, with at most one option of its own, as ``,`` separates the
            outer spec's options).
        worlds: the expert's worlds a decision (:class:`ExpertAgent`'s ``worlds``); None: its default.
        search_stock: the expert also decides while the open stock holds at most this many cards (0: only once it
            is closed or exhausted); None: :data:`SEARCH_STOCK` (the arena's best, module docstring), or 0 where a
            ruleset deals no larger a stock (schnapsen10: the policy plays trick 1, the expert every hand after the
            draw and every closed hand; its exact NashConv with ``trained-schnapsen10`` is in
            ``benchmarks/exploitability_schnapsen10.json``, its margin over ``expert`` in
            ``benchmarks/ladder_schnapsen10.json``).
        inference: the expert's world inference (:class:`ExpertAgent`'s ``inference``: None, the default, uniform
            worlds; ``"policy"`` or another opponent model weighs them by the opponent's actions of the hand). The
            expert is then shown every decision of the hand, the policy's too, so that its history is whole.

    Raises:
        ValueError: an unknown policy name or missing file, a policy that cannot play ``rules`` (the shipped ones
            play ``schnapsen20`` only), ``worlds`` out of the expert's range, ``search_stock`` not an int from 0 to
            the stock's size after the deal, an unknown ``inference`` model.
        TypeError: ``rules`` missing.
    """

    name = "policy+expert"

    def __init__(self, rules: RuleSet | str, seed: int | None = None, policy: str | None = None,
                 worlds: int | None = None, search_stock: int | None = None, inference: str | None = None) -> None:
        self.rules = as_rules(rules)
        if policy is not None and not isinstance(policy, str):
            raise ValueError(f"policy must be a shipped policy's name or a .pt file, got {policy!r}")
        self.policy_name = SEARCH_POLICY if policy is None else policy
        _, factory = resolve_agent(self.policy_name, self.rules)  # first: a policy of another ruleset is the error
        self.policy = factory(seed=seed)
        stock_full = self.rules.stock0
        if search_stock is None:
            search_stock = SEARCH_STOCK if stock_full > SEARCH_STOCK else 0
        elif isinstance(search_stock, bool) or not isinstance(search_stock, (int, np.integer)) \
                or not 0 <= search_stock <= stock_full:
            raise ValueError(f"search_stock must be an int from 0 to {stock_full} (the stock after the deal) or None, "
                             f"got {search_stock!r}")
        self.search_stock = int(search_stock)
        self._stock_full = stock_full
        expert_options = {} if worlds is None else {"worlds": worlds}
        self.expert = ExpertAgent(self.rules, seed=seed, inference=inference, **expert_options)
        lay = layout(self.rules)
        self._closed, self._stock, self._size = lay["closed"].start, lay["stock_size"].start, obs_size(self.rules)
        #: Decisions made by each half since construction: ``{"policy": n, "expert": m}`` (forced moves included).
        self.decisions = {"policy": 0, "expert": 0}

    def searches(self, observation: dict) -> bool:
        """Whether the expert decides here: the stock is closed (R18), exhausted (R7) or down to ``search_stock``
        cards.

        Raises:
            ValueError: an observation that is not the env's dict with a vector of this ruleset's length.
        """
        try:
            obs = np.asarray(observation["observation"])
        except (KeyError, TypeError, IndexError):
            raise ValueError("observation must be the env's dict with an 'observation' entry") from None
        if obs.shape != (self._size,):
            raise ValueError(f"observation must have shape ({self._size},) for {self.rules.name}, got {obs.shape}")
        stock = int(round(float(obs[self._stock]) * self._stock_full))
        return bool(obs[self._closed] > 0.5 or stock <= self.search_stock)

    def act(self, observation: dict) -> int:
        """The chosen legal action id: the expert's where :meth:`searches`, else the policy's."""
        legal_ids(observation)  # ValueError before either half sees a position where this player is not to move
        half = "expert" if self.searches(observation) else "policy"
        self.decisions[half] += 1
        if half == "expert":
            return int(self.expert.act(observation))
        action = int(self.policy.act(observation))
        if self.expert.inference is not None:  # the expert's history of the hand holds the policy's decisions too
            self.expert.history.observe(observation)
            self.expert.history.acted(action)
        return action

    def reset(self) -> None:
        for half in (self.policy, self.expert):
            if hasattr(half, "reset"):
                half.reset()

    def observe_hand(self, observations, actions) -> None:
        """This hand's earlier observations of the player and the actions it took on them, the policy's decisions
        included, before the next :meth:`act` (:class:`agents.base.ObservesHand`): the expert's history.

        Raises:
            ValueError: ``observations`` and ``actions`` of different lengths.
        """
        self.expert.observe_hand(observations, actions)


class ExpertPlusAgent(PolicySearchAgent):
    """``expert+``: :class:`PolicySearchAgent` with the expert's world inference on, a shipped policy of its
    ruleset (:data:`agents.learned.data.SEARCH_POLICIES`) playing the opening and modelling the opponent.

    The expert's worlds are weighed by the likelihood of the opponent's actions of the hand under the policy's masked
    softmax (:mod:`agents.search.inference`; Solinas, Rebstock, Sturtevant, Buro, AAAI 2019, for Skat), the policy
    itself moves while the open stock holds more than ``search_stock`` cards. It plays every ruleset with a shipped
    policy (:data:`agents.learned.data.SEARCH_POLICIES`: ``schnapsen20``, ``sixtysix24``, ``schnapsen10``), under any
    knobs.

    Args:
        rules: the env's RuleSet (or a ruleset name: default knobs).
        seed: seed of both halves' generators.
        policy: the opening's player and the opponent model (a shipped policy's name or a ``.pt`` policy of this
            ruleset); None: the ruleset's in :data:`agents.learned.data.SEARCH_POLICIES`.
        worlds: the expert's worlds a decision; None: its default.
        search_stock: as :class:`PolicySearchAgent`'s.
        inference: the opponent model of the expert's inference; None: ``policy``'s masked softmax.

    Raises:
        ValueError: as :class:`PolicySearchAgent`, and a ruleset without a shipped policy when ``policy`` is None.
    """

    name = "expert+"

    def __init__(self, rules: RuleSet | str, seed: int | None = None, policy: str | None = None,
                 worlds: int | None = None, search_stock: int | None = None, inference: str | None = None) -> None:
        rules = as_rules(rules)
        if policy is None:
            if rules.name not in SEARCH_POLICIES:
                raise ValueError(f"expert+ needs a shipped policy of {rules.name!r} (there is none): pass policy=")
            policy = SEARCH_POLICIES[rules.name]
        super().__init__(rules, seed=seed, policy=policy, worlds=worlds, search_stock=search_stock,
                         inference=policy if inference is None else inference)
