"""The worlds of a decision: every full position consistent with one observation, as compiled-core state arrays.

A *world* (a determinisation) fixes the cards the observer cannot see: which of the unseen cards the opponent holds
and the order of the face-down stock. :func:`world_setup` reads an observation once (RULES.md R27: what the
observer may know, through :class:`schnapsen_env.sampler.Determinizer`) and returns a *template*, the state array
with the observer as seat 0 and seat 1's hand holding only the cards the opponent made public, plus the unseen card
ids; a world is then a row of those ids, the first ``k`` to the opponent's hand and the rest the face-down stock,
top first (the turn-up stays last). The expert agent (:mod:`agents.search.expert`) solves such worlds to the end of the
hand; the rollout agent (:mod:`agents.search.rollout`) plays them out at random.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from schnapsen_env import encoding
from schnapsen_env.jit import drop_stale_cache
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.sampler import Determinizer
from schnapsen_env.state_layout import F, from_game_state, to_game_state


def world_setup(observation, rules: RuleSet) -> tuple[np.ndarray, np.ndarray, int, int]:
    """``(template, unseen, k, count)`` for an observation: the state array (int64 ``(rules_core.STATE_SIZE,)``, seat 0 the
    observer, to move) with seat 1's hand holding only its known cards, the unseen card ids (int64 ``(u,)``), how
    many of them the opponent hides (``k``), and the number of distinct worlds (stock orders count only while the
    stock can still be drawn).

    Raises:
        InvalidPositionError: an observation whose card counts are inconsistent.
    """
    det = Determinizer(observation, rules)
    g = det.sample(np.random.default_rng(0))  # any world: its unseen cards are overwritten per world
    g.hands[1] = det.opp_known
    template = from_game_state(g)
    unseen = np.array([c for c in range(rules.n_cards) if det.unseen >> c & 1], dtype=np.int64)
    k = det.opp_hidden
    face_down = len(unseen) - k
    stock_drawn = det.closed_by < 0 and det.stock_size > 0  # the order matters only while it can be drawn
    count = math.comb(len(unseen), k) * (math.factorial(face_down) if stock_drawn else 1)
    return template, unseen, k, count


def draw_worlds(unseen: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` worlds drawn uniformly and independently (each a uniform permutation of ``unseen``), int64 ``(n, u)``."""
    return rng.permuted(np.tile(unseen, (n, 1)), axis=1)


@njit(cache=True)
def fill_world(st, template, worlds, w, k, size):
    """Make ``st`` world ``w``: the first ``size`` entries of ``template``, with ``worlds[w, :k]`` added to seat 1's
    hand and ``worlds[w, k:]`` as the face-down stock, top first (the turn-up stays last). Compiled, for the
    solver's and the rollouts' loops over worlds (``size``: what the caller's search reads of a state)."""
    for j in range(size):
        st[j] = template[j]
    opp = template[F.hands + 1]
    for j in range(k):
        opp |= 1 << worlds[w, j]
    st[F.hands + 1] = opp
    for j in range(worlds.shape[1] - k):
        st[F.stock + j] = worlds[w, k + j]


drop_stale_cache(fill_world)  # before any cached function loads (see drop_stale_cache)


def world_state(template: np.ndarray, world: np.ndarray, k: int, rules: RuleSet) -> GameState:
    """World ``world`` (int64 ``(u,)``, as a row of :func:`world_setup`'s worlds) of ``template`` as a whole
    :class:`GameState` (seat 0 the observer): ``world[:k]`` added to seat 1's hand, ``world[k:]`` the face-down
    stock, top first. The Python engine's twin of :func:`fill_world`, for walks that push actions."""
    st = np.array(template, dtype=np.int64, copy=True)
    for c in world[:k]:
        st[F.hands + 1] |= 1 << int(c)
    st[F.stock:F.stock + len(world) - k] = world[k:]
    return to_game_state(st, rules)


def observation_groups(states: list[GameState], seat: int) -> list[list[int]]:
    """The indices of ``states`` grouped by what ``seat`` observes (``encoding.observation(s, seat)``): the worlds
    that player cannot tell apart, which must share one choice (an information set), in order of first
    appearance."""
    groups: dict[bytes, list[int]] = {}
    for i, s in enumerate(states):
        groups.setdefault(encoding.observation(s, seat).tobytes(), []).append(i)
    return list(groups.values())


__all__ = ["draw_worlds", "fill_world", "observation_groups", "world_setup", "world_state"]
