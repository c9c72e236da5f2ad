"""The shipped policy files (package data), declared once: which registered name plays which file, and the
strongest of them. The loaders are in :mod:`agents.learned.shipped`."""

from __future__ import annotations

from pathlib import Path

#: The folder of the shipped policy files (package data).
DATA_DIR = Path(__file__).parent

#: The ruleset the shipped policies were trained for (the observation layout of another ruleset differs).
SHIPPED_RULESET = "schnapsen20"

#: The shipped policies (``schnapsen20``): registered name -> file in :data:`DATA_DIR`. How each was trained and
#: how strong it is: the docs' "Training" and "Strength of the agents".
SHIPPED_POLICIES: dict[str, str] = {
    "trained": "schnapsen20_policy.pt",  # the default run of commit b341ce3: 6M decisions
    "trained-long": "schnapsen20_policy_long.pt",  # the long run of commit 1ea76dd: 36M decisions
    "trained-100m": "schnapsen20_policy_100m.pt",  # the long run of commit 5bc141a: 100M decisions
    "trained-220m": "schnapsen20_policy_220m.pt",  # that run resumed to 220M decisions (163 minutes in all)
}
#: The strongest shipped policy (the web app's default opponent, ``policy+expert``'s default policy).
STRONGEST_POLICY = "trained-220m"

__all__ = ["DATA_DIR", "SHIPPED_POLICIES", "SHIPPED_RULESET", "STRONGEST_POLICY"]
