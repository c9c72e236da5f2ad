"""``LocalBestResponse``: a responder that knows the target's policy, for lower bounds on its exploitability.

After V. Lisy and M. Bowling, "Equilibrium Approximation Quality of Current No-Limit Poker Bots" (AAAI-17 workshop,
arXiv:1612.07547), adapted to Schnapsen. At each decision the responder

1. weighs the worlds consistent with what it saw by the target's probabilities of the actions the target took
   (:mod:`agents.search.inference`, the target's policy as the opponent model, not mixed, summed over every way
   the target's hidden draw may have come): the exact posterior over the worlds;
2. values each legal action by a walk of the hand in every world, from its information: at the target's decisions
   each action weighted by the target's probability of it in that world; at its own decisions, the best action
   for each of its observations (worlds it cannot tell apart share one choice); where no card is hidden from it
   any more (in ``schnapsen10`` after the draw of trick 1) or after ``lookahead`` decisions of the target, the
   exact value of the position by the compiled solver (:mod:`agents.search.solver_core`: both play perfectly);
3. plays the action of the best posterior value (ties: the lowest id).

It is a real strategy, so its expected result against the target is a lower bound on the target's best-response
value. Where the target plays perfectly once the cards are known (``pimc`` and ``expert`` do, in ``schnapsen10``:
``agents/game_theory/exact.py``) and the walk reaches every hidden-card decision, the responder's choice is a best
response's at every information set, and its value is the best-response value itself (``tests/test_lbr.py`` checks it
against :meth:`agents.game_theory.exact.Tree.nash_conv` on ``schnapsen10``).

The responder plays ``schnapsen10`` only: its walk covers the hand's hidden part there (trick 1 and hands closed
before it), and the exact solver values the rest in microseconds; on the larger decks both would need budgets that
this module does not have.
"""

from __future__ import annotations

import numpy as np

from agents.base import as_rules, legal_ids
from agents.search.inference import HandHistory, OpponentModel, WorldInference, world_rows
from agents.search.options import check_int
from agents.search.solver_core import CoreSolver
from agents.search.worlds import observation_groups
from schnapsen_env import encoding
from schnapsen_env.rules import GameState
from schnapsen_env.sampler import Determinizer

ME, TARGET = 0, 1


class LocalBestResponse:
    """The local best response to ``target`` (module docstring).

    Args:
        rules: a ``schnapsen10`` RuleSet (or the name).
        target: the target's policy, an :data:`agents.search.inference.OpponentModel` (observations and masks ->
            probabilities; e.g. :func:`agents.game_theory.exact.search_agent_policy` of an agent).
        seed: seed of the generator (the reading of an ambiguous trick-1 lead, :mod:`agents.search.inference`).
        lookahead: the most target decisions a walk expands before the solver values the position (default 8:
            every decision while cards are hidden in ``schnapsen10``).

    Raises:
        ValueError: another ruleset than ``schnapsen10``, a target that is not callable, ``lookahead`` not an int
            from 0 to 32.
    """

    name = "lbr"

    def __init__(self, rules, target: OpponentModel, seed: int | None = None, lookahead: int = 8) -> None:
        self.rules = as_rules(rules)
        if self.rules.name != "schnapsen10":
            raise ValueError(f"the local best response plays schnapsen10 only (see agents/search/lbr.py), got "
                             f"{self.rules.name!r}")
        if not callable(target):
            raise ValueError(f"target must be a policy: observations, masks -> probabilities, got {target!r}")
        check_int("lookahead", lookahead, 0, 32)
        self.target = target
        self.lookahead = int(lookahead)
        self.rng = np.random.default_rng(seed)
        self.inference = WorldInference(self.rules, target)
        self.solver = CoreSolver(self.rules, close_below_root=True)
        self.history = HandHistory(self.rules)
        #: The posterior value (game points) of every legal action at the last decision.
        self.last_values: dict[int, float] = {}

    def reset(self) -> None:
        self.history.clear()

    def act(self, observation) -> int:
        """The chosen legal action id (module docstring)."""
        legal = legal_ids(observation)
        self.history.observe(observation)
        action = int(legal[0]) if legal.size == 1 else self._choose(observation)
        self.history.acted(action)
        return action

    # ------------------------------------------------------------------ decisions
    def _choose(self, observation) -> int:
        det = Determinizer(observation, self.rules)
        if det.unseen == 0:  # nothing hidden: the one world is the true position, solved exactly
            self.solver.clear()
            value, action = self.solver.solve(det.sample(self.rng))
            self.last_values = {action: value}
            return int(action)
        states, weights = self.posterior(observation)
        values = self._my_values(states, weights, self.lookahead)
        total = float(np.sum(weights))
        self.last_values = {a: v / total for a, v in values.items()}
        return max(values, key=lambda a: (values[a], -a))

    def posterior(self, observation) -> tuple[list[GameState], np.ndarray]:
        """The worlds of this decision with positive posterior weight, as whole states (the responder seat 0), and
        their weights (float64 ``(W,)``, unnormalised): every world is enumerated (``schnapsen10`` has at most a
        few dozen)."""
        unseen, k = world_rows(observation, self.rules)
        rows = _every_world(unseen, k, self.rules.stock0 > 0)
        replay = self.history.replay()
        if replay is None:
            raise ValueError("the responder's history cannot be read: it must be shown every decision of the hand")
        weights, states = self.inference.weighed_states(replay, rows, k, self.rng, every=True)
        keep = [w for w in range(len(rows)) if weights[w] > 0 and states[w] is not None]
        if not keep:
            raise ValueError("no world explains the target's actions under its policy: is it the target's policy?")
        return [states[w] for w in keep], weights[keep]

    def _leaf(self, s: GameState) -> float:
        """Game points for the responder: the result, or the solver's value (both play perfectly)."""
        if s.result is not None:
            points = s.result.game_points
            return 0.0 if s.result.winner is None else float(points if s.result.winner == ME else -points)
        self.solver.clear()
        value, _ = self.solver.solve(s)
        return value if s.to_move == ME else -value

    def _walk(self, states: list[GameState], weights: np.ndarray, budget: int) -> float:
        """The weighted sum of the responder's values of ``states`` (one public history, so one player to move)."""
        s0 = states[0]
        if s0.result is not None or _revealed(s0) or budget < 0:
            return float(sum(w * self._leaf(s) for s, w in zip(states, weights)))
        if s0.to_move != ME:
            return self._target_walk(states, weights, budget)
        total = 0.0
        for members in observation_groups(states, ME):  # worlds the responder cannot tell apart share one choice
            values = self._my_values([states[i] for i in members], weights[members], budget)
            total += max(values.values())
        return total

    def _my_values(self, states: list[GameState], weights: np.ndarray, budget: int) -> dict[int, float]:
        """The weighted value of each legal action at a decision of the responder (``states`` share its
        observation)."""
        values = {}
        for a in states[0].legal_actions():
            children = []
            for s in states:
                c = s.copy()
                c.push(a)
                children.append(c)
            values[a] = self._walk(children, weights, budget)
        return values

    def _target_walk(self, states: list[GameState], weights: np.ndarray, budget: int) -> float:
        masks = np.stack([s.action_mask() for s in states])
        obs = np.stack([encoding.observation(s, TARGET) for s in states])
        probs = np.asarray(self.target(obs, masks), dtype=np.float64)
        total = 0.0
        for a in range(self.rules.n_actions):
            take = np.flatnonzero((probs[:, a] > 0) & (masks[:, a] > 0))
            if take.size == 0:
                continue
            children = []
            for i in take:
                c = states[i].copy()
                c.push(a)
                children.append(c)
            total += self._walk(children, weights[take] * probs[take, a], budget - 1)
        return total


def _revealed(s: GameState) -> bool:
    """No card hidden from either player (the stock drawn out): the solver's value is exact for perfect players."""
    return not s.stock


def _every_world(unseen: np.ndarray, k: int, _stock: bool) -> np.ndarray:
    """Every world of a ``schnapsen10`` decision: each split of ``unseen`` into ``k`` hidden cards and the face-down
    stock (one card at most in ``schnapsen10``, so its order is the split), int64 ``(W, u)``."""
    import itertools

    u = len(unseen)
    rows = []
    for hand in itertools.combinations(range(u), k):
        rest = [i for i in range(u) if i not in hand]
        for order in itertools.permutations(rest):
            rows.append(unseen[list(hand) + list(order)])
    return np.array(rows, dtype=np.int64).reshape(len(rows), u)


def play_hand(responder: LocalBestResponse, target, order, seat: int,
              rng: np.random.Generator | None = None) -> float:
    """One hand of ``responder`` in ``seat`` against ``target`` on the deal ``order`` (card ids in the deck's
    order of :meth:`GameState.from_deck`, seat 1 dealing, as :func:`agents.game_theory.exact.deals`).

    ``target`` is a batched policy ``(obs (N, O) float32, masks (N, A) bool) -> probabilities (N, A)``; its action
    is drawn from its probabilities with ``rng``, or, with ``rng`` None, its argmax (the target must then be
    deterministic). Returns the responder's game points (negative: the target's; 0 for a tie).

    Raises:
        ValueError: ``rng`` is None and the target puts less than all its probability on one action.
        IllegalActionError: either side chose an illegal action.
    """
    rules = responder.rules
    s = GameState.from_deck(rules, [rules.deck.codes[int(c)] for c in order], 1)
    responder.reset()
    while s.result is None:
        obs = {"observation": encoding.observation(s, s.to_move), "action_mask": s.action_mask()}
        if s.to_move == seat:
            a = responder.act(obs)
        else:
            p = target(obs["observation"][None], obs["action_mask"][None])[0]
            if rng is not None:
                a = int(rng.choice(len(p), p=p))
            elif np.isclose(p.max(), 1.0):
                a = int(np.argmax(p))
            else:
                raise ValueError("the target is not deterministic: pass rng to draw its actions")
        s.step(a)
    r = s.result
    return 0.0 if r.winner is None else float(r.game_points if r.winner == seat else -r.game_points)


__all__ = ["LocalBestResponse", "play_hand"]
