"""Determinisation: complete positions consistent with one player's observation.

A search agent that sees only its observation (RULES.md R27) needs full states to search:
:func:`sample_states` deals the cards the observer has not seen (the ``unseen`` plane) uniformly
at random between the opponent's hand and the face-down stock, keeping every card the opponent
made public (``opp_known``: a shown marriage partner, the old turn-up taken by an exchange, the
turn-up drawn at the last open trick) in the opponent's hand, and the turn-up under the stock.

In the sampled :class:`GameState` the observer is seat 0 and the opponent seat 1. The history of
completed tricks is not rebuilt (the observation does not pair leads with follows); trick counts,
points, marriages, the closing snapshot and the turn state are exact.
"""

from __future__ import annotations

import numpy as np

from schnapsen_env.encoding import POINTS_SCALE, layout, plane_to_bits
from schnapsen_env.errors import InvalidPositionError
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet


class Determinizer:
    """Parses one observation once, then samples consistent states cheaply.

    Args:
        observation: the observation vector of the player to move (float32, ``(obs_size,)``), or the
            env's observation dict (its ``"observation"`` entry is used).
        rules: the rule set the observation was made under.

    Raises:
        InvalidPositionError: the observation's card counts are inconsistent (e.g. the unseen cards do
            not fill the opponent's hand and the face-down stock).
    """

    def __init__(self, observation, rules: RuleSet) -> None:
        if isinstance(observation, dict):
            observation = observation["observation"]
        obs = np.asarray(observation, dtype=np.float32)
        lay = layout(rules)
        if obs.shape != (lay["match"].stop,):
            raise InvalidPositionError(f"observation must have shape ({lay['match'].stop},), got {obs.shape}")
        self.rules = rules
        d = rules.deck
        self.hand = plane_to_bits(obs[lay["hand"]])
        turn_up = plane_to_bits(obs[lay["turn_up"]])
        self.table = plane_to_bits(obs[lay["table"]])
        self.opp_known = plane_to_bits(obs[lay["opp_known"]])
        self.unseen = plane_to_bits(obs[lay["unseen"]])
        self.me_won = plane_to_bits(obs[lay["me_won"]])
        self.opp_won = plane_to_bits(obs[lay["opp_won"]])
        self.trump = int(np.argmax(obs[lay["trump"]]))
        stock_full = rules.stock0
        self.stock_size = int(round(float(obs[lay["stock_size"]][0]) * stock_full))
        self.turn_up = turn_up.bit_length() - 1 if turn_up else -1
        closed = obs[lay["closed"]][0] > 0.5
        closer = obs[lay["closer"]]
        self.closed_by = (0 if closer[0] > 0.5 else 1) if closed else -1
        snap = obs[lay["snapshot"]]
        self.snapshot = (int(round(snap[0] * POINTS_SCALE)), int(round(snap[1] * rules.n_tricks))) if closed else None
        n_tricks = rules.n_tricks
        tr = obs[lay["tricks"]]
        self.tricks = [int(round(tr[0] * n_tricks)), int(round(tr[1] * n_tricks))]
        mar = obs[lay["marriages"]]
        self.marriage_suits = [sum(1 << k for k in range(4) if mar[k] > 0.5),
                               sum(1 << k for k in range(4) if mar[4 + k] > 0.5)]
        self.exchanged = bool(obs[lay["exchanged"]][0] > 0.5)
        ann = obs[lay["announced"]]
        self.announced = int(np.argmax(ann)) if ann.max() > 0.5 else -1
        self.leader = 0 if obs[lay["leader"]][0] > 0.5 else 1
        self.dealer = 0 if obs[lay["dealer"]][0] > 0.5 else 1
        m = obs[lay["match"]]
        target = rules.match_target
        self.match_points = [int(round(m[0] * target)), int(round(m[1] * target))]
        self.carry = int(round(m[2] * target))
        # Opponent hand size: equal to mine, one fewer if it led the card on the table.
        n_mine = self.hand.bit_count()
        self.opp_size = n_mine - 1 if self.table and self.leader == 1 else n_mine
        self.opp_hidden = self.opp_size - self.opp_known.bit_count()
        face_down = self.stock_size - 1 if self.stock_size else 0
        if self.opp_hidden < 0 or self.unseen.bit_count() != self.opp_hidden + face_down:
            raise InvalidPositionError(
                f"inconsistent observation: {self.unseen.bit_count()} unseen cards, but the opponent hides "
                f"{self.opp_hidden} and the stock has {face_down} face-down cards")
        self._unseen_ids = np.array([i for i in range(d.size) if self.unseen >> i & 1], dtype=np.int64)
        self._card_points = [d.points_of(self.me_won), d.points_of(self.opp_won)]
        self._marriage_points = [rules.marriage_points(ms, self.trump)
                                 for ms in self.marriage_suits]

    def sample(self, rng: np.random.Generator) -> GameState:
        """One complete state consistent with the observation (observer = seat 0), uniform over the
        ways to place the unseen cards."""
        perm = rng.permutation(self._unseen_ids).tolist()
        k = self.opp_hidden
        opp = self.opp_known
        for c in perm[:k]:
            opp |= 1 << c
        return GameState.from_fields(
            self.rules, hands=[self.hand, opp], won=[self.me_won, self.opp_won], card_points=self._card_points,
            tricks=self.tricks, marriage_points=self._marriage_points, marriage_suits=self.marriage_suits,
            stock=tuple(perm[k:]) + ((self.turn_up,) if self.stock_size else ()), trump=self.trump,
            leader=self.leader, table=self.table.bit_length() - 1 if self.table else -1,
            to_move=1 - self.leader if self.table else self.leader, dealer=self.dealer, closed_by=self.closed_by,
            closing_snapshot=self.snapshot, announced=self.announced, exchanged=self.exchanged,
            known=[0, self.opp_known], match_points=self.match_points, carry=self.carry)


def sample_states(observation, rules: RuleSet, rng: np.random.Generator, n: int) -> list[GameState]:
    """``n`` independent determinisations of ``observation`` (see :class:`Determinizer`)."""
    det = Determinizer(observation, rules)
    return [det.sample(rng) for _ in range(n)]
