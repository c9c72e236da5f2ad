"""Exact game theory on the small ruleset ``schnapsen10`` (RULES.md section 3a): the whole game tree, CFR+, best
responses and the exact exploitability (NashConv) of any policy (:mod:`~agents.game_theory.exact`)."""
