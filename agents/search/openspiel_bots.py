"""OpenSpiel's search bots as agents: ``openspiel-ismcts`` and ``openspiel-mcts``, strength anchors nobody on this
project wrote. They need the optional extra ``openspiel`` (``bash scripts/bootstrap.sh --extras openspiel``).

Both search the OpenSpiel game of :mod:`schnapsen_env.openspiel` (the project's engine) from the agent's
observation only (the agent contract, :mod:`agents.base`): each decision starts from one determinisation of the
observation (:class:`schnapsen_env.sampler.Determinizer`, the agent as seat 0), loaded with
:meth:`SchnapsenGame.new_state_from`.

* ``openspiel-ismcts``: OpenSpiel's information-set MCTS (Cowling, Powley and Whitehouse 2012),
  ``open_spiel.python.algorithms.ismcts.ISMCTSBot``, with OpenSpiel's random-rollout evaluator
  (``open_spiel.python.algorithms.mcts.RandomRolloutEvaluator``). Every simulation deals the cards the agent has
  not seen anew (:meth:`SchnapsenState.resample_from_infostate`), uniformly as the project's sampler does (the
  observation does not hold the order of play, so no inference from the opponent's past plays), and walks one
  tree of information sets. Default
  budget: ``simulations=200`` per decision, ``uct_c=2.0``, one rollout per leaf, the most visited action.
* ``openspiel-mcts``: OpenSpiel's MCTS (``open_spiel.python.algorithms.mcts.MCTSBot``) on ``worlds``
  determinisations (perfect-information Monte Carlo): ``simulations // worlds`` simulations per world, root visit
  counts summed over the worlds, the most visited action (ties: the lowest id). Default: 200 simulations over 4
  worlds.

OpenSpiel's C++ bots (``pyspiel.ISMCTSBot``, ``pyspiel.MCTSBot``) crash (segmentation fault) on Python games in
``open_spiel`` 2.0.2, OpenSpiel's own ``python_tic_tac_toe`` included, and cannot resample a Python state; hence
the Python implementations, which OpenSpiel ships as ports of the C++ ones.

All randomness comes from ``seed``: the agent's ``numpy.random.Generator`` draws the determinisations and the
resampled worlds, and seeds the ``numpy.random.RandomState`` objects that OpenSpiel's bots and evaluator take.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from agents.base import as_rules, legal_ids
from agents.search.options import check_int
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.sampler import Determinizer

#: The registered names of these agents (:data:`agents.OPENSPIEL_AGENTS`).
OPENSPIEL_NAMES = ("openspiel-ismcts", "openspiel-mcts")
#: What to install when OpenSpiel is missing.
INSTALL_HINT = ("bash scripts/bootstrap.sh --extras openspiel from a clone of this project (or, in another "
                "environment, pip install -e '.[openspiel]' from the clone, or pip install open_spiel)")


def openspiel_available() -> bool:
    """Whether ``pyspiel`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec("pyspiel") is not None
    except (ImportError, ValueError):  # a module blocked in sys.modules, or a broken installation
        return False


def _require_openspiel(name: str):
    """Import and return ``(schnapsen_env.openspiel, ismcts, mcts)``.

    Raises:
        ImportError: OpenSpiel is not installed; the message says how to install it.
    """
    try:
        from open_spiel.python.algorithms import ismcts, mcts

        from schnapsen_env import openspiel  # pyspiel: imported only where an OpenSpiel bot plays (optional extra)
    except ImportError as e:
        raise ImportError(f"agent {name!r} needs OpenSpiel: {INSTALL_HINT} ({e})") from e
    return openspiel, ismcts, mcts


class _OpenSpielAgent:
    """What both bots share: the rules, the generator, the OpenSpiel game, and the root state of a decision."""

    name = "openspiel"

    def __init__(self, rules: RuleSet | str, seed: int | None) -> None:
        self.rules = as_rules(rules)
        self._openspiel, self._ismcts, self._mcts = _require_openspiel(self.name)
        self.rng = np.random.default_rng(seed)
        self.game = self._openspiel.load_game(self.rules)

    def _random_state(self) -> np.random.RandomState:
        """A ``RandomState`` for OpenSpiel's code, seeded from the agent's generator."""
        return np.random.RandomState(int(self.rng.integers(2**31)))

    def _root(self, observation: dict):
        """An OpenSpiel state of one determinisation of ``observation`` (the agent is seat 0)."""
        world = Determinizer(observation, self.rules).sample(self.rng)
        return self.game.new_state_from(world)

    def reset(self) -> None:
        pass


class OpenSpielISMCTSAgent(_OpenSpielAgent):
    """OpenSpiel's information-set MCTS with random rollouts (module docstring).

    Args:
        rules: the env's RuleSet or a ruleset name (required, :mod:`agents.base`).
        seed: seed of the agent's ``numpy.random.Generator``.
        simulations: ISMCTS simulations per decision (1..1,000,000; default 200).
        uct_c: the UCT exploration constant (default 2.0; returns are game points, -3..3).
        rollouts: random rollouts per leaf evaluation (default 1).

    Raises:
        ImportError: OpenSpiel is not installed. ValueError: a bad budget.
    """

    name = "openspiel-ismcts"

    def __init__(self, rules: RuleSet | str, seed: int | None = None, simulations: int = 200, uct_c: float = 2.0,
                 rollouts: int = 1) -> None:
        check_int("simulations", simulations, 1, 1_000_000)
        check_int("rollouts", rollouts, 1, 10_000)
        super().__init__(rules, seed)
        self.simulations, self.uct_c = int(simulations), float(uct_c)
        self.evaluator = self._mcts.RandomRolloutEvaluator(n_rollouts=int(rollouts), random_state=self._random_state())
        self.bot = self._ismcts.ISMCTSBot(
            self.game, self.evaluator, self.uct_c, self.simulations, random_state=self._random_state(),
            final_policy_type=self._ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT)
        self.bot.set_resampler(lambda state, player: state.resample_from_infostate(player, self.rng))

    def act(self, observation: dict) -> int:
        """A legal action id: the most visited root action of one ISMCTS search."""
        legal = legal_ids(observation)
        if legal.size == 1:
            return int(legal[0])
        return int(self.bot.step(self._root(observation)))


class OpenSpielMCTSAgent(_OpenSpielAgent):
    """OpenSpiel's MCTS on determinisations (module docstring).

    Args:
        rules: the env's RuleSet or a ruleset name (required, :mod:`agents.base`).
        seed: seed of the agent's ``numpy.random.Generator``.
        simulations: MCTS simulations per decision, over all worlds (default 200).
        worlds: determinisations per decision (default 4; at most ``simulations``).
        uct_c: the UCT exploration constant (default 2.0).
        rollouts: random rollouts per leaf evaluation (default 1).

    Raises:
        ImportError: OpenSpiel is not installed. ValueError: a bad budget.
    """

    name = "openspiel-mcts"

    def __init__(self, rules: RuleSet | str, seed: int | None = None, simulations: int = 200, worlds: int = 4,
                 uct_c: float = 2.0, rollouts: int = 1) -> None:
        check_int("simulations", simulations, 1, 1_000_000)
        check_int("worlds", worlds, 1, simulations if isinstance(simulations, int) else 1)
        check_int("rollouts", rollouts, 1, 10_000)
        super().__init__(rules, seed)
        self.simulations, self.worlds, self.uct_c = int(simulations), int(worlds), float(uct_c)
        self.evaluator = self._mcts.RandomRolloutEvaluator(n_rollouts=int(rollouts), random_state=self._random_state())
        self.bot = self._mcts.MCTSBot(self.game, self.uct_c, self.simulations // self.worlds, self.evaluator,
                                      random_state=self._random_state(), solve=False)

    def act(self, observation: dict) -> int:
        """A legal action id: the action most visited over the worlds' searches (ties: the lowest id)."""
        legal = legal_ids(observation)
        if legal.size == 1:
            return int(legal[0])
        det = Determinizer(observation, self.rules)
        visits = {int(a): 0 for a in legal}
        for _ in range(self.worlds):
            root = self.bot.mcts_search(self.game.new_state_from(det.sample(self.rng)))
            for child in root.children:
                visits[int(child.action)] += child.explore_count
        return max(visits, key=lambda a: (visits[a], -a))
