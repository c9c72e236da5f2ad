"""Agent specs: what every place that takes "an agent" accepts (the Gymnasium env's ``opponent``, the arena and
``schnapsen-arena``, ``schnapsen-play``, ``train.py``'s evaluation opponents, ``policy+expert``'s policy), and how
each is built for the rules of a match (the agent contract, ``agents/base.py``). One resolver, so one set of forms
and one wording of every error.

A spec is one of

* a registered name (:func:`agents.agent_names`, :mod:`schnapsen_env.agent_registry`), optionally with keyword
  arguments: ``"rollout:n_samples=8,depth=2"`` (values are Python literals, else strings); it is built with the
  registered factory as ``factory(rules=rules, seed=seed, **kwargs)``;
* a checkpoint path ending in ``.pt``, loaded by the registered checkpoint loader
  (:func:`schnapsen_env.agent_registry.load_checkpoint`; this project's: ``PolicyAgent.load(path, rules=rules)``);
* a factory: a class, or a callable taking ``seed=`` (and ``rules=``, which it is then given), returning an agent
  (an object with ``act(observation) -> int``) or a plain callable ``observation -> int``, e.g. an agent class or
  ``functools.partial(RolloutAgent, n_samples=4)``;
* an agent object (has ``act``), or a policy function ``observation -> int`` (a callable that takes no ``seed=``):
  used as it is every time (it is not reseeded);
* a pair ``(label, spec)`` to name any of the above in tables.

:func:`resolve_agent` turns a spec into ``(label, factory)`` where ``factory(seed=...)`` builds the agent. The
factories are module-level classes holding plain data, so they pickle when what they hold does.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

from schnapsen_env import agent_registry
from schnapsen_env.errors import short_repr
from schnapsen_env.ruleset import RULESETS, RuleSet


def fits_hint(value: Any, hint: Any) -> bool:
    """Whether a plain value (as parsed from a command line or read from JSON) fits a type annotation: ``bool``,
    ``int`` (not bool), ``float`` (int or float), ``str``, ``None``, ``Literal[...]``, unions and
    ``tuple[X, ...]``; any other annotation is left to the callee to check (True)."""
    origin = typing.get_origin(hint)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if hint is type(None):
        return value is None
    if origin is Literal:
        return value in typing.get_args(hint)
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return any(fits_hint(value, h) for h in typing.get_args(hint))
    if origin is tuple:
        item = typing.get_args(hint)[0]
        return isinstance(value, (tuple, list)) and all(fits_hint(v, item) for v in value)
    return True


def spec_forms() -> str:
    """The forms of an agent spec, for error messages (the registered names listed)."""
    return (f"a registered name (one of {agent_registry.agent_names()}), name:key=value,... with its options, a path "
            "to a .pt checkpoint, an object with act(observation), or a factory taking seed= (and rules=)")


def as_rules(rules: RuleSet | str) -> RuleSet:
    """The :class:`RuleSet` an agent plays under: a RuleSet as it is (knobs included), a ruleset name as its
    default knobs.

    Raises:
        TypeError: ``rules`` is missing (None) or neither a RuleSet nor a string.
        RulesError: an unknown ruleset name (a ``ValueError``).
    """
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, str):
        return RuleSet.make(rules)
    raise TypeError(f"an agent needs the env's rules: expected rules= a RuleSet (e.g. env.rules) or a ruleset name "
                    f"in {list(RULESETS)}, got {rules!r}; agents do not infer the rules from the observation")


def parse_value(text: str) -> Any:
    """``"8"`` -> 8, ``"0.5"`` -> 0.5, ``"True"``/``"None"`` -> True/None, anything else stays a string (also text
    that only looks like an expression, ``"10**12"``, and literals too deep or too long to evaluate)."""
    if len(text) > 10_000:
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _type_name(hint: Any) -> str:
    if typing.get_origin(hint) in (typing.Union, getattr(types, "UnionType", typing.Union)):
        return " or ".join(_type_name(h) for h in typing.get_args(hint))
    return "None" if hint is type(None) else getattr(hint, "__name__", str(hint))


def _annotations(factory: Callable) -> dict[str, Any]:
    """The resolved parameter annotations of a factory (a class: its ``__init__``; a ``functools.partial``: its
    function's); {} when they cannot be read."""
    while isinstance(factory, functools.partial):
        factory = factory.func
    # mypy warns of reading __init__ through an instance (an unsound call); here the class's own __init__ is wanted
    # for its annotations, not called
    target = factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]
    try:
        return typing.get_type_hints(target)
    except Exception:  # unresolvable forward references, builtins without annotations
        return {}


def _accepts(factory: Callable, name: str) -> bool:
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class NameFactory:
    """Builds a registered agent by name for ``rules``."""

    def __init__(self, name: str, kwargs: dict, rules: RuleSet) -> None:
        self.name, self.kwargs, self.rules = name, kwargs, rules

    def __call__(self, seed: int | None = None):
        return agent_registry.make_agent(self.name, self.rules, seed=seed, **self.kwargs)


class CallableFactory:
    """A user's factory; given ``rules=`` (the match's rules) when it takes that keyword."""

    def __init__(self, factory: Callable[..., Any], rules: RuleSet) -> None:
        self.factory, self.rules = factory, rules
        self.takes_rules = _accepts(factory, "rules")

    def __call__(self, seed: int | None = None):
        if self.takes_rules:
            return self.factory(rules=self.rules, seed=seed)
        return self.factory(seed=seed)


class CheckpointFactory:
    """Loads a checkpoint for the match's rules with the registered checkpoint loader
    (:func:`schnapsen_env.agent_registry.load_checkpoint`; this project's: ``PolicyAgent.load``)."""

    def __init__(self, path: str, rules: RuleSet) -> None:
        self.path, self.rules = path, rules

    def __call__(self, seed: int | None = None):
        return agent_registry.load_checkpoint(self.path, rules=self.rules, seed=seed)


class Fixed:
    """Returns one given agent object every time (no reseeding)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def __call__(self, seed: int | None = None):
        return self.agent


def _parse_name_spec(spec: str) -> tuple[str, dict]:
    """``"rollout:n_samples=8,depth=2"`` -> ``("rollout", {"n_samples": 8, "depth": 2})``, checked against the
    registered factory's parameters."""
    name, _, arg_text = spec.partition(":")
    try:
        agent_registry.agent_factory(name)  # an unknown or unavailable name first
    except ValueError as e:
        if not str(e).startswith("unknown agent"):
            raise  # a name declared unavailable here: its own reason (e.g. the extra to install)
        raise ValueError(f"unknown agent {short_repr(name)}: expected {spec_forms()}") from None
    kwargs = {}
    for item in filter(None, (t.strip() for t in arg_text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip().isidentifier():
            raise ValueError(f"bad agent argument {short_repr(item)} in {short_repr(spec)}: expected "
                             "name:key=value,key=value")
        if key.strip() in kwargs:
            raise ValueError(f"agent {short_repr(spec)} gives {key.strip()} twice: expected each argument once")
        kwargs[key.strip()] = parse_value(value.strip())
    check_options(name, kwargs, spec)
    return name, kwargs


def check_options(name: str, kwargs: dict, spec: str | None = None) -> None:
    """Check a registered agent's options against its factory's parameters and annotations, as a
    ``name:key=value`` spec is checked (the Gymnasium env's ``opponent_kwargs`` too).

    Raises:
        ValueError: ``seed=`` or ``rules=`` among them, an option the factory does not take, or a value of a type
            its annotation refuses.
    """
    factory = agent_registry.agent_factory(name)
    spec = spec if spec is not None else name
    for own in ("seed", "rules"):
        if own in kwargs:
            raise ValueError(f"agent {short_repr(spec)}: every agent is given its {own} by the program that builds "
                             f"it; drop {own}=")
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a factory without a signature: let it check its own options
        params = None
    if params is not None and not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        unknown = sorted(k for k in kwargs if k not in params)
        if unknown:
            valid = sorted(k for k in params if k not in ("seed", "rules", "self"))
            want = f"some of {valid}" if valid else "no arguments"
            raise ValueError(f"agent {name!r} takes no argument(s) {unknown}: expected {want}")
    hints = _annotations(factory)
    for key, value in kwargs.items():
        if key in hints and not fits_hint(value, hints[key]):
            kind = type(value).__name__
            what = "None" if value is None else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
            raise ValueError(f"agent {name!r}: {key}={short_repr(value)} is {what}, expected "
                             f"{_type_name(hints[key])}")


def build(factory: Callable[..., Any], label: str, seed: int | None = None) -> Any:
    """The agent a resolved factory builds with ``seed``, as every place that takes an agent builds it.

    Raises:
        ValueError: the factory refused its options or rules (``agent 'LABEL' cannot be built: WHY``), or built
            something with no ``act()`` that is not callable.
    """
    try:
        agent = factory(seed=seed)
    except (ValueError, TypeError) as e:
        raise ValueError(f"agent {short_repr(label)} cannot be built: {e}") from e
    act_fn(agent)
    return agent


def resolve_agent(spec: Any, rules: RuleSet | str) -> tuple[str, Callable[..., Any]]:
    """Turn an agent spec (module docstring) into ``(label, factory)``; ``factory(seed=...)`` builds the agent for
    ``rules``.

    Args:
        spec: an agent spec (module docstring).
        rules: the rules the agent plays (a RuleSet with its knobs, or a ruleset name for its default knobs).

    Raises:
        ValueError: an unknown agent name (the message lists the valid names), a missing checkpoint file, a
            checkpoint when ``agents.learned.policy`` is missing, a malformed ``name:key=value`` list, an argument of a
            type the agent's factory does not take (``rollout:n_samples=abc``, ``=1.5``), or a spec of an
            unsupported type. Values out of range are refused by the agent when it is built.
        TypeError: ``rules`` is missing or not a RuleSet / ruleset name.
    """
    rules = as_rules(rules)
    if isinstance(spec, os.PathLike):  # a pathlib.Path to a checkpoint
        spec = os.fspath(spec)
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        _, factory = resolve_agent(spec[1], rules)
        return spec[0], factory
    if isinstance(spec, str):
        # "name:key=value" whose last value is a .pt path (policy+expert:policy=runs/x/policy.pt) is a name spec
        if spec.endswith(".pt") and not (":" in spec and spec.split(":", 1)[0] in agent_registry.agent_names()):
            if os.path.isdir(spec):
                raise ValueError(f"agent {short_repr(spec)} is a folder, not a .pt checkpoint file: expected "
                                 f"{spec_forms()}")
            if not os.path.isfile(spec):
                raise ValueError(f"no checkpoint file {short_repr(spec)}: expected {spec_forms()}")
            return os.path.basename(spec), CheckpointFactory(spec, rules)
        name, kwargs = _parse_name_spec(spec)
        return spec, NameFactory(name, kwargs, rules)
    if hasattr(spec, "act") and not isinstance(spec, type):  # an agent object; a class is a factory
        return getattr(spec, "name", type(spec).__name__), Fixed(spec)
    if isinstance(spec, (NameFactory, CallableFactory, CheckpointFactory)):  # already built for some rules
        if spec.rules != rules:
            raise ValueError(f"agent factory {spec!r} was built for other rules ({spec.rules}) than {rules}")
        return getattr(spec, "name", None) or getattr(spec, "path", None) or type(spec).__name__, spec
    if callable(spec):
        label = getattr(spec, "name", None) or getattr(spec, "__name__", None)
        if label is None and hasattr(spec, "func"):  # functools.partial
            label = getattr(spec.func, "name", None) or getattr(spec.func, "__name__", None)
        if not isinstance(spec, type) and not _accepts(spec, "seed"):  # a policy function observation -> action
            return str(label or type(spec).__name__), Fixed(spec)
        return str(label or type(spec).__name__), CallableFactory(spec, rules)
    raise ValueError(f"cannot use {short_repr(spec)} as an agent: expected {spec_forms()}")


def act_fn(agent: Any) -> Callable[[dict], int]:
    """The ``observation -> action`` function of what a factory built (its ``act``, or the callable itself).

    Raises:
        ValueError: it has no ``act()`` and is not callable.
    """
    if hasattr(agent, "act"):
        return agent.act
    if callable(agent):
        return agent
    raise ValueError(f"the factory returned {agent!r}, which has no act() and is not callable")


__all__ = ["CallableFactory", "CheckpointFactory", "Fixed", "NameFactory", "act_fn", "as_rules", "build",
           "check_options", "fits_hint", "parse_value", "resolve_agent", "spec_forms"]
