"""Shared fixtures. The scenarios come from the rule book itself (``docs/RULES.md`` section 6), parsed by
:mod:`helpers.rulebook` when this file loads: a scenario the parser cannot read stops the run with the file, line
and scenario named. Helpers that are not fixtures live in ``tests/helpers/`` (a package, not tests)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:  # ``import helpers...`` under any import mode, and for benchmarks/
    sys.path.insert(0, str(TESTS))

from helpers.drivers import DRIVERS  # noqa: E402
from helpers.rulebook import Scenario, position_scenarios, rulebook  # noqa: E402

RULEBOOK = rulebook()  # parsed here, once: a RulebookError names the rule book's line


@pytest.fixture(scope="session", name="rulebook")
def rulebook_fixture() -> dict[str, Scenario]:
    """Every scenario of docs/RULES.md section 6 by id (``rulebook["S20"]``)."""
    return RULEBOOK


@pytest.fixture(params=position_scenarios(), ids=lambda sc: sc.sid)
def scenario(request) -> Scenario:
    """Each scenario with a position block and steps (S02 ... T09), one test per scenario id."""
    return request.param


@pytest.fixture(params=DRIVERS)
def driver_kind(request) -> str:
    """``engine`` (GameState), ``raw`` (schnapsen_v0.raw_env) or ``wrapped`` (schnapsen_v0.env)."""
    return request.param
