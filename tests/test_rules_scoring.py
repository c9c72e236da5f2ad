"""Scoring a hand (RULES.md section 1 game value, R22-R23a, R66-7, R66-10): false claims, closed hands,
played-out hands, the last-trick bonus, ties.

Players: A = player_0 (seat 0), B = player_1 (seat 1), as in RULES.md section 6. Expected values are derived
from RULES.md; the rule is cited in each test name. Shared position helpers: :mod:`helpers.areas`.
"""

from __future__ import annotations

import pytest

from helpers.areas import A, B, fresh20, hand, legal, load, play, plays, res, rs, s20, s24, s26, s28, s32, s35, t06, t09
from schnapsen_env import GameState, game_value


def test_game_value_section_1():
    assert game_value(0, 0) == 3 and game_value(40, 0) == 3
    assert game_value(0, 1) == 2 and game_value(32, 3) == 2
    assert game_value(33, 1) == 1 and game_value(80, 4) == 1


@pytest.mark.parametrize("fc, points", [("mirror", 1), ("pagat", 2)])
def test_r22_false_claim_s32(fc, points):
    s = s32(rs(false_claim=fc))
    s.step("claim")
    assert res(s) == (B, points, "false_claim")


@pytest.mark.parametrize("fc", ["mirror", "pagat"])
def test_r22_false_claim_opponent_without_trick_s04(fc):
    s = fresh20(rs(false_claim=fc))
    play(s, "marriage H", "play QH", "play AH", "exchange")
    assert "TH" in hand(s, A) and s.position()["stock"][-1] == "JH"
    s.step("claim")
    assert res(s) == (B, 3, "false_claim")


@pytest.mark.parametrize("value", ["formula", "one"])
def test_r22_last_trick_without_66_s35(value):
    s = s35(rs(unclaimed_last_trick_value=value))
    play(s, "play AC", "play JC")
    assert s.counted(A) == 62 and s.counted(B) == 58
    assert res(s) == (A, 1, "last_trick")


@pytest.mark.parametrize("knobs, points", [({}, 3), ({"closing_reference": "at_end"}, 2)])
def test_r23_closer_claims_v_snap_s20(knobs, points):
    s = s20(rs(**knobs))
    play(s, "close", "play AH", "play JS", "play AC", "play KS", "play AS", "play JC", "play TS", "play KC")
    s.step("claim")
    assert res(s) == (A, points, "claim")


@pytest.mark.parametrize("knobs, points", [({}, 2), ({"failed_close_value": "flat3"}, 3)])
def test_r23_non_closer_claims_max2_s26(knobs, points):
    s = s26(rs(**knobs))
    play(s, "close", "play QH", "play KH", "play AC")
    assert plays(s) == {"QC", "JC"}
    play(s, "play JC", "play AS", "play KS")
    assert s.counted(B) == 77
    s.step("claim")
    assert res(s) == (B, points, "claim")


@pytest.mark.parametrize("knobs, points", [({}, 2), ({"failed_close_value": "flat3"}, 3)])
def test_r23_closer_claims_falsely_s24(knobs, points):
    s = s24(rs(false_claim="mirror", **knobs))
    play(s, "close", "play AS", "play JS")
    assert s.counted(A) == 18
    s.step("claim")
    assert res(s) == (B, points, "false_claim")


def closed_by_b_a_to_lead(**knobs) -> GameState:
    """B closed before trick 1 (snapshot A = (0, 0)), A won trick 1 (B led JD, A took it with AD)."""
    return load(rs(**knobs), trump="H", stock="KS TD KD QD AC TC KC QC JC JH", a="AH TH QS JS",
                b="AS TS KH QH", won_a="JD AD", leader="A", closed_by="B", snap=(0, 0))


@pytest.mark.parametrize("knobs, points", [
    ({"false_claim": "mirror"}, 3),  # max(2, v(0, 0))
    ({"false_claim": "mirror", "closing_reference": "at_end"}, 2),  # max(2, v(13, 1))
    ({"false_claim": "pagat"}, 3),  # closer without a trick
    ({"false_claim": "pagat", "closing_reference": "at_end"}, 3),
])
def test_r23_non_closer_claims_falsely(knobs, points):
    s = closed_by_b_a_to_lead(**knobs)
    assert s.counted(A) == 13 and "claim" in legal(s)
    s.step("claim")
    assert res(s) == (B, points, "false_claim")


@pytest.mark.parametrize("knobs, points", [
    ({"false_claim": "mirror"}, 2),  # max(2, v(42, 2))
    ({"false_claim": "pagat"}, 2),  # closer A has a trick
    ({"false_claim": "mirror", "failed_close_value": "flat3"}, 3),
])
def test_r23_non_closer_claims_falsely_s26(knobs, points):
    s = s26(rs(**knobs))
    play(s, "close", "play QH", "play KH")
    assert s.counted(B) == 49
    s.step("claim")
    assert res(s) == (A, points, "false_claim")


def test_r23_played_out_closer_score_s28():
    s = s28()
    play(s, "close", "play AS", "play JS", "play TS", "play KS", "play AH", "play QC")
    assert s.counted(A) == 69 and s.result is None
    play(s, "play TH", "play TC", "play JC")
    assert plays(s) == {"AC"}
    s.step("play AC")
    assert res(s) == (A, 3, "closed_hand")


@pytest.mark.parametrize("knobs, expect", [
    ({"closed_hand_end": "must_claim"}, (B, 3, "closed_hand")),
    ({"closed_hand_end": "must_claim", "failed_close_value": "flat3"}, (B, 3, "closed_hand")),
    ({"closing_reference": "at_end"}, (A, 2, "closed_hand")),  # v(B at end) = v(13, 1)
])
def test_r23a_played_out_variants_s28(knobs, expect):
    s = s28(rs(**knobs))
    play(s, "close", "play AS", "play JS", "play TS", "play KS", "play AH", "play QC", "play TH", "play TC",
         "play JC", "play AC")
    assert res(s) == expect


def test_r23_played_out_closer_below_66_loses():
    """Closed hand played out, closer below 66, last-trick winner below 66: O wins max(2, v(snap))."""
    s = load(rs(), trump="S", stock="KH QH JH JD KC QS", a="AC", b="JC", closed_by="A", snap=(40, 3),
             won_a="AS TS AH TH JS KS", won_b="AD KD TD QD TC QC")
    assert s.counted(A) == 48 and s.counted(B) == 41
    play(s, "play AC", "play JC")
    assert s.counted(A) == 61
    assert res(s) == (B, 2, "closed_hand")


@pytest.mark.parametrize("when_closed, points", [(False, 55), (True, 65)])
def test_r66_7_last_trick_bonus_only_unclosed(when_closed, points):
    rules = rs("sixtysix24", last_trick_bonus_when_closed=when_closed)
    s = load(rules, trump="S", stock="9D JS", a="9C", b="9S", closed_by="A", snap=(40, 5),
             won_a="AS TS AH TH AD TD", won_b="KS QS KH QH JH KD QD JD AC TC KC QC JC 9H")
    play(s, "play 9C", "play 9S")
    assert s.counted(B) == points
    assert res(s) == (B, 2, "closed_hand")  # closer A at 63 < 66: max(2, v(40, 5))


@pytest.mark.parametrize("tie, expect", [("carry", (None, 0, "tie")), ("none", (None, 0, "tie")),
                                         ("last_trick", (B, 1, "last_trick"))])
def test_r66_10_tie_t06(tie, expect):
    s = t06(rs("sixtysix24", tie=tie))
    s.step("play 9C")
    assert plays(s) == {"9S"}
    s.step("play 9S")
    assert s.counted(A) == 65 and s.counted(B) == 65  # +10 for B
    assert res(s) == expect


def test_r66_10_count_t09():
    s = t09()
    play(s, "play 9C", "play 9S")
    assert s.counted(A) == 68 and s.counted(B) == 62
    assert res(s) == (A, 1, "count")


def test_r66_10_count_uses_v_of_last_trick_winner():
    s = load(rs("sixtysix24"), trump="S", stock="", a="9C", b="9S",
             won_a="AS TS KS QS JS AH TH KH QH JH AD TD AC TC", won_b="KD QD JD 9D KC QC JC 9H")
    assert s.counted(A) == 102
    play(s, "play 9C", "play 9S")
    assert s.counted(B) == 28
    assert res(s) == (A, 2, "count")  # v(B) = v(28, 5) = 2


def test_r66_10_w3_after_bonus():
    """B reaches 66 only through the +10 of the last trick: W3 claim."""
    s = load(rs("sixtysix24"), trump="S", stock="", a="9C", b="9S",
             won_a="AS TS AH TH AD JS 9H 9D", won_b="KS QS KH QH JH TD KD QD JD AC TC KC QC JC")
    assert s.counted(B) == 65 and s.counted(A) == 55
    play(s, "play 9C", "play 9S")
    assert s.counted(B) == 75
    assert res(s) == (B, 1, "claim")
