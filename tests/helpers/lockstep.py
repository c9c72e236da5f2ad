"""The driver of the lockstep tests, which play the compiled core (or what is built on it: the vector env, the
AEC env's mirror) side by side with the reference engine over every knob set of :mod:`helpers.knob_cases`: the
cases' test ids, the random choice of actions that takes special actions often, the kind of an action, and one
hand played on both engines with a check after every action."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from schnapsen_env import core
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet


def case_id(case) -> str:
    """A test id of a knob case: ``"schnapsen20-tie=last_trick"``, ``"sixtysix24-defaults"``."""
    ruleset, knobs = case
    return ruleset + ("-" + "-".join(f"{k}={v}" for k, v in knobs.items()) if knobs else "-defaults")


def case_rules(case) -> RuleSet:
    ruleset, knobs = case
    return RuleSet.make(ruleset, **knobs)


def action_kind(action: int, n_cards: int) -> int:
    """0 play, 1 marriage, 2 exchange, 3 close, 4 claim."""
    return 0 if action < n_cards else 1 if action < n_cards + 4 else action - n_cards - 2


def choose(legal, n_cards: int, rng: np.random.Generator, special_p: float) -> int:
    """A random action of ``legal``, a special one (marriage, exchange, close, claim) with probability
    ``special_p`` when one is legal (with ``special_p`` 0, one draw of ``rng.choice(legal)`` alone)."""
    special = [a for a in legal if a >= n_cards] if special_p > 0 else []
    return int(rng.choice(special)) if special and rng.random() < special_p else int(rng.choice(legal))


def play_hand(rules: RuleSet, rng: np.random.Generator, special_p: float,
              check: Callable[[GameState, np.ndarray, int | None], None]) -> int:
    """One hand dealt by ``GameState.new_hand(rules, rng)``, played on the reference engine and on a compiled
    state array (``core.apply``) in lockstep with :func:`choose`; ``check(g, st, action)`` before the first action
    (``action`` None) and after every action. Returns the number of actions."""
    R = core.rule_table(rules)
    g = GameState.new_hand(rules, rng=rng)
    st = core.from_game_state(g)
    check(g, st, None)
    n = 0
    while g.result is None:
        a = choose(g.legal_actions(), rules.n_cards, rng, special_p)
        g.push(a)
        core.apply(st, R, a)
        n += 1
        check(g, st, a)
    return n
