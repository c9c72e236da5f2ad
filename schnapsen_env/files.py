"""Writing files so that finished work survives a full disk, a read-only folder or a killed process.

* :func:`check_output_file` and :func:`check_output_folder` check an output path before long work starts: a file
  path in an existing, writable folder (not a folder where a file is wanted), or a folder that exists or can be
  created. The command-line programs call them up front, so a mistyped path fails in a second, not after an hour.
* :func:`same_file` tells whether an output path names an input (a checkpoint the program reads) or another
  output, through links too, so that a program refuses to overwrite it. Whatever path an agent's checkpoint was
  named by (a shipped policy's name, an option inside an agent spec), :func:`check_output_file` and
  :class:`LineWriter` refuse to replace an existing checkpoint (a zip archive, as ``torch.save`` writes).
* :func:`atomic_write` writes a whole file to a temporary file beside it and renames it into place
  (``os.replace``): readers see the old file or the new one, never half of one. A temporary file left by a killed
  write (``NAME.XXXXXXXX.tmp``) is removed by :func:`remove_stale_temps`.
* :class:`LineWriter` appends lines as they are produced, each complete and flushed; when a write fails (a full
  disk) it cuts the file back to its last complete line, so the file stays readable, and raises
  :class:`WriteError` saying how many lines the file holds.

Only the standard library is used (``tempfile``, ``os.replace``, ``os.fsync``). Every byte goes through
``os.write``, so a full disk shows up at the write that hits it.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from pathlib import Path

#: The temporary files written by :func:`atomic_write` (and ``agents.learned.checkpoint.save_atomic``):
#: ``NAME.`` + the 8 characters of ``tempfile.mkstemp`` + ``.tmp``.
_TEMP_TAIL = re.compile(r"\.[a-z0-9_]{8}\.tmp\Z")


class WriteError(OSError):
    """A file could not be written (full disk, read-only folder, ...); the message names the file, the cause and
    what was kept. Built as ``WriteError(errno, message)``; ``str()`` is the message alone."""

    def __str__(self) -> str:
        return str(self.strerror if self.strerror is not None else super().__str__())


def describe_os_error(e: OSError) -> str:
    """A short text for an ``OSError``: ``"no space left on device"``, ``"permission denied"``, ..."""
    if e.errno is not None:
        text = os.strerror(e.errno)
        return text[:1].lower() + text[1:]
    return str(e) or type(e).__name__


def _writable_folder_problem(folder: Path) -> str | None:
    """Why files cannot be created in ``folder`` (None when a probe file can be created and removed)."""
    if not folder.exists():
        return f"folder {str(folder)!r} does not exist"
    if not folder.is_dir():
        return f"{str(folder)!r} is not a folder"
    try:
        fd, probe = tempfile.mkstemp(prefix=".write-probe.", suffix=".tmp", dir=folder)
    except OSError as e:
        return f"folder {str(folder)!r} is not writable ({describe_os_error(e)})"
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass
    return None


def _path_text(path: str | os.PathLike, what: str, expected: str) -> str:
    text = os.fspath(path)
    if not isinstance(text, str):
        raise ValueError(f"{what}: expected {expected} as text, got {type(text).__name__}")
    if not text:
        raise ValueError(f"{what}: the path is empty: expected {expected}")
    if "\0" in text:
        raise ValueError(f"{what}: the path contains a NUL character: expected {expected}")
    return text


def check_output_file(path: str | os.PathLike, what: str) -> None:
    """Check, before any work, that a file can be written at ``path``.

    Args:
        path: the file to be written (it may exist: it will be replaced).
        what: how the user gave it, for the message, e.g. ``"--json 'out.json'"``.

    Raises:
        ValueError: ``path`` is empty or a folder, an existing checkpoint (:func:`is_checkpoint`), its folder does
            not exist or is not a folder, or the folder is not writable (read-only, no permission); the message
            names ``what``, the problem and what is expected.
            A path that is a named pipe or a device (``/dev/null``) only has to be writable itself; through a
            symbolic link, the folder of the link's target is checked.
    """
    p = Path(_path_text(path, what, "a file path"))
    try:
        if p.is_dir():
            raise ValueError(f"{what} is a folder: expected a file path (e.g. {str(p / 'out')!r})")
        if is_checkpoint(p):
            raise ValueError(f"{what} {_CHECKPOINT_REFUSAL}")
        if _is_special(p):  # a pipe or a device (/dev/null): written into, as the shell's '>' does
            problem = None if os.access(p, os.W_OK) else f"{str(p)!r} is not writable"
        else:  # a new or regular file, written beside itself and renamed; through a link, beside its target
            problem = _writable_folder_problem(Path(os.path.realpath(p)).parent)
    except OSError as e:  # e.g. a name too long for the file system
        problem = f"the path cannot be used ({describe_os_error(e)})"
    if problem is not None:
        raise ValueError(f"{what}: {problem}: expected a file path in an existing, writable folder")


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two paths name one file: the same path written differently, a symbolic or hard link to it, or (when
    they do not exist yet) the same place after links are resolved."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        try:
            return os.path.realpath(a) == os.path.realpath(b)
        except (OSError, ValueError):
            return False


def check_output_folder(path: str | os.PathLike, what: str) -> None:
    """Check, before any work, that ``path`` is a writable folder or can be created as one.

    Raises:
        ValueError: ``path`` is empty or a file, or the folder (or its nearest existing parent, where it is to be
            created) is not writable; the message names ``what``, the problem and what is expected.
    """
    p = Path(_path_text(path, what, "a folder")).absolute()
    try:
        existing = p
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            raise ValueError(f"{what}: {str(existing)!r} is a file: expected a folder (or a path that can be "
                             "created as one)")
        problem = _writable_folder_problem(existing)
    except OSError as e:
        problem = f"the path cannot be used ({describe_os_error(e)})"
    if problem is not None:
        raise ValueError(f"{what}: {problem}: expected a writable folder")


_CHECKPOINT_REFUSAL = ("is an existing checkpoint (a zip archive, as torch.save writes): expected another file "
                       "(writing it would destroy the checkpoint)")


def is_checkpoint(path: str | os.PathLike) -> bool:
    """Whether ``path`` is an existing regular file that starts as a zip archive does (``PK\\x03\\x04``), the
    format of every checkpoint ``torch.save`` writes: an output that must not be replaced."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            return f.read(4) == b"PK\x03\x04"
    except (OSError, ValueError):
        return False


def _is_special(path: str | os.PathLike) -> bool:
    """Whether ``path`` exists (through links) and is neither a regular file nor a folder: a named pipe, a device
    (``/dev/null``, ``/dev/stdout``), a socket."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (where the platform allows opening folders)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, blob: memoryview) -> None:
    """``os.write`` until every byte is written (a full disk raises ``OSError``, possibly after a partial write)."""
    done = 0
    while done < len(blob):
        done += os.write(fd, blob[done:])


def _mode_for(path: Path) -> int:
    """The permissions a write of ``path`` should leave: those of the file it replaces, else what ``open()`` gives a
    new file (0666 less the process's umask)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        pass
    try:
        with open("/proc/self/status", encoding="ascii") as f:  # Linux: read the umask without changing it
            for line in f:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0o022)  # elsewhere: set and restore it
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: str | os.PathLike, data: bytes | str, encoding: str = "utf-8") -> None:
    """Write ``data`` to ``path`` atomically: a temporary file beside it, flushed to disk, then renamed into place.

    The file keeps the permissions of the one it replaces; a new one gets those of a file made by ``open()``. On
    any failure the temporary file is removed and ``path`` is left as it was (the old file, or none). A symbolic
    link is kept: the file it points to is replaced. A path that is a named pipe or a device (``/dev/null``) is
    written into directly, as the shell's ``>`` does (renaming over it would replace it with a regular file).

    Raises:
        WriteError: the folder is missing or read-only, the disk is full, ...; the message names ``path``, the cause,
            and that the old file (if any) is unchanged.
    """
    blob = memoryview(data.encode(encoding) if isinstance(data, str) else bytes(data))
    if _is_special(path):  # a pipe or a device: written into (a rename would replace it with a regular file)
        try:
            fd = os.open(path, os.O_WRONLY)
            try:
                _write_all(fd, blob)
            finally:
                os.close(fd)
        except OSError as e:
            raise WriteError(e.errno, f"cannot write {str(path)!r}: {describe_os_error(e)}") from None
        return
    path = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)  # keep a link: write its target
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.absolute().parent)
        try:
            os.chmod(tmp, _mode_for(path))  # mkstemp's files are private (0600)
            _write_all(fd, blob)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        kept = "the old file is unchanged" if path.is_file() else "no file was written"
        raise WriteError(e.errno, f"cannot write {str(path)!r}: {describe_os_error(e)} ({kept})") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    _fsync_folder(path.absolute().parent)


def stale_temps(path: str | os.PathLike) -> list[Path]:
    """The temporary files that atomic writes of ``path`` leave when they are killed (``NAME.XXXXXXXX.tmp``)."""
    path = Path(path)
    folder = path.absolute().parent
    if not folder.is_dir():
        return []
    prefix = path.name
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(folder / n for n in names if n.startswith(prefix) and _TEMP_TAIL.fullmatch(n[len(prefix):]))


def remove_stale_temps(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files left by killed atomic writes of ``path``; returns the removed ones. Call it only
    where no other process writes ``path`` at the same time (a run folder owned by one trainer)."""
    removed = []
    for p in stale_temps(path):
        try:
            p.unlink()
            removed.append(p)
        except OSError:
            pass
    return removed


class LineWriter:
    """Appends text lines to a file as they are produced: each line complete, written in one piece and flushed.

    When a write fails (a full disk), the file is cut back to its last complete line and :class:`WriteError` is
    raised naming the file, the cause and how many complete lines it holds; later writes raise it again. Lines must
    not contain a newline (JSON from ``json.dumps`` never does).

    Args:
        path: the file; created or truncated when the writer opens.
        what: how the user gave the file, for messages (default: the path).

    Raises:
        WriteError: the file cannot be created (read-only folder, ...), or it is an existing checkpoint
            (:func:`is_checkpoint`), which is left as it is.
    """

    def __init__(self, path: str | os.PathLike, what: str | None = None) -> None:
        self.path = Path(path)
        self.what = what or repr(str(self.path))
        self.lines = 0
        self.error: WriteError | None = None
        if is_checkpoint(self.path):
            raise WriteError(errno.EEXIST, f"{self.what} {_CHECKPOINT_REFUSAL}")
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        except OSError as e:
            raise WriteError(e.errno, f"cannot create {self.what}: {describe_os_error(e)}") from None
        self._size = 0

    def write(self, line: str) -> None:
        """Append ``line`` plus a newline and flush it to the operating system.

        Raises:
            ValueError: ``line`` contains a newline.
            WriteError: the write failed (the file keeps its complete lines), or an earlier one did.
        """
        if "\n" in line:
            raise ValueError("a line must not contain a newline")
        if self.error is not None:
            raise self.error
        blob = (line + "\n").encode("utf-8")
        try:
            _write_all(self._fd, memoryview(blob))
        except OSError as e:
            try:  # drop a partial line: the file ends with a complete one
                os.ftruncate(self._fd, self._size)
                os.lseek(self._fd, self._size, os.SEEK_SET)
            except OSError:
                pass
            self.error = WriteError(e.errno, f"cannot write line {self.lines + 1} to {self.what}: "
                                             f"{describe_os_error(e)}; the file holds the {self.lines} complete "
                                             "line(s) written before it")
            raise self.error from None
        self._size += len(blob)
        self.lines += 1

    def close(self) -> None:
        """Flush to disk and close (errors of the final flush are kept in :attr:`error`, not raised)."""
        if self._fd is None:
            return
        try:
            if stat.S_ISREG(os.fstat(self._fd).st_mode):  # a pipe or a device (/dev/stdout) has no disk to flush to
                os.fsync(self._fd)
        except OSError as e:
            if self.error is None:
                self.error = WriteError(e.errno, f"cannot flush {self.what} to disk: {describe_os_error(e)}")
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> LineWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["LineWriter", "WriteError", "atomic_write", "check_output_file", "check_output_folder", "is_checkpoint",
           "describe_os_error", "remove_stale_temps", "same_file", "stale_temps"]
