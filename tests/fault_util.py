"""Simulated I/O faults for the robustness tests: a full disk and a read-only folder.

They patch the ``os`` calls the project's writers use (``os.open``, ``os.write``, ``os.mkdir``, ``os.replace``, and
``open`` for writing), only for paths inside one folder, so they behave the same as root (who ignores folder
permissions), on any file system, and leave pytest's own files alone.
"""

from __future__ import annotations

import builtins
import errno
import io
import os

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _inside(path, folder: str) -> bool:
    try:
        p = os.path.realpath(os.fspath(path))
    except TypeError:  # a file descriptor
        return False
    return p == folder or p.startswith(folder + os.sep)


class FullDisk:
    """From now on, files opened for writing inside ``folder`` get ``free`` more bytes in all, then ``ENOSPC``:
    the write that crosses the limit writes what fits (a partial write), the next one fails. ``free=None`` means
    no limit yet (set :attr:`free` later to fill the disk)."""

    def __init__(self, monkeypatch, folder, free: int | None) -> None:
        self.folder = os.path.realpath(folder)
        self.free = free
        self.fds: set[int] = set()
        self.failures = 0
        real_open, real_write, real_close = os.open, os.write, os.close

        def fake_open(path, flags, mode=0o777, *, dir_fd=None):
            fd = real_open(path, flags, mode, dir_fd=dir_fd)
            if flags & _WRITE_FLAGS and _inside(path, self.folder):
                self.fds.add(fd)
            return fd

        def fake_write(fd, data):
            if fd not in self.fds or self.free is None:
                return real_write(fd, data)
            if self.free <= 0:
                self.failures += 1
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            n = real_write(fd, bytes(data)[:self.free])
            self.free -= n
            return n

        def fake_close(fd):
            self.fds.discard(fd)
            return real_close(fd)

        monkeypatch.setattr(os, "open", fake_open)
        monkeypatch.setattr(os, "write", fake_write)
        monkeypatch.setattr(os, "close", fake_close)


class ReadOnly:
    """``folder`` becomes read-only: creating, writing, renaming or removing anything inside it raises ``EACCES``
    (reading still works)."""

    def __init__(self, monkeypatch, folder) -> None:
        self.folder = os.path.realpath(folder)
        self.refused = 0
        real = {name: getattr(os, name) for name in ("open", "mkdir", "replace", "rename", "unlink", "remove")}
        real_open = builtins.open

        def refuse(path):
            self.refused += 1
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))

        def fake_os_open(path, flags, mode=0o777, *, dir_fd=None):
            if flags & _WRITE_FLAGS and _inside(path, self.folder):
                refuse(path)
            return real["open"](path, flags, mode, dir_fd=dir_fd)

        def guard(name):
            def fake(*args, **kwargs):
                for p in args[:2]:
                    if isinstance(p, (str, bytes, os.PathLike)) and (_inside(p, self.folder)):
                        refuse(p)
                return real[name](*args, **kwargs)
            return fake

        def fake_open(file, mode="r", *args, **kwargs):
            if any(c in mode for c in "wax+") and isinstance(file, (str, bytes, os.PathLike)) and \
                    _inside(file, self.folder):
                refuse(file)
            return real_open(file, mode, *args, **kwargs)

        monkeypatch.setattr(os, "open", fake_os_open)
        for name in ("mkdir", "replace", "rename", "unlink", "remove"):
            monkeypatch.setattr(os, name, guard(name))
        monkeypatch.setattr(builtins, "open", fake_open)
        monkeypatch.setattr(io, "open", fake_open)


def files_under(folder) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (to show that a refused command changed nothing)."""
    out = {}
    for root, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(root, n)
            with builtins.open(p, "rb") as f:
                out[os.path.relpath(p, folder)] = f.read()
    return out
