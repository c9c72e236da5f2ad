"""The repository's scripts (``train.py``, ``train_rllib.py``) as modules for the tests, loaded from their files:
they are programs to run, not installed modules (what they share lives in :mod:`agents.training`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_script(filename: str):
    """The script ``ROOT/filename`` as a module, loaded once per session. It is registered in ``sys.modules``
    under its stem, as an import would, so that ``dataclasses`` and ``typing.get_type_hints`` resolve its
    annotations (``--resume`` checks the saved arguments' types against them)."""
    path = ROOT / filename
    name = path.stem
    module = sys.modules.get(name)
    if module is not None and Path(getattr(module, "__file__", "") or "").resolve() == path:
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
