"""Agents by name: the table the envs look names up in (``opponent="heuristic"``), filled by agent packages.

The rules and envs of :mod:`schnapsen_env` know no agent. An agent package registers its factories here, each
with the agent contract's signature ``(rules: RuleSet, seed: int | None, **options)`` (``agents/base.py``)::

    from schnapsen_env.agent_registry import register_agent
    register_agent("mine", MyAgent)            # MyAgent(rules=..., seed=..., **options)
    gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="mine")

This project's ``agents`` package registers its agents (``random``, ``heuristic``, ``pimc``, ...) when it is
imported. A user who never imports it still gets them by name: an installed distribution announces a module
that registers agents under the entry-point group ``"schnapsen_env.agents"`` (:data:`ENTRY_POINT_GROUP`), and
this module imports those modules the first time a name is looked up that is not registered yet, or the names
are listed. This project declares its own in ``pyproject.toml``::

    [project.entry-points."schnapsen_env.agents"]
    agents = "agents"

**Why a registry plus entry points.** The env must build named opponents for a user who only imported
``schnapsen_env`` (``gymnasium.make(..., opponent="heuristic")`` works today), yet ``schnapsen_env`` must not
import ``agents``: the dependency points from agents to the env, never back. A registry alone cannot do both:
nothing would fill it until the user imports ``agents``. An ``importlib.import_module("agents")`` fallback
here would do both, but it is the upward import under another spelling: the env would still name and depend
on one particular agent package. Entry points put the link where both packages are already named, in the
distribution's metadata (the way pytest finds plugins and Gymnasium finds ``gymnasium.envs`` plugins), so any
package, this project's or another, can supply agents. One entry point per package, not per agent, keeps a
single list of agents (``agents/__init__.py``): adding an agent there needs no change to ``pyproject.toml``
and no reinstall. The metadata is written when the project is installed (``pip install -e .``; ``scripts/
bootstrap.sh`` reinstalls when ``pyproject.toml`` changes); with metadata from before the entry point existed,
names resolve once ``agents`` has been imported, and the error for an unknown name says so.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from typing import Any

from schnapsen_env.ruleset import RULESETS, RuleSet

#: The entry-point group whose entries name modules that register agents when imported.
ENTRY_POINT_GROUP = "schnapsen_env.agents"

_FACTORIES: dict[str, Callable[..., Any]] = {}
_UNAVAILABLE: dict[str, str] = {}  # name -> why it cannot be built here (e.g. an optional extra is missing)
_CHECKPOINT_LOADERS: list[Callable[..., Any]] = []
_plugins_loaded = False


def register_agent(name: str, factory: Callable[..., Any], replace: bool = False) -> None:
    """Make ``factory`` buildable by ``name`` (:func:`make_agent`, the envs' ``opponent=name``, the arena).

    Args:
        name: the agent's name, e.g. ``"heuristic"``; a non-empty string without ``:`` (the arena's
            ``name:key=value`` specs split there).
        factory: a callable with the agent contract's signature ``(rules: RuleSet, seed: int | None,
            **options)`` returning an object with ``act(observation_dict) -> int``.
        replace: allow replacing another factory already registered under ``name``.

    Raises:
        ValueError: a bad name, or ``name`` taken by another factory and ``replace`` is false.
        TypeError: ``factory`` is not callable.
    """
    if not isinstance(name, str) or not name or ":" in name or name != name.strip():
        raise ValueError(f"an agent name must be a non-empty string without ':' or surrounding spaces, "
                         f"got {name!r}")
    if not callable(factory):
        raise TypeError(f"agent {name!r}: the factory must be callable as factory(rules=, seed=, **options), "
                        f"got {factory!r}")
    old = _FACTORIES.get(name)
    if old is not None and old is not factory and not replace:
        raise ValueError(f"agent name {name!r} is already registered ({old!r}): pass replace=True to replace it")
    _FACTORIES[name] = factory


def unregister_agent(name: str) -> None:
    """Remove ``name`` from the registry (nothing happens when it is not registered)."""
    _FACTORIES.pop(name, None)
    _UNAVAILABLE.pop(name, None)


def register_unavailable(name: str, reason: str) -> None:
    """Declare an agent that an agent package has but cannot build in this installation (an optional extra is
    missing): it is not listed by :func:`agent_names`, and asking for it raises ``ValueError(reason)`` instead of
    "unknown agent".

    Args:
        name: the agent's name.
        reason: one line saying why it is missing and how to get it, e.g. the extra to install.
    """
    if name not in _FACTORIES:
        _UNAVAILABLE[name] = reason


def register_checkpoint_loader(loader: Callable[..., Any]) -> None:
    """Make checkpoint paths (``"runs/x/policy.pt"``) agents wherever an agent is taken: ``loader(path, rules=,
    seed=)`` returns an agent. The last registered loader is used (this project's ``agents`` package registers
    :func:`agents.learned.shipped.load_checkpoint_agent`).

    Raises:
        TypeError: ``loader`` is not callable.
    """
    if not callable(loader):
        raise TypeError(f"a checkpoint loader must be callable as loader(path, rules=, seed=), got {loader!r}")
    if loader not in _CHECKPOINT_LOADERS:
        _CHECKPOINT_LOADERS.append(loader)


def load_checkpoint(path: str, rules: RuleSet | str, seed: int | None = None) -> Any:
    """The agent that the registered checkpoint loader builds from ``path`` for ``rules``.

    Raises:
        ValueError: no installed agent package loads checkpoints, or what the loader raises (a missing, corrupt or
            foreign file).
    """
    if not _CHECKPOINT_LOADERS:
        _load_plugins()
    if not _CHECKPOINT_LOADERS:
        raise ValueError(f"agent {path!r} is a checkpoint path, but no installed agent package loads checkpoints "
                         f"(this project's: import agents, or reinstall it: pip install -e .)")
    return _CHECKPOINT_LOADERS[-1](path, rules=rules, seed=seed)


def _load_plugins() -> None:
    """Import, once, the modules that installed distributions announce under :data:`ENTRY_POINT_GROUP`."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True  # set first: a plugin that lists the names while it is imported must not recurse
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            ep.load()
        except Exception as e:
            raise ImportError(f"the agent plugin {ep.name!r} = {ep.value!r} (entry point group "
                              f"{ENTRY_POINT_GROUP!r}) failed to load: {type(e).__name__}: {e}") from e


def agent_names() -> list[str]:
    """The registered names, sorted (after loading the installed agent plugins)."""
    _load_plugins()
    return sorted(_FACTORIES)


def agent_factory(name: str) -> Callable[..., Any]:
    """The factory registered as ``name`` (see :func:`register_agent`).

    Raises:
        ValueError: an unknown name (the message lists the registered ones), or a name declared unavailable here
            (:func:`register_unavailable`; the message says why).
    """
    if not (isinstance(name, str) and name in _FACTORIES):
        _load_plugins()
    try:
        return _FACTORIES[name]
    except (KeyError, TypeError):
        pass
    if isinstance(name, str) and name in _UNAVAILABLE:
        raise ValueError(_UNAVAILABLE[name]) from None
    names = sorted(_FACTORIES)
    if names:
        raise ValueError(f"unknown agent {name!r}: expected one of {names}") from None
    raise ValueError(f"unknown agent {name!r}: no agents are registered. Agent packages register theirs when "
                     f"imported (this project's: import agents) or through the entry-point group "
                     f"{ENTRY_POINT_GROUP!r} of an installed distribution; if this project's metadata predates "
                     "that entry point, reinstall it (pip install -e .)") from None


def make_agent(name: str, rules: RuleSet | str, seed: int | None = None, **options: Any) -> Any:
    """Build the agent registered as ``name`` for ``rules``: ``factory(rules=rules, seed=seed, **options)``.

    Args:
        name: a name of :func:`agent_names`.
        rules: the env's :class:`RuleSet`, knobs included (or a ruleset name, meaning its default knobs).
        seed: the seed of the agent's generator (None: fresh entropy).
        **options: the agent's own keyword arguments.

    Raises:
        ValueError: an unknown name (the message lists the registered ones), or what the factory raises
            (e.g. an agent that cannot play ``rules``).
        TypeError: ``rules`` is neither a RuleSet nor a ruleset name.
    """
    factory = agent_factory(name)
    if isinstance(rules, str):
        rules = RuleSet.make(rules)
    if not isinstance(rules, RuleSet):
        raise TypeError(f"agent {name!r} needs the env's rules: expected rules= a RuleSet (e.g. env.rules) or a "
                        f"ruleset name in {list(RULESETS)}, got {rules!r}")
    return factory(rules=rules, seed=seed, **options)


__all__ = ["ENTRY_POINT_GROUP", "agent_factory", "agent_names", "load_checkpoint", "make_agent", "register_agent",
           "register_checkpoint_loader", "register_unavailable", "unregister_agent"]
