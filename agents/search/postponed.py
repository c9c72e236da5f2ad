"""Postponed perfect-information reasoning: the values of ``expert:postpone=1`` (EPIMC).

After Arjonilla, Saffidine and Cazenave, "Perfect Information Monte Carlo with Postponing Reasoning"
(arXiv:2408.02380), a correction of PIMC's *strategy fusion* (Frank and Basin, "Search in games with incomplete
information", AIJ 1998; Long, Sturtevant, Buro and Furtak, AAAI-10): plain PIMC solves each world from the root,
so at every later decision the player acts as if it knew the world, a different action in worlds it cannot tell
apart. Here the perfect-information reasoning is postponed by one of the player's decisions. For every root action
and every world, the public tree is expanded (``GameState.copy``/``push``) up to and including the player's **next**
decision:

- at the opponent's decisions, each world takes its own best reply (the opponent sees the world, as in PIMC);
- at the player's next decision, the worlds the player cannot tell apart (the same observation of the player,
  :func:`agents.search.worlds.observation_groups`: the same public history and the same cards drawn) share **one**
  action, the one with the best weighted sum of the worlds' perfect-information values; each world's value there is
  that action's value in the world, by the compiled solver (:mod:`agents.search.solver_core`, exact to the end of
  the hand);
- a hand that ends before then is worth its result.

For an opponent's reply the group choice is made over every world in which that reply is legal (as if each of them
took it), so that the opponent's best reply in a world is its best reply to the player's postponed choices. The
value of a root action is the weighted mean over the worlds. Postponing only adds constraints on the player's
choices (per world the opponent is as in PIMC), so no root value is above PIMC's; with one world there is nothing
hidden and the values are PIMC's exactly.

Budget: the solver's nodes are summed over the whole walk; once they pass ``max_nodes`` the walk stops and
:func:`postponed_values` returns no values, and the agent falls back to plain PIMC values for that move (its own budget).
The walk has no random choice: seeded play stays reproducible.
"""

from __future__ import annotations

import numpy as np

from agents.search.solver_core import CoreSolver
from agents.search.worlds import observation_groups, world_state
from schnapsen_env.rules import GameState
from schnapsen_env.state_layout import from_game_state

ME = 0  # the observer's seat in a world state (agents.search.worlds)
_NO_HIDDEN = np.zeros((1, 0), dtype=np.int64)  # one world of a whole state: nothing to fill in


class _OutOfNodes(Exception):
    pass


def postponed_values(solver: CoreSolver, template: np.ndarray, worlds: np.ndarray, k: int, weights: np.ndarray,
                     actions: np.ndarray, max_nodes: int | None = None) -> tuple[np.ndarray | None, int]:
    """``(values, nodes)``: the postponed value of every root action in every world (module docstring), float64
    ``(W, A)`` in game points for the player (seat 0 of ``template``, to move), or None when the solver's nodes summed
    over the walk pass ``max_nodes`` (None: no limit); and the nodes the walk searched.

    Args:
        solver: the compiled solver of the worlds' rules (the expert's: ``close_below_root=True``).
        template, worlds, k: the worlds as :func:`agents.search.worlds.world_setup` and the expert draw them:
            int64 ``(STATE_SIZE,)``, int64 ``(W, u)``, the opponent's hidden card count.
        weights: float64 ``(W,)``, each world's weight in the group sums (the expert's inference weights, or ones).
        actions: int64 ``(A,)``, the legal root actions.

    Raises:
        ValueError: ``weights`` not of shape ``(W,)``.
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (len(worlds),):
        raise ValueError(f"weights must have shape ({len(worlds)},), got {weights.shape}")
    walk = _Walk(solver, max_nodes)
    states = [world_state(template, row, k, solver.rules) for row in worlds]
    out = np.zeros((len(worlds), len(actions)))
    try:
        for j, a in enumerate(actions):
            out[:, j] = walk.after(states, weights, int(a))
    except _OutOfNodes:
        return None, walk.nodes
    return out, walk.nodes


class _Walk:
    """The walk of one move: the solver, the node budget and the nodes spent."""

    def __init__(self, solver: CoreSolver, max_nodes: int | None) -> None:
        self.solver = solver
        self.max_nodes = max_nodes
        self.nodes = 0

    def after(self, states: list[GameState], weights: np.ndarray, action: int) -> np.ndarray:
        """Per world, its value (float64 ``(len(states),)``) once ``action`` is pushed in every state."""
        children = []
        for s in states:
            c = s.copy()
            c.push(action)
            children.append(c)
        return self.value(children, weights)

    def value(self, states: list[GameState], weights: np.ndarray) -> np.ndarray:
        """Per world, its value for the player; ``states`` share one public history, so one player to move."""
        s0 = states[0]
        if s0.result is not None:
            return np.array([_result(s) for s in states])
        if s0.to_move == ME:
            return self._decide(states, weights)
        out = np.full(len(states), np.inf)  # the opponent: each world its own best reply
        replies = [set(s.legal_actions()) for s in states]
        for r in sorted(set().union(*replies)):
            take = [i for i in range(len(states)) if r in replies[i]]
            got = self.after([states[i] for i in take], weights[take], r)
            out[take] = np.minimum(out[take], got)
        return out

    def _decide(self, states: list[GameState], weights: np.ndarray) -> np.ndarray:
        """The player's next decision: one action per observation group, the best weighted sum of solver values."""
        out = np.zeros(len(states))
        for members in observation_groups(states, ME):
            table = np.array([self._solve(states[i]) for i in members])  # (group, legal actions), same order
            best = int(np.argmax(weights[members] @ table))  # ties: the lowest action id
            out[members] = table[:, best]
        return out

    def _solve(self, s: GameState) -> np.ndarray:
        """The solver's exact value of each legal action (ascending ids) of ``s``, float64 ``(A,)``, within what is
        left of the budget (raises :class:`_OutOfNodes` past it)."""
        left = None if self.max_nodes is None else self.max_nodes - self.nodes
        if left is not None and left < 1:
            raise _OutOfNodes
        actions = np.array(s.legal_actions(), dtype=np.int64)
        got = self.solver.world_values(from_game_state(s), _NO_HIDDEN, 0, actions, max_nodes=left)
        self.nodes += self.solver.nodes
        if len(got) == 0:
            raise _OutOfNodes
        return got[0]


def _result(s: GameState) -> float:
    """Game points of a finished hand for the player."""
    r = s.result
    return 0.0 if r.winner is None else float(r.game_points if r.winner == ME else -r.game_points)


__all__ = ["postponed_values"]
