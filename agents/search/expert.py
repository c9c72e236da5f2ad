"""``ExpertAgent``: Perfect Information Monte Carlo that solves every world to the end of the hand.

After Wisser, "An Expert-Level Card Playing Agent Based on a Variant of Perfect Information Monte Carlo Sampling"
(IJCAI 2015), and the open SchnapsenAI engine: for each decision the agent

1. builds the *worlds* consistent with its observation (RULES.md R27): the unseen cards split between the
   opponent's hidden hand and the face-down stock, in every stock order, with every card the opponent made public
   (a shown marriage partner, the old turn-up taken by an exchange, the turn-up drawn at the last open trick)
   pinned to the opponent's hand and the turn-up under the stock (:class:`schnapsen_env.sampler.Determinizer`);
2. **enumerates** them all when there are at most ``worlds`` of them (the stock order counts only while the stock
   can still be drawn), else draws ``worlds`` of them uniformly at random with the agent's seeded generator;
3. solves each world exactly, to the end of the hand, with the compiled solver (:mod:`agents.search.solver_core`, with
   closing considered at every lead below the root too), giving every legal action its game points in that world;
4. plays the action with the best mean game points (``decision="mean"``), or, as SchnapsenAI does, the lowest
   share of worlds in which it loses the hand (``decision="loss"``, ties broken by the mean).

With ``inference`` (default off) the worlds are weighed by what the opponent did (:mod:`agents.search.inference`):
the agent keeps its own observations and actions of the hand, draws ``4 * worlds`` candidate worlds (all of them
when there are at most that many), weighs each by the likelihood of the opponent's actions under the opponent model
(0 for a world that contradicts the history: a revoke the opponent did not make), draws ``worlds`` of them by weight
(a world drawn twice is solved once and counts twice) and plays the best weighted mean.

The budget bounds the whole move in nodes, a deterministic stand-in for time that keeps seeded play
reproducible: worlds are solved exactly in chunks of 8 while the nodes searched stay within ``max_nodes`` (the
opening lead, where a world costs the most nodes, gets the fewest worlds, a decision late in the hand all of them).
Where even the first chunk does not fit, as in most ``sixtysix24`` openings (exact worlds of up to tens of millions
of nodes each), the solver stops at the budget and the move falls back to iterative deepening over every world: one
trick ahead, then two, ... (the horizon scored by the solver's ``evaluate``), each pass within a fresh ``max_nodes``,
keeping the values of the deepest pass that finished. A move thus searches at most about twice ``max_nodes`` nodes
(the one-trick pass always finishes; it costs a few thousand nodes a world).
``max_time`` (seconds a decision) adds a wall-clock budget checked the same way, at the cost of reproducibility. Once the stock is exhausted there is one world, the true position, and the agent plays perfectly.

With ``postpone=1`` (default 0, plain PIMC) the values are EPIMC's (Arjonilla, Saffidine and Cazenave,
arXiv:2408.02380; :mod:`agents.search.postponed`): the same worlds and weights, but the perfect-information reasoning
postponed by one of the agent's decisions, at which the worlds it cannot tell apart share one action, against PIMC's
strategy fusion. The walk's solver nodes are bounded by ``max_nodes``; where they do not fit, the move falls back to
the plain PIMC values above (so such a move searches up to about three times ``max_nodes``). With one world there
is nothing to postpone and the values are PIMC's.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from agents.base import as_rules, legal_ids
from agents.search.inference import MODEL_NAMES, HandHistory, WorldInference, opponent_model
from agents.search.options import check_int
from agents.search.postponed import postponed_values
from agents.search.solver_core import CoreSolver
from agents.search.worlds import draw_worlds, world_setup
from schnapsen_env.rules_core import legal_bits
from schnapsen_env.state_layout import F

DECISIONS = ("mean", "loss")
_CHUNK = 8
#: Candidate worlds weighed per world solved, with ``inference``.
OVERSAMPLE = 4


class ExpertAgent:
    """Full-depth PIMC on the compiled core (see the module docstring).

    Args:
        rules: the env's RuleSet (or a ruleset name: default knobs).
        seed: seed of the agent's ``numpy.random.Generator`` (draws the worlds).
        worlds: the most worlds solved a decision; all are enumerated when there are at most this many.
        max_nodes: the node budget of the exact search, and again of the horizon fallback (module docstring; None:
            every world exact, however long).
        decision: ``"mean"`` (best mean game points) or ``"loss"`` (lowest share of lost worlds).
        max_time: optional wall-clock budget in seconds a decision (None: worlds only, reproducible).
        inference: None (default: uniform worlds) or the opponent model that weighs them
            (:func:`agents.search.inference.opponent_model`: ``"consistent"``, ``"uniform"``, ``"policy"``, an agent
            spec).
        inference_epsilon: the share of the uniform policy mixed into the model (not tuned), so that no world is
            ruled out by a model that misjudges the opponent; worlds contradicting the rules still get weight 0.
        postpone: 0 (default: plain PIMC) or 1 (EPIMC, the agent's next decision shared across the worlds it cannot
            tell apart; module docstring).

    Raises:
        ValueError: ``worlds`` below 1, ``max_nodes`` below 1, an unknown ``decision``, ``max_time`` not positive,
            an unknown ``inference`` model, ``inference_epsilon`` outside [0, 1] or ``postpone`` not 0 or 1.
    """

    name = "expert"

    def __init__(self, rules, seed: int | None = None, worlds: int = 48, max_nodes: int | None = 1_500_000,
                 decision: str = "mean", max_time: float | None = None, inference: str | None = None,
                 inference_epsilon: float = 0.1, postpone: int = 0) -> None:
        self.rules = as_rules(rules)
        check_int("worlds", worlds, 1, 1_000_000)
        check_int("postpone", postpone, 0, 1)
        self.postpone = int(postpone)
        if max_nodes is not None and (not isinstance(max_nodes, (int, np.integer)) or isinstance(max_nodes, bool)
                                      or max_nodes < 1):
            raise ValueError(f"max_nodes must be an int >= 1 or None, got {max_nodes!r}")
        if decision not in DECISIONS:
            raise ValueError(f"decision must be one of {list(DECISIONS)}, got {decision!r}")
        if max_time is not None and (isinstance(max_time, bool) or not isinstance(max_time, (int, float, np.number))
                                     or not 0 < max_time < math.inf):
            raise ValueError(f"max_time must be a positive number of seconds or None, got {max_time!r}")
        self.worlds = int(worlds)
        self.max_nodes = None if max_nodes is None else int(max_nodes)
        self.decision = decision
        self.max_time = None if max_time is None else float(max_time)
        self.rng = np.random.default_rng(seed)
        self.solver = CoreSolver(self.rules, close_below_root=True)
        if inference is not None and not isinstance(inference, str):
            raise ValueError(f"inference must be None or a model name ({', '.join(MODEL_NAMES)}) or agent spec, got "
                             f"{inference!r}")
        self.inference = None if inference is None else WorldInference(
            self.rules, opponent_model(inference, self.rules), epsilon=inference_epsilon)
        self.history = HandHistory(self.rules)
        self._weights: np.ndarray | None = None
        #: Worlds solved and nodes searched by the last decision (for benchmarks and analysis).
        self.last_worlds = 0
        self.last_nodes = 0
        #: The horizon in tricks of the last decision's values (None: exact, to the end of the hand).
        self.last_depth: int | None = None

    def reset(self) -> None:
        self.history.clear()

    def observe_hand(self, observations, actions) -> None:
        """This hand's earlier observations of the player and the actions it took on them, before the next
        :meth:`act` (:class:`agents.base.ObservesHand`): the history the world inference reads (unused without it).

        Raises:
            ValueError: ``observations`` and ``actions`` of different lengths.
        """
        self.history.load(observations, actions)

    # ------------------------------------------------------------------ worlds
    def world_setup(self, observation) -> tuple[np.ndarray, np.ndarray, int, int]:
        """:func:`agents.search.worlds.world_setup` for this agent's rules: ``(template, unseen, k, count)``.

        Raises:
            InvalidPositionError: an observation whose card counts are inconsistent.
        """
        return world_setup(observation, self.rules)

    def sample_worlds(self, observation) -> tuple[np.ndarray, np.ndarray, int]:
        """The worlds of one decision: ``(template, worlds, k)`` with ``worlds`` int64 ``(W, u)``, all of them when
        there are at most ``self.worlds``, else ``self.worlds`` uniform draws (see :meth:`world_setup`)."""
        template, worlds, k, _ = self._worlds(observation, self.worlds)
        return template, worlds, k

    def _worlds(self, observation, n: int) -> tuple[np.ndarray, np.ndarray, int, int]:
        """``(template, worlds, k, count)``: all worlds when there are at most ``n``, else ``n`` uniform draws."""
        template, unseen, k, count = self.world_setup(observation)
        u = len(unseen)
        if count <= n:
            stock_drawn = template[F.closed_by] < 0 and u > k
            rows = []
            for hand in itertools.combinations(range(u), k):
                rest = [i for i in range(u) if i not in hand]
                orders = itertools.permutations(rest) if stock_drawn else (rest,)
                for order in orders:
                    rows.append(unseen[list(hand) + list(order)])
            worlds = np.array(rows, dtype=np.int64).reshape(len(rows), u)
            # A fixed shuffle (not the agent's generator, whose draws stay as they are), so that a budget that
            # stops before the last chunk keeps a spread of worlds, not the first opponent hands in order.
            worlds = worlds[np.random.default_rng(len(rows)).permutation(len(rows))]
        else:
            worlds = draw_worlds(unseen, n, self.rng)
        return template, worlds, k, count

    def weighted_worlds(self, observation) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
        """``(template, worlds, k, weights)``: without ``inference`` :meth:`sample_worlds` with weights 1; with it,
        at most ``worlds`` distinct worlds drawn by their inferred weight from ``OVERSAMPLE * worlds`` candidates
        (module docstring), the heaviest first, each weighted by how often it was drawn (float64 ``(W,)``). The
        history is the one :meth:`act` keeps."""
        if self.inference is None:
            template, worlds, k = self.sample_worlds(observation)
            return template, worlds, k, np.ones(len(worlds))
        template, candidates, k, _ = self._worlds(observation, OVERSAMPLE * self.worlds)
        w = self.inference.weights(self.history.replay(), candidates, k, self.rng)
        if not w.sum() > 0:  # a history no world explains (not seen): uniform, as without inference
            w = np.ones(len(candidates))
        if len(candidates) <= self.worlds:
            keep = np.flatnonzero(w > 0)
            worlds, weights = candidates[keep], w[keep]
        else:
            drawn = self.rng.choice(len(candidates), size=self.worlds, p=w / w.sum())
            index, counts = np.unique(drawn, return_counts=True)
            worlds, weights = candidates[index], counts.astype(np.float64)
        order = np.argsort(-weights, kind="stable")
        return template, worlds[order], k, weights[order]

    # ------------------------------------------------------------------ decisions
    def world_values(self, observation) -> tuple[np.ndarray, np.ndarray]:
        """``(actions, values)``: the legal action ids (int64 ``(A,)``) and their exact game points for the agent in
        each world solved (float64 ``(W, A)``)."""
        actions = legal_ids(observation).astype(np.int64)
        template, worlds, k, weights = self.weighted_worlds(observation)
        mask = np.asarray(observation["action_mask"])
        legal = legal_bits(template, self.solver.R)
        if mask.shape != (self.rules.n_actions,) or sum(1 << int(a) for a in actions) != legal:
            raise ValueError(f"action_mask must have shape ({self.rules.n_actions},) and mark exactly the legal "
                             f"actions of the observation ({self.rules.name}), got shape {mask.shape} with "
                             f"{actions.tolist()}")
        walked = 0
        if self.postpone and len(worlds) > 1:
            values, walked = postponed_values(self.solver, template, worlds, k, weights, actions, self.max_nodes)
            if values is not None:
                self.last_depth, self.last_worlds, self.last_nodes = None, len(values), walked
                self._weights = weights
                return actions, values
        start = time.perf_counter()
        parts, nodes, solved = [], 0, 0  # the fallback has its own budget
        for at in range(0, len(worlds), _CHUNK):
            left = None if self.max_nodes is None else max(1, self.max_nodes - nodes)
            part = self.solver.world_values(template, worlds[at:at + _CHUNK], k, actions, max_nodes=left)
            nodes += self.solver.nodes
            parts.append(part)
            solved += len(part)
            if len(part) < len(worlds[at:at + _CHUNK]) or (self.max_nodes is not None and nodes >= self.max_nodes):
                break
            if self.max_time is not None and time.perf_counter() - start > self.max_time:
                break
        self.last_depth = None
        if solved >= min(_CHUNK, len(worlds)):
            values = np.concatenate(parts)
        else:  # the exact search of the first chunk did not fit the budget: deepen a horizon over every world
            values, spent = self._deepen(template, worlds, k, actions, start)
            nodes += spent
        self.last_worlds, self.last_nodes = len(values), nodes + walked
        self._weights = weights[:len(values)]
        return actions, values

    def _deepen(self, template, worlds, k, actions, start: float) -> tuple[np.ndarray, int]:
        """Every world searched 1, 2, ... completed tricks ahead (the horizon scored by the solver's ``evaluate``)
        while a whole pass fits a fresh ``max_nodes`` (and ``max_time``): the values of the deepest complete pass,
        and the nodes searched. The first pass, one trick ahead, always completes."""
        tricks_left = self.rules.n_cards // 2 - int(template[F.tricks] + template[F.tricks + 1])
        values, nodes = None, 0
        for depth in range(1, max(tricks_left, 2)):
            left = None if values is None or self.max_nodes is None else max(1, self.max_nodes - nodes)
            part = self.solver.world_values(template, worlds, k, actions, depth=depth, max_nodes=left)
            nodes += self.solver.nodes
            if len(part) < len(worlds):
                break
            values, self.last_depth = part, depth
            if self.max_time is not None and time.perf_counter() - start > self.max_time:
                break
        return values, nodes

    def action_values(self, observation) -> dict[int, float]:
        """Mean game points of every legal action over the worlds solved (game points for the agent)."""
        actions, values = self.world_values(observation)
        return {int(a): float(v) for a, v in zip(actions, np.average(values, axis=0, weights=self._weights))}

    def best_action_bits(self, observation) -> int:
        """The actions of the best mean game points over the worlds solved, as bits (``1 << action id`` each; ties
        all set): the set from which :meth:`act` picks under ``decision="mean"`` (the lowest id), for the trainer's
        search teacher (:mod:`agents.training.self_play`). One search, as one :meth:`act`, drawing the same worlds
        from the agent's generator; a single legal action is its own label (no search). Reads the observation only
        (its ``"observation"`` vector and ``"action_mask"``), never the hidden cards."""
        legal = legal_ids(observation)
        if legal.size == 1:
            return 1 << int(legal[0])
        actions, values = self.world_values(observation)
        mean = values.mean(axis=0)
        return sum(1 << int(a) for a in actions[mean == mean.max()])

    def act(self, observation) -> int:
        """The chosen legal action id (module docstring; ties go to the lowest id)."""
        legal = legal_ids(observation)
        if self.inference is not None:
            self.history.observe(observation)
        if legal.size == 1:
            action = int(legal[0])
        else:
            action = self._choose(observation)
        if self.inference is not None:
            self.history.acted(action)
        return action

    def _choose(self, observation) -> int:
        actions, values = self.world_values(observation)
        mean = np.average(values, axis=0, weights=self._weights)
        if self.decision == "loss":
            loss = np.average(values < 0, axis=0, weights=self._weights)
            order = np.lexsort((actions, -mean, loss))  # lowest loss share, then best mean, then lowest id
        else:
            order = np.lexsort((actions, -mean))
        return int(actions[order[0]])

