"""The small ruleset ``schnapsen10`` (RULES.md section 3a, RS1-RS4): deck, deal, targets and knobs, with exact
values. Every other rule is schnapsen20's and is covered by the lockstep tests, which run schnapsen10 over every
knob set (tests/helpers/knob_cases.py: KNOBS_10)."""

from __future__ import annotations

import numpy as np
import pytest

from schnapsen_env.errors import RulesError
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet

RULES = RuleSet.make("schnapsen10")


def _names(g: GameState) -> list[str]:
    return g.legal_action_names()


def test_RS1_deck_and_action_table():
    assert RULES.deck.codes == ("AC", "TC", "KC", "QC", "JC", "AD", "TD", "KD", "QD", "JD")
    assert RULES.deck.points_of(RULES.deck.full) == 60
    assert (RULES.n_cards, RULES.hand_size, RULES.n_tricks, RULES.n_actions, RULES.stock0) == (10, 4, 5, 17, 2)
    assert RULES.action_names[10:] == ("marriage C", "marriage D", "marriage H", "marriage S", "exchange", "close",
                                       "claim")


def test_RS1_no_hearts_or_spades_anywhere():
    """Over random hands no card code of hearts or spades exists and marriage H/S is never legal."""
    rng = np.random.default_rng(10)
    for _ in range(300):
        g = GameState.new_hand(RULES, rng)
        while g.result is None:
            names = _names(g)
            assert "marriage H" not in names and "marriage S" not in names
            g.step(names[int(rng.integers(len(names)))])
        assert g.trump in (0, 1)
    with pytest.raises(Exception, match="unknown card code 'AH'"):
        RULES.deck.index("AH")


def test_RS2_deal_mapping_and_opening_options():
    g = GameState.from_deck(RULES, "AC TC KC AD TD KD QC QD JC JD".split(), "player_0")
    pos = g.position()
    assert sorted(pos["hands"]["player_1"]) == sorted(["AC", "TC", "KC", "QD"])  # N: c0-c2, c7
    assert sorted(pos["hands"]["player_0"]) == sorted(["AD", "TD", "KD", "JC"])  # D: c3-c5, c8
    assert pos["trump"] == "C" and pos["stock"] == ["JD", "QC"] and g.stock_size == 2
    assert g.to_move == 1
    assert _names(g) == ["play AC", "play TC", "play KC", "play QD", "close"]  # no jack of clubs: no exchange


def test_RS2_one_open_trick_then_the_loser_draws_the_turn_up_and_play_is_strict():
    g = GameState.from_deck(RULES, "AC TC KC AD TD KD QC QD JC JD".split(), "player_0")
    g.step("play QD")
    assert _names(g) == ["play JC", "play AD", "play TD", "play KD"]  # trick 1 is OPEN (R9): any card
    g.step("play JC")  # the trump wins (R6)
    pos = g.position()
    assert g.to_move == 0 and g.stock_size == 0
    assert sorted(pos["hands"]["player_0"]) == sorted(["AD", "TD", "KD", "JD"])  # the winner drew c9
    assert sorted(pos["hands"]["player_1"]) == sorted(["AC", "TC", "KC", "QC"])  # the loser, the turn-up
    assert g.counted(0) == 5 and g.counted(1) == 0
    g.step("play AD")
    assert _names(g) == ["play AC", "play TC", "play KC", "play QC"]  # void in diamonds: trump (R10(b))


def test_RS3_trump_marriage_scores_20_and_a_claim_needs_33():
    g = GameState.from_deck(RULES, "KC QC AC AD TD KD JC TC QD JD".split(), "player_0")
    assert _names(g) == ["play AC", "play TC", "marriage C", "close"]  # K/Q only through the marriage (R13)
    g.step("marriage C")
    assert g.counted(1) == 0 and g.pending_marriage_points(1) == 20  # pending until a trick (R14)
    g.step("play KC")
    g.step("play AD")
    assert g.counted(1) == 4 + 11 + 20 == 35 and list(g.tricks) == [0, 1]
    assert "claim" in _names(g)
    g.step("claim")
    assert (g.result.winner, g.result.game_points, str(g.result.reason)) == (1, 3, "claim")  # A took no trick


def test_RS3_plain_marriage_scores_10():
    # B: KD QD AC JD, A: AD TD TC KC; turn-up QC (trump C), stock JC.
    g = GameState.from_deck(RULES, "KD QD AC AD TD TC QC JD KC JC".split(), "player_0")
    g.step("marriage D")
    assert g.pending_marriage_points(1) == 10
    g.step("play QD")
    g.step("play KC")  # the trump wins: A 4 + 3 = 7
    assert g.counted(0) == 7 and g.counted(1) == 0 and g.pending_marriage_points(1) == 10


@pytest.mark.parametrize("points, tricks, value", [(0, 0, 3), (16, 1, 2), (17, 1, 1), (32, 2, 1)])
def test_RS3_game_value_bound_17(points, tricks, value):
    assert RULES.game_value(points, tricks) == value


def test_section1_game_value_bound_33_in_the_full_rulesets():
    for name in ("schnapsen20", "sixtysix24"):
        r = RuleSet.make(name)
        assert (r.game_value(32, 1), r.game_value(33, 1), r.game_value(0, 0)) == (2, 1, 3)
        assert (r.claim_target, r.marriage_points(0b0011, 0)) == (66, 60)


@pytest.mark.parametrize("deck, b_counted, value", [
    ("QC AD TC QD KC JD TD JC AC KD", 22, 1),  # 22 >= 17: 1 (schnapsen20's bound 33 would give 2)
    ("KD JC JD KC AD TD QD AC QC TC", 14, 2),  # 14 < 17: 2
])
def test_RS3_a_false_claim_is_scored_with_the_bound_17(deck, b_counted, value):
    """Under false_claim="mirror", A claims with too few points after winning trick 2: B wins v(B) (R22, RS3).
    Both hands: B leads the trump ace and wins trick 1, A wins trick 2 (6 and 12 points) and claims."""
    rules = RULES.replace(false_claim="mirror")
    g = GameState.from_deck(rules, deck.split(), "player_0")
    b_hand = sorted(g.position()["hands"]["player_1"])
    lead2, follow2 = {True: ("play JC", "play KC"), False: ("play JD", "play TD")}[deck.startswith("QC")]
    for name in ("play AD" if deck.startswith("QC") else "play AC", "play AC" if deck.startswith("QC") else "play QC",
                 lead2, follow2):
        g.step(name)
    assert g.to_move == 0 and list(g.tricks) == [1, 1], b_hand
    assert g.counted(1) == b_counted and g.counted(0) < 33
    g.step("claim")
    assert (g.result.winner, g.result.game_points, str(g.result.reason)) == (1, value, "false_claim")


def test_RS4_exchange_and_close_before_trick_1_only():
    # B: JC AD TD KD, A: AC TC KC QD; turn-up QC, stock JD.
    g = GameState.from_deck(RULES, "JC AD TD AC TC KC QC KD QD JD".split(), "player_0")
    assert _names(g) == ["play JC", "play AD", "play TD", "play KD", "exchange", "close"]
    g.step("exchange")
    assert g.position()["stock"] == ["JD", "JC"] and "play QC" in _names(g) and "close" in _names(g)
    g.step("close")
    g.step("play AD")
    assert _names(g) == ["play QD"]  # closed: follow suit (R10, R11)


def test_RS4_knobs():
    assert RULES.knobs() == {**RuleSet.make("schnapsen20").knobs(), "exchange_min_stock": 2, "close_min_stock": 2}
    for key in ("exchange_min_stock", "close_min_stock"):
        with pytest.raises(RulesError, match=f"rule key '{key}' got 4: expected an int from 2 to 2"):
            RuleSet.make("schnapsen10", **{key: 4})
    with pytest.raises(RulesError, match="rule key 'tie' has no effect in schnapsen10"):
        RuleSet.make("schnapsen10", tie="carry")
    with pytest.raises(RulesError, match="schnapsen10 has no nines"):
        RuleSet.make("schnapsen10", exchange_rank="9")
    assert RuleSet.from_dict(RULES.to_dict()) == RULES and RuleSet.schnapsen10() == RULES


def _position(**changes) -> dict:
    pos = {"trump": "C", "stock": [], "closed_by": None, "closing_snapshot": None,
           "hands": {"player_0": ["AD", "TD", "KD"], "player_1": ["QD", "JD", "QC"]},
           "won": {"player_0": ["AC", "TC"], "player_1": ["KC", "JC"]},
           "marriages": {"player_0": [], "player_1": []}, "announced": None,
           "leader": "player_0", "table": None, "dealer": "player_1"}
    pos.update(changes)
    return pos


def test_RS1_positions_name_clubs_and_diamonds_only():
    from schnapsen_env.errors import InvalidPositionError
    GameState.from_position(RULES, _position())  # the base position loads
    with pytest.raises(InvalidPositionError, match=r"marriages\['player_0'\] must be a suit letter of this deck "
                                                   r"\(one of C D\), got 'H'"):
        GameState.from_position(RULES, _position(marriages={"player_0": ["H", "S"], "player_1": []}))
    with pytest.raises(InvalidPositionError, match=r"trump must be a suit letter of this deck \(one of C D\)"):
        GameState.from_position(RULES, _position(trump="H"))


def test_RS1_state_arrays_with_suits_outside_the_deck_are_refused():
    from schnapsen_env import rules_core
    from schnapsen_env.errors import InvalidPositionError
    g = GameState.new_hand(RULES, np.random.default_rng(0))
    st = rules_core.from_game_state(g)
    rules_core.check_state(st, RULES)
    for field, value in (("trump", 2), ("announced", 3), ("marriage_suits", 4)):
        bad = st.copy()
        bad[getattr(rules_core.F, field)] = value
        with pytest.raises(InvalidPositionError, match=f"{field}"):
            rules_core.check_state(bad, RULES)
