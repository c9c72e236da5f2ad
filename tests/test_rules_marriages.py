"""Marriages (RULES.md R4, R5, R12-R14, R66-6): announced on the lead, 20 or 40, pending without a trick, the
marriage windows.

Players: A = player_0 (seat 0), B = player_1 (seat 1), as in RULES.md section 6. Expected values are derived
from RULES.md; the rule is cited in each test name. Shared position helpers: :mod:`helpers.areas`.
"""

from __future__ import annotations

from helpers.areas import DECK24, A, B, at, fresh20, legal, load, play, res, rs, s39, s40, s42, sixtysix_trick
from schnapsen_env import GameState


def test_r12_automatic_k_q_only_via_announcement_s02():
    s = fresh20()
    assert legal(s) == {"play AS", "play TS", "play KS", "marriage H", "close"}


def test_r12_optional_declaration_allows_plain_lead_s45():
    s = s40(rs(marriage_declaration="optional"))
    assert {"marriage S", "play KS", "play QS"} <= legal(s)
    play(s, "play KS", "play JD")
    assert s.counted(A) == 46  # no 20


def test_r12_marriage_40_in_trumps_20_otherwise():
    pos = dict(trump="C", stock="AH AD KH KD JH JC", a="KC QC AS KS QS", b="JS QD QH AC JD",
               won_a="TH TD TC TS")
    s = load(rs(), **pos)
    assert legal(s) == {"marriage C", "marriage S", "play AS", "close"}
    s.step("marriage S")
    assert s.counted(A) == 60  # R14: counts at once, A has tricks
    t = load(rs(), **pos)
    t.step("marriage C")
    assert t.counted(A) == 80


def test_r4_after_announcement_only_k_or_q_and_one_marriage_per_lead():
    s = load(rs(), trump="C", stock="AH AD KH KD JH JC", a="KC QC AS KS QS", b="JS QD QH AC JD",
             won_a="TH TD TC TS")
    s.step("marriage S")
    assert legal(s) == {"play KS", "play QS"}  # 60 < 66: no claim, no second marriage, no close
    s.step("play QS")
    assert "KS" in s.position()["known"]["player_0"]  # R12: the partner is public now
    assert s.position()["marriages"]["player_0"] == ["S"] and s.position()["announced"] is None


def test_r4_claim_after_announcement_when_correct_r20_w2():
    s = load(rs(), trump="C", stock="AH AD KH KD JH JC", a="KC QC AS KS QS", b="JS QD QH AC JD",
             won_a="TH TD TC TS")
    s.step("marriage C")
    assert legal(s) == {"play KC", "play QC", "claim"}
    s.step("claim")
    assert res(s) == (A, 3, "claim")  # v(B) = 3: B has no trick


def test_r5_r12_follower_never_announces_s38():
    s = at("S38")
    assert all(n.startswith("play ") for n in legal(s))


def test_r14_pending_marriage_s03():
    s = fresh20()
    play(s, "marriage H", "play QH", "play AH")
    assert s.pending_marriage_points(B) == 40
    assert s.position()["points"] == {"player_0": 14, "player_1": 0}
    assert s.position()["marriages"]["player_1"] == ["H"]


def test_r14_pending_marriage_never_counts_for_no_trick_test():
    s = load(rs(), trump="H", stock="", a="JC JD AH", b="KH TH JH",
             won_a="AS TS KS QS AC TC KC QC AD TD KD QD QH JS", mar_b="H")
    assert s.counted(B) == 0 and s.counted(A) == 89
    s.step("claim")
    assert res(s) == (A, 3, "claim")


def test_r13_marriage_after_exhaustion_s39():
    s = s39()
    s.step("marriage D")
    assert s.counted(A) == 69
    assert "claim" in legal(s)
    s.step("claim")
    assert res(s) == (A, 2, "claim")  # v(B) with 32 points, 3 tricks


def test_r13_marriage_window_stock_open_s39_variant():
    s = s39(rs(marriage_window="stock_open"))
    assert "marriage D" not in legal(s)
    assert {"play KD", "play QD"} <= legal(s)  # plain leads
    assert "claim" not in legal(s)


def test_r13_marriage_after_close_s42():
    s = s42()
    play(s, "exchange", "close", "play AS", "play JC")
    assert "marriage S" in legal(s)
    s.step("marriage S")
    assert s.counted(B) == 13 + 40


def test_r13_opening_lead_marriage_off_s46():
    s = fresh20(rs(marriage_on_opening_lead=False))
    assert "marriage H" not in legal(s)
    assert {"play KH", "play QH"} <= legal(s)


def test_r66_6_marriage_on_lead_to_trick_6():
    s = sixtysix_trick(6)
    assert s.trick_number == 6
    assert "marriage H" in legal(s) and "play KH" not in legal(s)


def test_r66_6_no_marriage_on_lead_to_trick_7():
    s = sixtysix_trick(7)
    assert s.trick_number == 7
    assert "marriage H" not in legal(s)
    assert {"play KH", "play QH"} <= legal(s)


def test_r66_6_window_any_variant_trick_7():
    assert "marriage H" in legal(sixtysix_trick(7, marriage_window="any"))


def test_r66_6_marriage_allowed_on_opening_lead_t02():
    s = GameState.from_deck(rs("sixtysix24"), DECK24, "player_0")
    assert "marriage H" in legal(s)  # 40 on the opening lead
    assert "close" in legal(s)  # S = 12
    s.step("play AS")
    assert "exchange" not in legal(s)  # A holds 9H but is not on lead
