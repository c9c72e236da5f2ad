"""Exceptions raised by the engine and the environments (API.md, "Errors").

All are subclasses of :class:`ValueError`, so ``except ValueError`` catches them.
"""


class RulesError(ValueError):
    """An unknown rule key, or a value a rule knob does not take (RULES.md section 5)."""


class InvalidPositionError(ValueError):
    """A malformed or impossible position dict, deck order or card code."""


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; the state is left unchanged."""
