"""``LocalBestResponse``: a responder that knows the target's policy, for lower bounds on its exploitability.

After V. Lisy and M. Bowling, "Equilibrium Approximation Quality of Current No-Limit Poker Bots" (AAAI-17 workshop,
arXiv:1612.07547), adapted to Schnapsen. At each decision the responder

1. weighs the worlds consistent with what it saw by the target's probabilities of the actions the target took
   (:mod:`agents.search.inference`, the target's policy as the opponent model, not mixed, summed over every way
   the target's hidden draw may have come): the exact posterior over the worlds;
2. values each legal action by a walk of the hand in every world, from its information: at the target's decisions
   each action weighted by the target's probability of it in that world; at its own decisions, the best action
   for each of its observations (worlds it cannot tell apart share one choice); where no card is hidden from
   either player any more (in ``schnapsen10`` after the draw of trick 1), the exact value of its best response to
   the target's policy from there (``revealed="policy"``: the target asked at every decision of the subtree) or of
   perfect play by both (``"minimax"``, the compiled solver of :mod:`agents.search.solver_core`); after
   ``lookahead`` decisions of the target with cards still hidden, the solver's value of the world;
3. plays the action of the best posterior value (ties: the lowest id).

It is a real strategy, so its expected result against the target is a lower bound on the target's best-response
value. Where the walk reaches every hidden-card decision (``schnapsen10``) and the revealed positions are valued
as the target plays them (by its policy, or by the solver for a target that plays them perfectly, as ``pimc`` and
``expert`` do), the responder's choice is a best response's at every information set, and its value is the
best-response value itself (``tests/test_lbr.py`` checks it against :meth:`agents.game_theory.exact.Tree.nash_conv`
on ``schnapsen10``, for ``expert``, ``pimc``, the heuristic and the shipped policy).

Budgets for the larger decks. On ``schnapsen10`` every world is enumerated (a few dozen) and the walk reaches every
decision with hidden cards. On ``schnapsen20`` and ``sixtysix24`` the worlds are too many and the hand too long, so
``worlds=N`` draws ``N`` worlds uniformly among those of the decision's unseen cards and weighs each by the target's
likelihood of its actions (one uniformly drawn completion each, :meth:`WorldInference.weighed_states`: importance
sampling of the same posterior); worlds the target's actions rule out (a deterministic target rules out most) are
replaced by further draws, up to ``max_draws`` batches (where none is allowed, the drawn worlds consistent with the
history count alike, and where none is consistent, the drawn worlds alike, as plain PIMC). With a small ``lookahead`` (0: the target's reply) the walk
stops early and the solver values each world as if the cards were known from there on. The responder is still a real
strategy (it reads only its own observations, RULES.md R27, and the target's policy), so its measured result remains
a lower bound; only how close the bound gets depends on the budgets (``benchmarks/local_best_response.py``
calibrates the sampled responder on ``schnapsen10`` against the exact values).
"""

from __future__ import annotations

import numpy as np

from agents.base import as_rules, legal_ids
from agents.game_theory import exact
from agents.search.inference import HandHistory, OpponentModel, WorldInference, world_rows
from agents.search.options import check_int
from agents.search.solver_core import CoreSolver
from agents.search.worlds import draw_worlds, observation_groups, world_setup, world_state
from schnapsen_env import encoding
from schnapsen_env.rules import GameState
from schnapsen_env.rules_core import rule_table
from schnapsen_env.sampler import Determinizer
from schnapsen_env.state_layout import from_game_state

ME, TARGET = 0, 1
#: Worlds a decision weighs on the rulesets whose worlds are not enumerated, where ``worlds`` is not given.
DEFAULT_WORLDS = 32


def target_policy(target, rules) -> OpponentModel:
    """The target's policy as the responder models it: a callable policy as it is; an agent spec (a registered name,
    ``name:key=value``, a ``.pt`` checkpoint) built with seed 0 and read as it plays: a learned policy that plays
    greedily (the shipped ones do) by the argmax of its probabilities over the legal actions (one-hot), one that
    samples by its probabilities; an agent with batched decisions (``heuristic``) by them
    (:func:`agents.game_theory.exact.agent_policy`); any other agent (``pimc``, ``expert``) one observation at a
    time, with its generator seeded from the observation (:func:`agents.game_theory.exact.search_agent_policy`). Where
    the agent as played differs from the model (``expert`` in the arena draws its worlds from one running
    generator), the responder's model of it is inexact, but its result against the agent is still a lower bound on
    that agent's exploitability, as any strategy's is.

    Raises:
        ValueError: ``target`` None, or an agent spec that cannot be built for ``rules``.
    """
    if target is None:
        raise ValueError("the local best response needs its target: target=AGENT (a registered name or a .pt "
                         "checkpoint), e.g. lbr:target=trained-220m")
    if callable(target) and not hasattr(target, "act"):
        return target
    from schnapsen_env.agent_specs import build, resolve_agent  # the registry: only where a spec names the target

    label, factory = resolve_agent(target, rules)
    agent = build(factory, label, seed=0)
    probabilities = getattr(agent, "probabilities_batch", None)
    if callable(probabilities):
        if not getattr(agent, "greedy", False):
            return probabilities

        def greedy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
            p = np.where(np.asarray(masks) > 0, np.asarray(probabilities(obs, masks), dtype=np.float64), -1.0)
            out = np.zeros(p.shape)
            out[np.arange(len(p)), p.argmax(axis=1)] = 1.0  # the first of equal ones, as PolicyAgent.act
            return out
        return greedy
    if callable(getattr(agent, "act_batch", None)):
        return exact.agent_policy(agent)
    return exact.search_agent_policy(agent)  # one_at_a_time: too slow to ask about whole revealed subtrees


class LocalBestResponse:
    """The local best response to ``target`` (module docstring).

    Registered as the agent ``lbr`` (``schnapsen-arena lbr:target=trained-220m trained-220m``): the arena's result
    of the pair is the lower bound, with its 95% CI.

    Args:
        rules: a RuleSet (or the name) of any ruleset.
        target: the target: an agent spec (a registered name such as ``"trained-220m"`` or ``"expert"``, or a ``.pt``
            checkpoint), modelled by :func:`target_policy`, or its policy itself, an
            :data:`agents.search.inference.OpponentModel` (observations and masks -> probabilities).
        seed: seed of the generator (the reading of an ambiguous trick-1 lead, :mod:`agents.search.inference`).
        lookahead: the most target decisions a walk expands before the solver values the position; None
            (default): 8 on ``schnapsen10`` (every decision while cards are hidden), 0 on the larger decks (the
            target's reply), where the walk's cost grows with the product of both players' legal actions.
        worlds: how many worlds with positive posterior weight a decision weighs, drawn as the module docstring
            says; None (default): every world, enumerated, on ``schnapsen10`` (a few dozen at most),
            :data:`DEFAULT_WORLDS` drawn on the larger decks.
        max_draws: with ``worlds``, the most batches of ``worlds`` uniform draws made to find worlds the target's
            actions allow; where none does, the worlds consistent with the history are weighed alike.
        revealed: how the positions with every card known (the stock exhausted, never closed) are valued at the
            walk's leaves and decided: ``"policy"``: the responder's exact best response to the target's policy
            there (:func:`agents.game_theory.exact.revealed_values`, the target asked at every decision of the
            subtree), ``"minimax"``: both play perfectly (the compiled solver; exact against ``pimc`` and
            ``expert``, which do); None (default): ``"policy"`` for a target asked in batches (a network, the
            heuristic) on the rulesets of 5-card hands (their revealed subtrees hold at most some ten thousand
            decisions), else ``"minimax"`` (a search agent, :func:`target_policy`, is asked one observation at a
            time; ``sixtysix24``'s subtrees hold up to some hundred thousand decisions).
        depth: the horizon of the solver's values at the walk's leaves, in completed tricks (its ``evaluate`` scores
            the horizon); None (default): to the end of the hand. On ``sixtysix24`` a solve to the end from early in
            the hand takes up to seconds (millions of nodes), so a hand takes seconds to a minute there without one.

    Raises:
        ValueError: no target, a target that is neither a policy nor an agent spec of these rules, ``lookahead``
            not None or an int from 0 to 32, ``worlds`` not None or an int from 1 to 10,000, ``max_draws`` not an
            int from 1 to 1,000, ``depth`` not None or an int from 1 to 12, ``revealed`` not None, ``"policy"``
            or ``"minimax"``.
    """

    name = "lbr"

    def __init__(self, rules, target: str | OpponentModel | None = None, seed: int | None = None,
                 lookahead: int | None = None, worlds: int | None = None, max_draws: int = 8,
                 depth: int | None = None, revealed: str | None = None) -> None:
        self.rules = as_rules(rules)
        small = self.rules.name == "schnapsen10"
        if lookahead is not None:
            check_int("lookahead", lookahead, 0, 32)
        if worlds is not None:
            check_int("worlds", worlds, 1, 10_000)
        check_int("max_draws", max_draws, 1, 1_000)
        if depth is not None:
            check_int("depth", depth, 1, 12)
        self.depth = None if depth is None else int(depth)
        if revealed not in (None, "policy", "minimax"):
            raise ValueError(f"revealed must be 'policy' or 'minimax', got {revealed!r}")
        self.target = target_policy(target, self.rules)
        if revealed is None:
            one_at_a_time = getattr(self.target, "one_at_a_time", False)
            revealed = "policy" if self.rules.hand_size <= 5 and not one_at_a_time else "minimax"
        self.revealed = revealed
        self._R = rule_table(self.rules)
        self.lookahead = int(lookahead) if lookahead is not None else (8 if small else 0)
        self.worlds = int(worlds) if worlds is not None else (None if small else DEFAULT_WORLDS)
        self.max_draws = int(max_draws)
        #: Per decision of the last hand with worlds drawn: how many uniform draws it took, and how many of them the
        #: target's actions allowed (the acceptance of the importance sampler).
        self.draws: list[tuple[int, int]] = []
        #: Decisions of the last hand whose worlds the target's actions did not weigh: ``"consistent"`` (the worlds
        #: consistent with the history, alike) and ``"uniform"`` (drawn worlds, alike; :meth:`_drawn`).
        self.fallbacks = {"consistent": 0, "uniform": 0}
        self.rng = np.random.default_rng(seed)
        self.inference = WorldInference(self.rules, self.target)
        self._consistency = WorldInference(self.rules)  # history only: the fallback where the target allows no draw
        self.solver = CoreSolver(self.rules, close_below_root=True)
        self.history = HandHistory(self.rules)
        #: The posterior value (game points) of every legal action at the last decision.
        self.last_values: dict[int, float] = {}

    def reset(self) -> None:
        self.history.clear()
        self.draws = []
        self.fallbacks = {"consistent": 0, "uniform": 0}

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
        if det.unseen == 0:  # nothing hidden: the one world is the true position, valued exactly
            s = det.sample(self.rng)
            if self.revealed == "minimax" or not _revealed(s):
                self.solver.clear()
                value, action = self.solver.solve(s)
                self.last_values = {action: value}
                return int(action)
            values = self._my_values([s], np.ones(1), 0)  # each child revealed or over: valued by _leaves
            self.last_values = dict(values)
            return max(values, key=lambda a: (values[a], -a))
        states, weights = self.posterior(observation)
        values = self._my_values(states, weights, self.lookahead)
        total = float(np.sum(weights))
        self.last_values = {a: v / total for a, v in values.items()}
        return max(values, key=lambda a: (values[a], -a))

    def posterior(self, observation) -> tuple[list[GameState], np.ndarray]:
        """The worlds of this decision with positive posterior weight, as whole states (the responder seat 0), and
        their weights (float64 ``(W,)``, unnormalised): with ``worlds`` None every world, enumerated, with exact
        weights; else at most ``worlds`` drawn worlds with their estimated weights (module docstring).

        Raises:
            ValueError: the history cannot be read (the responder was not shown every decision of the hand), or
                (every world enumerated) no world explains the target's actions (it is not the target's policy).
        """
        replay = self.history.replay()
        if replay is None:
            raise ValueError("the responder's history cannot be read: it must be shown every decision of the hand")
        unseen, k = world_rows(observation, self.rules)
        if self.worlds is None:
            rows = _every_world(unseen, k, self.rules.stock0 > 0)
            weights, states = self.inference.weighed_states(replay, rows, k, self.rng, every=True)
            keep = [w for w in range(len(rows)) if weights[w] > 0 and states[w] is not None]
            if not keep:
                raise ValueError("no world explains the target's actions under its policy: is it the target's "
                                 "policy?")
            return [states[w] for w in keep], weights[keep]
        return self._drawn(observation, replay, unseen, k)

    def _drawn(self, observation, replay, unseen: np.ndarray, k: int) -> tuple[list[GameState], np.ndarray]:
        """Up to ``worlds`` uniformly drawn worlds the target's actions allow, with their likelihoods. Where no draw
        is allowed (a deterministic target, or a history that few worlds explain: a void shown after the close), the
        drawn worlds consistent with the history, weighed alike; where none is, the drawn worlds as plain PIMC weighs
        them, ignoring the history (the responder stays a strategy: it only chooses worse). :attr:`fallbacks`
        counts the last two."""
        states: list[GameState] = []
        weights: list[float] = []
        consistent: list[GameState] = []
        drawn = 0
        for _ in range(self.max_draws):  # a world drawn twice is completed twice: two estimates of its weight
            batch = draw_worlds(unseen, self.worlds, self.rng)
            drawn += len(batch)
            w, st = self.inference.weighed_states(replay, batch, k, self.rng)
            for i in range(len(batch)):
                if st[i] is not None and w[i] > 0 and len(states) < self.worlds:
                    states.append(st[i])
                    weights.append(float(w[i]))
            if len(states) >= self.worlds:
                break
            if not states and len(consistent) < self.worlds:
                got = self._consistency.weighed_states(replay, batch, k, self.rng)[1]
                consistent += [g for g in got if g is not None][: self.worlds - len(consistent)]
        self.draws.append((drawn, len(states)))
        if states:
            return states, np.asarray(weights)
        if consistent:
            self.fallbacks["consistent"] += 1
            return consistent, np.ones(len(consistent))
        self.fallbacks["uniform"] += 1
        template = world_setup(observation, self.rules)[0]
        return [world_state(template, row, k, self.rules) for row in batch], np.ones(len(batch))

    def _leaves(self, states: list[GameState]) -> np.ndarray:
        """Game points for the responder (float64 ``(N,)``): the result of a finished hand; a revealed position's
        exact best-response value against the target's policy (``revealed="policy"``, all of them in one walk of
        their subtrees); else the solver's value (both play perfectly, to ``depth``)."""
        out = np.empty(len(states))
        subtrees = []
        for i, s in enumerate(states):
            if s.result is not None:
                points = s.result.game_points
                out[i] = 0.0 if s.result.winner is None else float(points if s.result.winner == ME else -points)
            elif self.revealed == "policy" and _revealed(s):
                subtrees.append(i)
            else:
                self.solver.clear()
                value, _ = self.solver.solve(s, None if _revealed(s) else self.depth)
                out[i] = value if s.to_move == ME else -value
        if subtrees:
            rows = np.stack([from_game_state(states[i]) for i in subtrees])
            out[subtrees] = exact.revealed_values(rows, self.rules, self.target, R=self._R)[:, ME]
        return out

    def _walk(self, states: list[GameState], weights: np.ndarray, budget: int) -> float:
        """The weighted sum of the responder's values of ``states`` (one public history, so one player to move)."""
        s0 = states[0]
        if s0.result is not None or _revealed(s0) or budget < 0:
            return float(self._leaves(states) @ weights)
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
    """No card hidden from either player: the stock drawn out in a hand never closed (RS2)."""
    return not s.stock and s.closed_by < 0


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


__all__ = ["DEFAULT_WORLDS", "LocalBestResponse", "play_hand", "target_policy"]
