"""Exchanging the trump jack (nine) for the turn-up (RULES.md R15-R17, R66-3).

Players: A = player_0 (seat 0), B = player_1 (seat 1), as in RULES.md section 6. Expected values are derived
from RULES.md; the rule is cited in each test name. Shared position helpers: :mod:`helpers.areas`.
"""

from __future__ import annotations

from helpers.areas import A, B, hand, legal, load, play, plays, res, rs, s15, s17, s42, sixtysix_trick, t04


def test_r16_exchange_needs_stock_4_s15():
    s = s15()
    assert "exchange" not in legal(s) and "close" not in legal(s)


def test_r16_exchange_min_stock_2_variant_s16():
    s = s15(rs(exchange_min_stock=2, close_min_stock=2))
    assert {"exchange", "close"} <= legal(s)
    s.step("exchange")
    assert "TH" in hand(s, A) and s.position()["stock"] == ["KC", "JH"]
    play(s, "play QC", "play KH")
    assert s.counted(B) == 35 + 7
    assert "KC" in hand(s, B) and "JH" in hand(s, A)  # loser A drew the jack back


def test_r15_r17_exchange_then_marriage_then_claim_s17():
    s = s17()
    assert "exchange" in legal(s)
    s.step("exchange")
    assert "KH" in hand(s, A) and "JH" not in hand(s, A)
    assert s.position()["stock"][-1] == "JH" and s.position()["exchanged"] is True
    assert "KH" in s.position()["known"]["player_0"]  # R27: the old turn-up is known
    assert "exchange" not in legal(s)
    assert {"marriage H", "close"} <= legal(s)  # R17
    s.step("marriage H")
    assert s.counted(A) == 68
    assert legal(s) == {"play KH", "play QH", "claim"}
    s.step("claim")
    assert res(s) == (A, 3, "claim")


def test_r17_exchange_then_close_same_turn():
    s = s17()
    play(s, "exchange", "close")
    assert s.closed_by == A and "exchange" not in legal(s)


def test_r17_exchange_then_claim_same_turn():
    # A holds the trump jack and already has 49 + 20 (marriage D) = 69: W1 stays open after the exchange.
    s = load(rs(), trump="H", stock="KS QS TC KH", a="JH QH AS TS AC", b="JS KC QC JC JD",
             won_a="AD TD KD QD AH TH", mar_a="D")
    assert s.counted(A) == 69
    s.step("exchange")
    assert "claim" in legal(s)
    s.step("claim")
    assert res(s) == (A, 3, "claim")


def test_r16_no_exchange_after_announcement_or_close():
    s = load(rs(), trump="H", stock="JD AH TH TS QH KH", a="JH KS QS AS AC", b="JS TC KC QC JC",
             won_a="AD TD KD QD")
    assert {"exchange", "marriage S", "close"} <= legal(s)
    s.step("marriage S")
    assert legal(s) == {"play KS", "play QS"}
    t = s17()
    t.step("close")
    assert "exchange" not in legal(t)  # S19


def test_r16_non_dealer_exchanges_and_closes_before_trick_1_s42():
    s = s42()
    assert {"exchange", "close"} <= legal(s)
    play(s, "exchange", "close")
    assert s.position()["closing_snapshot"] == {"points": 0, "tricks": 0}
    s.step("play AS")
    assert plays(s) == set("JD QD KC QC JC".split())  # no spades, no trumps: anything
    play(s, "play JC", "marriage S", "play KS")
    assert s.counted(B) == 53
    play(s, "play QC", "play TS", "play KC")
    assert s.counted(B) == 74
    s.step("claim")
    assert res(s) == (B, 3, "claim")


def test_r66_3_nine_exchange_at_stock_2_t04():
    s = t04()
    assert {"exchange", "close"} <= legal(s)
    s.step("exchange")
    assert "TH" in hand(s, A) and s.position()["stock"] == ["KC", "9H"]
    play(s, "play QC", "play KH")
    assert "9H" in hand(s, A) and "KC" in hand(s, B)


def test_r66_3_exchange_rank_j_variant():
    s = t04(rs("sixtysix24", exchange_rank="J"))
    assert "exchange" not in legal(s)  # A holds 9H, not JH


def test_r16_turn_up_is_exchange_card_nothing_to_exchange():
    s = sixtysix_trick(6)  # the turn-up is the exchange card 9D itself
    assert "exchange" not in legal(s)
