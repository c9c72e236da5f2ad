"""schnapsen-env: exact Schnapsen / Sixty-Six rules and RL environments.

The rules engine (:mod:`schnapsen_env.rules`) knows nothing of RL libraries; the
PettingZoo AEC env lives in :mod:`schnapsen_env.schnapsen_v0`.
"""

import importlib

from schnapsen_env import moved
from schnapsen_env.cards import DECK20, DECK24, Deck, Rank, Suit
from schnapsen_env.errors import IllegalActionError, InvalidPositionError, RulesError
from schnapsen_env.rules import PLAYERS, GameState, Result, Trick, game_value
from schnapsen_env.ruleset import RULESETS, RuleSet

__version__ = "0.1.0"

moved.install()  # old module paths (schnapsen_env.core) work for one release, with a warning


def __getattr__(name: str):
    """``schnapsen_env.core`` as an attribute, as before it moved (with the warning of :mod:`schnapsen_env.moved`)."""
    if f"schnapsen_env.{name}" in moved.MOVED:
        return importlib.import_module(f"schnapsen_env.{name}")
    raise AttributeError(f"module 'schnapsen_env' has no attribute {name!r}")

__all__ = [
    "DECK20", "DECK24", "Deck", "GameState", "IllegalActionError", "InvalidPositionError", "PLAYERS", "RULESETS",
    "Rank", "Result", "RuleSet", "RulesError", "Suit", "Trick", "game_value",
]


def _register() -> None:
    import gymnasium

    if "schnapsen_env/Schnapsen-v0" not in gymnasium.registry:
        gymnasium.register(id="schnapsen_env/Schnapsen-v0", entry_point="schnapsen_env.gym_env:SchnapsenGymEnv",
                           disable_env_checker=False)


_register()
