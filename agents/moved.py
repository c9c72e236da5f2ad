"""Old import paths of the modules that moved into subpackages keep working for one release, with a warning.

``import agents.pimc`` (or ``from agents.pimc import PIMCAgent``) finds :mod:`agents.search.pimc`, emits one
:class:`DeprecationWarning` naming the new path, and binds the old name to the same module object, so that both
names share every class and global. The old paths are removed in the next minor release.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: Old module path -> new module path (the modules moved when ``agents/`` was split by job).
MOVED: dict[str, str] = {
    f"agents.{old}": f"agents.{new}" for old, new in {
        "random_agent": "scripted.random_agent", "heuristic": "scripted.heuristic",
        "heuristic_core": "scripted.heuristic_core",
        "worlds": "search.worlds", "solver_core": "search.solver_core",
        "pimc": "search.pimc", "rollout": "search.rollout", "rollout_core": "search.rollout_core",
        "expert": "search.expert", "openspiel_bots": "search.openspiel_bots",
        "policy_net": "learned.policy_net", "policy": "learned.policy", "checkpoint": "learned.checkpoint",
        "hybrid": "learned.hybrid",
        "duplicate": "evaluation.duplicate", "arena": "evaluation.arena", "ratings": "evaluation.ratings",
        "self_play": "training.self_play", "rllib_module": "training.rllib_module",
        "exact": "game_theory.exact",
    }.items()
}
#: The release that drops the old paths.
REMOVED_IN = "0.3.0"


class _MovedModuleLoader(importlib.abc.Loader):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def create_module(self, spec):
        warnings.warn(f"{self.old} moved to {self.new}; import it from there (the old path is removed in "
                      f"{REMOVED_IN})", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self.spec  # importlib gave it the old path's spec: keep its own (reload, find_spec)
        sys.modules[self.old] = module  # the same module object under both names


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` (on ``sys.meta_path`` once ``agents`` is imported)."""

    def find_spec(self, fullname, path=None, target=None):
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _MovedModuleLoader(fullname, new))


def install() -> None:
    """Put one :class:`MovedModuleFinder` on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
