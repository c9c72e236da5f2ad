"""``policy-rollout``: Imperfect Information Monte Carlo with the learned policy as both players' playout policy.

After T. Furtak and M. Buro, "Recursive Monte Carlo Search for Imperfect Information Games" (IEEE CIG 2013): PIMC
(:mod:`agents.search.expert`) values an action by solving each world as if both players saw every card, so in each
world its own later choices fit cards it will never see (strategy fusion, Frank & Basin 1998). IIMC values an action
by playouts in which every later decision is made by a player that sees only its own observation. Here that player
is a policy trained by ``train.py`` (one batched network call a ply for every playout), and the playout hands over
to the compiled solver once nothing is hidden any more. For each decision the agent

1. draws the worlds as :class:`~agents.search.expert.ExpertAgent` does (all of them when there are at most
   ``worlds``, else ``worlds`` uniform draws; with ``inference``, weighed by the likelihood of the opponent's actions
   of the hand, :mod:`agents.search.inference`);
2. plays, in every world and for every legal action, the action and then the hand on with the policy's greedy
   choice for both seats (each from its own observation, RULES.md R27), until the hand ends or the stock is
   exhausted (R7: every card is then known to both players), where the compiled solver's exact value ends the
   playout (:mod:`agents.search.solver_core`);
3. plays the action of the best (weighted) mean game points, ties to the lowest id.

A closed stock (R18) keeps cards hidden, so playouts go on with the policy to the end of the hand there.
The playouts are deterministic given the worlds: the agent's seeded generator draws only the worlds.
"""

from __future__ import annotations

import numpy as np

from agents.base import as_rules, legal_ids
from agents.learned.shipped import SEARCH_POLICIES
from agents.search.expert import ExpertAgent
from agents.search.options import check_int
from agents.search.solver_core import CoreSolver
from agents.search.worlds import fill_world
from agents.specs import resolve_agent
from schnapsen_env.encoding import obs_size
from schnapsen_env.rules_core import apply_all, legal_bits_rows, masks_into, observe_all
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.state_layout import STATE_SIZE, F, rule_table

ME = 0  # the observer is seat 0 of every world (agents.search.worlds)


class PolicyRolloutAgent:
    """IIMC with a learned policy's playouts and solver leaves (module docstring).

    Args:
        rules: the env's RuleSet (or a ruleset name: default knobs).
        seed: seed of the generator that draws the worlds.
        policy: the playout policy, a shipped policy's name or a ``.pt`` policy of this ruleset; None: the ruleset's
            shipped policy of the searches (:data:`agents.learned.data.SEARCH_POLICIES`).
        worlds: the most worlds a decision (all are enumerated when there are at most this many).
        inference: None (uniform worlds) or an opponent model of :func:`agents.search.inference.opponent_model`
            (``"policy"``, an agent spec) that weighs them.

    Raises:
        ValueError: a ruleset without a shipped policy when ``policy`` is None, a spec that is not a policy
            network of this ruleset, ``worlds`` not an int from 1 to 100,000, an unknown ``inference`` model.
    """

    name = "policy-rollout"

    def __init__(self, rules: RuleSet | str, seed: int | None = None, policy: str | None = None, worlds: int = 32,
                 inference: str | None = None) -> None:
        self.rules = as_rules(rules)
        check_int("worlds", worlds, 1, 100_000)
        if policy is None:
            if self.rules.name not in SEARCH_POLICIES:
                raise ValueError(f"policy-rollout needs a shipped policy of {self.rules.name!r} (there is none): "
                                 "pass policy=")
            policy = SEARCH_POLICIES[self.rules.name]
        if not isinstance(policy, str):
            raise ValueError(f"policy must be a shipped policy's name or a .pt file, got {policy!r}")
        self.policy_name = policy
        _, factory = resolve_agent(policy, self.rules)
        agent = factory(seed=seed)
        model = getattr(agent, "model", None)
        if model is None:
            raise ValueError(f"policy must be a policy network (a shipped policy or a .pt file), got {policy!r}")
        self.model = model.eval()
        # The worlds and their weights: the expert's sampler (it never searches here).
        self.sampler = ExpertAgent(self.rules, seed=seed, worlds=worlds, inference=inference)
        self.solver = CoreSolver(self.rules, close_below_root=True)
        self._R = rule_table(self.rules)
        self._obs_size = obs_size(self.rules)
        #: Playouts and plies of the last decision (for benchmarks).
        self.last_playouts = 0
        self.last_plies = 0

    def reset(self) -> None:
        self.sampler.reset()

    def observe_hand(self, observations, actions) -> None:
        """This hand's earlier observations of the player and the actions it took on them, before the next
        :meth:`act` (:class:`agents.base.ObservesHand`): the history its sampler's world inference reads.

        Raises:
            ValueError: ``observations`` and ``actions`` of different lengths.
        """
        self.sampler.observe_hand(observations, actions)

    def action_values(self, observation) -> dict[int, float]:
        """Weighted mean game points (for the agent) of every legal action over the worlds' playouts.

        Raises:
            InvalidPositionError: an observation whose card counts are inconsistent.
        """
        actions = legal_ids(observation).astype(np.int64)
        template, worlds, k, weights = self.sampler.weighted_worlds(observation)
        n_w, n_a = len(worlds), len(actions)
        states = np.empty((n_w * n_a, STATE_SIZE), dtype=np.int64)
        for w in range(n_w):
            for j in range(n_a):
                fill_world(states[w * n_a + j], template, worlds, w, k, STATE_SIZE)
        apply_all(states, self._R, np.tile(actions, n_w))
        self.last_plies = self._play_out(states)
        self.last_playouts = len(states)
        values = self._values(states).reshape(n_w, n_a)
        mean = np.average(values, axis=0, weights=weights)
        return {int(a): float(v) for a, v in zip(actions, mean)}

    def _play_out(self, states: np.ndarray) -> int:
        """Advance every playout with the policy's greedy actions while its hand runs and a card is hidden; the
        number of plies."""
        import torch  # imported where a policy plays, not by ``import agents``

        from agents.learned.policy_net import masked_logits  # torch, as above

        plies = 0
        n_actions = self.rules.n_actions
        while True:
            live = np.flatnonzero((states[:, F.over] == 0)
                                  & ((states[:, F.stock_end] > states[:, F.stock_top]) | (states[:, F.closed_by] >= 0)))
            if live.size == 0:
                return plies
            rows = states[live]
            bits = np.empty(len(rows), dtype=np.int64)
            legal_bits_rows(rows, self._R, bits)
            masks = np.empty((len(rows), n_actions), dtype=np.int8)
            masks_into(bits, n_actions, masks)
            obs = np.empty((len(rows), self._obs_size), dtype=np.float32)
            observe_all(rows, self._R, rows[:, F.to_move].copy(), obs)
            with torch.no_grad():
                logits = self.model.act_logits(torch.from_numpy(obs)).float()
                chosen = masked_logits(logits, torch.from_numpy(masks.astype(bool))).argmax(dim=-1).numpy()
            apply_all(rows, self._R, chosen.astype(np.int64))
            states[live] = rows
            plies += 1

    def _values(self, states: np.ndarray) -> np.ndarray:
        """Game points for seat 0 of every finished or fully known playout (float64 ``(N,)``)."""
        out = np.empty(len(states), dtype=np.float64)
        for i, st in enumerate(states):
            if st[F.over]:
                w, p = int(st[F.res_winner]), float(st[F.res_points])
                out[i] = 0.0 if w < 0 else (p if w == ME else -p)
            else:
                v, _ = self.solver.solve(st)
                out[i] = v if st[F.to_move] == ME else -v
        return out

    def act(self, observation) -> int:
        """The legal action of the best mean playout value (ties: the lowest id)."""
        legal = legal_ids(observation)
        if self.sampler.inference is not None:
            self.sampler.history.observe(observation)
        if legal.size == 1:
            action = int(legal[0])
        else:
            values = self.action_values(observation)
            action = max(values, key=lambda a: (values[a], -a))
        if self.sampler.inference is not None:
            self.sampler.history.acted(action)
        return action


__all__ = ["PolicyRolloutAgent"]
