"""Measuring agents against each other: duplicate deals (:mod:`~agents.evaluation.duplicate`), matches and round
robins with confidence intervals (:mod:`~agents.evaluation.arena`), and Elo ratings over them
(:mod:`~agents.evaluation.ratings`)."""
