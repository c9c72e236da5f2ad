"""Focused rule tests by area, on positions built by hand (RULES.md sections 2-5).

Players: A = player_0 (seat 0), B = player_1 (seat 1), as in RULES.md section 6. Expected values are derived
from RULES.md; the rule is cited in each test name.
"""

from __future__ import annotations

import numpy as np
import pytest

from schnapsen_env import GameState, Result, RuleSet, game_value
from schnapsen_env.match import Match, countdown, next_dealer, score_hand

A, B = 0, 1
P = ("player_0", "player_1")
DECK20 = "AS TS KS QS JS AH TH KH QH JH AD TD KD QD JD AC TC KC QC JC".split()  # S01
DECK24 = "AS TS KS QS JS 9S AH TH KH QH JH 9H AD TD KD QD JD 9D AC TC KC QC JC 9C".split()  # T01


def rs(ruleset: str = "schnapsen20", **knobs) -> RuleSet:
    return RuleSet.make(ruleset, **knobs)


def position(*, trump: str, stock: str, a: str, b: str, won_a: str = "", won_b: str = "", leader: str = "A",
             table: str | None = None, mar_a: str = "", mar_b: str = "", closed_by: str | None = None,
             snap: tuple[int, int] | None = None, announced: str | None = None, **extra) -> dict:
    """A position dict from RULES.md-style notation (card lists as space-separated strings)."""
    who = {"A": "player_0", "B": "player_1", None: None}
    pos = {
        "trump": trump,
        "stock": stock.split(),
        "closed_by": who[closed_by],
        "closing_snapshot": None if snap is None else {"points": snap[0], "tricks": snap[1]},
        "hands": {"player_0": a.split(), "player_1": b.split()},
        "won": {"player_0": won_a.split(), "player_1": won_b.split()},
        "marriages": {"player_0": mar_a.split(), "player_1": mar_b.split()},
        "announced": announced,
        "leader": who[leader],
        "table": table,
    }
    pos.update(extra)
    return pos


def load(rules: RuleSet, **kw) -> GameState:
    return GameState.from_position(rules, position(**kw))


def play(s: GameState, *names: str) -> GameState:
    for n in names:
        s.step(n)
    return s


def hand(s: GameState, seat: int) -> set[str]:
    return set(s.position()["hands"][P[seat]])


def legal(s: GameState) -> set[str]:
    return set(s.legal_action_names())


def plays(s: GameState) -> set[str]:
    return {n[5:] for n in s.legal_action_names() if n.startswith("play ")}


def res(s: GameState) -> tuple:
    r = s.result
    return None if r is None else (r.winner, r.game_points, r.reason)


# ---------------------------------------------------------------------------------------------- positions
def s12(rules=None, **over):
    """S12: stock QD JD KC [TH], B has led AS, A to play."""
    kw = dict(trump="H", stock="QD JD KC TH", a="KS AH TD QC JC", b="TS JS KH QH", won_a="AD KD",
              won_b="AC TC QS JH", leader="B", table="AS")
    kw.update(over)
    return load(rules or rs(), **kw)


def s13(rules=None):
    """S13: last stock pair KC [TH], B has led AS, A to play."""
    return load(rules or rs(), trump="H", stock="KC TH", a="KS AH JD QC JC", b="TS JS KH QH",
                won_a="AD TD KD QD", won_b="AC TC QS JH", leader="B", table="AS")


def s15(rules=None):
    """S15/S16: A to lead with JH at stock KC [TH]."""
    return load(rules or rs(), trump="H", stock="KC TH", a="JH KS AD QC JC", b="TS JS KH QH AS",
                won_a="TD KD QD JD", won_b="AC TC QS AH")


def s17(rules=None):
    """S17/S19/S43: A to lead, stock JD AH TH KS QS [KH], B without a trick."""
    return load(rules or rs(), trump="H", stock="JD AH TH KS QS KH", a="JH QH AS TS AC", b="JS TC KC QC JC",
                won_a="AD TD KD QD")


def s20(rules=None):
    return load(rules or rs(), trump="S", stock="KH QH JH JD QC QS", a="AS TS KS AH TH", b="JS AC TC KC JC",
                won_a="AD KD TD QD")


def s22(rules=None):
    return load(rules or rs(), trump="S", stock="KH QH JH JD QC QS", a="AS TS KS AH TH", b="JS AC TC KC JC",
                won_a="AD KD", won_b="TD QD")


def s24(rules=None):
    return load(rules or rs(), trump="S", stock="TD KD QD QS", a="AS TS KS QH JH", b="JS KH AC TC KC",
                won_a="QC JC", won_b="AH TH AD JD")


def s26(rules=None):
    return load(rules or rs(), trump="C", stock="QS JS KD KC", a="KS QH JH QC JC", b="AS TS KH AC TC",
                won_a="QD JD", won_b="AH TH AD TD")


def s28(rules=None):
    return load(rules or rs(), trump="S", stock="KH QH JH JD KC QS", a="AS TS AH TH JC", b="KS JS AC TC QC",
                won_a="AD KD TD QD")


def s29(rules=None):
    return load(rules or rs(), trump="C", stock="", a="QS QH JD", b="KC QC JC",
                won_a="AH TH AD TD KD QD AC TC", won_b="AS TS KS KH JS JH")


def s32(rules=None):
    return load(rules or rs(), trump="C", stock="", a="JS JH JD", b="KC QC JC",
                won_a="AH TH AD TD AC TC", won_b="AS TS KS QS KH QH KD QD")


def s34(rules=None):
    return load(rules or rs(), trump="C", stock="", a="QC JC JS", b="AC TC KC",
                won_a="AH TH AD TD KH QH JH JD", won_b="AS TS KS QS KD QD", mar_a="H", mar_b="S")


def s35(rules=None):
    return load(rules or rs(), trump="H", stock="", a="AC", b="JC", won_a="AS TS AH TH KS QS",
                won_b="JS KH QH JH AD TD KD QD JD TC KC QC")


def s39(rules=None):
    return load(rules or rs(), trump="H", stock="", a="KD QD AS JC", b="TS JS KC QC",
                won_a="AH TH AC TC KH QH", won_b="AD TD JD JH KS QS")


def s40(rules=None):
    return load(rules or rs(), trump="C", stock="AH AD KH KD JH QC", a="KS QS AS QH KC", b="JS QD JD AC JC",
                won_a="TH TD TC TS")


def s42(rules=None):
    return load(rules or rs(), trump="S", stock="TH KH QH JH AD TD KD AC TC AS", a="JD QD KC QC JC",
                b="JS TS KS QS AH", leader="B")


def t04(rules=None):
    return load(rules or rs("sixtysix24"), trump="H", stock="KC TH", a="9H AS KS AD TD QC",
                b="TS JS KH QH JD 9D", won_a="AH JH AC TC", won_b="QS 9S KD QD JC 9C")


def t06(rules=None):
    return load(rules or rs("sixtysix24"), trump="S", stock="", a="9C", b="9S",
                won_a="AS TS AH TH AD TD JS 9H", won_b="KS QS KH QH JH KD QD JD 9D AC TC KC QC JC")


def t09(rules=None):
    return load(rules or rs("sixtysix24"), trump="S", stock="", a="9C", b="9S",
                won_a="AS TS AH TH AD TD QS JS", won_b="KS KH QH JH 9H KD QD JD 9D AC TC KC QC JC")


def fresh20(rules=None, dealer="player_0"):
    return GameState.from_deck(rules or rs(), DECK20, dealer)


# ============================================================================================ deal R1 R2 R66-2
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


# ============================================================================================ trick winner R6
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
    s = load(rs(), trump="H", stock="QD JD KC TH", a="KS QS TD QC JC", b="TS JS KH QH", won_a="AD KD",
             won_b="AC TC AH JH", leader="B", table="AS")
    assert plays(s) == set("KS QS TD QC JC".split())
    s.step("play KS")
    assert s.leader == B and s.counted(B) == 34 + 15  # S38: B won 15


def test_r66_1_zero_point_trick_counts_as_trick():
    s = t06()
    s.step("play 9C")
    s.step("play 9S")
    assert s.tricks[B] == 8 and s.card_points[B] == 55


# ============================================================================================ drawing R7 R8
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


# ============================================================================================ following R9-R11
def test_r9_open_phase_any_card_s12():
    assert plays(s12()) == set("KS AH TD QC JC".split())


@pytest.mark.parametrize("a, table, won_a, won_b, b, expect", [
    # S06: must head in the led suit
    ("KS JS AH TD QC", "QS", "TS KH AD KD", "QH JH QD JD AC TC", "AS TH KC JC", {"KS"}),
    # S07: must follow although unable to beat; may not trump
    ("JS AH TD QC KC", "QS", "TS KH AD KD", "QH JH KS JD AC TC", "AS TH QD JC", {"JS"}),
    # S10: trump led, must over-trump
    ("AH QH AS TD JC", "KH", "TS JS AD KD", "QD JD AC TC KC QC", "TH JH KS QS", {"AH"}),
])
def test_r10_strict_following(a, table, won_a, won_b, b, expect):
    s = load(rs(), trump="H", stock="", a=a, b=b, won_a=won_a, won_b=won_b, leader="B", table=table)
    assert plays(s) == expect
    assert legal(s) == {"play " + c for c in expect}  # R5: nothing but a card


def test_r10_void_in_suit_and_trump_anything_s09():
    s = load(rs(), trump="H", stock="", a="QD KC QC JC", b="AS JD JS", won_a="TS AH KH QH",
             won_b="JH TH AD KD KS AC TC TD", leader="B", table="QS")
    assert plays(s) == set("QD KC QC JC".split())


def test_r10_void_in_suit_must_trump_s20():
    s = s20()
    play(s, "close", "play AH")
    assert plays(s) == {"JS"}
    play(s, "play JS", "play AC")
    assert plays(s) == {"AS", "TS", "KS"}  # any trump, no heading duty across suits


@pytest.mark.parametrize("must_head, expect", [(False, {"KS", "JS"}), (True, {"KS"})])
def test_r66_5_heading_not_required_t07(must_head, expect):
    rules = rs("sixtysix24", must_head=must_head)
    s = load(rules, trump="D", stock="", a="KS JS AH 9H TC 9D", b="AS TS 9S KH QH",
             won_a="TH JH AD TD KD QD", won_b="JD 9C AC KC QC JC", leader="B", table="QS")
    assert plays(s) == expect


# ============================================================================================ marriages R12-R14
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
    s = load(rs(), trump="H", stock="QD JD KC TH", a="KS QS TD QC JC", b="TS JS KH QH", won_a="AD KD",
             won_b="AC TC AH JH", leader="B", table="AS")
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


def sixtysix_trick(n: int, **knobs) -> GameState:
    """sixtysix24, A to lead trick ``n`` (6: stock JD [9D]; 7: exhausted) holding KH QH."""
    rules = rs("sixtysix24", **knobs)
    if n == 7:
        return load(rules, trump="D", stock="", a="KH QH AS TS 9S 9C", b="AH TH JH 9H KS QS",
                    won_a="AD TD KD QD JD 9D", won_b="AC TC KC QC JC JS")
    return load(rules, trump="D", stock="JD 9D", a="KH QH AS TS 9S 9C", b="AH TH JH 9H KS QS",
                won_a="AD TD KD QD", won_b="AC TC KC QC JC JS")


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


# ============================================================================================ exchange R15-R17
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


# ============================================================================================ close R18-R19
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


# ============================================================================================ claims R20-R21a
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


# ============================================================================================ scoring R22-R23a
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


# ============================================================================================ match R25 R26
def test_r25_m01_end_of_match():
    rules = rs()
    assert score_hand(rules, [6, 4], 0, Result(A, 2, "claim")) == ([8, 4], 0, [2, 0])
    assert countdown(6) == 1 and countdown(8) == 0 and countdown(4) == 3
    m = Match(rules, np.random.default_rng(0), dealer=0)
    m.points = [6, 4]
    m.state = s39()
    play(m.state, "marriage D", "claim")
    assert m.finish_hand() == [2, 0]
    assert m.points[A] >= 7 and m.over and m.winner == A
    with pytest.raises(ValueError):
        m.next_hand()


def test_r25_match_target_knob():
    m = Match(rs(match_target=11), np.random.default_rng(0), dealer=0)
    m.points = [8, 0]
    m.state = s39(rs(match_target=11))
    play(m.state, "marriage D", "claim")
    m.finish_hand()
    assert m.points == [10, 0] and not m.over


@pytest.mark.parametrize("winner", [A, B])
def test_r26_m02_dealer_alternates(winner):
    rules = rs()
    m = Match(rules, np.random.default_rng(5), deck=DECK20, dealer=A)
    assert m.state.dealer == A and m.state.leader == B
    m.state = s29() if winner == A else s34()
    m.state.dealer = A
    if winner == A:
        m.state.step("claim")
    else:
        play(m.state, "play QC", "play AC", "claim")
    assert m.state.result.winner == winner
    m.finish_hand()
    s = m.next_hand(deck=DECK20)
    assert s.dealer == B and s.leader == A and s.to_move == A
    assert hand(s, A) == set("AS TS KS KH QH".split())


@pytest.mark.parametrize("knob, result, expect", [
    ("alternate", Result(A, 2, "claim"), B),
    ("alternate", Result(B, 2, "claim"), B),
    ("loser", Result(A, 2, "claim"), B),
    ("loser", Result(B, 2, "claim"), A),
    ("winner", Result(A, 2, "claim"), A),
    ("winner", Result(B, 2, "claim"), B),
])
def test_r26_next_dealer_knob(knob, result, expect):
    assert next_dealer(rs(next_dealer=knob), A, result) == expect


@pytest.mark.parametrize("knob", ["alternate", "loser", "winner"])
def test_r66_11_tie_alternates_dealer(knob):
    rules = rs("sixtysix24", next_dealer=knob)
    assert next_dealer(rules, A, Result(None, 0, "tie")) == B
    assert next_dealer(rules, B, Result(None, 0, "tie")) == A


def test_r66_10_tie_carry_adds_up():
    rules = rs("sixtysix24")
    tie = Result(None, 0, "tie")
    pts, carry, gained = score_hand(rules, [1, 2], 0, tie)
    assert (pts, carry, gained) == ([1, 2], 1, [0, 0])
    pts, carry, gained = score_hand(rules, pts, carry, tie)
    assert (pts, carry) == ([1, 2], 2)
    pts, carry, gained = score_hand(rules, pts, carry, Result(B, 1, "count"))
    assert (pts, carry, gained) == ([1, 5], 0, [0, 3])


def test_r66_10_tie_none_carries_nothing():
    rules = rs("sixtysix24", tie="none")
    pts, carry, gained = score_hand(rules, [0, 0], 0, Result(None, 0, "tie"))
    assert (pts, carry, gained) == ([0, 0], 0, [0, 0])
    assert score_hand(rules, pts, carry, Result(A, 2, "claim")) == ([2, 0], 0, [2, 0])


def test_r66_10_tie_in_match_then_carry_to_next_winner_m02():
    rules = rs("sixtysix24")
    m = Match(rules, np.random.default_rng(3), deck=DECK24, dealer=A)
    m.state = t06(rules)
    m.state.dealer = A
    play(m.state, "play 9C", "play 9S")
    assert m.finish_hand() == [0, 0]
    assert m.carry == 1 and m.points == [0, 0]
    s = m.next_hand(deck=DECK24)
    assert s.dealer == B and s.leader == A  # M02: alternates after a tie too
    assert s.carry == 1
    m.state = t09(rules)
    m.state.dealer = B
    play(m.state, "play 9C", "play 9S")
    assert m.finish_hand() == [2, 0]  # 1 game point + 1 carried
    assert m.points == [2, 0] and m.carry == 0


def test_r66_10_tie_last_trick_variant_in_match():
    rules = rs("sixtysix24", tie="last_trick")
    m = Match(rules, np.random.default_rng(3), dealer=A)
    m.state = t06(rules)
    play(m.state, "play 9C", "play 9S")
    assert m.finish_hand() == [0, 1] and m.carry == 0
