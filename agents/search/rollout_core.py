"""Random playouts on the compiled core: the rollout agent's inner loop (:mod:`agents.search.rollout`).

For each world (:mod:`agents.search.worlds`) and each legal action: apply the action, then uniformly random legal actions
until ``depth`` more tricks are completed or the hand ends, and score the end state for the observer (seat 0). Every
random choice is drawn from a numpy bit generator (the agent's seeded ``numpy.random.Generator``, through
:func:`schnapsen_env.jit.bitgen_addresses` and :func:`schnapsen_env.jit.random_interval`), so a seeded agent is
reproducible. Compiled with numba like the core; :func:`schnapsen_env.jit.drop_stale_cache` guards the cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.search.worlds import fill_world
from schnapsen_env.jit import drop_stale_cache, random_interval, uncounted
from schnapsen_env.rules_core import apply, counted, legal_bits
from schnapsen_env.state_layout import F


@njit(cache=True)
def random_action(st, R, fn, state):
    """A uniformly random legal action of ``st`` (its legal bits must not be empty)."""
    bits = legal_bits(st, R)
    count = 0
    b = bits
    while b:
        b &= b - 1
        count += 1
    j = random_interval(fn, state, count - 1)
    for _ in range(j):
        bits &= bits - 1
    a = 0
    while not (bits >> a) & 1:
        a += 1
    return a


@njit(cache=True)
def score(st):
    """The rollout score of a state for seat 0 in ``[0, 1]``: ``0.5 +- game points / 6`` once the hand is over (0.5
    for a tie), else the share of counted points (0.5 when both have none)."""
    if st[F.over]:
        w = st[F.res_winner]
        if w < 0:
            return 0.5
        g = st[F.res_points] / 6.0
        return 0.5 + g if w == 0 else 0.5 - g
    mine = counted(st, 0)
    total = mine + counted(st, 1)
    return 0.5 if total == 0 else mine / total


@njit(cache=True)
def _rollout_totals(template, worlds, k, R, actions, depth, fn, state, world, scratch, out):
    size = template.shape[0]
    for w in range(worlds.shape[0]):
        fill_world(world, template, worlds, w, k, size)
        target = world[F.tricks] + world[F.tricks + 1] + depth
        for i in range(actions.shape[0]):
            for j in range(size):
                scratch[j] = world[j]
            apply(scratch, R, actions[i])
            while not scratch[F.over] and scratch[F.tricks] + scratch[F.tricks + 1] < target:
                apply(scratch, R, random_action(scratch, R, fn, state))
            out[i] += score(scratch)


@njit(cache=True)
def rollout_totals(template, worlds, k, R, actions, depth, fn, state, out):
    """``out[i]`` += the rollout score (seat 0) of ``actions[i]`` summed over the worlds.

    Args:
        template: int64 ``(STATE_SIZE,)`` world template (:func:`agents.search.worlds.world_setup`), stock from ``stock_top``
            0; checked by the caller.
        worlds: int64 ``(W, u)``, per world the unseen cards, the first ``k`` to seat 1's hand, the rest the
            face-down stock top first.
        actions: int64 ``(A,)``, legal in ``template``. depth: tricks to play on, counted from the decision.
        fn, state: the bit generator's addresses (:func:`schnapsen_env.jit.bitgen_addresses`).
        out: float64 ``(A,)``.
    """
    world = np.empty(template.shape[0], np.int64)
    scratch = np.empty(template.shape[0], np.int64)
    _rollout_totals(uncounted(template), uncounted(worlds), k, uncounted(R), uncounted(actions), depth, fn, state,
                    uncounted(world), uncounted(scratch), uncounted(out))


drop_stale_cache(rollout_totals, fill_world)  # before any cached function loads (see drop_stale_cache)


__all__ = ["random_action", "rollout_totals", "score"]
