"""Command-line support shared by the programs (``schnapsen-arena``, ``schnapsen-play``, ``schnapsen-replay``):
an ``argparse`` parser whose errors are one line, and the one-line form of any error message.

A user's mistake gets one line on stderr, ``PROG: error: WHAT: PROBLEM: EXPECTED (see PROG --help)``, and exit
status 2, never a traceback. (argparse's own ``error()`` prints the whole usage block first; this parser prints the
message alone, naming ``--help`` for the usage.)
"""

from __future__ import annotations

import argparse
import reprlib
import sys
import types
import typing
from typing import Any, Literal, NoReturn


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


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose :meth:`error` prints one line and exits with status 2."""

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE (see PROG --help)`` to stderr and exit with status 2.

        Raises:
            SystemExit: always, with code 2.
        """
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def fail(prog: str, message: object, status: int = 1) -> int:
    """Print ``PROG: error: MESSAGE`` as one line to stderr; returns ``status`` (for ``return fail(...)``)."""
    print(f"{prog}: error: {one_line(message)}", file=sys.stderr)
    return status


def fits_hint(value: Any, hint: Any) -> bool:
    """Whether a plain value (as parsed from a command line or read from JSON) fits a type annotation: ``bool``,
    ``int`` (not bool), ``float`` (int or float), ``str``, ``None``, ``Literal[...]``, unions and
    ``tuple[X, ...]``; any other annotation is left to the callee to check (True)."""
    origin = typing.get_origin(hint)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if hint is type(None):
        return value is None
    if origin is Literal:
        return value in typing.get_args(hint)
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return any(fits_hint(value, h) for h in typing.get_args(hint))
    if origin is tuple:
        item = typing.get_args(hint)[0]
        return isinstance(value, (tuple, list)) and all(fits_hint(v, item) for v in value)
    return True


__all__ = ["fits_hint", "ArgumentParser", "fail", "one_line", "short_repr"]
