"""RULES.md section 6 scenarios (one test each, exact values) and section 7 fault regressions.

Notation (RULES.md section 6): A = ``player_0``, B = ``player_1``. "A leads KS (marriage 20)" is the two
actions ``marriage S``, ``play KS``; when the next line is a claim it is ``marriage S``, ``claim``. A claim
written after the last trick is the engine's W3 claim (the result is already set). Position blocks are
copied verbatim from RULES.md and parsed by :mod:`scenario_util`.
"""

from __future__ import annotations

import numpy as np
import pytest

from schnapsen_env import GameState, IllegalActionError, Result, RuleSet, game_value
from schnapsen_env.match import Match, countdown, next_dealer, score_hand

from scenario_util import (assert_illegal, assert_result, hand, legal, load, parse_scenario, plays, points, run,
                           tricks)

# ------------------------------------------------------------------------------------------------ positions
S01_START = """\
trump: H   stock: TD KD QD JD AC TC KC QC JC [TH]  (size 10; top first, [turn-up] last)
A (dealer): hand QS JS AH JH AD | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
B (leader): hand AS TS KS KH QH | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
"""
S02 = S03 = S04 = S05 = S46 = S01_START

S06 = """\
trump: H   stock: empty (exhausted)
A: hand KS JS AH TD QC | won TS KH AD KD = 29 card pts, 2 trick(s) | marriages – | counted 29
B (leader): hand AS TH KC JC | won QH JH QD JD AC TC = 31 card pts, 3 trick(s) | marriages – | counted 31
table: B has led QS; A to play
"""
S07 = """\
trump: H   stock: empty (exhausted)
A: hand JS AH TD QC KC | won TS KH AD KD = 29 card pts, 2 trick(s) | marriages – | counted 29
B (leader): hand AS TH QD JC | won QH JH KS JD AC TC = 32 card pts, 3 trick(s) | marriages – | counted 32
table: B has led QS; A to play
"""
S09 = """\
trump: H   stock: empty (exhausted)
A: hand QD KC QC JC | won TS AH KH QH = 28 card pts, 2 trick(s) | marriages – | counted 28
B (leader): hand AS JD JS | won JH TH AD KD KS AC TC TD = 62 card pts, 4 trick(s) | marriages – | counted 62
table: B has led QS; A to play
"""
S10 = """\
trump: H   stock: empty (exhausted)
A: hand AH QH AS TD JC | won TS JS AD KD = 27 card pts, 2 trick(s) | marriages – | counted 27
B (leader): hand TH JH KS QS | won QD JD AC TC KC QC = 33 card pts, 3 trick(s) | marriages – | counted 33
table: B has led KH; A to play
"""
S12 = """\
trump: H   stock: QD JD KC [TH]  (size 4; top first, [turn-up] last)
A: hand KS AH TD QC JC | won AD KD = 15 card pts, 1 trick(s) | marriages – | counted 15
B (leader): hand TS JS KH QH | won AC TC QS JH = 26 card pts, 2 trick(s) | marriages – | counted 26
table: B has led AS; A to play
"""
S13 = """\
trump: H   stock: KC [TH]  (size 2; top first, [turn-up] last)
A: hand KS AH JD QC JC | won AD TD KD QD = 28 card pts, 2 trick(s) | marriages – | counted 28
B (leader): hand TS JS KH QH | won AC TC QS JH = 26 card pts, 2 trick(s) | marriages – | counted 26
table: B has led AS; A to play
"""
S15 = S16 = """\
trump: H   stock: KC [TH]  (size 2; top first, [turn-up] last)
A (leader): hand JH KS AD QC JC | won TD KD QD JD = 19 card pts, 2 trick(s) | marriages – | counted 19
B: hand TS JS KH QH AS | won AC TC QS AH = 35 card pts, 2 trick(s) | marriages – | counted 35
"""
S17 = S19 = S43 = """\
trump: H   stock: JD AH TH KS QS [KH]  (size 6; top first, [turn-up] last)
A (leader): hand JH QH AS TS AC | won AD TD KD QD = 28 card pts, 2 trick(s) | marriages – | counted 28
B: hand JS TC KC QC JC | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
"""
S20 = """\
trump: S   stock: KH QH JH JD QC [QS]  (size 6; top first, [turn-up] last)
A (leader): hand AS TS KS AH TH | won AD KD TD QD = 28 card pts, 2 trick(s) | marriages – | counted 28
B: hand JS AC TC KC JC | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
"""
S22 = """\
trump: S   stock: KH QH JH JD QC [QS]  (size 6; top first, [turn-up] last)
A (leader): hand AS TS KS AH TH | won AD KD = 15 card pts, 1 trick(s) | marriages – | counted 15
B: hand JS AC TC KC JC | won TD QD = 13 card pts, 1 trick(s) | marriages – | counted 13
"""
S24 = """\
trump: S   stock: TD KD QD [QS]  (size 4; top first, [turn-up] last)
A (leader): hand AS TS KS QH JH | won QC JC = 5 card pts, 1 trick(s) | marriages – | counted 5
B: hand JS KH AC TC KC | won AH TH AD JD = 34 card pts, 2 trick(s) | marriages – | counted 34
"""
S26 = """\
trump: C   stock: QS JS KD [KC]  (size 4; top first, [turn-up] last)
A (leader): hand KS QH JH QC JC | won QD JD = 5 card pts, 1 trick(s) | marriages – | counted 5
B: hand AS TS KH AC TC | won AH TH AD TD = 42 card pts, 2 trick(s) | marriages – | counted 42
"""
S28 = """\
trump: S   stock: KH QH JH JD KC [QS]  (size 6; top first, [turn-up] last)
A (leader): hand AS TS AH TH JC | won AD KD TD QD = 28 card pts, 2 trick(s) | marriages – | counted 28
B: hand KS JS AC TC QC | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
"""
S29 = """\
trump: C   stock: empty (exhausted)
A (leader): hand QS QH JD | won AH TH AD TD KD QD AC TC = 70 card pts, 4 trick(s) | marriages – | counted 70
B: hand KC QC JC | won AS TS KS KH JS JH = 33 card pts, 3 trick(s) | marriages – | counted 33
"""
S32 = """\
trump: C   stock: empty (exhausted)
A (leader): hand JS JH JD | won AH TH AD TD AC TC = 63 card pts, 3 trick(s) | marriages – | counted 63
B: hand KC QC JC | won AS TS KS QS KH QH KD QD = 42 card pts, 4 trick(s) | marriages – | counted 42
"""
S34 = """\
trump: C   stock: empty (exhausted)
A (leader): hand QC JC JS | won AH TH AD TD KH QH JH JD = 53 card pts, 4 trick(s) | marriages H20 | counted 73
B: hand AC TC KC | won AS TS KS QS KD QD = 35 card pts, 3 trick(s) | marriages S20 | counted 55
"""
S35 = """\
trump: H   stock: empty (exhausted)
A (leader): hand AC | won AS TS AH TH KS QS = 49 card pts, 3 trick(s) | marriages – | counted 49
B: hand JC | won JS KH QH JH AD TD KD QD JD TC KC QC = 58 card pts, 6 trick(s) | marriages – | counted 58
"""
S38 = """\
trump: H   stock: QD JD KC [TH]  (size 4; top first, [turn-up] last)
A: hand KS QS TD QC JC | won AD KD = 15 card pts, 1 trick(s) | marriages – | counted 15
B (leader): hand TS JS KH QH | won AC TC AH JH = 34 card pts, 2 trick(s) | marriages – | counted 34
table: B has led AS; A to play
"""
S39 = """\
trump: H   stock: empty (exhausted)
A (leader): hand KD QD AS JC | won AH TH AC TC KH QH = 49 card pts, 3 trick(s) | marriages – | counted 49
B: hand TS JS KC QC | won AD TD JD JH KS QS = 32 card pts, 3 trick(s) | marriages – | counted 32
"""
S40 = S45 = """\
trump: C   stock: AH AD KH KD JH [QC]  (size 6; top first, [turn-up] last)
A (leader): hand KS QS AS QH KC | won TH TD TC TS = 40 card pts, 2 trick(s) | marriages – | counted 40
B: hand JS QD JD AC JC | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
"""
S42 = """\
trump: S   stock: TH KH QH JH AD TD KD AC TC [AS]  (size 10; top first, [turn-up] last)
A (dealer): hand JD QD KC QC JC | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
B (leader): hand JS TS KS QS AH | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
"""
T02 = """\
trump: H   stock: TD KD QD JD 9D AC TC KC QC JC 9C [AH]  (size 12; top first, [turn-up] last)
A (dealer): hand QS JS 9S JH 9H AD | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
B (leader): hand AS TS KS TH KH QH | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
"""
T04 = """\
trump: H   stock: KC [TH]  (size 2; top first, [turn-up] last)
A (leader): hand 9H AS KS AD TD QC | won AH JH AC TC = 34 card pts, 2 trick(s) | marriages – | counted 34
B: hand TS JS KH QH JD 9D | won QS 9S KD QD JC 9C = 12 card pts, 3 trick(s) | marriages – | counted 12
"""
T06 = """\
trump: S   stock: empty (exhausted)
A (leader): hand 9C | won AS TS AH TH AD TD JS 9H = 65 card pts, 4 trick(s) | marriages – | counted 65
B: hand 9S | won KS QS KH QH JH KD QD JD 9D AC TC KC QC JC = 55 card pts, 7 trick(s) | marriages – | counted 55
"""
T07 = """\
trump: D   stock: empty (exhausted)
A: hand KS JS AH 9H TC 9D | won TH JH AD TD KD QD = 40 card pts, 3 trick(s) | marriages – | counted 40
B (leader): hand AS TS 9S KH QH | won JD 9C AC KC QC JC = 22 card pts, 3 trick(s) | marriages – | counted 22
table: B has led QS; A to play
"""
T09 = """\
trump: S   stock: empty (exhausted)
A (leader): hand 9C | won AS TS AH TH AD TD QS JS = 68 card pts, 4 trick(s) | marriages – | counted 68
B: hand 9S | won KS KH QH JH 9H KD QD JD 9D AC TC KC QC JC = 52 card pts, 7 trick(s) | marriages – | counted 52
"""

DECK20_S01 = "AS TS KS QS JS AH TH KH QH JH AD TD KD QD JD AC TC KC QC JC".split()
DECK24_T01 = "AS TS KS QS JS 9S AH TH KH QH JH 9H AD TD KD QD JD 9D AC TC KC QC JC 9C".split()


def turn_up(st: GameState) -> str:
    return st.position()["stock"][-1]


def snapshot(st: GameState) -> tuple[int, int]:
    snap = st.position()["closing_snapshot"]
    return snap["points"], snap["tricks"]


def same_position(a: GameState, b: GameState) -> None:
    """Two states describe the same deal (hand lists compared as sets)."""
    pa, pb = a.position(), b.position()
    for key in ("trump", "stock", "leader", "dealer", "table", "closed_by", "won", "marriages", "points"):
        assert pa[key] == pb[key], key
    for p in ("player_0", "player_1"):
        assert set(pa["hands"][p]) == set(pb["hands"][p])
    assert a.to_move == b.to_move


# ------------------------------------------------------------------------------------------- deal and match
def test_s01_deal_mapping():
    st = GameState.from_deck(RuleSet.make("schnapsen20"), DECK20_S01, dealer="player_0")
    assert hand(st, "B") == {"AS", "TS", "KS", "KH", "QH"}
    assert hand(st, "A") == {"QS", "JS", "AH", "JH", "AD"}
    assert turn_up(st) == "TH"
    assert st.position()["trump"] == "H"
    assert st.position()["stock"] == "TD KD QD JD AC TC KC QC JC TH".split()
    assert len(st.stock) == 10
    assert st.position()["leader"] == "player_1" and st.to_move == 1
    assert st.position()["dealer"] == "player_0"
    # "This is the starting state of S02-S05 and S46."
    same_position(st, load(S01_START))


def test_t01_deal_mapping_24():
    st = GameState.from_deck(RuleSet.make("sixtysix24"), DECK24_T01, dealer="player_0")
    assert hand(st, "B") == {"AS", "TS", "KS", "TH", "KH", "QH"}
    assert hand(st, "A") == {"QS", "JS", "9S", "JH", "9H", "AD"}
    assert turn_up(st) == "AH"
    assert st.position()["trump"] == "H"
    assert st.position()["stock"] == "TD KD QD JD 9D AC TC KC QC JC 9C AH".split()
    assert len(st.stock) == 12
    assert st.position()["leader"] == "player_1" and st.to_move == 1
    same_position(st, load(T02, "sixtysix24"))  # "This is the starting state of T02."


def _s39_won_by_a() -> GameState:
    """A hand A wins for 2 game points (S39)."""
    st = load(S39, extra={"dealer": "player_0"})
    run(st, "marriage D", "claim")
    assert st.result == Result(0, 2, "claim")
    return st


def test_m01_end_of_match():
    """M01: A at 6 wins a hand worth 2 against B at 4: A has 8, the match is over, the surplus is ignored."""
    rules = RuleSet.make("schnapsen20")
    # score_hand: A 6, B 4, A wins a hand worth 2 -> A 8.
    new, carry, gained = score_hand(rules, [6, 4], 0, Result(0, 2, "claim"))
    assert new == [8, 4] and gained == [2, 0] and carry == 0
    # Count-down display: A from 1 to -1, shown as 0.
    assert countdown(6, 7) == 1
    assert countdown(8, 7) == 0
    assert countdown(4, 7) == 3
    # Through a Match: the match is over, A wins (B gets the Bummerl), no further hand is dealt.
    m = Match(rules, rng=np.random.default_rng(0), dealer=0)
    m.points = [6, 4]
    m.state = _s39_won_by_a()
    assert m.finish_hand() == [2, 0]
    assert m.points == [8, 4]
    assert m.over and m.winner == 0
    with pytest.raises(ValueError):
        m.next_hand()


@pytest.mark.parametrize("hand1_winner", [0, 1])
def test_m02_dealer_rotation(hand1_winner):
    rules = RuleSet.make("schnapsen20")
    result = Result(hand1_winner, 1, "claim")
    assert next_dealer(rules, 0, result) == 1
    m = Match(rules, rng=np.random.default_rng(3), deck=DECK20_S01, dealer=0)
    assert m.state.dealer == 0 and m.state.to_move == 1  # A dealt hand 1, B leads it
    # Finish hand 1 with the given winner: seeded random playouts until one ends that way.
    st = m.state
    rng = np.random.default_rng(hand1_winner + 10)
    for _ in range(200):
        st2 = st.copy()
        while st2.result is None:
            acts = st2.legal_actions()
            st2.push(acts[int(rng.integers(len(acts)))])
        if st2.result.winner == hand1_winner:
            break
    assert st2.result.winner == hand1_winner
    m.state = st2
    m.finish_hand()
    nxt = m.next_hand()
    assert nxt.dealer == 1  # hand 2 is dealt by B
    assert nxt.leader == 0 and nxt.to_move == 0  # A leads trick 1


def test_m02_dealer_rotation_after_tie_sixtysix24():
    rules = RuleSet.make("sixtysix24")
    assert next_dealer(rules, 0, Result(None, 0, "tie")) == 1
    m = Match(rules, rng=np.random.default_rng(5), deck=DECK24_T01, dealer=0)
    st = load(T06, "sixtysix24", extra={"dealer": "player_0"})
    run(st, "play 9C", "play 9S")
    assert st.result == Result(None, 0, "tie")
    m.state = st  # hand 1 (dealt by A) ended 65-65
    m.finish_hand()
    nxt = m.next_hand()
    assert nxt.dealer == 1
    assert nxt.leader == 0 and nxt.to_move == 0


# ------------------------------------------------------------------------------------------ opening (S02-S05)
def test_s02_opening_lead_options():
    st = load(S02)
    assert st.to_move == 1  # B leads
    names = legal(st)
    assert "close" in names  # B may close (stock 10)
    assert_illegal(st, "exchange")  # B may not exchange (no trump jack); A not on lead
    assert "JH" in hand(st, "A")  # A holds the trump jack but is not on lead
    assert_illegal(st, "claim")  # no trick yet
    # KH and QH leads are 40-marriage leads: only through "marriage H".
    assert "marriage H" in names
    assert "play KH" not in names and "play QH" not in names
    assert names == plays("AS", "TS", "KS") | {"marriage H", "close"}
    st.step("marriage H")
    assert legal(st) == plays("KH", "QH")
    assert st.marriage_points[1] == 40


def test_s03_opening_lead_40_pending_draw_order():
    st = load(S03)
    run(st, "marriage H", "play QH", "play AH")
    assert points(st, "A") == 14
    assert points(st, "B") == 0
    assert st.pending_marriage_points(1) == 40
    assert st.position()["marriages"]["player_1"] == ["H"]
    assert hand(st, "A") == {"QS", "JS", "JH", "AD", "TD"}  # A drew TD
    assert hand(st, "B") == {"AS", "TS", "KS", "KH", "KD"}  # B drew KD
    assert len(st.stock) == 8
    assert st.position()["stock"][0] == "QD"


def test_s04_false_claim_opponent_no_trick():
    st = load(S04, false_claim="mirror")
    run(st, "marriage H", "play QH", "play AH", "exchange")
    assert "TH" in hand(st, "A") and "JH" not in hand(st, "A")
    assert turn_up(st) == "JH"
    st.step("claim")
    assert_result(st, "B", 3, "false_claim")


def test_s04_claim_not_legal_under_reject():
    st = load(S04)
    run(st, "marriage H", "play QH", "play AH", "exchange")
    assert_illegal(st, "claim")


def test_s05_pending_40_counted_on_first_trick():
    st = load(S05)
    run(st, "marriage H", "play QH", "play AH", "play JS", "play KS")
    assert points(st, "B") == 6 + 40 == 46
    # B drew QD first, A drew JD.
    assert "QD" in hand(st, "B") and "JD" in hand(st, "A")
    assert hand(st, "B") == {"AS", "TS", "KH", "KD", "QD"}
    assert hand(st, "A") == {"QS", "JH", "AD", "TD", "JD"}


# -------------------------------------------------------------------------------------- following (S06-S13)
def test_s06_exhausted_must_head():
    assert legal(load(S06)) == plays("KS")


def test_s07_exhausted_must_follow_may_not_trump():
    assert legal(load(S07)) == plays("JS")


def test_s09_void_in_led_suit_and_trumps_anything():
    assert legal(load(S09)) == plays("QD", "KC", "QC", "JC")


def test_s10_trump_led_must_overtrump():
    assert legal(load(S10)) == plays("AH")


def test_s12_stock_open_no_obligation():
    assert legal(load(S12)) == plays("KS", "AH", "TD", "QC", "JC")


def test_s13_last_stock_pair_trick5_free_loser_draws_turnup():
    st = load(S13)
    assert "play JD" in legal(st) and "KS" in hand(st, "A")
    st.step("play JD")
    assert points(st, "B") == 26 + 13 == 39
    assert "KC" in hand(st, "B")  # B drew KC
    assert "TH" in hand(st, "A")  # A drew the turn-up
    assert st.position()["stock"] == []
    assert st.is_strict  # strict from trick 6
    st.step("play TS")
    assert legal(st) == plays("KS")  # A must follow spades now


# ------------------------------------------------------------------------------------- exchange (S15-S17)
def test_s15_stock_of_2_no_exchange_no_close():
    st = load(S15)
    assert_illegal(st, "exchange")
    assert_illegal(st, "close")


def test_s16_variant_exchange_min_stock_2():
    st = load(S16, exchange_min_stock=2, close_min_stock=2)
    st.step("exchange")
    assert "TH" in hand(st, "A") and "JH" not in hand(st, "A")
    assert turn_up(st) == "JH"
    run(st, "play QC", "play KH")
    assert points(st, "B") - 35 == 7 and points(st, "B") == 42
    assert "KC" in hand(st, "B")
    assert "JH" in hand(st, "A")
    assert st.position()["stock"] == []


def test_s17_exchange_creates_40_claim_after_declaring():
    st = load(S17)
    run(st, "exchange", "marriage H")
    assert points(st, "A") == 28 + 40 == 68
    assert "claim" in legal(st)
    b_hand = hand(st, "B")
    st.step("claim")
    assert_result(st, "A", 3, "claim")
    assert hand(st, "B") == b_hand  # the follower did not play
    assert st.position()["table"] is None


# ---------------------------------------------------------------------------------------- closing (S19-S28)
def test_s19_after_closing_no_exchange_strict_next_trick():
    st = load(S19)
    st.step("close")
    assert_illegal(st, "exchange")
    st.step("play AS")
    assert legal(st) == plays("JS")


def _play_s20(**knobs) -> GameState:
    st = load(S20, **knobs)
    st.step("close")
    assert snapshot(st) == (0, 0)
    st.step("play AH")
    assert legal(st) == plays("JS")  # B must trump with JS
    run(st, "play JS", "play AC")
    assert legal(st) == plays("AS", "TS", "KS")  # A must trump (any)
    run(st, "play KS", "play AS", "play JC", "play TS", "play KC")
    assert points(st, "A") == 70
    assert points(st, "B") == 13 and tricks(st, "B") == 1
    st.step("claim")
    return st


def test_s20_close_opponent_no_trick_3_points():
    assert_result(_play_s20(), "A", 3, "claim")


def test_s20_variant_closing_reference_at_end():
    assert_result(_play_s20(closing_reference="at_end"), "A", 2, "claim")


def test_s22_closer_does_not_claim_closer_score_decides():
    st = load(S22)
    st.step("close")
    run(st, "play AH", "play JS", "play AC", "play KS", "play AS", "play JC", "play TS", "play KC",
        "play TH", "play TC")
    # A took the last trick with 77 >= 66: R20 makes it a W3 claim (reason "claim"); A wins v(snap=(13, 1)).
    assert_result(st, "A", 2, "claim")


def test_s24_closer_claims_falsely_failed_close():
    st = load(S24, false_claim="mirror")
    st.step("close")
    assert snapshot(st) == (34, 2)
    run(st, "play AS", "play JS", "claim")
    assert_result(st, "B", 2, "false_claim")


def test_s24_claim_not_legal_under_reject():
    st = load(S24)
    run(st, "close", "play AS", "play JS")
    assert_illegal(st, "claim")


def test_s26_non_closer_reaches_66_first_claims_2():
    st = load(S26)
    st.step("close")
    assert snapshot(st) == (42, 2)
    st.step("play QH")
    run(st, "play KH", "play AC")
    assert legal(st) == plays("QC", "JC")  # A must play a trump
    run(st, "play JC", "play AS", "play KS")
    assert points(st, "B") == 77
    st.step("claim")
    assert_result(st, "B", 2, "claim")


def _play_s28(**knobs) -> GameState:
    st = load(S28, **knobs)
    run(st, "close", "play AS", "play JS", "play TS", "play KS", "play AH", "play QC")
    assert points(st, "A") == 69
    assert st.result is None  # not claimed
    run(st, "play TH", "play TC", "play JC")
    assert legal(st) == plays("AC")  # B must head with AC
    st.step("play AC")
    assert st.result is not None  # no claim is made; the hand is scored
    return st


def test_s28_closer_passes_66_loses_last_trick():
    assert_result(_play_s28(), "A", 3, "closed_hand")


def test_s28_variant_closed_hand_end_must_claim():
    assert_result(_play_s28(closed_hand_end="must_claim"), "B", 3, "closed_hand")


# ------------------------------------------------------------------------------------------ claims (S29-S35)
def test_s29_correct_claim_opponent_exactly_33():
    st = load(S29)
    assert points(st, "A") == 70 and points(st, "B") == 33
    st.step("claim")
    assert_result(st, "A", 1, "claim")


def test_s32_false_claim_opponent_42():
    st = load(S32, false_claim="mirror")
    assert points(st, "A") == 63
    st.step("claim")
    assert_result(st, "B", 1, "false_claim")


def test_s32_variant_false_claim_pagat():
    st = load(S32, false_claim="pagat")
    st.step("claim")
    assert_result(st, "B", 2, "false_claim")


def test_s32_variant_false_claim_reject():
    st = load(S32)
    assert_illegal(st, "claim")  # A must lead
    assert legal(st) == plays("JS", "JH", "JD")


def test_s34_both_above_66_first_correct_claim_wins():
    st = load(S34)
    assert points(st, "A") == 73 and points(st, "B") == 55
    st.step("play QC")
    assert legal(st) == plays("AC", "TC", "KC")
    st.step("play AC")
    assert points(st, "B") == 69
    st.step("claim")
    assert_result(st, "B", 1, "claim")


def test_s35_nobody_reaches_66_last_trick_decides():
    st = load(S35)
    run(st, "play AC", "play JC")
    assert points(st, "A") == 62 and points(st, "B") == 58
    assert_result(st, "A", 1, "last_trick")


# --------------------------------------------------------------------------------------- marriages (S38-S46)
def test_s38_follower_with_kq_cannot_declare():
    st = load(S38)
    assert {"KS", "QS"} <= hand(st, "A")
    assert not any(n.startswith("marriage") for n in legal(st))
    assert_illegal(st, "marriage S")
    st.step("play KS")
    assert st.position()["marriages"]["player_0"] == []
    assert points(st, "B") == 34 + 15
    assert tricks(st, "B") == 3


def test_s39_marriage_after_exhaustion_reaching_66():
    st = load(S39)
    st.step("marriage D")
    assert points(st, "A") == 49 + 20 == 69
    st.step("claim")
    assert_result(st, "A", 2, "claim")


def test_s39_variant_marriage_window_stock_open():
    st = load(S39, marriage_window="stock_open")
    names = legal(st)
    assert "marriage D" not in names and "play KD" in names
    assert_illegal(st, "marriage D")
    assert_illegal(st, "claim")
    st.step("play KD")
    assert points(st, "A") == 49
    assert st.position()["marriages"]["player_0"] == []
    assert "claim" not in legal(st)


def test_s40_king_of_marriage_led():
    st = load(S40)
    run(st, "marriage S", "play KS", "play JD")
    assert points(st, "A") == 66
    st.step("claim")
    assert_result(st, "A", 3, "claim")


def test_s42_non_dealer_exchanges_and_closes_before_first_trick():
    st = load(S42)
    st.step("exchange")
    assert "AS" in hand(st, "B") and turn_up(st) == "JS"
    st.step("close")
    assert snapshot(st) == (0, 0)
    st.step("play AS")
    assert legal(st) == plays("JD", "QD", "KC", "QC", "JC")
    run(st, "play JC", "marriage S")
    assert points(st, "B") == 53  # 40 counts at once
    run(st, "play KS", "play QC", "play TS", "play KC")
    assert points(st, "B") == 74
    st.step("claim")
    assert_result(st, "B", 3, "claim")


def test_s43_auto_claim_on_marriage():
    st = load(S43, claim_mode="auto")
    assert "claim" not in legal(st)
    st.step("exchange")
    assert "claim" not in legal(st)
    st.step("marriage H")
    assert_result(st, "A", 3, "claim")


def test_s45_variant_optional_marriage_plain_lead():
    st = load(S45, marriage_declaration="optional")
    names = legal(st)
    assert "marriage S" in names and "play KS" in names
    run(st, "play KS", "play JD")
    assert points(st, "A") == 46
    assert st.position()["marriages"]["player_0"] == []


def test_s46_variant_no_marriage_on_opening_lead():
    st = load(S46, marriage_on_opening_lead=False)
    names = legal(st)
    assert "play KH" in names and "play QH" in names
    assert_illegal(st, "marriage H")


# ---------------------------------------------------------------------------------------- sixtysix24 (T02-T09)
def test_t02_opening_lead_marriage_window_and_exchange_card():
    st = load(T02, "sixtysix24")
    names = legal(st)
    assert "marriage H" in names  # 40 on opening lead
    assert "close" in names  # stock 12
    assert "9H" in hand(st, "A") and st.to_move == 1
    assert_illegal(st, "exchange")  # A not on lead
    st.step("marriage H")
    assert st.marriage_points[1] == 40


def test_t04_nine_exchanged_with_2_left_close_allowed():
    st = load(T04, "sixtysix24")
    assert "close" in legal(st)
    st.step("exchange")
    assert "TH" in hand(st, "A") and "9H" not in hand(st, "A")
    assert turn_up(st) == "9H"
    run(st, "play QC", "play KH")
    assert "9H" in hand(st, "A")  # A drew the 9H back
    assert "KC" in hand(st, "B")
    assert points(st, "B") == 12 + 7


def test_t06_last_trick_bonus_tie():
    st = load(T06, "sixtysix24")
    st.step("play 9C")
    assert legal(st) == plays("9S")
    st.step("play 9S")
    assert points(st, "A") == 65 and points(st, "B") == 65
    assert tricks(st, "B") == 8
    assert_result(st, None, 0, "tie")


def test_t07_strict_heading_not_required():
    assert legal(load(T07, "sixtysix24")) == plays("KS", "JS")


def test_t07_variant_must_head():
    assert legal(load(T07, "sixtysix24", must_head=True)) == plays("KS")


def test_t09_no_claim_opponent_above_66_wins_by_count():
    st = load(T09, "sixtysix24")
    run(st, "play 9C", "play 9S")
    assert points(st, "A") == 68 and points(st, "B") == 62
    assert_result(st, "A", 1, "count")


# ------------------------------------------------------------------------------------------ section 7 faults
def test_fault1_king_of_marriage_reaches_66_queen_does_not():
    king = load(S40)
    run(king, "marriage S", "play KS", "play JD")
    assert points(king, "A") == 66 and "claim" in legal(king)
    queen = load(S40)
    run(queen, "marriage S", "play QS", "play JD")
    assert points(queen, "A") == 65
    assert_illegal(queen, "claim")


def test_fault2_marriage_with_trick_counts_at_once():
    st = load(S40)
    st.step("marriage S")
    assert points(st, "A") == 40 + 20  # before the card is played
    assert st.pending_marriage_points(0) == 0
    st = load(S39)
    st.step("marriage D")
    assert points(st, "A") == 69 and "claim" in legal(st)  # it can end the hand at once


def test_fault2_schwarz_is_no_trick_not_zero_points():
    assert game_value(0, 0) == 3
    assert game_value(0, 1) == 2
    assert game_value(32, 1) == 2 and game_value(33, 1) == 1


def test_fault3_no_exchange_with_two_stock_cards():
    st = load(S15)
    assert_illegal(st, "exchange")
    # Same hand with four stock cards: the exchange is offered.
    pos = parse_scenario(S15).position
    pos["stock"] = ["KC", "AS", "QS", "TH"]
    pos["hands"]["player_1"] = ["TS", "JS", "KH", "QH", "AH"]
    pos["won"]["player_1"] = ["AC", "TC"]
    pos["won"]["player_0"] = ["TD", "KD", "QD", "JD"]
    st4 = GameState.from_position(RuleSet.make("schnapsen20"), pos)
    assert "exchange" in legal(st4)


def test_fault4_sixtysix24_nines_zero_points_six_card_hands():
    rules = RuleSet.make("sixtysix24")
    d = rules.deck
    assert all(d.points[d.index(f"9{s}")] == 0 for s in "CDHS")
    assert sum(d.points) == 120
    st = GameState.from_deck(rules, DECK24_T01, dealer="player_0")
    assert len(hand(st, "A")) == 6 and len(hand(st, "B")) == 6
    assert rules.n_tricks == 12


def test_fault5_non_closer_claim_counts():
    st = load(S26)
    run(st, "close", "play QH", "play KH", "play AC", "play JC", "play AS", "play KS")
    assert "claim" in legal(st)  # the non-closer may claim after a close
    st.step("claim")
    assert_result(st, "B", 2, "claim")


FAULT6_20 = """\
trump: S   stock: TD KD QD [QS]  (size 4; top first, [turn-up] last)
A (leader): hand AS TS KH QH JH | won QC JC AD JD AH TH = 39 card pts, 3 trick(s) | marriages – | counted 39
B: hand JS KS AC TC KC | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
"""
FAULT6_24 = """\
trump: H   stock: JC KD QD JD KS [AH]  (size 6; top first, [turn-up] last)
A (leader): hand KC QC AC TC JS 9S | won 9C 9D = 0 card pts, 1 trick(s) | marriages – | counted 0
B: hand TH KH QH JH 9H QS | won AS TS AD TD = 42 card pts, 2 trick(s) | marriages – | counted 42
"""


def test_fault6_failed_close_3_when_non_closer_had_no_trick():
    # The closer has 39 points (not 0); the failed close is worth 3 because B had no trick at closing.
    st = load(FAULT6_20, false_claim="mirror")
    st.step("close")
    assert snapshot(st) == (0, 0)
    run(st, "marriage H", "claim")  # W2 claim with 59 < 66: a failed close
    assert_result(st, "B", 3, "false_claim")
    # S28 under must_claim: the closer had 89 points, B had no trick at closing -> 3.
    assert_result(_play_s28(closed_hand_end="must_claim"), "B", 3)


def test_fault6_failed_close_2_when_closer_has_zero_points():
    # sixtysix24: the closer's own score is 0 (a two-nines trick), the non-closer had tricks -> 2, not 3.
    st = load(FAULT6_24, "sixtysix24", false_claim="mirror")
    st.step("close")
    assert snapshot(st) == (42, 2)
    run(st, "marriage C", "claim")
    assert_result(st, "B", 2, "false_claim")


def test_fault7_zero_point_trick_counts_for_marriages():
    st = load(FAULT6_24, "sixtysix24")
    assert tricks(st, "A") == 1 and points(st, "A") == 0
    st.step("marriage C")
    assert points(st, "A") == 20  # counts at once: the 0-point trick is a trick
    assert st.pending_marriage_points(0) == 0


FAULT7_OPENING = """\
trump: H   stock: TD KD QD JD 9D AC TC KC QC JC 9S [JH]  (size 12; top first, [turn-up] last)
A (dealer): hand 9C AH TH QS JS AD | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
B (leader): hand AS TS KS KH QH 9H | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
"""


def test_fault7_pending_marriage_credited_by_zero_point_trick():
    # B announces 40 on the opening lead and loses the trick (pending), then wins a two-nines trick.
    st = load(FAULT7_OPENING, "sixtysix24")
    run(st, "marriage H", "play QH", "play AH")
    assert points(st, "B") == 0 and st.pending_marriage_points(1) == 40
    run(st, "play 9C", "play 9H")  # B trumps: a 0-point trick
    assert tricks(st, "B") == 1 and st.card_points[1] == 0
    assert points(st, "B") == 40
    assert st.pending_marriage_points(1) == 0


FAULT8 = """\
trump: H   stock: JC JD 9S [AH]  (size 4; top first, [turn-up] last)
A: hand QC KD QD KH QH JH | won 9C 9D = 0 card pts, 1 trick(s) | marriages – | counted 0
B (leader): hand KS QS JS TH 9H KC | won AS TS AD TD AC TC = 63 card pts, 3 trick(s) | marriages – | counted 63
"""


def test_fault8_no_last_trick_bonus_after_early_claim():
    st = load(FAULT8, "sixtysix24")
    st.step("marriage S")
    assert points(st, "B") == 83
    st.step("claim")
    assert_result(st, "B", 2, "claim")  # v(A) = v(0, 1) = 2: A has a (0-point) trick
    assert st.bonus == [0, 0]
    assert st.position()["points"] == {"player_0": 0, "player_1": 83}


def test_fault8_no_last_trick_bonus_after_auto_claim():
    st = load(FAULT8, "sixtysix24", claim_mode="auto")
    st.step("marriage S")  # the hand ends on the announcement (R21)
    assert_result(st, "B", 2, "claim")
    assert st.bonus == [0, 0]
    assert st.position()["points"]["player_1"] == 83


def test_fault9_marriage_on_opening_lead_validated_and_null_action():
    st = load(S46, marriage_on_opening_lead=False)
    assert_illegal(st, "marriage H")
    before = st.position()
    with pytest.raises(IllegalActionError):
        st.step(None)
    assert st.position() == before


def test_fault10_failed_close_value_default_min2_flat3_variant():
    st = load(S24, false_claim="mirror", failed_close_value="flat3")
    run(st, "close", "play AS", "play JS", "claim")
    assert_result(st, "B", 3, "false_claim")
    st = load(S24, false_claim="mirror")
    run(st, "close", "play AS", "play JS", "claim")
    assert_result(st, "B", 2, "false_claim")


def test_fault11_closing_value_uses_snapshot():
    st = load(S20)
    st.step("close")
    run(st, "play AH", "play JS")  # B wins a trick after the close
    assert snapshot(st) == (0, 0)  # the snapshot does not move
    run(st, "play AC", "play KS", "play AS", "play JC", "play TS", "play KC")
    assert tricks(st, "B") == 1 and points(st, "B") == 13
    st.step("claim")
    assert_result(st, "A", 3, "claim")  # v(snap) = 3, not v(13, 1) = 2


def test_fault12_no_follow_obligation_while_stock_open():
    st = load(S12)
    names = legal(st)
    assert "play QC" in names and "play AH" in names and "play KS" in names  # discard, trump or follow
    st = load(S02)
    assert "exchange" not in legal(st)  # A holds the trump jack but is not on lead


def test_fault13_no_close_at_two_stock_cards_by_default():
    assert_illegal(load(S15), "close")
    assert "close" in legal(load(S16, exchange_min_stock=2, close_min_stock=2))
