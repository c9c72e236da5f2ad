"""Exceptions raised by the engine and the environments (API.md, "Errors").

All are subclasses of :class:`ValueError`, so ``except ValueError`` catches them. :func:`one_line` and
:func:`short_repr` word any message of the project (a bad value is named, not echoed whole).
"""

from __future__ import annotations

import reprlib


class RulesError(ValueError):
    """An unknown rule key, or a value a rule knob does not take (RULES.md section 5)."""


class InvalidPositionError(ValueError):
    """A malformed or impossible position dict, deck order or card code."""


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; the state is left unchanged."""


def one_line(text: object, limit: int = 2000) -> str:
    """``text`` on one line (whitespace runs become one space), cut to ``limit`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` for a message, with a long string or number cut in its middle to about ``limit`` characters
    (a 5,000-character argument is named, not echoed)."""
    r = reprlib.Repr()
    r.maxstring = r.maxother = r.maxlong = limit
    return r.repr(value)


__all__ = ["IllegalActionError", "InvalidPositionError", "RulesError", "one_line", "short_repr"]
