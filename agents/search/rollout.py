"""``RolloutAgent``: Monte Carlo rollouts over determinisations, modeled on the course bot "rdeep".

The VU Amsterdam Schnapsen course platform's ``rdeep`` bot scores each legal move by sampling 16 "assumptions"
(determinisations) of the hidden cards and finishing each with random moves for a depth of 4, scored by the
share of points. This agent does the same over the exact rules of :mod:`schnapsen_env`:

* ``n_samples`` determinisations are drawn once per decision from the observation
  (:class:`schnapsen_env.sampler.Determinizer`: uniform over the unseen cards, honouring what is known), and
  every legal action is tried on the *same* determinisations (common random numbers, which sharpen the
  comparison between actions).
* From each (determinisation, action) pair, both players play uniformly random legal actions until ``depth``
  more tricks are completed (counted from the decision; the trick the action belongs to counts) or the hand
  ends.
* Score, for the agent, in ``[0, 1]``:

  - the hand is still running: the share of card points, ``counted(me) / (counted(me) + counted(opp))``
    (counted points: cards won, marriages once a trick is won, R14; 0.5 when both are 0);
  - the hand has ended: ``0.5 + g / 6`` for ``g`` game points won, ``0.5 - g / 6`` for ``g`` lost
    (1 game point = 0.667 / 0.333, 3 game points = 1 / 0), 0.5 for a ``sixtysix24`` tie.

* The action with the best mean score is played (ties: lowest action id).

The worlds are drawn with :func:`agents.search.worlds.draw_worlds` and the playouts run on the compiled core
(:mod:`agents.search.rollout_core`), every random choice from the agent's seeded ``numpy.random.Generator`` (the agent is
reproducible from ``seed=``). :func:`rollout_score` and :func:`score` are the same playout on
:class:`GameState`, for reading and for tests.
"""

from __future__ import annotations

import numpy as np

from agents.base import as_rules, best_action, legal_ids
from agents.search.options import check_int
from agents.search.rollout_core import rollout_totals
from agents.search.worlds import draw_worlds, world_setup
from schnapsen_env.jit import bitgen_addresses
from schnapsen_env.rules import GameState
from schnapsen_env.rules_core import legal_bits
from schnapsen_env.state_layout import rule_table


def _random_bit(bits: int, rng: np.random.Generator) -> int:
    """A uniformly random set bit (its index) of a non-zero int bit set."""
    k = int(rng.integers(bits.bit_count()))
    for _ in range(k):
        bits &= bits - 1
    return (bits & -bits).bit_length() - 1


def rollout_score(s: GameState, me: int, target: int, rng: np.random.Generator) -> float:
    """Play ``s`` on by uniformly random legal actions until ``target`` tricks are completed in the hand (or it
    ends), and score it for seat ``me``: the readable twin of :func:`agents.search.rollout_core.rollout_totals`' playouts
    (same distribution, another random stream; ``tests/test_agents.py`` compares them).

    The state is restored (pushes are popped) before returning. See the module docstring for the score.
    """
    pushed = 0
    while s.result is None and s.tricks[0] + s.tricks[1] < target:
        s.push(_random_bit(s.legal_bits(), rng))
        pushed += 1
    value = score(s, me)
    for _ in range(pushed):
        s.pop()
    return value


def score(s: GameState, me: int) -> float:
    """The rollout score of a state for seat ``me`` in ``[0, 1]`` (module docstring)."""
    res = s.result
    if res is not None:
        if res.winner is None:
            return 0.5
        g = res.game_points / 6.0
        return 0.5 + g if res.winner == me else 0.5 - g
    mine, theirs = s.counted(me), s.counted(1 - me)
    total = mine + theirs
    return 0.5 if total == 0 else mine / total


class RolloutAgent:
    """Random rollouts from sampled determinisations ("rdeep", see the module docstring).

    Args:
        rules: the env's RuleSet (knobs included) or a ruleset name (required, see :mod:`agents.base`).
        n_samples: determinisations per decision (rdeep: 16).
        depth: rollout length in completed tricks (rdeep: 4).
        seed: seed of the agent's ``numpy.random.Generator``.

    Raises:
        ValueError: ``n_samples`` not an int from 1 to 100,000, or ``depth`` not an int from 1 to 30.
    """

    name = "rollout"

    def __init__(self, rules, n_samples: int = 16, depth: int = 4, seed: int | None = None) -> None:
        check_int("n_samples", n_samples, 1, 100_000)
        check_int("depth", depth, 1, 30)
        self.rules = as_rules(rules)
        self.n_samples = n_samples
        self.depth = depth
        self.rng = np.random.default_rng(seed)
        self._R = rule_table(self.rules)

    def reset(self) -> None:
        pass

    def action_values(self, observation: dict) -> dict[int, float]:
        """Mean rollout score (``[0, 1]``, for the agent) of every legal action.

        Raises:
            InvalidPositionError: an observation whose card counts are inconsistent. ValueError: an action mask
                that does not mark exactly the observation's legal actions.
        """
        actions = legal_ids(observation).astype(np.int64)
        template, unseen, k, _ = world_setup(observation, self.rules)
        if sum(1 << int(a) for a in actions) != legal_bits(template, self._R):
            raise ValueError(f"action_mask must mark exactly the legal actions of the observation ({self.rules.name}),"
                             f" got {actions.tolist()}")
        # Stock exhausted: every world is the true position, only the rollouts are random.
        worlds = draw_worlds(unseen, self.n_samples, self.rng)
        totals = np.zeros(len(actions), dtype=np.float64)
        fn, state = bitgen_addresses(self.rng)
        rollout_totals(template, worlds, k, self._R, actions, self.depth, fn, state, totals)
        return {int(a): float(v) / self.n_samples for a, v in zip(actions, totals)}

    def act(self, observation: dict) -> int:
        """The legal action with the best mean rollout score (ties: lowest id)."""
        legal = legal_ids(observation)
        if legal.size == 1:
            return int(legal[0])
        return best_action(self.action_values(observation))
