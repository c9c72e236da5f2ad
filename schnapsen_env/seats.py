"""The two seats and their names: seat 0 is ``"player_0"``, seat 1 ``"player_1"`` (API.md).

Roles (dealer, leader, closer) are stored separately from seats everywhere in the package.
"""

from __future__ import annotations

from typing import Any

from schnapsen_env.errors import InvalidPositionError

#: The PettingZoo agent names, indexed by seat.
PLAYERS = ("player_0", "player_1")


def seat_of(player: Any, what: str = "player") -> int:
    """Seat 0/1 of ``"player_0"``/``"player_1"``.

    Raises:
        InvalidPositionError: any other value; the message names ``what`` was expected.
    """
    if player == "player_0":
        return 0
    if player == "player_1":
        return 1
    raise InvalidPositionError(f"{what} must be 'player_0' or 'player_1', got {player!r}")


__all__ = ["PLAYERS", "seat_of"]
