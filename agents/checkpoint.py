"""Checkpoint files: atomic writes and safe loads (``torch.load(weights_only=True)``).

A checkpoint is a dict of tensors and JSON-like values (no pickled classes), written by
``train.py``. Keys always present: ``"model"`` (state dict), ``"net"`` (network config),
``"rules"`` (``RuleSet.to_dict()``), ``"layout"`` (``encoding.layout_signature``), ``"args"``
(training arguments), ``"versions"`` (package versions).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import torch

REQUIRED_KEYS = ("model", "net", "rules", "layout", "args", "versions")


class CheckpointError(ValueError):
    """A missing, corrupt, incomplete or incompatible checkpoint file."""


def save_atomic(obj: dict[str, Any], path: str | os.PathLike) -> None:
    """Write ``obj`` with ``torch.save`` to a temporary file beside ``path``, then rename it into place,
    so a crash never leaves a half-written checkpoint."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """Load a checkpoint with ``weights_only=True`` and check its keys.

    Raises:
        CheckpointError: the file is missing, not a torch file, corrupt, or lacks a required key;
            the message names the file and what was expected.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist (expected a .pt file written by train.py)")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds on corrupt files
        raise CheckpointError(f"checkpoint {str(path)!r} cannot be read as a torch file written by train.py: "
                              f"{type(e).__name__}: {e}") from None
    if not isinstance(ckpt, dict):
        raise CheckpointError(f"checkpoint {str(path)!r} holds a {type(ckpt).__name__}, expected a dict")
    missing = [k for k in REQUIRED_KEYS if k not in ckpt]
    if missing:
        raise CheckpointError(f"checkpoint {str(path)!r} lacks key(s) {missing}: expected {list(REQUIRED_KEYS)}")
    return ckpt
