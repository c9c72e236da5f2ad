"""The policies shipped with the package, declared once in :mod:`agents.learned.data` (their registered names,
files, rulesets, checksums and how they were made, and the strongest of each ruleset), and the loaders that build a :class:`~agents.learned.policy.PolicyAgent` from a shipped file or
from a user's ``.pt`` checkpoint.

The loaders import :mod:`agents.learned.policy` (and so torch) when they are called, not when this module is
imported: ``import agents`` and the env's registry stay free of torch until a policy is asked for.
"""

from __future__ import annotations

import os

from agents.base import as_rules
from agents.learned.data import (
    DATA_DIR,
    SEARCH_POLICIES,
    SEARCH_POLICY,
    SHIPPED,
    SHIPPED_BY_NAME,
    SHIPPED_POLICIES,
    STRONGEST_POLICIES,
    STRONGEST_POLICY,
    ShippedPolicy,
    shipped_policies,
)
from schnapsen_env.ruleset import RuleSet


def load_shipped(name: str, rules: RuleSet | str, seed: int | None = None, greedy: bool = True):
    """The shipped policy registered as ``name`` (:data:`~agents.learned.data.SHIPPED`) as an agent for ``rules``.

    It plays its own ruleset (``ShippedPolicy.ruleset``) under any knobs (the observation layout is the same).

    Raises:
        KeyError: ``name`` is not a shipped policy.
        ValueError: ``rules`` is another ruleset than the policy's.
    """
    rules = as_rules(rules)
    policy = SHIPPED_BY_NAME[name]
    if rules.name != policy.ruleset:
        raise ValueError(f"the shipped policy {policy.file} plays {policy.ruleset}, not {rules.name}: choose another "
                         f"agent for {rules.name} or train a policy for it (train.py --ruleset {rules.name})")
    return load_checkpoint_agent(policy.path, rules=rules, seed=seed, greedy=greedy)


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


__all__ = ["DATA_DIR", "SEARCH_POLICIES", "SEARCH_POLICY", "SHIPPED", "SHIPPED_BY_NAME", "SHIPPED_POLICIES", "STRONGEST_POLICIES", "STRONGEST_POLICY",
           "ShippedPolicy", "load_checkpoint_agent", "load_shipped", "shipped_policies"]
