"""Who wins a trick (RULES.md R6, R66-1).

Players: A = player_0 (seat 0), B = player_1 (seat 1), as in RULES.md section 6. Expected values are derived
from RULES.md; the rule is cited in each test name. Shared position helpers: :mod:`helpers.areas`.
"""

from __future__ import annotations

import pytest

from helpers.areas import A, B, at, load, plays, rs, t06


@pytest.mark.parametrize("follow, winner, gain", [
    ("AS", A, 15),  # same suit, higher rank wins
    ("AH", A, 15),  # follower's trump wins
    ("TD", B, 14),  # off suit, no trump: leader wins
    ("JC", B, 6),
])
def test_r6_trick_winner_spade_led(follow, winner, gain):
    s = load(rs(), trump="H", stock="QD JD KC TH", a="AS AH TD QC JC", b="TS JS KH QH", won_a="AD KD",
             won_b="AC TC QS JH", leader="B", table="KS")
    before = (s.counted(A), s.counted(B))
    s.step("play " + follow)
    assert s.leader == s.to_move == winner  # the winner leads next
    assert s.history[-1].winner == winner
    assert s.counted(winner) == before[winner] + gain
    assert s.counted(1 - winner) == before[1 - winner]
    assert s.tricks[winner] == (2 if winner == A else 3)


@pytest.mark.parametrize("follow, winner", [("AH", A), ("AS", B), ("QC", B)])
def test_r6_trick_winner_trump_led(follow, winner):
    s = load(rs(), trump="H", stock="QD JD KC TH", a="AS AH TD QC JC", b="TS JS KS QH", won_a="AD KD",
             won_b="AC TC QS JH", leader="B", table="KH")
    s.step("play " + follow)
    assert s.leader == winner


def test_r6_same_suit_lower_loses_s38():
    s = at("S38")
    assert plays(s) == set("KS QS TD QC JC".split())
    s.step("play KS")
    assert s.leader == B and s.counted(B) == 34 + 15  # S38: B won 15


def test_r66_1_zero_point_trick_counts_as_trick():
    s = t06()
    s.step("play 9C")
    s.step("play 9S")
    assert s.tricks[B] == 8 and s.card_points[B] == 55
