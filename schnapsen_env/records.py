"""Game records: a played hand as data that replays exactly.

A record is a JSON object::

    {"rules": {"ruleset": "schnapsen20", ...knobs}, "deck": ["AS", ...], "dealer": "player_0",
     "actions": ["marriage H", "play QH", ...], "result": {"winner": "player_1", "game_points": 3,
     "reason": "claim"}}

Many records go in a JSON Lines file, one record per line (:func:`write_records`, :func:`read_records`).
:func:`replay` plays a record through the engine and checks its result, so a record that does not
reproduce is refused with a message naming the line and the first bad action.

Files survive a full disk: :func:`write_records` writes atomically (the old file or the new one, never half),
and :class:`RecordWriter` appends each record as it is produced as one complete, flushed line (a failed write is
cut back to the last complete line). A file whose last line was cut off anyway (a killed process) still reads:
:func:`read_records` skips only an incomplete last line (no newline at its end and not valid JSON) and says so
with an :class:`IncompleteLineWarning`.
"""

from __future__ import annotations

import io
import json
import os
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from schnapsen_env.errors import IllegalActionError, InvalidPositionError, RulesError
from schnapsen_env.files import LineWriter, WriteError, atomic_write, describe_os_error
from schnapsen_env.rules import PLAYERS, GameState, Result
from schnapsen_env.ruleset import RuleSet

RECORD_KEYS = ("rules", "deck", "dealer", "actions", "result")
OPTIONAL_KEYS = ("players",)  # labels of the agents by seat, e.g. written by the arena


class RecordError(ValueError):
    """A malformed record, or one whose actions or result do not replay."""


class IncompleteLineWarning(UserWarning):
    """:func:`read_records` skipped the file's last line: it was cut off (no newline at its end, not valid JSON),
    as a write interrupted by a full disk or a killed process leaves it."""


@dataclass
class HandRecord:
    """One hand: the rules, the deck order and dealer (RULES.md R2), the action names in order, the result.

    ``result`` is None for a hand recorded before its end.
    """

    rules: dict[str, Any]
    deck: list[str]
    dealer: str
    actions: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    players: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"rules": self.rules, "deck": list(self.deck), "dealer": self.dealer, "actions": list(self.actions),
               "result": self.result}
        if self.players is not None:
            out["players"] = dict(self.players)
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "record") -> HandRecord:
        """Raises :class:`RecordError` naming ``where`` and the bad key."""
        if not isinstance(data, dict):
            raise RecordError(f"{where}: expected a JSON object with keys {list(RECORD_KEYS)}, got "
                              f"{type(data).__name__}")
        missing = [k for k in RECORD_KEYS if k not in data]
        unknown = sorted(map(str, set(data) - set(RECORD_KEYS) - set(OPTIONAL_KEYS)))
        if missing or unknown:
            raise RecordError(f"{where}: missing key(s) {missing}, unknown key(s) {unknown}; expected "
                              f"{list(RECORD_KEYS)} (optional: {list(OPTIONAL_KEYS)})")
        if not isinstance(data["actions"], list) or not all(isinstance(a, str) for a in data["actions"]):
            raise RecordError(f"{where}: 'actions' must be a list of action names, got {data['actions']!r}")
        if data["dealer"] not in PLAYERS:
            raise RecordError(f"{where}: 'dealer' must be 'player_0' or 'player_1', got {data['dealer']!r}")
        res = data["result"]
        if res is not None and not (isinstance(res, dict) and isinstance(res.get("game_points"), int)
                                    and not isinstance(res.get("game_points"), bool)):
            raise RecordError(f"{where}: 'result' must be null or {{'winner', 'game_points' (int), 'reason'}}, "
                              f"got {res!r}")
        players = data.get("players")
        if players is not None and not (isinstance(players, dict) and set(players) <= set(PLAYERS)
                                        and all(isinstance(v, str) for v in players.values())):
            raise RecordError(f"{where}: 'players' must map 'player_0'/'player_1' to agent labels, got {players!r}")
        return cls(rules=data["rules"], deck=data["deck"], dealer=data["dealer"], actions=list(data["actions"]),
                   result=data["result"], players=players)


def record_of(state: GameState, players: dict[str, str] | None = None) -> HandRecord:
    """The game record of a hand: its deal (``state.deal``) and the actions pushed since (``state.actions``), with
    the result so far (None while the hand runs). ``players`` optionally labels the agents by seat.

    Raises:
        ValueError: the state has no deal (it was loaded from a position or built from fields).
    """
    names = state.rules.action_names
    deck = deck_of(state)  # raises ValueError for a state without a deal
    assert state.deal is not None
    return HandRecord(state.rules.to_dict(), deck, PLAYERS[state.deal[1]],
                      [names[a] for a in state.actions], _result_dict(state.result),
                      None if players is None else dict(players))


def deck_of(state: GameState) -> list[str]:
    """The deck order (card codes c0...) the hand of ``state`` was dealt from (``state.deal``, R2 / R66-2).

    Raises:
        ValueError: the state has no deal (it was loaded from a position or built from fields).
    """
    if state.deal is None:
        raise ValueError("this state has no deal to record: it was loaded from a position or built from fields, "
                         "not dealt with GameState.new_hand or GameState.from_deck")
    codes = state.rules.deck.codes
    return [codes[c] for c in state.deal[0]]


class Recorder:
    """A hand dealt from a deck order, played with checked actions, and its record (:func:`record_of`).

    Example::

        rec = Recorder.deal(RuleSet.make(), rng)       # deals a hand
        state = rec.state
        while state.result is None:
            rec.step(state.legal_actions()[0])
        record = rec.record()
    """

    def __init__(self, rules: RuleSet, deck: list[str], dealer: str) -> None:
        self.rules = rules
        self.state = GameState.from_deck(rules, list(deck), dealer)

    @classmethod
    def deal(cls, rules: RuleSet, rng) -> Recorder:
        """Shuffle with the seeded ``numpy.random.Generator`` exactly as :meth:`GameState.new_hand` does."""
        state = GameState.new_hand(rules, rng)
        rec = cls.__new__(cls)
        rec.rules, rec.state = rules, state
        return rec

    @property
    def actions(self) -> list[str]:
        """The names of the actions played so far."""
        return record_of(self.state).actions

    def step(self, action: int | str) -> None:
        """Apply an action to :attr:`state`, checked (:meth:`GameState.step`)."""
        self.state.step(action)

    def record(self) -> HandRecord:
        return record_of(self.state)


def _result_dict(result: Result | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {"winner": None if result.winner is None else PLAYERS[result.winner], "game_points": result.game_points,
            "reason": str(result.reason)}


def replay(record: HandRecord | dict, where: str = "record") -> Iterator[tuple[GameState, str | None]]:
    """Replay a record step by step: yields ``(state, None)`` for the deal, then ``(state, action)`` after each
    action; the state object is the same one, advanced in place.

    Raises:
        RecordError: bad rules, deck or dealer; an unknown or illegal action (naming its index and the legal
            ones); actions after the end; or a recorded result that differs from the replayed one.
    """
    if isinstance(record, dict):
        record = HandRecord.from_dict(record, where)
    try:
        rules = RuleSet.from_dict(record.rules)
        state = GameState.from_deck(rules, record.deck, record.dealer)
    except (RulesError, InvalidPositionError) as e:
        raise RecordError(f"{where}: {e}") from None
    yield state, None
    for k, name in enumerate(record.actions):
        try:
            state.step(name)
        except IllegalActionError as e:
            raise RecordError(f"{where}, action {k} {name!r}: {e}") from None
        yield state, name
    replayed = _result_dict(state.result)
    if record.result != replayed:
        raise RecordError(f"{where}: the recorded result {record.result!r} differs from the replayed {replayed!r}")


def replay_to_end(record: HandRecord | dict, where: str = "record") -> GameState:
    """The state after replaying every action (see :func:`replay`)."""
    state = None
    for state, _ in replay(record, where):  # noqa: B007 - the loop runs the replay; its last state is the answer
        pass
    assert state is not None  # replay yields the dealt state first, or raises
    return state


def write_records(path: str | os.PathLike, records: Iterable[HandRecord]) -> int:
    """Write records as JSON Lines (one per line), atomically: ``path`` holds either its old content or all the
    records, never part of them. Returns how many.

    Raises:
        WriteError: the file cannot be written (missing or read-only folder, full disk); the old file is unchanged.
    """
    lines = [json.dumps(r.to_dict()) + "\n" for r in records]
    atomic_write(path, "".join(lines))
    return len(lines)


class RecordWriter:
    """Writes records to a JSON Lines file as they are produced, each one complete, flushed line
    (:class:`schnapsen_env.files.LineWriter`), so the records of finished hands survive a crash or a full disk.

    Example::

        with RecordWriter("games.jsonl") as out:
            for record in hands():
                out.write(record)

    Args:
        path: the file; created, or emptied when it exists.
        what: how the user named it, for messages (e.g. ``"--records 'games.jsonl'"``).

    Raises:
        WriteError: the file cannot be created; later, :meth:`write` raises it when a write fails (the file keeps
            the complete records written before, and the message says how many).
    """

    def __init__(self, path: str | os.PathLike, what: str | None = None) -> None:
        self._out = LineWriter(path, what)

    @property
    def count(self) -> int:
        """Records written completely so far."""
        return self._out.lines

    @property
    def error(self) -> WriteError | None:
        """The write error that stopped this writer (None while all writes succeeded)."""
        return self._out.error

    def write(self, record: HandRecord) -> None:
        """Append one record as a complete line.

        Raises:
            WriteError: the write failed (the file keeps its complete records), or an earlier one did.
        """
        self._out.write(json.dumps(record.to_dict()))

    def close(self) -> None:
        self._out.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_records(path: str | os.PathLike, check: bool = True) -> list[HandRecord]:
    """Read a JSON Lines file of records; with ``check`` every record is replayed.

    A last line without a newline at its end whose only flaw is at its end (JSON or a UTF-8 character that stops
    early) was cut off by an interrupted write: it is skipped with an :class:`IncompleteLineWarning` naming its
    line. Any other bad line is an error.

    Raises:
        RecordError: the file cannot be read, or the first bad line (its 1-based number) and what is wrong with it.
    """
    if "\0" in str(os.fspath(path)):  # open() would raise ValueError
        raise RecordError(f"{os.fspath(path)!r} contains a NUL character: expected the path of a JSON Lines file of "
                          "records")
    try:
        f = open(path, "rb")
    except OSError as e:
        if os.path.isdir(path):
            what = "is a folder"
        elif not os.path.exists(path):
            what = "does not exist"
        else:
            what = f"cannot be read ({describe_os_error(e)})"
        raise RecordError(f"{os.fspath(path) or repr('')} {what}: expected a JSON Lines file of records") from None
    with f:
        return _read_lines(f, path, check)


def parse_records(data: bytes, name: str = "records", check: bool = True) -> list[HandRecord]:
    """Read JSON Lines records from bytes in memory (an uploaded file) exactly as :func:`read_records` reads a file.

    Args:
        data: the file's content.
        name: how messages name it (``"upload 'games.jsonl'"``).
        check: replay every record (:func:`replay_to_end`).

    Returns:
        The records in file order; an incomplete last line is skipped with an :class:`IncompleteLineWarning`.

    Raises:
        RecordError: the first bad line (``NAME line N: ...``) and what is wrong with it.

    >>> parse_records(b"", "upload")
    []
    >>> parse_records(b"not json\\n", "upload")
    Traceback (most recent call last):
    ...
    schnapsen_env.records.RecordError: upload line 1: not JSON (Expecting value at column 1)
    """
    return _read_lines(io.BytesIO(data), name, check)


#: Longest line :func:`read_records` reads (a record is a line of about 1 KB): a file that is no records file (a
#: large binary, ``/dev/zero``) is refused at its first line, not read whole into memory.
MAX_LINE_BYTES = 1 << 20


def _raw_lines(f, path) -> Iterator[tuple[int, bytes, bool]]:
    """``(line number, bytes without the newline, is the last piece)`` of an open file, one line at a time; the last
    piece is the one that has no newline after it (empty when the file ends with one)."""
    lineno = 0
    while True:
        lineno += 1
        try:
            raw = f.readline(MAX_LINE_BYTES + 1)
        except OSError as e:
            raise RecordError(f"{os.fspath(path)} cannot be read at line {lineno} ({describe_os_error(e)}): expected a "
                              "JSON Lines file of records") from None
        if raw.endswith(b"\n"):
            yield lineno, raw[:-1], False
            continue
        if len(raw) > MAX_LINE_BYTES:
            raise RecordError(f"{os.fspath(path)} line {lineno}: longer than {MAX_LINE_BYTES:,} bytes: expected a "
                              "JSON Lines file of records (about 1 KB a line)")
        yield lineno, raw, True
        return


def _read_lines(f, path, check: bool) -> list[HandRecord]:
    out = []
    for lineno, raw, last in _raw_lines(f, path):
        where = f"{os.fspath(path)} line {lineno}"
        cut_off = last and _cut_off(raw)
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            if cut_off:
                _warn_cut_off(where, len(raw))
                continue
            raise RecordError(f"{where}: not UTF-8 text ({e.reason} at byte {e.start})") from None
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            if cut_off:
                _warn_cut_off(where, len(raw))
                continue
            raise RecordError(f"{where}: not JSON ({e.msg} at column {e.colno})") from None
        except ValueError as e:  # e.g. an integer beyond Python's digit limit
            raise RecordError(f"{where}: not a JSON record ({e})") from None
        except RecursionError:
            raise RecordError(f"{where}: JSON nested too deeply for a record") from None
        rec = HandRecord.from_dict(data, where)
        if check:
            replay_to_end(rec, where)
        out.append(rec)
    return out


_TOKEN_START = re.compile(r"t(r(ue?)?)?|f(a(l(se?)?)?)?|n(u(ll?)?)?|[-+0-9.eE]*")


def _cut_off(raw: bytes) -> bool:
    """Whether a last line (no newline after it) reads as the start of a longer line that was cut off: its only
    flaw is at its end (an unfinished UTF-8 character, an unterminated string, JSON that stops early)."""
    if not raw.strip():
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.reason != "unexpected end of data" or e.end != len(raw):
            return False
        text = raw[:e.start].decode("utf-8", errors="replace")
    try:
        json.loads(text)
    except json.JSONDecodeError as e:  # the text from the error on is empty or the start of its last token
        return e.msg.startswith("Unterminated string") or _TOKEN_START.fullmatch(text[e.pos:].rstrip()) is not None
    except (ValueError, RecursionError):
        return False
    return False  # complete JSON: not cut off


def _warn_cut_off(where: str, size: int) -> None:
    warnings.warn(IncompleteLineWarning(
        f"{where}: skipped an incomplete last line ({size} bytes that stop mid-record, without a newline at the "
        "end): a write was cut off; the complete lines before it were read"), stacklevel=3)
