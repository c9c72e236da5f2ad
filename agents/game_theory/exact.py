"""Exact game theory on the small ruleset ``schnapsen10`` (RULES.md section 3a): its whole game tree, best
responses and exploitability (NashConv) of any observation-based policy, and an equilibrium by CFR+. Compiled with
numba.

The game is one hand with the deal as the only chance event (uniform over :func:`deals`) and seat 1 dealing, so
seat 0 (the non-dealer) leads trick 1 (R1). For a policy that sees only the observation, which is the same for
either seat (the envs' observations hold no seat), the NashConv of this game equals that of the game with a random
dealer (OpenSpiel's ``python_schnapsen``): there each seat is the non-dealer half the time, and both games' NashConv
is the non-dealer's best-response value plus the dealer's.

The tree has two parts:

* the **open part**: the deal's first decision down to the end of trick 1, and every hand closed before trick 1,
  where cards are hidden (4,649,684 nodes, 3,107,044 of them decisions). Best responses here are computed by
  information set: perfect recall, a player's information set being its dealt hand, the turn-up and every action so
  far (every action is public in ``schnapsen10``: the only private event, the stock card drawn by the winner of
  trick 1, ends the open part);
* the **revealed subtrees**: from the draw after trick 1 on, in a hand never closed, the stock is exhausted and each
  player can tell the other's hand (the cards it has not seen), so both know the whole state (RS2). A policy that
  sees only the observation acts the same wherever the state is the same, so in these 136,640 subtrees (67,880,124
  nodes) a best response is computed node by node (expectimax), and an equilibrium plays minimax (its value is
  exact: any minimax strategy guarantees it in a perfect-information game).

The walks step the compiled core (:mod:`schnapsen_env.rules_core`), which plays exactly the reference rules
(``tests/test_core_lockstep.py``); ``tests/test_exact.py`` checks the tree against a walk of the reference engine
and the exploitability against OpenSpiel's own best response on the same game (a subset of the deals).

Sources: NashConv and exploitability as in OpenSpiel (``open_spiel/python/algorithms/exploitability.py``; M.
Lanctot et al., "OpenSpiel: A Framework for Reinforcement Learning in Games", 2019); CFR+ (O. Tammelin, "Solving
Large Imperfect Information Games Using CFR+", 2014): regret matching+, alternating updates, linear averaging.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from numba import njit, types
from numba.typed import Dict

from agents.game_theory.table_policy import ObservationTable, row_hash
from schnapsen_env import rules_core
from schnapsen_env.encoding import obs_size
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.state_layout import STATE_SIZE, F

#: Deepest action sequence of a hand: every card played plus marriages, an exchange, a close and a claim (a bound,
#: checked by the walks).
_MAX_DEPTH = 32
#: Actions an information-set key holds (:func:`_key_add`: 9 in its low word, 12 in its high word).
_KEY_ACTIONS = 21
#: Node kinds of the open part.
DECISION, TERMINAL, REVEALED = 0, 1, 2
#: A policy: observations float32 ``(B, obs_size)`` and action masks int8 ``(B, n_actions)`` -> probabilities
#: ``(B, n_actions)`` (0 on illegal actions, rows summing to 1).
Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]


# ------------------------------------------------------------------------------------------------ deals
def _check_rules(rules: RuleSet) -> None:
    if not isinstance(rules, RuleSet):
        raise ValueError(f"expected a RuleSet, e.g. RuleSet.make('schnapsen10'), got {type(rules).__name__} "
                         f"{rules!r}")
    if rules.name != "schnapsen10":
        raise ValueError(f"exact tree walks need ruleset 'schnapsen10' (RULES.md section 3a), got {rules.name!r}: "
                         "the other rulesets are far too large to walk")


def _int_at_least(value, low: int, what: str) -> int:
    """``value`` as an int >= ``low`` (numpy integers accepted, bools refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{what} must be an int >= {low}, got {value!r}")
    return int(value)


def deals(rules: RuleSet):
    """Every distinct deal of ``rules`` as deck orders (int64 ``(n,)``) in :func:`schnapsen_env.rules_core.deal`'s layout:
    each split of the cards into the non-dealer's hand, the dealer's hand, the turn-up and the stock order, once
    (RULES.md R2, RS2). ``schnapsen10``: 210 * 15 * 2 = 6,300 deals.

    Raises:
        ValueError: a ruleset other than ``schnapsen10`` (the others have about 10^10 deals and more).
    """
    _check_rules(rules)
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


def _dealt(rules: RuleSet, orders) -> np.ndarray:
    """The dealt states (seat 1 deals) of deck orders, int64 ``(n_deals, STATE_SIZE)``.

    Raises:
        ValueError: not a list of deck orders, an order that is not a permutation of the card ids, or a deal
            given twice (the deals are uniform: a repeated one would count double).
    """
    n = rules.n_cards
    if isinstance(orders, np.ndarray) and orders.ndim != 2:
        raise ValueError(f"orders must be a list of deck orders (a 2-D array of shape (deals, {n})), got an array "
                         f"of shape {orders.shape}")
    try:
        orders = list(orders)
    except TypeError:
        raise ValueError(f"orders must be a list of deck orders (each a permutation of 0..{n - 1}), got "
                         f"{type(orders).__name__}") from None
    R = rules_core.rule_table(rules)
    roots = np.empty((len(orders), STATE_SIZE), dtype=np.int64)
    seen = set()
    for i, order in enumerate(orders):
        a = np.asarray(order)
        if a.shape != (n,) or a.dtype.kind not in "iu" or sorted(a.tolist()) != list(range(n)):
            raise ValueError(f"deal {i}: expected a deck order, a permutation of the card ids 0..{n - 1} "
                             f"({n} ints), got {order!r}")
        rules_core.deal(roots[i], R, a.astype(np.int64), 1)
        g = roots[i]
        key = (int(g[F.hands]), int(g[F.hands + 1]), tuple(g[F.stock:F.stock + g[F.stock_end]].tolist()))
        if key in seen:
            raise ValueError(f"deal {i} repeats an earlier deal (the same hands, turn-up and stock): the deals are "
                             "uniform, so each must be given once")
        seen.add(key)
    return roots


# ------------------------------------------------------------------------------------------------ walks
@njit(cache=True, inline="always")
def _lowest(bits):
    a = 0
    while not (bits >> a) & 1:
        a += 1
    return a


@njit(cache=True, inline="always")
def _revealed(st):
    """Stock exhausted in a hand never closed: both players know every card (RS2)."""
    return st[F.closed_by] < 0 and st[F.stock_top] >= st[F.stock_end]


@njit(cache=True, inline="always")
def _seat0_value(st):
    """Game points of a finished hand for seat 0 (+ won, - lost, 0 a tie)."""
    w = st[F.res_winner]
    if w == 0:
        return float(st[F.res_points])
    if w == 1:
        return -float(st[F.res_points])
    return 0.0


@njit(cache=True, inline="always")
def _root(stack, legal, state, R):
    """Start a depth-first walk at ``state``: ``stack[0]`` holds it and ``legal[0]`` its legal actions."""
    stack[0, :] = state
    legal[0] = rules_core.legal_bits(stack[0], R)


@njit(cache=True, inline="always")
def _next_child(stack, legal, depth, R):
    """One step of the depth-first walks without recursion, where ``stack[d]`` holds the state at depth ``d`` and
    ``legal[d]`` the actions not yet tried there: apply the next untried action (the lowest) of the node at
    ``depth`` to a copy in ``stack[depth + 1]`` and return it, or -1 when every action there was tried."""
    bits = legal[depth]
    if bits == 0:
        return -1
    low = bits & -bits
    legal[depth] = bits ^ low
    a = _lowest(low)
    child = stack[depth + 1]
    child[:] = stack[depth]
    rules_core.apply(child, R, a)
    return a


@njit(cache=True, inline="always")
def _descend(stack, legal, depth, R):
    """Go down to the child in ``stack[depth + 1]`` (a decision node): its legal actions into ``legal``; returns
    the new depth."""
    depth += 1
    if depth + 1 >= stack.shape[0]:
        raise ValueError("the walk went deeper than its stack: raise _MAX_DEPTH")
    legal[depth] = rules_core.legal_bits(stack[depth], R)
    return depth


@njit(cache=True)
def _walk(root, R, stack, legal):
    """Count the nodes of the whole tree below the state ``root`` (int64 ``(STATE_SIZE,)``), depth first without
    recursion (:func:`_next_child`). Returns ``(nodes, decisions, terminals)``, the root counted among them."""
    _root(stack, legal, root, R)
    nodes, decisions, terminals = 1, 1, 0
    depth = 0
    while depth >= 0:
        if _next_child(stack, legal, depth, R) < 0:
            depth -= 1
            continue
        nodes += 1
        if stack[depth + 1, F.over]:
            terminals += 1
        else:
            decisions += 1
            depth = _descend(stack, legal, depth, R)
    return nodes, decisions, terminals


@njit(cache=True, inline="always")
def _key_add(lo, hi, n, action):
    """Append ``action`` (the n-th of the hand) to an information-set key: 5 bits an action, 9 in ``lo`` after its
    15 bits of dealt hand, turn-up and seat, then 12 in ``hi``."""
    if n < 9:
        lo |= (action + 1) << (15 + 5 * n)
    else:
        hi |= (action + 1) << (5 * (n - 9))
    return lo, hi


@njit(cache=True, inline="always")
def _children(bits, nid, mode, action):
    """Number the children of a node with legal actions ``bits`` from ``nid`` on, in action order."""
    k = 0
    while bits:
        low = bits & -bits
        if mode == 1:
            action[nid + k] = _lowest(low)
        bits ^= low
        k += 1
    return k


@njit(cache=True)
def _open_part(roots, R, mode, d0, d1, nid, kind, player, depth_of, first_child, n_child, action, value, infoset,
               revealed_states, infoset_ids, infoset_player, infoset_actions, infoset_depth, deal_first, obs, masks,
               obs_node):
    """Walk the open part below the dealt states ``roots[d0:d1]``, numbering nodes from ``nid`` on; each node's
    children are numbered together (so a node's index is above its parent's and the children of a node are
    contiguous, in action order).

    ``mode`` 0 counts, 1 fills the node arrays (and checks perfect recall: the nodes of an information set have the
    same legal actions and depth), 2 writes the observation, action mask and node index of each decision node into
    ``obs``, ``masks``, ``obs_node`` (rows). Returns ``(next node index, revealed subtrees, information sets or rows
    written)``."""
    stack = np.empty((_MAX_DEPTH + 1, STATE_SIZE), dtype=np.int64)
    next_at = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    bits_at = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    nkids = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    firsts = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    keys = np.empty((_MAX_DEPTH + 1, 2, 2), dtype=np.int64)  # [depth, seat, lo/hi]
    n_actions = masks.shape[1]
    nrev = 0
    n_sets = len(infoset_ids)
    rows = 0
    for d in range(d0, d1):
        if mode == 1:
            deal_first[d] = nid
        st = stack[0]
        st[:] = roots[d]
        turn_up = st[F.stock + st[F.stock_end] - 1]
        for p in range(2):
            keys[0, p, 0] = st[F.hands + p] | (turn_up << 10) | (p << 14)
            keys[0, p, 1] = 0
        depth = 0
        c = nid
        nid += 1
        child = st
        while True:
            # `child` (node c at `depth`) is a decision node: register it and number its children
            me = child[F.to_move]
            bits = rules_core.legal_bits(child, R)
            if mode == 2:
                rules_core.observe(child, R, me, obs[rows])
                for a in range(n_actions):
                    masks[rows, a] = (bits >> a) & 1
                obs_node[rows] = c
                rows += 1
            else:
                key = (keys[depth, me, 0], keys[depth, me, 1])
                if key in infoset_ids:
                    sid = infoset_ids[key]
                    if mode == 1 and (infoset_actions[sid] != bits or infoset_depth[sid] != depth):
                        raise ValueError("two nodes of one information set differ in legal actions or depth")
                else:
                    sid = n_sets
                    infoset_ids[key] = sid
                    n_sets += 1
                    if mode == 1:
                        infoset_player[sid] = me
                        infoset_actions[sid] = bits
                        infoset_depth[sid] = depth
                if mode == 1:
                    infoset[c] = sid
            k = _children(bits, nid, mode, action)
            if mode == 1:
                kind[c] = DECISION
                player[c] = me
                depth_of[c] = depth
                first_child[c] = nid
                n_child[c] = k
            bits_at[depth] = bits
            next_at[depth] = 0
            nkids[depth] = k
            firsts[depth] = nid
            nid += k
            # descend to the next child that is a decision node, settling terminal and revealed children
            found = False
            while depth >= 0 and not found:
                if next_at[depth] == nkids[depth]:
                    depth -= 1
                    continue
                j = next_at[depth]
                next_at[depth] += 1
                c = firsts[depth] + j
                b = bits_at[depth]
                for _ in range(j):
                    b &= b - 1
                a = _lowest(b & -b)
                if depth >= _KEY_ACTIONS:
                    raise ValueError("an information-set key holds 21 actions: this hand is longer")
                child = stack[depth + 1]
                child[:] = stack[depth]
                rules_core.apply(child, R, a)
                for p in range(2):
                    lo, hi = _key_add(keys[depth, p, 0], keys[depth, p, 1], depth, a)
                    keys[depth + 1, p, 0] = lo
                    keys[depth + 1, p, 1] = hi
                if child[F.over]:
                    if mode == 1:
                        kind[c] = TERMINAL
                        depth_of[c] = depth + 1
                        value[c] = _seat0_value(child)
                        n_child[c] = 0
                elif _revealed(child):
                    if mode == 1:
                        kind[c] = REVEALED
                        depth_of[c] = depth + 1
                        infoset[c] = nrev  # the revealed subtree's index
                        revealed_states[nrev, :] = child
                        n_child[c] = 0
                    nrev += 1
                else:
                    depth += 1
                    if depth + 1 >= _MAX_DEPTH:
                        raise ValueError("the walk went deeper than its stack: raise _MAX_DEPTH")
                    found = True
            if not found:
                break
    return nid, nrev, (rows if mode == 2 else n_sets)


@njit(cache=True)
def _subtree_rows(states, R, start, obs, masks, ends):
    """Write the observation and action mask of every decision node of the revealed subtrees ``states[start:]``,
    depth first in action order, into ``obs``/``masks`` (rows), as many whole subtrees as fit. ``ends[i]`` gets the
    row count after subtree ``start + i``. Returns the number of subtrees written."""
    stack = np.empty((_MAX_DEPTH + 1, STATE_SIZE), dtype=np.int64)
    legal = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    n_actions = masks.shape[1]
    row = 0
    done = 0
    for i in range(start, states.shape[0]):
        first_row = row
        _root(stack, legal, states[i], R)
        if row >= obs.shape[0]:
            break
        rules_core.observe(stack[0], R, stack[0, F.to_move], obs[row])
        for a in range(n_actions):
            masks[row, a] = (legal[0] >> a) & 1
        row += 1
        depth = 0
        full = False
        while depth >= 0:
            if _next_child(stack, legal, depth, R) < 0:
                depth -= 1
                continue
            if not stack[depth + 1, F.over]:
                if row >= obs.shape[0]:
                    full = True
                    break
                depth = _descend(stack, legal, depth, R)
                child = stack[depth]
                rules_core.observe(child, R, child[F.to_move], obs[row])
                for a in range(n_actions):
                    masks[row, a] = (legal[depth] >> a) & 1
                row += 1
        if full:
            row = first_row
            break
        ends[done] = row
        done += 1
    return done


@njit(cache=True, inline="always")
def _start(acc, depth, p, minimax):
    """Open the accumulators of a node of seat ``p``: [best response of seat 0, of seat 1, policy vs policy], or
    minimax in all three."""
    if minimax:
        v = -np.inf if p == 0 else np.inf
        acc[depth, 0] = acc[depth, 1] = acc[depth, 2] = v
    else:
        acc[depth, 0] = -np.inf if p == 0 else 0.0
        acc[depth, 1] = np.inf if p == 1 else 0.0
        acc[depth, 2] = 0.0


@njit(cache=True)
def _subtree_values(states, R, start, count, probs, minimax, out):
    """Values (for seat 0) of the revealed subtrees ``states[start:start + count]`` into ``out[i]``: ``[best
    response of seat 0, of seat 1, the policy against itself]``, the policy's probabilities read from ``probs`` in
    the row order of :func:`_subtree_rows`; with ``minimax`` (no ``probs``) all three are the minimax value."""
    stack = np.empty((_MAX_DEPTH + 1, STATE_SIZE), dtype=np.int64)
    legal = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    row_at = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    act_at = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    acc = np.empty((_MAX_DEPTH + 1, 3), dtype=np.float64)
    row = 0
    for i in range(count):
        _root(stack, legal, states[start + i], R)
        _start(acc, 0, stack[0, F.to_move], minimax)
        row_at[0] = row
        row += 1
        depth = 0
        while True:
            a = _next_child(stack, legal, depth, R)
            if a < 0:  # the node at this depth is done: fold it into its parent
                if depth == 0:
                    break
                v0, v1, v2 = acc[depth, 0], acc[depth, 1], acc[depth, 2]
                depth -= 1
            else:
                act_at[depth] = a
                child = stack[depth + 1]
                if not child[F.over]:
                    depth = _descend(stack, legal, depth, R)
                    _start(acc, depth, child[F.to_move], minimax)
                    row_at[depth] = row
                    row += 1
                    continue
                v0 = v1 = v2 = _seat0_value(child)
            # fold the child's values (v0, v1, v2) into the node at `depth`
            p = stack[depth, F.to_move]
            if minimax:
                for col, v in ((0, v0), (1, v1), (2, v2)):
                    acc[depth, col] = max(acc[depth, col], v) if p == 0 else min(acc[depth, col], v)
                continue
            pr = probs[row_at[depth], act_at[depth]]
            if p == 0:
                acc[depth, 0] = max(acc[depth, 0], v0)
                acc[depth, 1] += pr * v1
            else:
                acc[depth, 0] += pr * v0
                acc[depth, 1] = min(acc[depth, 1], v1)
            acc[depth, 2] += pr * v2
        out[start + i, 0] = acc[0, 0]
        out[start + i, 1] = acc[0, 1]
        out[start + i, 2] = acc[0, 2]
    return row


# ------------------------------------------------------------------------------------------------ open part passes
@njit(cache=True)
def _reach(kind, player, first_child, n_child, prob, responder, n_roots_weight, depth_of):
    """Reach probability of every node through chance (``n_roots_weight`` at each deal) and the policy's actions
    (``prob`` per child node) where ``responder`` is not to move: the best responder's counterfactual reach."""
    n = kind.shape[0]
    reach = np.zeros(n)
    for h in range(n):
        if depth_of[h] == 0:
            reach[h] = n_roots_weight
        if kind[h] != DECISION:
            continue
        f = first_child[h]
        for k in range(n_child[h]):
            reach[f + k] = reach[h] * (1.0 if player[h] == responder else prob[f + k])
    return reach


@njit(cache=True)
def _best_response(kind, player, depth_of, first_child, n_child, value, infoset, prob, revealed_value, responder,
                   by_depth, level_end, set_offset, n_set_actions, roots_weight):
    """Best-response value of seat ``responder`` (for itself) against the policy ``prob`` on the open part, with
    the revealed subtrees' values ``revealed_value`` (for seat 0, under this responder). Levels deepest first: at each
    level the responder's information sets pick the action of highest counterfactual value summed over their nodes
    (perfect recall: all of a set's nodes lie at one depth)."""
    sign = 1.0 if responder == 0 else -1.0
    reach = _reach(kind, player, first_child, n_child, prob, responder, roots_weight, depth_of)
    n = kind.shape[0]
    v = np.zeros(n)
    total = np.zeros(set_offset[-1])
    best = np.zeros(set_offset.shape[0] - 1, dtype=np.int64)
    start = 0
    for lv in range(level_end.shape[0]):
        end = level_end[lv]
        for t in range(start, end):
            h = by_depth[t]
            kd = kind[h]
            if kd == TERMINAL:
                v[h] = sign * value[h]
            elif kd == REVEALED:
                v[h] = sign * revealed_value[infoset[h]]
            elif player[h] != responder:
                f = first_child[h]
                acc = 0.0
                for k in range(n_child[h]):
                    acc += prob[f + k] * v[f + k]
                v[h] = acc
            else:
                f = first_child[h]
                o = set_offset[infoset[h]]
                for k in range(n_child[h]):
                    total[o + k] += reach[h] * v[f + k]
        for t in range(start, end):
            h = by_depth[t]
            if kind[h] == DECISION and player[h] == responder:
                s = infoset[h]
                o = set_offset[s]
                b = 0
                for k in range(1, n_set_actions[s]):
                    if total[o + k] > total[o + b]:
                        b = k
                best[s] = b
        for t in range(start, end):
            h = by_depth[t]
            if kind[h] == DECISION and player[h] == responder:
                v[h] = v[first_child[h] + best[infoset[h]]]
        start = end
    out = 0.0
    for h in range(n):
        if depth_of[h] == 0:
            out += roots_weight * v[h]
    return out


@njit(cache=True)
def _policy_value(kind, first_child, n_child, value, infoset, prob, revealed_value, depth_of, roots_weight):
    """Value for seat 0 of both seats playing ``prob`` (children after parents: a pass from the last node back)."""
    n = kind.shape[0]
    v = np.zeros(n)
    out = 0.0
    for h in range(n - 1, -1, -1):
        kd = kind[h]
        if kd == TERMINAL:
            v[h] = value[h]
        elif kd == REVEALED:
            v[h] = revealed_value[infoset[h]]
        else:
            f = first_child[h]
            acc = 0.0
            for k in range(n_child[h]):
                acc += prob[f + k] * v[f + k]
            v[h] = acc
        if depth_of[h] == 0:
            out += roots_weight * v[h]
    return out


@njit(cache=True)
def _cfr_plus(iterations, t0, kind, player, depth_of, first_child, n_child, value, infoset, revealed_value,
              set_offset, regret, average, roots_weight):
    """``iterations`` of CFR+ (regret matching+, alternating updates, average weighted by the iteration number,
    counted from ``t0 + 1``) on the open part, the revealed subtrees valued by minimax. Updates ``regret`` and
    ``average`` (per information set and action) in place."""
    n = kind.shape[0]
    strategy = np.zeros(regret.shape[0])
    prob = np.zeros(n)
    reach = np.zeros((n, 2))
    v = np.zeros(n)
    gain = np.zeros(regret.shape[0])
    n_sets = set_offset.shape[0] - 1
    for it in range(iterations):
        t = t0 + it + 1
        for p in range(2):
            for s in range(n_sets):  # regret matching+
                o, e = set_offset[s], set_offset[s + 1]
                tot = 0.0
                for j in range(o, e):
                    tot += regret[j]
                for j in range(o, e):
                    strategy[j] = regret[j] / tot if tot > 0 else 1.0 / (e - o)
            for h in range(n):
                if depth_of[h] == 0:
                    reach[h, 0] = 1.0
                    reach[h, 1] = 1.0
                if kind[h] != DECISION:
                    continue
                f = first_child[h]
                o = set_offset[infoset[h]]
                q = player[h]
                for k in range(n_child[h]):
                    prob[f + k] = strategy[o + k]
                    reach[f + k, q] = reach[h, q] * strategy[o + k]
                    reach[f + k, 1 - q] = reach[h, 1 - q]
            sign = 1.0 if p == 0 else -1.0
            for h in range(n - 1, -1, -1):
                kd = kind[h]
                if kd == TERMINAL:
                    v[h] = value[h]
                    continue
                if kd == REVEALED:
                    v[h] = revealed_value[infoset[h]]
                    continue
                f = first_child[h]
                acc = 0.0
                for k in range(n_child[h]):
                    acc += prob[f + k] * v[f + k]
                v[h] = acc
                if player[h] == p:
                    o = set_offset[infoset[h]]
                    cf = reach[h, 1 - p] * roots_weight
                    for k in range(n_child[h]):
                        gain[o + k] += cf * sign * (v[f + k] - acc)
                        average[o + k] += t * reach[h, p] * prob[f + k]
            for j in range(regret.shape[0]):
                if gain[j] != 0.0:
                    regret[j] = max(regret[j] + gain[j], 0.0)
                    gain[j] = 0.0
    return t0 + iterations


# ------------------------------------------------------------------------------------------------ the API
class Tree:
    """The game tree of ``schnapsen10`` (module docstring): the open part as arrays, the revealed subtrees as their
    root states, walked again on demand.

    Args:
        rules: a ``schnapsen10`` RuleSet (any knobs).
        orders: the deals (deck orders, :func:`deals` layout), uniform; default every deal. A subset defines a
            smaller game (the tests compare it with OpenSpiel's best response on that game).

    Attributes:
        n_deals, n_nodes (open part), n_revealed (revealed subtrees), n_infosets (open part's information sets of
        both seats).

    Raises:
        ValueError: a ruleset other than ``schnapsen10``.
    """

    def __init__(self, rules: RuleSet, orders=None) -> None:
        _check_rules(rules)
        self.rules = rules
        self.R = rules_core.rule_table(rules)
        self.roots = _dealt(rules, deals(rules) if orders is None else orders)
        if self.roots.shape[0] == 0:
            raise ValueError("a game needs at least one deal")
        self.n_deals = self.roots.shape[0]
        self._obs_size, self._n_actions = obs_size(rules), rules.n_actions
        e8, e64, ef = np.zeros(0, np.int8), np.zeros(0, np.int64), np.zeros(0)
        nobs, nmask = np.zeros((0, self._obs_size), np.float32), np.zeros((1, self._n_actions), np.int8)
        n, nrev, nsets = _open_part(self.roots, self.R, 0, 0, self.n_deals, 0, e8, e8, e64, e64, e64, e8, ef, e64,
                                    np.zeros((0, STATE_SIZE), np.int64), self._new_ids(), e8, e64, e64, e64,
                                    nobs, nmask, e64)
        self.n_nodes, self.n_revealed, self.n_infosets = n, nrev, nsets
        self.kind, self.player, self.action, self.n_child = (np.zeros(n, np.int8) for _ in range(4))
        self.depth, self.first_child, self.infoset = (np.zeros(n, np.int64) for _ in range(3))
        self.value = np.zeros(n)
        self.revealed_states = np.zeros((nrev, STATE_SIZE), np.int64)
        self.set_player, self.set_actions, self.set_depth = (np.zeros(nsets, np.int64) for _ in range(3))
        self.deal_first = np.zeros(self.n_deals + 1, np.int64)
        _open_part(self.roots, self.R, 1, 0, self.n_deals, 0, self.kind, self.player, self.depth, self.first_child,
                   self.n_child, self.action, self.value, self.infoset, self.revealed_states, self._new_ids(),
                   self.set_player, self.set_actions, self.set_depth, self.deal_first, nobs, nmask, e64)
        self.deal_first[-1] = n
        self.set_n_actions = np.array([int(b).bit_count() for b in self.set_actions], dtype=np.int64)
        self.set_offset = np.concatenate([[0], np.cumsum(self.set_n_actions)]).astype(np.int64)
        self.by_depth = np.argsort(-self.depth, kind="stable").astype(np.int64)
        depths = self.depth[self.by_depth]
        self.level_end = (np.flatnonzero(np.diff(depths)) + 1).tolist() + [n]
        self.level_end = np.array(self.level_end, dtype=np.int64)
        self._minimax: np.ndarray | None = None

    @staticmethod
    def _new_ids():
        return Dict.empty(key_type=types.UniTuple(types.int64, 2), value_type=types.int64)

    # ---------------------------------------------------------------- policies on the tree
    def _open_probabilities(self, policy: Policy, batch_nodes: int) -> np.ndarray:
        """``prob[c]``: the policy's probability of the action leading to each child node ``c`` of the open part."""
        prob = np.zeros(self.n_nodes)
        for obs, masks, nodes in self._decision_rows(batch_nodes):
            p = _evaluate(policy, obs, masks)
            for r in range(len(nodes)):
                h = nodes[r]
                f, k = self.first_child[h], self.n_child[h]
                prob[f:f + k] = p[r, self.action[f:f + k]]
        return prob

    def _decision_rows(self, batch_nodes: int):
        """The open part's decision nodes, deal by deal in batches of about ``batch_nodes`` nodes: yields their
        observations float32 ``(rows, obs_size)``, action masks int8 ``(rows, n_actions)`` and node indices int64
        ``(rows,)``."""
        d0 = 0
        while d0 < self.n_deals:
            d1 = d0 + 1
            while d1 < self.n_deals and self.deal_first[d1 + 1] - self.deal_first[d0] <= batch_nodes:
                d1 += 1
            rows_cap = int(self.deal_first[d1] - self.deal_first[d0])
            obs = np.zeros((rows_cap, self._obs_size), np.float32)
            masks = np.zeros((rows_cap, self._n_actions), np.int8)
            nodes = np.zeros(rows_cap, np.int64)
            e8, e64 = np.zeros(0, np.int8), np.zeros(0, np.int64)
            _, _, rows = _open_part(self.roots, self.R, 2, d0, d1, int(self.deal_first[d0]), e8, e8, e64, e64, e64,
                                    e8, np.zeros(0), e64, np.zeros((0, STATE_SIZE), np.int64), self._new_ids(), e8,
                                    e64, e64, e64, obs, masks, nodes)
            yield obs[:rows], masks[:rows], nodes[:rows]
            d0 = d1

    def _revealed_values(self, policy: Policy | None, batch_rows: int) -> np.ndarray:
        """Per revealed subtree, ``[seat 0's best response, seat 1's, policy vs policy]`` (values for seat 0);
        ``policy=None``: minimax in all three (cached)."""
        if policy is None and self._minimax is not None:
            return self._minimax
        out = np.zeros((self.n_revealed, 3))
        if policy is None:
            _subtree_values(self.revealed_states, self.R, 0, self.n_revealed, np.zeros((1, 1)), True, out)
            self._minimax = out
            return out
        return revealed_values(self.revealed_states, self.rules, policy, batch_rows, out, self.R)

    def nash_conv(self, policy: Policy | None, batch_rows: int = 1 << 18, revealed: str = "policy") -> dict[str, float]:
        """Exploitability of an observation-based policy on this game.

        Args:
            policy: :data:`Policy` (observations and masks -> probabilities), the same for both seats; it must depend
                on the observation only (as every agent of this project).
            batch_rows: observations per call of ``policy``.
            revealed: ``"policy"``: the policy plays the revealed subtrees too (every decision of the tree);
                ``"minimax"``: it is known to play them perfectly (as ``pimc`` and ``expert`` do, whose one world
                is then the true position: ``tests/test_exact.py`` checks it), so they are valued by minimax and
                the policy is asked about the open part only (545,089 distinct decisions instead of 9 million).

        Returns:
            ``{"nash_conv", "exploitability", "best_response": [seat 0, seat 1], "value"}`` in game points a hand:
            NashConv = the sum of the seats' best-response values; exploitability = NashConv / 2; value = seat 0's
            (the non-dealer's) expected game points when both seats play the policy.

        Raises:
            ValueError: the policy returned probabilities of the wrong shape, NaN, negative, on illegal actions or
                not summing to 1.
        """
        if policy is None or not callable(policy):
            raise ValueError(f"policy must be callable as policy(observations, masks) -> probabilities, got "
                             f"{policy!r} (the equilibrium is cfr()'s)")
        batch_rows = _int_at_least(batch_rows, 1024, "batch_rows")
        if revealed not in ("policy", "minimax"):
            raise ValueError(f"revealed must be 'policy' or 'minimax', got {revealed!r}")
        prob = self._open_probabilities(policy, batch_rows)
        values = self._revealed_values(policy if revealed == "policy" else None, batch_rows)
        return self._nash_conv_from(prob, values)

    def _nash_conv_from(self, prob: np.ndarray, revealed: np.ndarray) -> dict[str, float]:
        w = 1.0 / self.n_deals
        args = (self.kind, self.player, self.depth, self.first_child, self.n_child, self.value, self.infoset, prob)
        common = (self.by_depth, self.level_end, self.set_offset, self.set_n_actions, w)
        br0 = _best_response(*args, np.ascontiguousarray(revealed[:, 0]), 0, *common)
        br1 = _best_response(*args, np.ascontiguousarray(revealed[:, 1]), 1, *common)
        value = _policy_value(self.kind, self.first_child, self.n_child, self.value, self.infoset, prob,
                              np.ascontiguousarray(revealed[:, 2]), self.depth, w)
        nash = br0 + br1
        return {"nash_conv": float(nash), "exploitability": float(nash / 2), "best_response": [float(br0), float(br1)],
                "value": float(value)}

    # ---------------------------------------------------------------- CFR+
    def cfr(self, iterations: int, eval_every: int = 0, callback=None) -> dict:
        """Solve the game by CFR+ on the open part, the revealed subtrees valued by minimax (exact: module
        docstring).

        Args:
            iterations: CFR+ iterations (each updates both seats once).
            eval_every: compute the average strategy's NashConv every this many iterations (0: at the end only).
            callback: called as ``callback(iteration, result)`` after each evaluation.

        Returns:
            ``{"iterations", "curve": [(iteration, nash_conv), ...], "average", **nash_conv of the average
            strategy}``; ``average`` holds the unnormalised reach-weighted sums of the strategies played, per
            information set and action (information set ``s``'s actions, in id order, at ``set_offset[s]`` on).

        Raises:
            ValueError: ``iterations`` not an int >= 1, ``eval_every`` not an int >= 0, a callback not callable.
        """
        iterations = _int_at_least(iterations, 1, "iterations")
        eval_every = _int_at_least(eval_every, 0, "eval_every")
        if callback is not None and not callable(callback):
            raise ValueError(f"callback must be callable as callback(iteration, result), got {callback!r}")
        revealed = self._revealed_values(None, 0)
        rv = np.ascontiguousarray(revealed[:, 0])
        regret = np.zeros(self.set_offset[-1])
        average = np.zeros(self.set_offset[-1])
        w = 1.0 / self.n_deals
        curve = []
        t = 0
        step = eval_every if eval_every > 0 else iterations
        while t < iterations:
            todo = min(step, iterations - t)
            t = _cfr_plus(todo, t, self.kind, self.player, self.depth, self.first_child, self.n_child, self.value,
                          self.infoset, rv, self.set_offset, regret, average, w)
            result = self._nash_conv_from(self._average_probabilities(average), revealed)
            curve.append((t, result["nash_conv"]))
            if callback is not None:
                callback(t, result)
        return {"iterations": t, "curve": curve, "average": average, **result}

    def observation_policy(self, average: np.ndarray, source: str = "", batch_nodes: int = 1 << 20):
        """The average strategy of :meth:`cfr` (its ``"average"``) written down by observation: an
        :class:`agents.game_theory.table_policy.ObservationTable` over every decision of the open part; ``source``
        says what ``average`` came from (kept in the table's file).

        Information sets that share an observation (the observation need not hold every past action) are merged
        by adding their reach-weighted strategy sums, so the row is the mixture the average strategy plays there
        (the same strategy wherever the observation is distinct). Rows sharing a hash are checked equal.

        Raises:
            ValueError: ``average`` not float ``(total actions of the information sets,)``, or two different rows
                with one hash (then the table cannot key them).
        """
        average = np.asarray(average)
        if average.shape != (int(self.set_offset[-1]),) or average.dtype.kind != "f":
            raise ValueError(f"average must be float ({int(self.set_offset[-1])},), cfr()'s \"average\"; got "
                             f"{average.dtype} {average.shape}")
        seen = np.zeros(self.n_infosets, dtype=bool)
        all_obs, all_masks, all_sums = [], [], []
        for obs, masks, nodes in self._decision_rows(batch_nodes):
            sets = self.infoset[nodes]
            uniq, first = np.unique(sets, return_index=True)
            new = ~seen[uniq]
            uniq, first = uniq[new], first[new]
            seen[uniq] = True
            node = nodes[first]
            k = self.n_child[node].astype(np.int64)
            row_of = np.repeat(np.arange(len(first)), k)
            j = np.arange(int(k.sum())) - np.repeat(np.cumsum(k) - k, k)
            sums = np.zeros((len(first), self._n_actions))
            sums[row_of, self.action[self.first_child[node][row_of] + j]] = average[self.set_offset[uniq][row_of] + j]
            all_obs.append(obs[first])
            all_masks.append(masks[first])
            all_sums.append(sums)
        obs, masks, sums = np.concatenate(all_obs), np.concatenate(all_masks), np.concatenate(all_sums)
        hashes, first, inverse = np.unique(row_hash(obs, masks), return_index=True, return_inverse=True)
        shared = np.flatnonzero(np.bincount(inverse)[inverse] > 1)  # rows whose hash another row has too
        rep = first[inverse[shared]]
        if not (np.array_equal(obs[rep], obs[shared]) and np.array_equal(masks[rep], masks[shared])):
            raise ValueError("two different observations share a 64-bit hash: the table cannot key them")
        merged = np.zeros((len(hashes), self._n_actions))
        np.add.at(merged, inverse, sums)
        legal = masks[first].astype(np.float64)
        total = merged.sum(axis=1, keepdims=True)
        probs = np.where(total > 0, merged / np.where(total > 0, total, 1.0), legal / legal.sum(axis=1, keepdims=True))
        return ObservationTable(self.rules, hashes.astype(np.uint64), probs.astype(np.float32), source)

    def _average_probabilities(self, average: np.ndarray) -> np.ndarray:
        """Edge probabilities of the normalised average strategy (uniform where an information set was never
        reached)."""
        prob = np.zeros(self.n_nodes)
        dec = np.flatnonzero(self.kind == DECISION)
        sets = self.infoset[dec]
        for h, s in zip(dec.tolist(), sets.tolist()):
            o, e = self.set_offset[s], self.set_offset[s + 1]
            a = average[o:e]
            tot = a.sum()
            f = self.first_child[h]
            prob[f:f + (e - o)] = a / tot if tot > 0 else 1.0 / (e - o)
        return prob


def revealed_values(states: np.ndarray, rules: RuleSet, policy: Policy, batch_rows: int = 1 << 18,
                    out: np.ndarray | None = None, R: np.ndarray | None = None) -> np.ndarray:
    """Values of revealed positions (no card hidden from either player: the stock exhausted in a hand never
    closed) under ``policy``, each by a walk of its whole subtree (any ruleset; the subtrees of the larger decks hold
    up to some ten thousand decisions).

    Args:
        states: int64 ``(N, STATE_SIZE)`` state arrays (:mod:`schnapsen_env.state_layout`), each revealed and not
            over.
        rules: their RuleSet.
        policy: a :data:`Policy`, asked about every decision of the subtrees with a choice, each distinct one once,
            in batches of at most ``batch_rows`` rows.
        out: float64 ``(N, 3)`` to write into (default: a new array).
        R: the rule table of ``rules`` (:func:`schnapsen_env.rules_core.rule_table`), if the caller has it.

    Returns:
        float64 ``(N, 3)``, game points for seat 0: ``[seat 0's best response to seat 1 playing the policy, seat 1's
        best response to seat 0 playing it, the policy against itself]`` (a best response takes the best action at
        its own decisions and the policy's expectation at the other seat's).

    Raises:
        ValueError: ``batch_rows`` cannot hold one subtree's decisions, or the policy's output is not a
            distribution over the legal actions.
    """
    R = rules_core.rule_table(rules) if R is None else R
    out = np.zeros((len(states), 3)) if out is None else out
    obs = np.zeros((batch_rows, obs_size(rules)), np.float32)
    masks = np.zeros((batch_rows, rules.n_actions), np.int8)
    ends = np.zeros(len(states), np.int64)
    start = 0
    while start < len(states):
        done = _subtree_rows(states, R, start, obs, masks, ends)
        if done == 0:
            raise ValueError(f"batch_rows={batch_rows} cannot hold one revealed subtree")
        rows = int(ends[done - 1])
        probs = _evaluate(policy, obs[:rows], masks[:rows])
        used = _subtree_values(states, R, start, done, probs, False, out)
        assert used == rows
        start += done
    return out


def _evaluate(policy: Policy, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The policy's probabilities for every row, calling it only on the distinct rows with more than one legal
    action (a single legal action has probability 1 whatever the policy; a revealed subtree repeats positions).
    Exact: rows grouped by hash are checked equal, else every row is evaluated."""
    out = masks.astype(np.float64)
    multi = np.flatnonzero(masks.sum(axis=1) > 1)
    if multi.size == 0:
        return out
    o, m = np.ascontiguousarray(obs[multi]), np.ascontiguousarray(masks[multi])
    _, first, inverse = np.unique(row_hash(o, m), return_index=True, return_inverse=True)
    if np.array_equal(o[first][inverse], o) and np.array_equal(m[first][inverse], m):
        out[multi] = _checked(policy(o[first], m[first]), m[first])[inverse]
    else:  # a hash collision: no grouping
        out[multi] = _checked(policy(o, m), m)
    return out


def _checked(p, masks: np.ndarray) -> np.ndarray:
    """The policy's output as float64 ``(B, n_actions)``, refused unless a distribution over the legal actions."""
    p = np.asarray(p)
    if p.dtype.kind not in "fiub":
        raise ValueError(f"the policy returned {p.dtype} values: expected real probabilities")
    p = p.astype(np.float64)
    if p.shape != masks.shape:
        raise ValueError(f"the policy returned shape {p.shape}, expected {masks.shape} (rows, actions)")
    if not np.all(np.isfinite(p)) or (p < 0).any():
        raise ValueError("the policy returned NaN, infinite or negative probabilities")
    if (p[masks == 0] != 0).any():
        raise ValueError("the policy put probability on an illegal action (it must be exactly 0 there)")
    if not np.allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise ValueError("the policy's probabilities do not sum to 1 over the legal actions (within 1e-9)")
    return p


# ------------------------------------------------------------------------------------------------ policies
def uniform_policy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Uniform over the legal actions."""
    m = masks.astype(np.float64)
    return m / m.sum(axis=1, keepdims=True)


def agent_policy(agent) -> Policy:
    """A deterministic agent with ``act_batch(observations, masks)`` (as ``heuristic``) as a :data:`Policy`."""
    if not hasattr(agent, "act_batch"):
        raise ValueError(f"agent {type(agent).__name__} has no act_batch(observations, masks): a policy needs "
                         "batched decisions")

    def policy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions = np.asarray(agent.act_batch(obs, masks))
        if actions.shape != (len(obs),) or actions.dtype.kind not in "iu" or \
                (actions < 0).any() or (actions >= masks.shape[1]).any():
            raise ValueError(f"act_batch returned {actions.dtype} {actions.shape}: expected one action id in "
                             f"0..{masks.shape[1] - 1} per row ({len(obs)} ints)")
        out = np.zeros(masks.shape)
        out[np.arange(len(actions)), actions] = 1.0
        return out

    return policy


def search_agent_policy(agent, max_memo: int | None = None) -> Policy:
    """An agent that acts one observation at a time (``act({"observation", "action_mask"})``, as ``pimc`` and
    ``expert``) as a deterministic :data:`Policy`: each distinct observation is answered once (remembered), with the
    agent's generator (``agent.rng``, if it has one) seeded from the observation, so that the action is a function
    of the observation, as a strategy must be. The returned function has ``one_at_a_time = True``: each decision costs
    a search. ``max_memo``: forget the remembered answers once there are that many (None: never); the answers stay
    the same, asked again they cost a search again."""
    import zlib

    if not callable(getattr(agent, "act", None)):
        raise ValueError(f"agent {type(agent).__name__} has no act(observation): expected an agent of this project")
    memo: dict[bytes, int] = {}

    def policy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.zeros(masks.shape)
        for i in range(len(obs)):
            key = obs[i].tobytes() + masks[i].tobytes()
            a = memo.get(key)
            if a is None:
                if max_memo is not None and len(memo) >= max_memo:
                    memo.clear()
                if hasattr(agent, "rng"):
                    agent.rng = np.random.default_rng(zlib.crc32(key))
                if hasattr(agent, "reset"):
                    agent.reset()
                a = agent.act({"observation": obs[i], "action_mask": masks[i]})
                if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not 0 <= a < masks.shape[1]:
                    raise ValueError(f"the agent returned action {a!r}: expected an action id in "
                                     f"0..{masks.shape[1] - 1}")
                a = memo[key] = int(a)
            out[i, a] = 1.0
        return out

    policy.one_at_a_time = True  # read by callers that would ask it about whole subtrees (agents/game_theory/lbr.py)
    return policy


def network_policy(model, batch: int = 1 << 16) -> Policy:
    """A trained :class:`agents.learned.policy_net.ActorCritic` as a :data:`Policy`: its masked softmax (the stochastic
    policy PPO learns; ``PolicyAgent`` plays its argmax), in fp32 on the model's device."""
    import torch  # torch: imported only where a network is measured, not by the tree's walks

    from agents.learned.policy_net import masked_logits  # torch, as above

    if not callable(getattr(model, "act_logits", None)):
        raise ValueError(f"expected an agents.learned.policy_net.ActorCritic, got {type(model).__name__}")
    device = next(model.parameters()).device

    def policy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.empty(masks.shape)
        with torch.no_grad():
            for i in range(0, len(obs), batch):
                o = torch.from_numpy(obs[i:i + batch]).to(device)
                m = torch.from_numpy(masks[i:i + batch].astype(bool)).to(device)
                logits = masked_logits(model.act_logits(o).float(), m)
                out[i:i + batch] = torch.softmax(logits.double(), dim=-1).cpu().numpy()
        out[masks == 0] = 0.0
        return out / out.sum(axis=1, keepdims=True)

    return policy


def tree_size(rules: RuleSet, dealer: int = 1) -> dict[str, int]:
    """The size of the whole game tree below every deal of ``rules`` with ``dealer`` dealing (the non-dealer leads,
    R1).

    Returns:
        ``{"deals", "nodes", "decisions", "terminals"}``: the deals (chance outcomes, :func:`deals`) and, summed over
        them, the nodes below and including each deal's first decision (decision nodes plus terminal nodes).

    Raises:
        ValueError: a ruleset other than ``schnapsen10``, or a dealer other than seat 0 or 1.
    """
    if dealer not in (0, 1):
        raise ValueError(f"dealer must be seat 0 or 1, got {dealer!r}")
    _check_rules(rules)
    R = rules_core.rule_table(rules)
    state = np.empty(STATE_SIZE, dtype=np.int64)
    stack = np.empty((_MAX_DEPTH + 1, STATE_SIZE), dtype=np.int64)
    legal = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    out = {"deals": 0, "nodes": 0, "decisions": 0, "terminals": 0}
    for order in deals(rules):
        rules_core.deal(state, R, order, dealer)
        nodes, decisions, terminals = _walk(state, R, stack, legal)
        out["deals"] += 1
        out["nodes"] += nodes
        out["decisions"] += decisions
        out["terminals"] += terminals
    return out


__all__ = ["DECISION", "REVEALED", "TERMINAL", "Tree", "agent_policy", "deals", "network_policy", "revealed_values",
           "search_agent_policy", "tree_size", "uniform_policy"]
