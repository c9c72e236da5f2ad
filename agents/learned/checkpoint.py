"""Checkpoint files: atomic writes, an integrity check, and safe loads (``torch.load(weights_only=True)``).

A checkpoint is a dict of tensors and JSON-like values (no pickled classes), written by
``train.py``. Keys always present: ``"model"`` (state dict), ``"net"`` (network config),
``"rules"`` (``RuleSet.to_dict()``), ``"layout"`` (``encoding.layout_signature``), ``"args"``
(training arguments), ``"versions"`` (package versions); a trainer checkpoint adds ``"trainer"``.

**Integrity.** The file is the zip archive ``torch.save`` writes, with the SHA-256 of that archive stored beside
it in the same file, as the archive's comment (the zip format's own field for free text at its end):
``schnapsen-env sha256 <64 hex digits>``. ``torch.load`` and every zip reader ignore the comment, so the file loads
as before (``torch.load(path, weights_only=True)`` returns the same dict). :func:`load_checkpoint` recomputes the
digest over every byte of the archive and refuses a file whose digest differs, so one changed byte anywhere (in the
weights, the pickled structure, the zip headers or the digest itself) is caught before anything is unpickled.
Files written before the check existed have no comment; they load unchecked (the shipped policies carry it).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from pathlib import Path
from typing import Any

import torch

from schnapsen_env.files import WriteError, atomic_write, describe_os_error

REQUIRED_KEYS = ("model", "net", "rules", "layout", "args", "versions")

_EOCD = b"PK\x05\x06"  # zip "end of central directory" record: 22 bytes, then the comment
_EOCD_SIZE = 22
_TAG = b"schnapsen-env sha256 "
_COMMENT = re.compile(re.escape(_TAG) + rb"[0-9a-f]{64}\Z")
_COMMENT_SIZE = len(_TAG) + 64


class CheckpointError(ValueError):
    """A missing, corrupt, incomplete or incompatible checkpoint file."""


def _with_checksum(archive: bytes) -> bytes:
    """``archive`` (a zip without comment, as ``torch.save`` writes it) with its SHA-256 as the zip comment."""
    if archive[-_EOCD_SIZE:-_EOCD_SIZE + 4] != _EOCD or archive[-2:] != b"\0\0":
        raise ValueError("expected a zip archive without comment, as torch.save writes")
    comment = _TAG + hashlib.sha256(archive).hexdigest().encode()
    return archive[:-2] + len(comment).to_bytes(2, "little") + comment


def checkpoint_bytes(obj: dict[str, Any]) -> bytes:
    """The bytes of a checkpoint file holding ``obj``: ``torch.save``'s archive plus its SHA-256 (module doc)."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    return _with_checksum(buf.getvalue())


def save_atomic(obj: dict[str, Any], path: str | os.PathLike) -> None:
    """Write ``obj`` as a checkpoint with its checksum to a temporary file beside ``path``, flush it to disk, then
    rename it into place, so a crash or a full disk never leaves a half-written checkpoint (the old file stays).

    Raises:
        WriteError: the file cannot be written (folder missing or read-only, disk full); the old file is unchanged
            and the message says so.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WriteError(e.errno, f"cannot create the folder of {str(path)!r}: {describe_os_error(e)}") from None
    atomic_write(path, checkpoint_bytes(obj))


def verify_checksum(data: bytes, name: str = "checkpoint") -> bool:
    """Check the SHA-256 stored in a checkpoint file's bytes (module doc).

    Returns:
        True when the file carries a checksum and it matches, False for a file written before checksums existed
        (a zip archive without comment).

    Raises:
        CheckpointError: the stored digest differs from the file's, or the file's end is neither a checksum nor a
            plain zip end (a damaged or truncated file).
    """
    tail = data[-_COMMENT_SIZE:]
    eocd_at = len(data) - _COMMENT_SIZE - _EOCD_SIZE
    if (_COMMENT.match(tail) and eocd_at >= 0 and data[eocd_at:eocd_at + 4] == _EOCD
            and data[eocd_at + 20:eocd_at + 22] == _COMMENT_SIZE.to_bytes(2, "little")):
        archive = data[:eocd_at + 20] + b"\0\0"
        stored = tail[len(_TAG):].decode()
        actual = hashlib.sha256(archive).hexdigest()
        if actual != stored:
            raise CheckpointError(f"{name} is corrupt: the SHA-256 of its content is {actual[:16]}..., but the file "
                                  f"records {stored[:16]}...: expected an unchanged file as train.py wrote it (restore "
                                  "a good copy)")
        return True
    if data[-_EOCD_SIZE:-_EOCD_SIZE + 4] == _EOCD and data[-2:] == b"\0\0":
        return False  # an archive without comment: written before checksums existed
    raise CheckpointError(f"{name} is damaged or truncated: it ends neither with the SHA-256 that train.py "
                          "stores nor with the end of a zip archive: expected a complete file as train.py wrote it")


def add_checksum(path: str | os.PathLike) -> bool:
    """Give a checkpoint written before checksums existed its SHA-256 (in place, atomically; the archive bytes and
    what ``torch.load`` returns are unchanged). Returns False when the file already has one.

    Raises:
        CheckpointError: the file is missing, damaged, or does not load as a checkpoint.
        WriteError: the file cannot be rewritten.
    """
    path = Path(path)
    data = _read(path)
    if verify_checksum(data, f"checkpoint {str(path)!r}"):
        return False
    load_checkpoint(path)  # only a loadable checkpoint gets a checksum
    atomic_write(path, _with_checksum(data))
    return True


def _read(path: Path) -> bytes:
    if path.is_dir():
        raise CheckpointError(f"checkpoint {str(path)!r} is a folder: expected a .pt file written by train.py")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist (expected a .pt file written by train.py)")
    try:
        return path.read_bytes()
    except OSError as e:
        raise CheckpointError(f"checkpoint {str(path)!r} cannot be read ({describe_os_error(e)}): expected a "
                              "readable .pt file") from None


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """Load a checkpoint: verify its checksum (module doc), load it with ``weights_only=True``, check its keys.

    Raises:
        CheckpointError: the file is missing, a folder, unreadable, corrupt (its checksum differs: one changed byte
            is enough), not a torch file, or lacks a required key; the message names the file and what was expected.
    """
    path = Path(path)
    name = f"checkpoint {str(path)!r}"
    data = _read(path)
    if not data.startswith(b"PK\x03\x04"):
        raise CheckpointError(f"{name} cannot be read as a torch file written by train.py: it is not a zip archive "
                              "(the format torch.save writes)")
    verify_checksum(data, name)
    try:
        ckpt = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds on corrupt files
        raise CheckpointError(f"{name} cannot be read as a torch file written by train.py: "
                              f"{type(e).__name__}: {e}") from None
    if not isinstance(ckpt, dict):
        raise CheckpointError(f"{name} holds a {type(ckpt).__name__}, expected a dict")
    missing = [k for k in REQUIRED_KEYS if k not in ckpt]
    if missing:
        raise CheckpointError(f"{name} lacks key(s) {missing}: expected {list(REQUIRED_KEYS)}")
    return ckpt


__all__ = ["CheckpointError", "REQUIRED_KEYS", "add_checksum", "checkpoint_bytes",
           "load_checkpoint", "save_atomic", "verify_checksum"]
