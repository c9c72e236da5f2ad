"""Dealing (RULES.md R1, R2, R66-2): the deal mapping of both rulesets, seeded new hands.

Players: A = player_0 (seat 0), B = player_1 (seat 1), as in RULES.md section 6. Expected values are derived
from RULES.md; the rule is cited in each test name. Shared position helpers: :mod:`helpers.areas`.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.areas import DECK20, DECK24, A, B, fresh20, hand, rs
from schnapsen_env import GameState


def test_r2_deal_mapping_schnapsen20_s01():
    s = fresh20()
    pos = s.position()
    assert hand(s, B) == set("AS TS KS KH QH".split())  # N = B gets c0-c2, c7-c8
    assert hand(s, A) == set("QS JS AH JH AD".split())  # D = A gets c3-c5, c9-c10
    assert pos["trump"] == "H" and s.turn_up == s.rules.deck.index("TH")
    assert pos["stock"] == "TD KD QD JD AC TC KC QC JC TH".split()
    assert s.stock_size == 10
    assert s.dealer == A and s.leader == B and s.to_move == B  # R1: N leads trick 1
    assert pos["won"] == {"player_0": [], "player_1": []} and pos["table"] is None


def test_r2_deal_mapping_other_dealer():
    s = fresh20(dealer="player_1")
    assert hand(s, A) == set("AS TS KS KH QH".split())
    assert hand(s, B) == set("QS JS AH JH AD".split())
    assert s.dealer == B and s.leader == A and s.to_move == A


def test_r2_deal_accepts_seat_ints():
    assert GameState.from_deck(rs(), DECK20, 0) == fresh20()


def test_r66_2_deal_mapping_sixtysix24_t01():
    s = GameState.from_deck(rs("sixtysix24"), DECK24, "player_0")
    pos = s.position()
    assert hand(s, B) == set("AS TS KS TH KH QH".split())  # N: c0-c2, c7-c9
    assert hand(s, A) == set("QS JS 9S JH 9H AD".split())  # D: c3-c5, c10-c12
    assert pos["trump"] == "H"
    assert pos["stock"] == "TD KD QD JD 9D AC TC KC QC JC 9C AH".split()
    assert s.stock_size == 12 and s.leader == B


@pytest.mark.parametrize("ruleset, hand_size, stock", [("schnapsen20", 5, 10), ("sixtysix24", 6, 12)])
def test_r1_new_hand_seeded(ruleset, hand_size, stock):
    rules = rs(ruleset)
    dealers = set()
    for seed in range(30):
        s = GameState.new_hand(rules, rng=np.random.default_rng(seed))
        assert s == GameState.new_hand(rules, rng=np.random.default_rng(seed))
        assert [len(h) for h in s.position()["hands"].values()] == [hand_size, hand_size]
        assert s.stock_size == stock
        assert s.leader == s.to_move == 1 - s.dealer
        dealers.add(s.dealer)
        assert GameState.new_hand(rules, rng=np.random.default_rng(seed), dealer=1).dealer == 1
    assert dealers == {0, 1}
