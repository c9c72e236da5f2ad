"""Closing the stock (RULES.md R18, R19, R66-4): when it is allowed, the snapshot, strict play afterwards.

Players: A = player_0 (seat 0), B = player_1 (seat 1), as in RULES.md section 6. Expected values are derived
from RULES.md; the rule is cited in each test name. Shared position helpers: :mod:`helpers.areas`.
"""

from __future__ import annotations

from helpers.areas import fresh20, legal, play, plays, rs, s15, s17, s26, t04


def test_r18_close_on_opening_lead_s02():
    assert "close" in legal(fresh20())


def test_r18_close_min_stock_4_s15_and_variant():
    assert "close" not in legal(s15())
    assert "close" in legal(s15(rs(close_min_stock=2)))


def test_r66_4_close_at_stock_2():
    assert "close" in legal(t04())


def test_r18_no_close_after_announcement():
    s = fresh20()
    s.step("marriage H")
    assert "close" not in legal(s)


def test_r19_close_snapshot_s26():
    s = s26()
    s.step("close")
    assert s.position()["closed_by"] == "player_0"
    assert s.position()["closing_snapshot"] == {"points": 42, "tricks": 2}
    assert s.is_strict and s.trump == 0


def test_r19_snapshot_excludes_pending_marriage():
    s = fresh20()
    play(s, "marriage H", "play QH", "play AH", "close")
    assert s.position()["closing_snapshot"] == {"points": 0, "tricks": 0}


def test_r19_r11_strict_on_next_trick_s19():
    s = s17()
    s.step("close")
    s.step("play AS")
    assert plays(s) == {"JS"}
