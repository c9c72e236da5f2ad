"""A :class:`~schnapsen_env.rules.GameState`'s twin in the compiled core, kept in step with the game.

The AEC env (and through it the Gymnasium env) plays each hand on the compiled state array
(:mod:`schnapsen_env.rules_core`) alone while nobody asks for its ``GameState``; once something does
(``env.game``, ``position()``, ``render()``, records, a match's scoring) the env builds the ``GameState``, pushes
every later action into it, and this mirror keeps the array equal to it: a caller may move that game by hand, and
the observations (:func:`schnapsen_env.rules_core.observe`, tested equal to the encoder value for value in
``tests/test_core_lockstep.py``) follow. :class:`CoreMirror` holds the env's array and writes observations and
action masks from it.

Keeping in sync: the mirror follows the game's record (``GameState.actions``, which every ``push`` extends and
every ``pop`` shortens) and the identity of its undo entries. Before every observation :meth:`CoreMirror.sync`
compares them with what it last saw (:meth:`CoreMirror.adopt`: the env built the game from the array) and

* does nothing when the game has not moved;
* applies the new actions with :func:`schnapsen_env.rules_core.apply` when the game only moved on from there (the env's
  ``step``);
* otherwise (another game object, a ``pop``, a position loaded without a deal) rebuilds the array: from the deal
  (:func:`schnapsen_env.rules_core.deal`, the hand's match score, then the record) when the game was dealt, else with
  :func:`schnapsen_env.state_layout.from_game_state`.

A game changed other than through ``push``/``pop`` (assigning its fields) is not followed; the env never does it.
"""

from __future__ import annotations

import numpy as np

from schnapsen_env import rules_core
from schnapsen_env.encoding import obs_size
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet


class CoreMirror:
    """A core state array kept equal to the ``GameState`` last passed to :meth:`sync` (see the module docstring).

    Args:
        rules: the rule set of the games it will mirror.
    """

    __slots__ = ("rules", "table", "state", "obs_size", "n_actions", "_game", "_n", "_top")

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.table = rules_core.rule_table(rules)
        self.state = np.zeros(rules_core.STATE_SIZE, dtype=np.int64)
        self.obs_size = obs_size(rules)
        self.n_actions = rules.n_actions
        self._game: GameState | None = None
        self._n = 0  # len(game.actions) when last synced
        self._top = None  # game._stack[-1] then (a fresh tuple per push: identifies the line of play)

    def sync(self, game: GameState) -> np.ndarray:
        """The state array, brought equal to ``game`` (cheap when ``game`` has not moved since the last call)."""
        n = len(game.actions)
        if game is self._game and n == self._n and (not n or game._stack[-1] is self._top):
            return self.state
        st = self.state
        m = self._n
        if game is self._game and m < n and (not m or game._stack[m - 1] is self._top):
            actions = game.actions
            for k in range(m, n):  # the game moved on from the synced state: replay its new actions
                rules_core.apply(st, self.table, actions[k])
        elif game.deal is not None and len(game._stack) == n:
            order, dealer = game.deal
            rules_core.deal(st, self.table, np.array(order, dtype=np.int64), dealer)
            st[rules_core.F.match_points] = game.match_points[0]
            st[rules_core.F.match_points + 1] = game.match_points[1]
            st[rules_core.F.carry] = game.carry
            for a in game.actions:
                rules_core.apply(st, self.table, a)
        else:
            rules_core.from_game_state(game, st)
        self._game = game
        self._n = n
        self._top = game._stack[-1] if n else None
        return st

    def adopt(self, game: GameState) -> None:
        """Follow ``game`` from here on: the state array equals it already (the AEC env built ``game`` from the
        actions it played on the array)."""
        n = len(game.actions)
        self._game = game
        self._n = n
        self._top = game._stack[-1] if n else None

    def observe(self, game: GameState, seat: int, legal: int) -> tuple[np.ndarray, np.ndarray]:
        """``(observation, action_mask)`` of ``seat``: ``encoding.observation(game, seat)`` (float32
        ``(obs_size,)``) and the bit set ``legal`` as int8 ``(n_actions,)`` 0/1 entries, both new arrays."""
        st = self.sync(game)
        obs = np.empty(self.obs_size, dtype=np.float32)
        mask = np.empty(self.n_actions, dtype=np.int8)
        rules_core.observe_masked(st, self.table, seat, legal, obs, mask)
        return obs, mask


__all__ = ["CoreMirror"]
