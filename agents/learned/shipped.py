"""The policies shipped with the package (``schnapsen20``), declared once: their registered names, files and the
strongest of them, and the loaders that build a :class:`~agents.learned.policy.PolicyAgent` from a shipped file or
from a user's ``.pt`` checkpoint.

The loaders import :mod:`agents.learned.policy` (and so torch) when they are called, not when this module is
imported: ``import agents`` and the env's registry stay free of torch until a policy is asked for.
"""

from __future__ import annotations

import os

from agents.base import as_rules
from agents.learned.data import DATA_DIR, SHIPPED_POLICIES, SHIPPED_RULESET, STRONGEST_POLICY
from schnapsen_env.ruleset import RuleSet


def load_shipped(file: str, rules: RuleSet | str, seed: int | None = None, greedy: bool = True):
    """The shipped policy in ``DATA_DIR / file`` as an agent for ``rules``.

    It plays ``schnapsen20`` under any knobs (the observation layout is the same).

    Raises:
        ValueError: ``rules`` is another ruleset than ``schnapsen20``.
    """
    rules = as_rules(rules)
    if rules.name != SHIPPED_RULESET:
        raise ValueError(f"the shipped policy {file} plays {SHIPPED_RULESET}, not {rules.name}: choose another agent "
                         f"for {rules.name} or train a policy for it (train.py --ruleset {rules.name})")
    return load_checkpoint_agent(DATA_DIR / file, rules=rules, seed=seed, greedy=greedy)


def load_checkpoint_agent(path: str | os.PathLike, rules: RuleSet | str, seed: int | None = None,
                          greedy: bool = True):
    """A ``.pt`` checkpoint written by ``train.py`` as an agent (:meth:`PolicyAgent.load`); registered with
    :func:`schnapsen_env.agent_registry.register_checkpoint_loader`, so that every place that takes an agent takes
    a checkpoint path.

    Raises:
        ValueError: the file is missing, corrupt, or made for another ruleset or observation layout.
    """
    from agents.learned.policy import PolicyAgent  # torch: imported when a policy is asked for, not before

    return PolicyAgent.load(path, rules=as_rules(rules), greedy=greedy, seed=seed)


__all__ = ["DATA_DIR", "SHIPPED_POLICIES", "SHIPPED_RULESET", "STRONGEST_POLICY", "load_checkpoint_agent",
           "load_shipped"]
