"""Scripted players: ``random`` (:mod:`~agents.scripted.random_agent`) and the rule-based ``heuristic``
(:mod:`~agents.scripted.heuristic`, with its compiled batch twin :mod:`~agents.scripted.heuristic_core`)."""
