"""Seeded positions for the solver tests (``tests/test_solver_core.py``) and ``benchmarks/solver_core.py
--exactness``: the same generator in CI and in the large run."""

from __future__ import annotations

import numpy as np

from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet


def positions(rules: RuleSet, rng: np.random.Generator, count: int, min_tricks: int):
    """Seeded positions reached by random play (special actions often) with at least ``min_tricks`` tricks
    played, so that the reference solver is quick; about a third each with the stock open, closed, exhausted."""
    out = []
    while len(out) < count:
        g = GameState.new_hand(rules, rng=rng)
        want = ("open", "closed", "exhausted")[len(out) % 3]
        # The stock is open for the first stock0 / 2 tricks only (schnapsen10: trick 1, RS2).
        need = min(min_tricks, rules.stock0 // 2 - 1) if want == "open" else min_tricks
        while g.result is None:
            legal = g.legal_actions()
            tricks = g.tricks[0] + g.tricks[1]
            phase = "closed" if g.closed_by >= 0 else ("open" if g.stock else "exhausted")
            if tricks >= need and phase == want:
                out.append(g.copy())
                break
            if rules.close_action in legal and want != "closed":
                legal.remove(rules.close_action)
            if rules.claim_action in legal and len(legal) > 1:
                legal.remove(rules.claim_action)
            special = [a for a in legal if a >= rules.n_cards]
            g.push(int(rng.choice(special)) if special and rng.random() < 0.5 else int(rng.choice(legal)))
    return out
