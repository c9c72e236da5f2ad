"""``PIMCAgent``: Perfect Information Monte Carlo search (after Wisser's Schnapsen agent, IJCAI 2015).

For each of ``n_samples`` determinisations of the observation (:mod:`schnapsen_env.sampler`, uniform
over the unseen cards, honouring what is known), every legal action is scored by the alpha-beta
solver, and the action with the best average value is played. The search runs on the compiled solver
(:mod:`agents.search.solver_core`, faster per decision than the readable reference solver of the tests,
``tests/helpers/reference_solver.py``). Its values are the reference solver's, except that a horizon-limited
search may reuse a transposition searched to another depth differently (the two tables keep different entries):
on 335 decisions of 30 seeded hands, 334 had identical action values, one differed by 0.05 game points, and no
choice changed.

* Stock exhausted: the unseen cards are exactly the opponent's hand, so one determinisation is the
  true position and the solver is exact: the agent plays those positions perfectly.
* Stock open or closed: the search looks ``depth`` completed tricks ahead (default 2) and scores the
  horizon with ``evaluate`` of the reference solver (counted-point difference / 33, clipped to ±1.9 game
  points); a hand that ends inside the horizon gets its exact game points. Once the stock is closed
  (at the root or inside the search) the hand is searched to its end when ``exact_closed`` is True
  (the default), since a failed close costs 2-3 game points that no horizon estimate sees.
"""

from __future__ import annotations

import numpy as np

from agents.base import as_rules, best_action, legal_ids
from agents.search.inference import HandHistory, WorldInference, opponent_model, world_rows
from agents.search.options import check_int
from agents.search.solver_core import CoreSolver
from agents.search.worlds import draw_worlds
from schnapsen_env.sampler import Determinizer


class PIMCAgent:
    """PIMC with an exact solver once the stock is exhausted.

    Args:
        rules: the env's RuleSet (knobs included) or a ruleset name (required, see :mod:`agents.base`).
        n_samples: determinisations per decision while cards are hidden.
        depth: search horizon in tricks while the stock is open.
        exact_closed: search closed-stock determinisations to the end (no horizon).
        seed: seed of the agent's ``numpy.random.Generator``.
        inference: None (default: uniform determinisations) or an opponent model
            (:func:`agents.search.inference.opponent_model`): ``4 * n_samples`` candidate worlds weighed by the
            likelihood of the opponent's actions of the hand, ``n_samples`` of them drawn by weight (as ``expert``'s
            option).
        inference_epsilon: the share of the uniform policy mixed into the model (as ``expert``'s).

    Raises:
        ValueError: ``n_samples`` or ``depth`` out of range, an unknown ``inference`` model.
    """

    name = "pimc"

    def __init__(self, rules, n_samples: int = 12, depth: int = 2, exact_closed: bool = True,
                 seed: int | None = None, inference: str | None = None, inference_epsilon: float = 0.1) -> None:
        check_int("n_samples", n_samples, 1, 100_000)
        check_int("depth", depth, 1, 30)
        self.rules = as_rules(rules)
        self.n_samples = n_samples
        self.depth = depth
        self.exact_closed = exact_closed
        self.rng = np.random.default_rng(seed)
        self.solver = CoreSolver(self.rules, exact_after_close=exact_closed)
        if inference is not None and not isinstance(inference, str):
            raise ValueError(f"inference must be None or a model name or agent spec, got {inference!r}")
        self.inference = None if inference is None else WorldInference(
            self.rules, opponent_model(inference, self.rules), epsilon=inference_epsilon)
        self.history = HandHistory(self.rules)

    def reset(self) -> None:
        self.solver.clear()
        self.history.clear()

    def observe_hand(self, observations, actions) -> None:
        """This hand's earlier observations of the player and the actions it took on them, before the next
        :meth:`act` (:class:`agents.base.ObservesHand`): the history the world inference reads (unused without it).

        Raises:
            ValueError: ``observations`` and ``actions`` of different lengths.
        """
        self.history.load(observations, actions)

    def _samples(self, observation, det: Determinizer, n: int) -> list:
        """``n`` determinisations: uniform (``det.sample``), or drawn by inferred weight (``inference``)."""
        if self.inference is None:
            return [det.sample(self.rng) for _ in range(n)]
        unseen, k = world_rows(observation, self.rules)
        replay = self.history.replay()
        candidates = draw_worlds(unseen, 4 * n, self.rng)
        if replay is None:
            return [det.sample(self.rng) for _ in range(n)]
        weights, states = self.inference.weighed_states(replay, candidates, k, self.rng)
        if not weights.sum() > 0:
            return [det.sample(self.rng) for _ in range(n)]
        drawn = self.rng.choice(len(candidates), size=n, p=weights / weights.sum())
        return [states[i] for i in drawn]

    def action_values(self, observation: dict) -> dict[int, float]:
        """Mean value (game points for the agent) of every legal action over the determinisations."""
        rules = self.rules
        legal = legal_ids(observation)
        det = Determinizer(observation, rules)
        n = 1 if det.stock_size == 0 else self.n_samples
        if det.stock_size == 0:
            depth = None
        elif det.closed_by >= 0 and self.exact_closed:
            depth = None
        else:
            depth = self.depth
        totals = {int(a): 0.0 for a in legal}
        for s in self._samples(observation, det, n):
            self.solver.clear()
            values = self.solver.action_values(s, depth)
            for a in totals:
                totals[a] += values[a]
        return {a: v / n for a, v in totals.items()}

    def act(self, observation: dict) -> int:
        """The legal action with the best mean value (ties: lowest id)."""
        legal = legal_ids(observation)
        if self.inference is not None:
            self.history.observe(observation)
        action = self._choose(observation, legal)
        if self.inference is not None:
            self.history.acted(action)
        return action

    def _choose(self, observation: dict, legal: np.ndarray) -> int:
        if legal.size == 1:
            return int(legal[0])
        rules = self.rules
        det = Determinizer(observation, rules)
        if det.stock_size == 0:
            # Perfect information: one exact search for the best move (cheaper than every action's value).
            self.solver.clear()
            return int(self.solver.solve(det.sample(self.rng))[1])
        return best_action(self.action_values(observation))
