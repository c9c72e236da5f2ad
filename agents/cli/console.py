"""Command-line support shared by the programs (``schnapsen-arena``, ``schnapsen-play``, ``schnapsen-replay``):
an ``argparse`` parser whose errors are one line, the one-line form of any error message, and
:func:`console_main`, which keeps the end of a program's output (``| head``, a full disk, Ctrl-C) from ending in a
traceback.

A user's mistake gets one line on stderr, ``PROG: error: WHAT: PROBLEM: EXPECTED (see PROG --help)``, and exit
status 2, never a traceback. (argparse's own ``error()`` prints the whole usage block first; this parser prints the
message alone, naming ``--help`` for the usage.)
"""

from __future__ import annotations

import argparse
import codecs
import errno
import functools
import os
import sys
import typing
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from schnapsen_env.cards import SUIT_LETTERS, SUIT_SYMBOLS
from schnapsen_env.errors import one_line
from schnapsen_env.files import describe_os_error


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose :meth:`error` prints one line and exits with status 2."""

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE (see PROG --help)`` to stderr and exit with status 2.

        Raises:
            SystemExit: always, with code 2.
        """
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def fail(prog: str, message: object, status: int = 1) -> int:
    """Print ``PROG: error: MESSAGE`` as one line to stderr; returns ``status`` (for ``return fail(...)``). A standard
    error that cannot be written (its reader went away) does not change the status."""
    try:
        print(f"{prog}: error: {one_line(message)}", file=sys.stderr)
    except OSError:
        pass
    return status


_Main = TypeVar("_Main", bound=Callable[..., int])


class StdoutError(OSError):
    """Standard output could not be written (its reader went away, a full disk behind it); raised by the writes of
    a program run through :func:`console_main` in place of the ``OSError``, so that it is told apart from the
    program's other files."""


#: What the programs print beyond ASCII, as an output encoding without it (``LC_ALL=C``, a Windows code page) shows
#: it: the suits as the letters of the card codes (K♣ -> KC), the table's signs as ASCII; anything else as ``?``.
_ASCII_FALLBACK = {**dict(zip(SUIT_SYMBOLS, SUIT_LETTERS)), "±": "+/-", "—": "-", "·": "."}


def _ascii_fallback(e: UnicodeError) -> tuple[str, int]:
    if not isinstance(e, UnicodeEncodeError):
        raise e
    return "".join(_ASCII_FALLBACK.get(c, "?") for c in e.object[e.start:e.end]), e.end


codecs.register_error("schnapsen-ascii-fallback", _ascii_fallback)


class _GuardedStdout:
    """``sys.stdout`` while a ``main()`` runs: the same stream, whose write errors are :class:`StdoutError`, and
    whose text is fitted to its encoding (:data:`_ASCII_FALLBACK`) where the encoding lacks a character."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            try:
                return self._stream.write(text)
            except UnicodeEncodeError:  # raised before anything is written
                encoding = getattr(self._stream, "encoding", None) or "ascii"
                return self._stream.write(text.encode(encoding, "schnapsen-ascii-fallback").decode(encoding))
        except OSError as e:
            raise StdoutError(e.errno, e.strerror) from e

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            raise StdoutError(e.errno, e.strerror) from e

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _to_devnull(stream: Any) -> None:
    """Point ``stream``'s file descriptor at ``os.devnull`` so that Python's flush at exit does not fail (and print)
    a second time."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(fd, stream.fileno())
        finally:
            os.close(fd)
    except (OSError, ValueError, AttributeError):  # not a real file (a test's StringIO), or no stdout at all
        pass


def console_main(prog: str) -> Callable[[_Main], _Main]:
    """Decorate a program's ``main()`` (returning its exit status) so that its output ends without a traceback:

    * the reader of standard output goes away (``PROG ... | head -1``): the program stops quietly, status 0;
    * standard output cannot be written (a full disk behind ``PROG > file``): ``PROG: error: cannot write to
      standard output: no space left on device``, status 1;
    * Ctrl-C where ``main()`` does not handle it itself (e.g. while an agent loads): ``PROG: error: interrupted``,
      status 130.

    While ``main()`` runs, text that standard output's encoding cannot show (``LC_ALL=C``: the suit symbols) is shown
    in ASCII (:data:`_ASCII_FALLBACK`), writes to ``sys.stdout`` raise :class:`StdoutError` (an ``OSError``) when
    they fail, and standard output is flushed before ``main()`` returns, so that its last bytes are checked here and
    not by Python at exit. What ``main()`` saves to files is up to it: it should save before it prints.
    """
    def wrap(main: _Main) -> _Main:
        @functools.wraps(main)
        def run(*args: Any, **kwargs: Any) -> int:
            stream = sys.stdout
            if stream is not None:
                sys.stdout = _GuardedStdout(stream)
            try:
                try:
                    status = main(*args, **kwargs)
                except SystemExit:  # argparse's --help and usage errors: flushed here too, keeping their status
                    try:
                        if stream is not None:
                            sys.stdout.flush()
                    except StdoutError:  # as argparse itself does when it prints: nothing more to say
                        _to_devnull(stream)
                    raise
                if stream is not None:
                    sys.stdout.flush()
                return status
            except KeyboardInterrupt:
                return fail(prog, "interrupted", 130)
            except StdoutError as e:
                _to_devnull(stream)
                if e.errno == errno.EPIPE:
                    return 0
                return fail(prog, f"cannot write to standard output: {describe_os_error(e)}")
            finally:
                if stream is not None and isinstance(sys.stdout, _GuardedStdout):
                    sys.stdout = stream
        return typing.cast(_Main, run)
    return wrap


__all__ = ["ArgumentParser", "StdoutError", "console_main", "fail"]
