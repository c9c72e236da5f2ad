"""Old import paths of the modules of ``schnapsen_env`` that moved keep working for one release, with a warning.

``schnapsen_env.core`` (the compiled rules, its state layout and its numba plumbing in one module) was split by
job: :mod:`schnapsen_env.rules_core` (the compiled twin of :mod:`schnapsen_env.rules`, named by the project's
``X_core`` convention), :mod:`schnapsen_env.state_layout` (the state array, the rule table, the conversion to and
from ``GameState``) and :mod:`schnapsen_env.jit` (the numba plumbing every compiled module shares).
``import schnapsen_env.core`` (or ``from schnapsen_env.core import apply``) emits one :class:`DeprecationWarning`
naming the new modules and returns a module that forwards every name to the module that now holds it (the same
objects). The old path is removed in the next minor release.

Installed on ``sys.meta_path`` by ``schnapsen_env/__init__.py``; like the rest of the package it imports nothing of
``agents`` (whose own moved modules are :mod:`agents.moved`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

#: Old module path -> the modules that now hold its names, searched in this order.
MOVED: dict[str, tuple[str, ...]] = {
    "schnapsen_env.core": ("schnapsen_env.rules_core", "schnapsen_env.state_layout", "schnapsen_env.jit"),
}
#: The release that drops the old paths.
REMOVED_IN = "0.3.0"


def _old_drop_stale_cache(module_name, dispatcher) -> None:
    """``schnapsen_env.core.drop_stale_cache(module_name, dispatcher)``: the module name now comes from the
    dispatcher (:func:`schnapsen_env.jit.drop_stale_cache`)."""
    from schnapsen_env.jit import drop_stale_cache  # numba: imported only when the old path is used

    drop_stale_cache(dispatcher)


#: Names whose call changed, per old path: what the old name answers.
CHANGED = {"schnapsen_env.core": {"drop_stale_cache": _old_drop_stale_cache}}


def forwarding_module(old: str) -> types.ModuleType:
    """A module named ``old`` whose names are looked up in the modules of ``MOVED[old]``, in order."""
    homes = [importlib.import_module(new) for new in MOVED[old]]
    changed = CHANGED.get(old, {})
    module = types.ModuleType(old, f"Deprecated: moved to {', '.join(MOVED[old])}.")
    names = sorted({name for home in homes for name in getattr(home, "__all__", ())} | set(changed))

    def __getattr__(name: str):
        if name in changed:
            return changed[name]
        for home in homes:
            if name in home.__dict__:
                return home.__dict__[name]
        raise AttributeError(f"module {old!r} has no attribute {name!r} (it moved to {', '.join(MOVED[old])})")

    module.__getattr__ = __getattr__
    module.__all__ = names
    module.__dir__ = lambda: names
    return module


class _MovedModuleLoader(importlib.abc.Loader):
    def __init__(self, old: str) -> None:
        self.old = old

    def create_module(self, spec):
        warnings.warn(f"{self.old} moved to {', '.join(MOVED[self.old])}; import it from there (the old path is "
                      f"removed in {REMOVED_IN})", DeprecationWarning, stacklevel=2)
        return forwarding_module(self.old)

    def exec_module(self, module) -> None:
        pass


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` (on ``sys.meta_path`` once ``schnapsen_env`` is imported)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, _MovedModuleLoader(fullname))


def install() -> None:
    """Put one :class:`MovedModuleFinder` first on ``sys.meta_path`` (idempotent).

    First, not last: an old path must never find a leftover file (``core.py`` from an earlier copy of the package,
    or an editable install's finder pointing at another checkout that still has it); it answers only the paths of
    :data:`MOVED`, so it costs other imports one dictionary look-up."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
