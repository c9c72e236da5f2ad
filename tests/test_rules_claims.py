"""Claiming 66 (RULES.md R20-R21a): the claim windows W1-W3, claim_mode, false_claim="reject".

Players: A = player_0 (seat 0), B = player_1 (seat 1), as in RULES.md section 6. Expected values are derived
from RULES.md; the rule is cited in each test name. Shared position helpers: :mod:`helpers.areas`.
"""

from __future__ import annotations

from helpers.areas import A, B, fresh20, legal, play, res, rs, s17, s22, s29, s32, s34, s40


def test_r20_w1_no_claim_before_trick_1_s02():
    assert "claim" not in legal(fresh20(rs(false_claim="mirror")))


def test_r20_w1_claim_loaded_without_history_s29():
    s = s29()
    assert s.counted(A) == 70 and s.counted(B) == 33
    assert "claim" in legal(s)
    s.step("claim")
    assert res(s) == (A, 1, "claim")


def test_r20_passed_window_waits_and_opponent_claims_s34():
    s = s34()
    assert s.counted(A) == 73 and s.counted(B) == 55
    assert "claim" in legal(s)
    s.step("play QC")
    assert legal(s) == {"play AC", "play TC", "play KC"}  # follower: no claim (R5)
    s.step("play AC")
    assert s.counted(B) == 69
    assert "claim" in legal(s)
    s.step("claim")
    assert res(s) == (B, 1, "claim")


def test_r20_w2_on_opening_lead_only_under_false_claim_variants():
    for fc, offered in (("reject", False), ("mirror", True), ("pagat", True)):
        s = fresh20(rs(false_claim=fc))
        s.step("marriage H")
        assert ("claim" in legal(s)) is offered


def test_r20_w3_last_trick_is_a_claim():
    s = s22()
    play(s, "close", "play AH", "play JS", "play AC", "play KS", "play AS", "play JC", "play TS", "play KC",
         "play TH", "play TC")
    assert s.counted(A) == 77
    assert res(s) == (A, 2, "claim")  # W3 claim by the closer: v(snap) = v(13, 1) = 2


def test_r21_auto_claim_on_marriage_s43():
    s = s17(rs(claim_mode="auto"))
    assert "claim" not in legal(s)
    play(s, "exchange", "marriage H")
    assert res(s) == (A, 3, "claim")


def test_r21_auto_claim_after_trick_w1():
    s = s40(rs(claim_mode="auto"))
    play(s, "marriage S", "play KS")
    assert s.result is None
    s.step("play JD")
    assert s.counted(A) == 66
    assert res(s) == (A, 3, "claim")


def test_r21_manual_after_trick_needs_claim_s40():
    s = s40()
    play(s, "marriage S", "play KS", "play JD")
    assert s.counted(A) == 66 and s.result is None
    assert "claim" in legal(s)
    s.step("claim")
    assert res(s) == (A, 3, "claim")


def test_r21_auto_mode_ignores_false_claim():
    s = s32(rs(claim_mode="auto", false_claim="mirror"))
    assert "claim" not in legal(s)


def test_r21a_reject_never_offers_losing_claim_s32():
    s = s32()
    assert s.counted(A) == 63
    assert "claim" not in legal(s)
