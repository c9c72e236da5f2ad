"""RULES.md section 7: faults that other engines shipped, one test each that this engine does not repeat them.

Positions come from the rule book's scenarios (:func:`helpers.rulebook.scenario`) or, where section 6 has none,
from :mod:`helpers.fault_positions`. Players: A = ``player_0``, B = ``player_1``.
"""

from __future__ import annotations

import pytest

from helpers.engine import assert_illegal, assert_result, hand, legal, load, points, run, snapshot, tricks
from helpers.fault_positions import FAULT6_20, FAULT6_24, FAULT7_OPENING, FAULT8
from helpers.rulebook import scenario
from schnapsen_env import GameState, IllegalActionError, RuleSet, game_value


def _play_s28(**knobs) -> GameState:
    """S28 played to its end (the closer passes 66 without claiming and loses the last trick)."""
    sc = scenario("S28")
    st = sc.state(**knobs)
    run(st, *sc.actions())
    assert st.result is not None
    return st


def test_fault1_king_of_marriage_reaches_66_queen_does_not():
    king = scenario("S40").state()
    run(king, "marriage S", "play KS", "play JD")
    assert points(king, "A") == 66 and "claim" in legal(king)
    queen = scenario("S40").state()
    run(queen, "marriage S", "play QS", "play JD")
    assert points(queen, "A") == 65
    assert_illegal(queen, "claim")


def test_fault2_marriage_with_trick_counts_at_once():
    st = scenario("S40").state()
    st.step("marriage S")
    assert points(st, "A") == 40 + 20  # before the card is played
    assert st.pending_marriage_points(0) == 0
    st = scenario("S39").state()
    st.step("marriage D")
    assert points(st, "A") == 69 and "claim" in legal(st)  # it can end the hand at once


def test_fault2_schwarz_is_no_trick_not_zero_points():
    assert game_value(0, 0) == 3
    assert game_value(0, 1) == 2
    assert game_value(32, 1) == 2 and game_value(33, 1) == 1


def test_fault3_no_exchange_with_two_stock_cards():
    st = scenario("S15").state()
    assert_illegal(st, "exchange")
    # Same hand with four stock cards: the exchange is offered.
    pos = scenario("S15").position
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
    st = GameState.from_deck(rules, list(scenario("T01").deal.deck), dealer="player_0")
    assert len(hand(st, "A")) == 6 and len(hand(st, "B")) == 6
    assert rules.n_tricks == 12


def test_fault5_non_closer_claim_counts():
    st = scenario("S26").state()
    run(st, "close", "play QH", "play KH", "play AC", "play JC", "play AS", "play KS")
    assert "claim" in legal(st)  # the non-closer may claim after a close
    st.step("claim")
    assert_result(st, "B", 2, "claim")


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


def test_fault7_pending_marriage_credited_by_zero_point_trick():
    # B announces 40 on the opening lead and loses the trick (pending), then wins a two-nines trick.
    st = load(FAULT7_OPENING, "sixtysix24")
    run(st, "marriage H", "play QH", "play AH")
    assert points(st, "B") == 0 and st.pending_marriage_points(1) == 40
    run(st, "play 9C", "play 9H")  # B trumps: a 0-point trick
    assert tricks(st, "B") == 1 and st.card_points[1] == 0
    assert points(st, "B") == 40
    assert st.pending_marriage_points(1) == 0


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
    st = scenario("S46").state()
    assert_illegal(st, "marriage H")
    before = st.position()
    with pytest.raises(IllegalActionError):
        st.step(None)
    assert st.position() == before


def test_fault10_failed_close_value_default_min2_flat3_variant():
    st = scenario("S24").state(failed_close_value="flat3")
    run(st, "close", "play AS", "play JS", "claim")
    assert_result(st, "B", 3, "false_claim")
    st = scenario("S24").state()
    run(st, "close", "play AS", "play JS", "claim")
    assert_result(st, "B", 2, "false_claim")


def test_fault11_closing_value_uses_snapshot():
    st = scenario("S20").state()
    st.step("close")
    run(st, "play AH", "play JS")  # B wins a trick after the close
    assert snapshot(st) == (0, 0)  # the snapshot does not move
    run(st, "play AC", "play KS", "play AS", "play JC", "play TS", "play KC")
    assert tricks(st, "B") == 1 and points(st, "B") == 13
    st.step("claim")
    assert_result(st, "A", 3, "claim")  # v(snap) = 3, not v(13, 1) = 2


def test_fault12_no_follow_obligation_while_stock_open():
    st = scenario("S12").state()
    names = legal(st)
    assert "play QC" in names and "play AH" in names and "play KS" in names  # discard, trump or follow
    st = scenario("S02").state()
    assert "exchange" not in legal(st)  # A holds the trump jack but is not on lead


def test_fault13_no_close_at_two_stock_cards_by_default():
    assert_illegal(scenario("S15").state(), "close")
    assert "close" in legal(scenario("S16").state())
