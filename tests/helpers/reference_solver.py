"""The readable reference solver: alpha-beta for the perfect-information game (all cards known), in plain Python
on :class:`~schnapsen_env.rules.GameState`. A test helper: the compiled solver (:mod:`agents.search.solver_core`),
which the search players use, is tested against it (``tests/test_solver_core.py``), and ``benchmarks/solver.py``
and ``benchmarks/solver_core.py`` time it.

Once the stock is exhausted every card is known to both players (the unseen cards are exactly the
opponent's hand), so Schnapsen becomes a perfect-information game and :func:`solve` plays it
perfectly. With an open or closed stock it solves one *determinisation* (a sampled deal), which is
what :class:`agents.search.pimc.PIMCAgent` averages over (Perfect Information Monte Carlo; Wisser,
"An Expert-Level Card Playing Agent Based on a Variant of Perfect Information Monte Carlo
Sampling", IJCAI 2015).

Values are game points (-3..3) for the player to move at the root: + when that player wins the hand.
With ``depth`` (in completed tricks) the search stops there and calls :func:`evaluate`, a heuristic
estimate in the same unit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schnapsen_env.rules import GameState

INF = 1000.0


def evaluate(s: GameState, root: int) -> float:
    """Heuristic value of a non-final state for seat ``root``, in game points, within (-2, 2).

    ``(counted(root) - counted(opp) + 0.5 * (pending(root) - pending(opp))) / 33``, clipped to
    ±1.9: a 33-point lead (half of 66) is worth about one game point, and no estimate reaches the
    2 or 3 points that only a certain win can promise. Used only at the depth limit.
    """
    opp = 1 - root
    diff = s.counted(root) - s.counted(opp) + 0.5 * (s.pending_marriage_points(root) - s.pending_marriage_points(opp))
    v = diff / 33.0
    return max(-1.9, min(1.9, v))


def terminal_value(s: GameState, root: int) -> float:
    """Game points won (+) or lost (-) by ``root`` in a finished hand."""
    r = s.result
    if r.winner is None:
        return 0.0
    return float(r.game_points if r.winner == root else -r.game_points)


@dataclass
class Solver:
    """Alpha-beta search with a transposition table over :class:`GameState` push/pop.

    Attributes:
        nodes: nodes visited by the last call (for benchmarks).
        table: the transposition table (cleared by :meth:`clear`).
    """

    nodes: int = 0
    table: dict = field(default_factory=dict)
    #: Search closed-stock positions to the end, ignoring the horizon (a failed close costs 2-3 game
    #: points, which a point-difference horizon cannot see).
    exact_after_close: bool = True
    #: Consider closing below the root too. Off by default for speed: a close inside the search is
    #: then searched to the end for every sample, which made PIMC several times slower for little gain.
    close_below_root: bool = False

    def clear(self) -> None:
        self.table.clear()

    def solve(self, s: GameState, depth: int | None = None) -> tuple[float, int]:
        """Value and best action of ``s`` for the player to move.

        Args:
            s: a state with no result (it is restored before returning).
            depth: search horizon in completed tricks; None searches to the end (exact).

        Returns:
            ``(value, action)``: value in game points for ``s.to_move``; ``action`` an action id.

        Raises:
            ValueError: the hand is already over.
        """
        if s.result is not None:
            raise ValueError("the hand is over: nothing to solve")
        self.nodes = 0
        root = s.to_move
        d = 10_000 if depth is None else depth
        value, action = self._search(s, root, -INF, INF, d, at_root=True)
        return value, action

    def action_values(self, s: GameState, depth: int | None = None) -> dict[int, float]:
        """Exact (or depth-limited) value of every legal action for the player to move."""
        if s.result is not None:
            raise ValueError("the hand is over: nothing to solve")
        self.nodes = 0
        root = s.to_move
        d = 10_000 if depth is None else depth
        out = {}
        for a in s.legal_actions():
            tricks = s.tricks[0] + s.tricks[1]
            s.push(a)
            nd = d - (s.tricks[0] + s.tricks[1] - tricks)
            if s.closed_by >= 0 and self.exact_after_close:
                nd = 10_000
            out[a] = self._value(s, root, -INF, INF, nd)
            s.pop()
        return out

    def _value(self, s: GameState, root: int, alpha: float, beta: float, depth: int) -> float:
        if s.result is not None:
            return terminal_value(s, root)
        if depth <= 0:
            return evaluate(s, root)
        return self._search(s, root, alpha, beta, depth)[0]

    def _key(self, s: GameState, root: int) -> tuple:
        return (root, s.hands[0], s.hands[1], s.stock, s.to_move, s.table, s.closed_by, s.closing_snapshot,
                s.card_points[0], s.card_points[1], s.marriage_points[0], s.marriage_points[1],
                s.tricks[0] > 0, s.tricks[1] > 0, s.announced)

    def _search(self, s: GameState, root: int, alpha: float, beta: float, depth: int,
                at_root: bool = False) -> tuple[float, int]:
        self.nodes += 1
        key = self._key(s, root)
        entry = self.table.get(key)
        tt_move = -1
        if entry is not None:
            e_depth, lower, upper, tt_move = entry
            if e_depth >= depth:
                if lower >= beta:
                    return lower, tt_move
                if upper <= alpha:
                    return upper, tt_move
                if lower == upper:
                    return lower, tt_move
                alpha = max(alpha, lower)
                beta = min(beta, upper)
        a0, b0 = alpha, beta
        maximizing = s.to_move == root
        moves = _ordered(s, tt_move)
        if not at_root and not self.close_below_root and len(moves) > 1:
            close = s.rules.close_action
            if close in moves:
                moves.remove(close)
        best = -INF if maximizing else INF
        best_move = moves[0]
        tricks = s.tricks[0] + s.tricks[1]
        for a in moves:
            s.push(a)
            if s.result is not None:
                v = terminal_value(s, root)
            else:
                nd = depth - (s.tricks[0] + s.tricks[1] - tricks)
                if s.closed_by >= 0 and self.exact_after_close:
                    nd = 10_000
                v = evaluate(s, root) if nd <= 0 else self._search(s, root, alpha, beta, nd)[0]
            s.pop()
            if maximizing:
                if v > best:
                    best, best_move = v, a
                    if v > alpha:
                        alpha = v
            else:
                if v < best:
                    best, best_move = v, a
                    if v < beta:
                        beta = v
            if alpha >= beta:
                break
        lower, upper = -INF, INF
        if best <= a0:
            upper = best
        elif best >= b0:
            lower = best
        else:
            lower = upper = best
        if entry is not None and entry[0] == depth:
            lower = max(lower, entry[1])
            upper = min(upper, entry[2])
        self.table[key] = (depth, lower, upper, best_move)
        return best, best_move


def _ordered(s: GameState, first: int) -> list[int]:
    """Legal actions, best guesses first: the TT move, claim, marriages, then cards by points."""
    n = s.deck.size
    pts = s.deck.points
    acts = s.legal_actions()
    acts.sort(key=lambda a: -(100 if a >= n else pts[a]))
    if first in acts:
        acts.remove(first)
        acts.insert(0, first)
    return acts


def solve(s: GameState, depth: int | None = None) -> tuple[float, int]:
    """Convenience: ``Solver().solve(s, depth)``."""
    return Solver().solve(s, depth)
