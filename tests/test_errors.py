"""Bad input: one test per kind, asserting the exception class and that the message names the bad value and
what was expected (API.md "Errors"; STYLE.md "An illegal action raises IllegalActionError(ValueError) naming the
action ... and leaves the state unchanged")."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

from schnapsen_env import GameState, IllegalActionError, InvalidPositionError, RulesError, RuleSet
from schnapsen_env.rules import FIELDS

DECK20 = "AS TS KS QS JS AH TH KH QH JH AD TD KD QD JD AC TC KC QC JC".split()  # RULES.md S01
DECK24 = "AS TS KS QS JS 9S AH TH KH QH JH 9H AD TD KD QD JD 9D AC TC KC QC JC 9C".split()  # RULES.md T01


def test_error_classes_are_value_errors():
    for cls in (RulesError, InvalidPositionError, IllegalActionError):
        assert issubclass(cls, ValueError)


# --------------------------------------------------------------------------- rule knobs (RULES.md section 5)
def test_unknown_ruleset():
    with pytest.raises(RulesError, match=r"'schnapsen32'.*schnapsen20.*sixtysix24"):
        RuleSet.make("schnapsen32")


def test_unknown_rule_key():
    with pytest.raises(RulesError, match=r"unknown rule key 'talon_size'.*expected.*exchange_min_stock"):
        RuleSet.make("schnapsen20", talon_size=10)


@pytest.mark.parametrize("key, value, expected", [
    ("false_claim", "maybe", r"'reject', 'mirror', 'pagat'"),
    ("claim_mode", "automatic", r"'manual', 'auto'"),
    ("marriage_declaration", "forced", r"'automatic', 'optional'"),
    ("marriage_window", "always", r"'any', 'first_6_tricks', 'stock_open'"),
    ("closed_hand_end", "whatever", r"'closer_score', 'must_claim'"),
    ("closing_reference", "now", r"'at_close', 'at_end'"),
    ("failed_close_value", "min3", r"'min2', 'flat3'"),
    ("next_dealer", "random", r"'alternate', 'loser', 'winner'"),
    ("unclaimed_last_trick_value", "two", r"'formula', 'one'"),
    ("must_head", "yes", r"True, False"),
    ("must_head", 1, r"True, False"),
    ("marriage_on_opening_lead", None, r"True, False"),
    ("exchange_rank", "Q", r"'J', '9'"),
])
def test_bad_knob_value(key, value, expected):
    with pytest.raises(RulesError, match=rf"'{key}'.*{re.escape(repr(value))}.*expected.*{expected}"):
        RuleSet.make("schnapsen20", **{key: value})


@pytest.mark.parametrize("key, value, expected", [
    ("exchange_min_stock", 1, r"expected an int from 2 to 10"),
    ("exchange_min_stock", 12, r"expected an int from 2 to 10"),
    ("close_min_stock", "4", r"expected an int"),
    ("close_min_stock", 4.0, r"expected an int"),
    ("match_target", 0, r"expected an int >= 1"),
    ("last_trick_bonus", -1, r"expected an int >= 0"),
    ("match_target", True, r"expected an int"),
])
def test_bad_int_knob_value(key, value, expected):
    with pytest.raises(RulesError, match=rf"'{key}'.*{re.escape(repr(value))}.*{expected}"):
        RuleSet.make("schnapsen20", **{key: value})


def test_bad_int_knob_value_sixtysix24_range():
    with pytest.raises(RulesError, match=r"'close_min_stock'.*14.*expected an int from 2 to 12"):
        RuleSet.make("sixtysix24", close_min_stock=14)


def test_bad_knob_value_sixtysix24_tie():
    with pytest.raises(RulesError, match=r"'tie'.*'split'.*expected.*'carry', 'none', 'last_trick'"):
        RuleSet.make("sixtysix24", tie="split")


@pytest.mark.parametrize("ruleset, key, value", [
    ("schnapsen20", "tie", "carry"),
    ("schnapsen20", "tie", "none"),
    ("sixtysix24", "unclaimed_last_trick_value", "one"),
    ("sixtysix24", "unclaimed_last_trick_value", "formula"),
])
def test_knob_marked_dash_for_ruleset(ruleset, key, value):
    """RULES.md section 5: '—' means the knob has no effect in that ruleset; passing it raises."""
    with pytest.raises(RulesError, match=rf"'{key}'.*{ruleset}.*'—'"):
        RuleSet.make(ruleset, **{key: value})


def test_exchange_rank_nine_in_schnapsen20():
    with pytest.raises(RulesError, match=r"'exchange_rank'.*'9'.*schnapsen20.*expected 'J'"):
        RuleSet.make("schnapsen20", exchange_rank="9")


def test_replace_and_from_dict_validate_too():
    with pytest.raises(RulesError, match=r"'false_claim'.*'nope'"):
        RuleSet.make().replace(false_claim="nope")
    with pytest.raises(RulesError, match=r"unknown rule key 'bogus'"):
        RuleSet.from_dict({"ruleset": "sixtysix24", "bogus": 1})
    with pytest.raises(RulesError, match=r"unknown ruleset 'sixtysix20'"):
        RuleSet.from_dict({"ruleset": "sixtysix20"})


# --------------------------------------------------------------------------- positions
def base_position() -> dict:
    """A valid schnapsen20 position (RULES.md S12 before B's lead): trump H, stock QD JD KC [TH]."""
    return {
        "trump": "H",
        "stock": ["QD", "JD", "KC", "TH"],
        "closed_by": None,
        "closing_snapshot": None,
        "hands": {"player_0": ["KS", "AH", "TD", "QC", "JC"], "player_1": ["AS", "TS", "JS", "KH", "QH"]},
        "won": {"player_0": ["AD", "KD"], "player_1": ["AC", "TC", "QS", "JH"]},
        "marriages": {"player_0": [], "player_1": []},
        "announced": None,
        "leader": "player_1",
        "table": None,
    }


def test_base_position_is_valid():
    s = GameState.from_position(RuleSet.make(), base_position())
    assert s.counted(0) == 15 and s.counted(1) == 26


def load(pos: dict, rules: RuleSet | None = None) -> GameState:
    return GameState.from_position(rules or RuleSet.make(), pos)


@pytest.mark.parametrize("key", ["trump", "stock", "closed_by", "closing_snapshot", "hands", "won", "marriages",
                                 "announced", "leader", "table"])
def test_position_missing_key(key):
    pos = base_position()
    del pos[key]
    with pytest.raises(InvalidPositionError, match=rf"missing key.*'{key}'"):
        load(pos)


def test_position_unknown_key():
    pos = base_position()
    pos["talon"] = []
    with pytest.raises(InvalidPositionError, match=r"unknown key.*'talon'.*expected.*'trump'"):
        load(pos)


@pytest.mark.parametrize("where, code", [("hand", "XS"), ("stock", "1H"), ("won", "ks"), ("table", "ZZ"),
                                         ("hand", "9C")])
def test_position_unknown_card_code(where, code):
    """'9C' is a card of sixtysix24 only: unknown in schnapsen20."""
    pos = base_position()
    if where == "hand":
        pos["hands"]["player_0"][0] = code
    elif where == "stock":
        pos["stock"][0] = code
    elif where == "won":
        pos["won"]["player_0"][0] = code
    else:
        pos["table"] = code
    with pytest.raises(InvalidPositionError, match=rf"unknown card code '{code}'.*expected one of.*AC"):
        load(pos)


def test_position_duplicate_card():
    pos = base_position()
    pos["hands"]["player_0"][0] = "AS"  # AS now in both hands, KS missing
    with pytest.raises(InvalidPositionError, match=r"duplicate card.*AS"):
        load(pos)


def test_position_duplicate_card_inside_one_list():
    pos = base_position()
    pos["won"]["player_1"] = ["AC", "TC", "QS", "QS"]
    with pytest.raises(InvalidPositionError, match=r"duplicate card.*QS"):
        load(pos)


def test_position_missing_card():
    pos = base_position()
    pos["hands"]["player_0"].remove("TD")
    with pytest.raises(InvalidPositionError, match=r"missing card.*'TD'.*20 cards"):
        load(pos)


def test_position_odd_won_size():
    pos = base_position()
    pos["hands"]["player_0"].remove("JC")
    pos["won"]["player_0"].append("JC")
    with pytest.raises(InvalidPositionError, match=r"won\['player_0'\] has 3 cards.*even"):
        load(pos)


def test_position_impossible_hand_sizes_no_table():
    pos = base_position()
    for c in ("QC", "JC"):
        pos["hands"]["player_0"].remove(c)
        pos["won"]["player_0"].append(c)
    with pytest.raises(InvalidPositionError, match=r"impossible hand sizes 3 and 5.*same number"):
        load(pos)


def test_position_impossible_hand_sizes_with_table():
    pos = base_position()
    pos["table"] = "QC"  # QC was in the FOLLOWER's hand: leader 5, follower 4
    pos["hands"]["player_0"].remove("QC")
    with pytest.raises(InvalidPositionError, match=r"impossible hand sizes.*leader player_1 led QC.*5 and 4"):
        load(pos)


def test_position_hand_too_big():
    pos = base_position()
    # 6 cards each, stock 2: impossible in schnapsen20 (hands hold 5).
    pos["hands"]["player_0"].append(pos["stock"].pop(0))
    pos["hands"]["player_1"].append(pos["stock"].pop(0))
    with pytest.raises(InvalidPositionError, match=r"impossible hand size 6.*at most 5"):
        load(pos)


def test_position_open_stock_hand_size():
    pos = base_position()
    pos["won"]["player_0"] += ["QC", "JC"]
    pos["won"]["player_1"] += ["AS", "TS"]
    for c in ("QC", "JC"):
        pos["hands"]["player_0"].remove(c)
    for c in ("AS", "TS"):
        pos["hands"]["player_1"].remove(c)
    with pytest.raises(InvalidPositionError, match=r"impossible hand sizes.*stock is open.*5 cards.*got 3"):
        load(pos)


def test_position_turn_up_not_of_trump_suit():
    pos = base_position()
    pos["trump"] = "S"
    with pytest.raises(InvalidPositionError, match=r"turn-up TH.*not of the trump suit S"):
        load(pos)


@pytest.mark.parametrize("trump", ["X", "hearts", "", None, 2])
def test_position_bad_trump(trump):
    pos = base_position()
    pos["trump"] = trump
    with pytest.raises(InvalidPositionError, match=rf"trump must be a suit letter.*C D H S.*got {re.escape(repr(trump))}"):
        load(pos)


def test_position_closed_by_without_snapshot():
    pos = base_position()
    pos["closed_by"] = "player_1"
    with pytest.raises(InvalidPositionError, match=r"closing_snapshot must be \{'points': int, 'tricks': int\}.*"
                                                   r"closed_by is set, got None"):
        load(pos)


def test_position_snapshot_without_closed_by():
    pos = base_position()
    pos["closing_snapshot"] = {"points": 15, "tricks": 1}
    with pytest.raises(InvalidPositionError, match=r"closing_snapshot must be null when closed_by is null"):
        load(pos)


def test_position_bad_closed_by():
    pos = base_position()
    pos["closed_by"] = "B"
    pos["closing_snapshot"] = {"points": 15, "tricks": 1}
    with pytest.raises(InvalidPositionError, match=r"closed_by must be 'player_0' or 'player_1', got 'B'"):
        load(pos)


@pytest.mark.parametrize("leader", ["player_2", "B", 1, None])
def test_position_bad_leader(leader):
    pos = base_position()
    pos["leader"] = leader
    with pytest.raises(InvalidPositionError, match=rf"leader must be 'player_0' or 'player_1', got {re.escape(repr(leader))}"):
        load(pos)


def test_position_announced_not_in_marriages():
    pos = base_position()
    pos["announced"] = "H"  # B holds KH QH but never announced
    with pytest.raises(InvalidPositionError, match=r"announced 'H' is not in marriages\['player_1'\]"):
        load(pos)


def test_position_marriage_card_in_opponents_hand():
    pos = base_position()
    pos["marriages"]["player_0"] = ["H"]
    with pytest.raises(InvalidPositionError, match=r"player_0 announced marriage H.*K or Q.*opponent"):
        load(pos)


def test_position_history_disagrees_with_won():
    pos = base_position()
    # A leads AC, B follows TC: A wins (R6), but AC and TC lie in B's won pile.
    pos["history"] = [{"leader": "player_0", "cards": ["AC", "TC"], "winner": "player_0"}]
    with pytest.raises(InvalidPositionError, match=r"history does not agree with won\['player_0'\].*AC.*TC"):
        load(pos)


def test_position_history_wrong_trick_winner():
    pos = base_position()
    pos["history"] = [{"leader": "player_1", "cards": ["KD", "AD"], "winner": "player_1"}]
    with pytest.raises(InvalidPositionError, match=r"history\[0\]: KD then AD.*won by player_0, not player_1.*R6"):
        load(pos)


def test_position_points_disagree():
    pos = base_position()
    pos["points"] = {"player_0": 16, "player_1": 26}
    with pytest.raises(InvalidPositionError, match=r"points\['player_0'\] is 16.*give 15"):
        load(pos)


def test_position_bad_result():
    pos = base_position()
    pos["result"] = {"winner": "player_0", "game_points": 4, "reason": "claim"}
    with pytest.raises(InvalidPositionError, match=r"result.game_points must be an int 0..3, got 4"):
        load(pos)
    pos["result"] = {"winner": "player_0", "game_points": 1, "reason": "resign"}
    with pytest.raises(InvalidPositionError, match=r"result.reason must be one of.*'claim'.*got 'resign'"):
        load(pos)


def test_position_bad_dealer():
    pos = base_position()
    pos["dealer"] = "nobody"
    with pytest.raises(InvalidPositionError, match=r"dealer must be 'player_0' or 'player_1', got 'nobody'"):
        load(pos)


def test_position_not_a_dict():
    with pytest.raises(InvalidPositionError, match=r"expected a dict, got list"):
        load([])


def test_position_nines_in_sixtysix24_are_checked_too():
    pos = base_position()
    with pytest.raises(InvalidPositionError, match=r"missing card.*'9C'.*24 cards"):
        load(pos, RuleSet.make("sixtysix24"))


# --------------------------------------------------------------------------- from_deck (R2, R66-2)
def test_from_deck_too_short():
    with pytest.raises(InvalidPositionError, match=r"each of the 20 cards.*got 19 cards, missing \['JC'\]"):
        GameState.from_deck(RuleSet.make(), DECK20[:-1], "player_0")


def test_from_deck_too_long():
    with pytest.raises(InvalidPositionError, match=r"each of the 20 cards.*got 21 cards.*duplicated \['AS'\]"):
        GameState.from_deck(RuleSet.make(), DECK20 + ["AS"], "player_0")


def test_from_deck_duplicate():
    deck = DECK20[:-1] + ["AS"]
    with pytest.raises(InvalidPositionError, match=r"missing \['JC'\], duplicated \['AS'\]"):
        GameState.from_deck(RuleSet.make(), deck, "player_0")


def test_from_deck_unknown_code():
    deck = DECK20[:-1] + ["9C"]  # a nine in schnapsen20
    with pytest.raises(InvalidPositionError, match=r"unknown card code '9C': expected one of.*JC"):
        GameState.from_deck(RuleSet.make(), deck, "player_0")


def test_from_deck_24_needs_nines():
    with pytest.raises(InvalidPositionError, match=r"each of the 24 cards of sixtysix24.*got 20 cards.*missing.*9C"):
        GameState.from_deck(RuleSet.make("sixtysix24"), DECK20, "player_0")


def test_from_deck_not_a_list():
    with pytest.raises(InvalidPositionError, match=r"deck must be a list of 20 card codes, got str"):
        GameState.from_deck(RuleSet.make(), " ".join(DECK20), "player_0")


@pytest.mark.parametrize("dealer", ["player_2", "A", 2, -1, True, None])
def test_from_deck_bad_dealer(dealer):
    with pytest.raises(InvalidPositionError, match=rf"dealer must be 'player_0' or 'player_1', got {re.escape(repr(dealer))}"):
        GameState.from_deck(RuleSet.make(), DECK20, dealer)


# --------------------------------------------------------------------------- illegal actions
def fresh(ruleset: str = "schnapsen20") -> GameState:
    """RULES.md S01 / T01: B (player_1) to lead."""
    deck = DECK20 if ruleset == "schnapsen20" else DECK24
    return GameState.from_deck(RuleSet.make(ruleset), deck, "player_0")


def assert_refused(s: GameState, action, match: str) -> None:
    before = s.copy()
    pos = copy.deepcopy(s.position())
    with pytest.raises(IllegalActionError, match=match):
        s.step(action)
    assert s == before
    assert s.position() == pos


@pytest.mark.parametrize("name", ["play XX", "pass", "play 9C", "marriage X", "Play AS", "play AS ", ""])
def test_illegal_action_unknown_name(name):
    assert_refused(fresh(), name, rf"unknown action name {re.escape(repr(name))}: expected 'play XX'.*'claim'")


def test_illegal_action_unknown_name_sixtysix24():
    assert_refused(fresh("sixtysix24"), "play 8C", r"unknown action name 'play 8C'.*sixtysix24")


@pytest.mark.parametrize("ruleset, action, hi", [("schnapsen20", 27, 26), ("schnapsen20", -1, 26),
                                                 ("schnapsen20", 1000, 26), ("sixtysix24", 31, 30)])
def test_illegal_action_out_of_range_id(ruleset, action, hi):
    assert_refused(fresh(ruleset), action, rf"action id {action} out of range: expected 0..{hi}")


@pytest.mark.parametrize("action", [True, False])
def test_illegal_action_bool(action):
    assert_refused(fresh(), action, rf"int id or an action name, got {action}")


@pytest.mark.parametrize("action", [1.0, None, ["play AS"]])
def test_illegal_action_wrong_type(action):
    assert_refused(fresh(), action, rf"int id or an action name, got {re.escape(repr(action))}")


@pytest.mark.parametrize("name", [
    "play KH",  # R12 automatic: KH is only playable through the 40 announcement
    "play AH",  # not in B's hand
    "exchange",  # R16: no trump jack
    "claim",  # R20: no window before trick 1
    "marriage S",  # holds KS but not QS
])
def test_illegal_action_legal_looking(name):
    s = fresh()
    aid = s.rules.action_id(name)
    assert aid not in s.legal_actions()
    for action in (name, aid):
        assert_refused(s, action, rf"illegal action '{name}' \(id {aid}\) for player_1.*legal are "
                                  r"\['play AS', 'play TS', 'play KS', 'marriage H', 'close'\]")


def test_illegal_action_follower_not_following_in_strict_phase():
    """RULES.md S06: A must head with KS (R10)."""
    pos = {
        "trump": "H", "stock": [], "closed_by": None, "closing_snapshot": None,
        "hands": {"player_0": ["KS", "JS", "AH", "TD", "QC"], "player_1": ["AS", "TH", "KC", "JC"]},
        "won": {"player_0": ["TS", "KH", "AD", "KD"], "player_1": ["QH", "JH", "QD", "JD", "AC", "TC"]},
        "marriages": {"player_0": [], "player_1": []}, "announced": None, "leader": "player_1", "table": "QS",
    }
    s = GameState.from_position(RuleSet.make(), pos)
    for name in ("play JS", "play AH", "play TD", "close", "claim", "marriage H", "play AS"):
        assert_refused(s, name, rf"illegal action '{name}'.*player_0.*following QS.*STRICT.*legal are \['play KS'\]")


def test_illegal_action_after_announcement():
    """R4: after 'marriage H' only KH/QH (or a correct claim)."""
    s = fresh()
    s.step("marriage H")
    for name in ("play AS", "close", "marriage H", "exchange"):
        assert_refused(s, name, rf"illegal action '{name}'.*after announcing marriage H.*"
                                r"legal are \['play KH', 'play QH'\]")


def test_any_action_after_hand_ended():
    rules = RuleSet.make()
    s = GameState.from_deck(rules, DECK20, "player_0")
    while s.result is None:
        s.step(s.legal_actions()[0])
    for action in list(range(rules.n_actions)) + ["claim", "play AS", "close"]:
        assert_refused(s, action, r"hand is over.*no action is legal")
    assert s.legal_actions() == [] and not s.action_mask().any()


def test_action_id_unknown_name_is_illegal_action_error():
    with pytest.raises(IllegalActionError, match=r"unknown action name 'fold'"):
        RuleSet.make().action_id("fold")


# ------------------------------------------------------------------ regressions: unreachable positions were loaded
def _s17(**kw):
    p = {"trump": "H", "stock": "JD AH TH KS QS KH".split(), "closed_by": None, "closing_snapshot": None,
         "hands": {"player_0": "JH QH AS TS AC".split(), "player_1": "JS TC KC QC JC".split()},
         "won": {"player_0": "AD TD KD QD".split(), "player_1": []},
         "marriages": {"player_0": [], "player_1": []}, "announced": None, "leader": "player_0", "table": None}
    p.update(kw)
    return p


UNREACHABLE = [
    ("marriage_announced_but_both_cards_held",
     dict(hands={"player_0": "JH QH AS KS QS".split(), "player_1": "TS TC KC QC JC".split()},
          stock="JD AH TH AC JS KH".split(), marriages={"player_0": ["S"], "player_1": []}), {}, "still holds both"),
    ("carry_in_schnapsen20", dict(carry=2), {}, "carry"),
    ("match_already_won", dict(match_points={"player_0": 7, "player_1": 0}), {}, "match is over"),
    ("leader_without_trick", dict(leader="player_1"), {}, "has won no trick"),
    ("dealer_leads_trick_1",
     dict(won={"player_0": [], "player_1": []}, stock="JD AH TH KS QS AD TD KD QD KH".split(), dealer="player_0"),
     {}, "dealer"),
    ("two_pending_marriages", dict(marriages={"player_0": [], "player_1": ["C", "D"]}), {}, "no trick"),
    ("snapshot_points_without_trick",
     dict(closed_by="player_0", closing_snapshot={"points": 30, "tricks": 0}), {}, "closing_snapshot"),
    ("closed_below_close_min_stock",
     dict(closed_by="player_0", closing_snapshot={"points": 0, "tricks": 0}), {"close_min_stock": 8},
     "close_min_stock"),
    ("exchanged_without_jack_under_stock", dict(exchanged=True), {}, "exchanged"),
    ("known_card_nobody_could_know", dict(known={"player_0": ["AS"], "player_1": []}), {}, "known"),
    ("auto_claim_would_have_happened",
     dict(won={"player_0": "AD TD KD QD AC TC AS TS".split(), "player_1": []}, stock=["JD", "TH"],
          hands={"player_0": "JH QH KH AH KC".split(), "player_1": "QC JC KS QS JS".split()}),
     {"claim_mode": "auto"}, "would have claimed"),
    ("result_not_what_the_cards_give",
     dict(result={"winner": "player_1", "game_points": 3, "reason": "claim"}), {}, "result"),
    ("result_last_trick_mid_hand",
     dict(result={"winner": "player_0", "game_points": 1, "reason": "last_trick"}), {}, "played-out"),
]


@pytest.mark.parametrize("name, changes, knobs, message", UNREACHABLE, ids=[u[0] for u in UNREACHABLE])
def test_unreachable_position_loaded_bug(name, changes, knobs, message):
    """from_position loaded positions no play reaches (a marriage counted twice, a carry in schnapsen20, a result
    the cards contradict, ...); each is refused now, naming what is wrong."""
    with pytest.raises(InvalidPositionError, match=message):
        GameState.from_position(RuleSet.make("schnapsen20", **knobs), _s17(**changes))


def test_announcement_outside_marriage_window_loaded_bug():
    """A position with a marriage announced outside the marriage window (R66-6) was loaded."""
    pos = {"trump": "C", "stock": [], "closed_by": None, "closing_snapshot": None,
           "hands": {"player_0": ["KH", "QH", "9S"], "player_1": ["AS", "TS", "9D"]},
           "won": {"player_0": "AC TC KC QC JC 9C AD TD KD QD JD 9H".split(),
                   "player_1": "AH TH JH JS KS QS".split()},
           "marriages": {"player_0": ["H"], "player_1": []}, "announced": "H", "leader": "player_0", "table": None}
    with pytest.raises(InvalidPositionError, match="marriage window"):
        GameState.from_position(RuleSet.make("sixtysix24"), pos)  # trick 10: R66-6 allows tricks 1-6 only


def test_unknown_keys_of_mixed_types_crashed_bug():
    """Unknown position keys of mixed types (1 and "zz") made sorting them raise TypeError instead of naming them
    in an InvalidPositionError."""
    pos = _s17()
    pos[1] = 2
    pos["zz"] = 3
    with pytest.raises(InvalidPositionError, match="unknown key"):
        GameState.from_position(RuleSet.make(), pos)


def test_points_given_as_bools_loaded_bug():
    """A position giving points as False (equal to 0) was loaded; points must be ints."""
    pos = GameState.from_position(RuleSet.make(), _s17()).position()
    pos["points"]["player_1"] = False  # equals 0, but is not an int count
    with pytest.raises(InvalidPositionError, match="points"):
        GameState.from_position(RuleSet.make(), pos)


def test_push_of_an_out_of_range_action_changes_nothing_bug():
    """push(99) used to record a phantom action before failing; now it raises and the state is unchanged."""
    g = GameState.new_hand(RuleSet.make(), rng=np.random.default_rng(0))
    before = g.copy()
    for bad in (99, -1, 27):
        with pytest.raises(ValueError, match="not an action id"):
            g.push(bad)
        assert g == before and g.actions == [] and g._stack == []


def test_result_of_claim_and_last_trick_check_the_seat_bug():
    g = GameState.new_hand(RuleSet.make(), rng=np.random.default_rng(0))
    for bad in (2, -1, True, "player_0", None):
        with pytest.raises(ValueError, match="expected a seat"):
            g.result_of_claim(bad)
        with pytest.raises(ValueError, match="expected a seat"):
            g.result_of_last_trick(bad)
    assert g.result_of_claim(0).reason == "false_claim"


def test_from_fields_takes_any_sequence_for_the_stock_bug():
    """A list for the stock used to break equality and a later exchange; the state stores a tuple."""
    rules = RuleSet.make()
    g = GameState.new_hand(rules, rng=np.random.default_rng(4))
    fields = {name: getattr(g, name) for name, _, _ in FIELDS}
    h = GameState.from_fields(rules, **{**fields, "stock": list(g.stock)})
    assert isinstance(h.stock, tuple) and h == GameState.from_fields(rules, **fields)
