"""The checks of the search players' integer options (sample counts, depths, budgets), shared so that every player
refuses a bad value with the same message."""

from __future__ import annotations

import numpy as np


def check_int(name: str, value, low: int, high: int) -> None:
    """Raise ``ValueError("{name} must be an int from {low} to {high}, got {value!r}")`` unless ``value`` is an int
    (a numpy integer too, never a bool) from ``low`` to ``high``."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{name} must be an int from {low} to {high}, got {value!r}")
