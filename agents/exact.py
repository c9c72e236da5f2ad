"""Exact game-tree walks for the small ruleset ``schnapsen10`` (RULES.md section 3a), compiled with numba.

``schnapsen10`` is small enough that every deal and every action sequence can be walked on one core in seconds:
:func:`tree_size` counts the nodes below every deal. It is the first piece of the exact tools of issue 15 (an
equilibrium by CFR+ and the exploitability of any policy); they walk the same tree.

The walk steps the compiled core (:mod:`schnapsen_env.core`), so it plays exactly the reference rules
(``tests/test_core_lockstep.py``); ``tests/test_exact.py`` checks the counts against a walk of the reference engine.
"""

from __future__ import annotations

import itertools

import numpy as np
from numba import njit

from schnapsen_env import core
from schnapsen_env.core import STATE_SIZE, F
from schnapsen_env.ruleset import RuleSet

#: Deepest action sequence of a hand: every card played plus at most two marriages, an exchange, a close and a
#: claim (a bound, checked by the walk).
_MAX_DEPTH = 32


@njit(cache=True)
def _walk(root, R, stack, legal):
    """Count the nodes of the tree below the state ``root`` (int64 ``(STATE_SIZE,)``), depth first without
    recursion: ``stack[d]`` holds the state at depth ``d`` and ``legal[d]`` the actions not yet tried there.
    Returns ``(nodes, decisions, terminals)``, the root counted among them."""
    stack[0, :] = root
    legal[0] = core.legal_bits(stack[0], R)
    nodes, decisions, terminals = 1, 1, 0
    depth = 0
    while depth >= 0:
        bits = legal[depth]
        if bits == 0:
            depth -= 1
            continue
        low = bits & -bits
        legal[depth] = bits ^ low
        action = 0
        while (low >> action) != 1:
            action += 1
        child = stack[depth + 1]
        child[:] = stack[depth]
        core.apply(child, R, action)
        nodes += 1
        if child[F.over]:
            terminals += 1
        else:
            decisions += 1
            depth += 1
            if depth + 1 >= stack.shape[0]:
                raise ValueError("the walk went deeper than its stack: raise _MAX_DEPTH")
            legal[depth] = core.legal_bits(child, R)
    return nodes, decisions, terminals


def deals(rules: RuleSet):
    """Every distinct deal of ``rules`` as deck orders (int64 ``(n,)``) in :func:`schnapsen_env.core.deal`'s layout:
    each split of the cards into the non-dealer's hand, the dealer's hand, the turn-up and the stock order, once
    (RULES.md R2, RS2). ``schnapsen10``: 210 * 15 * 2 = 6,300 deals.

    Raises:
        ValueError: a ruleset other than ``schnapsen10`` (the others have about 10^10 deals and more).
    """
    if rules.name != "schnapsen10":
        raise ValueError(f"exact tree walks need ruleset 'schnapsen10' (RULES.md section 3a), got {rules.name!r}: "
                         "the other rulesets are far too large to walk")
    n, hand = rules.n_cards, rules.hand_size
    first = 3  # R2: packets of 3, then the rest of the hand after the turn-up
    cards = range(n)
    for mine in itertools.combinations(cards, hand):
        rest = [c for c in cards if c not in mine]
        for theirs in itertools.combinations(rest, hand):
            left = [c for c in rest if c not in theirs]
            for turn_up in left:
                for stock in itertools.permutations([c for c in left if c != turn_up]):
                    yield np.array(list(mine[:first]) + list(theirs[:first]) + [turn_up] + list(mine[first:])
                                   + list(theirs[first:]) + list(stock), dtype=np.int64)


def tree_size(rules: RuleSet, dealer: int = 1) -> dict[str, int]:
    """The size of the game tree below every deal of ``rules`` with ``dealer`` dealing (the non-dealer leads, R1).

    Returns:
        ``{"deals", "nodes", "decisions", "terminals"}``: the deals (chance outcomes, :func:`deals`) and, summed over
        them, the nodes below and including each deal's first decision (decision nodes plus terminal nodes).

    Raises:
        ValueError: a ruleset other than ``schnapsen10``, or a dealer other than seat 0 or 1.
    """
    if dealer not in (0, 1):
        raise ValueError(f"dealer must be seat 0 or 1, got {dealer!r}")
    R = core.rule_table(rules)
    state = np.empty(STATE_SIZE, dtype=np.int64)
    stack = np.empty((_MAX_DEPTH + 1, STATE_SIZE), dtype=np.int64)
    legal = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    out = {"deals": 0, "nodes": 0, "decisions": 0, "terminals": 0}
    for order in deals(rules):
        core.deal(state, R, order, dealer)
        nodes, decisions, terminals = _walk(state, R, stack, legal)
        out["deals"] += 1
        out["nodes"] += nodes
        out["decisions"] += decisions
        out["terminals"] += terminals
    return out


__all__ = ["deals", "tree_size"]
