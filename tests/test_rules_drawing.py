"""Drawing from the stock (RULES.md R7, R8): the winner first, the loser of the last stock pair takes the
turn-up; no drawing once closed.

Players: A = player_0 (seat 0), B = player_1 (seat 1), as in RULES.md section 6. Expected values are derived
from RULES.md; the rule is cited in each test name. Shared position helpers: :mod:`helpers.areas`.
"""

from __future__ import annotations

from helpers.areas import A, B, fresh20, hand, play, plays, s13, s17


def test_r7_winner_draws_first_s03_s05():
    s = fresh20()
    play(s, "marriage H", "play QH", "play AH")
    assert s.counted(A) == 14 and s.counted(B) == 0  # S03: 40 pending
    assert "TD" in hand(s, A) and "KD" in hand(s, B)  # winner A drew TD, loser B drew KD
    assert s.position()["stock"][0] == "QD" and s.stock_size == 8
    play(s, "play JS", "play KS")
    assert s.counted(B) == 6 + 40  # S05: pending 40 counts with B's first trick
    assert "QD" in hand(s, B) and "JD" in hand(s, A)
    assert s.stock_size == 6


def test_r7_loser_draws_turn_up_s13():
    s = s13()
    assert "JD" in plays(s)  # R9: trick 5 is OPEN, discarding allowed
    assert plays(s) == set("KS AH JD QC JC".split())
    s.step("play JD")
    assert s.counted(B) == 26 + 13
    assert "KC" in hand(s, B) and "TH" in hand(s, A)  # loser A drew the turn-up
    assert s.stock_size == 0 and s.position()["stock"] == []
    assert "TH" in s.position()["known"]["player_0"]  # R27
    assert s.is_strict


def test_r8_r11_strict_from_trick_6():
    s = s13()
    play(s, "play JD", "marriage H", "play KH")  # B leads a trump after the stock emptied
    assert plays(s) == {"AH", "TH"}  # R10: trump led, A must head inside trumps


def test_r7_no_draw_while_closed_s19():
    s = s17()
    play(s, "close", "play AS", "play JS")
    assert s.stock_size == 6  # R19: dead stock stays listed, nothing drawn
    assert len(hand(s, A)) == 4 and len(hand(s, B)) == 4
