"""RULES.md section 6: every scenario, read from the rule book, replayed with its exact values through the engine
(``GameState``) and the PettingZoo env (``raw_env`` and the wrapped ``env``).

The positions, actions, ``illegal:`` lines, results and variants come from ``docs/RULES.md`` (parsed by
:mod:`helpers.rulebook`); what this file adds is how each ``expect:`` line is checked (:data:`EXPECT`, keyed by the
line's text), each variant (:data:`VARIANTS`), and the result reason, which the rule book does not name
(:data:`REASONS`). A line of the rule book without a check here, or a check without its line, fails
``test_every_expect_line_has_exactly_one_check``. Notation: A = ``player_0``, B = ``player_1``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from helpers import drivers
from helpers.drivers import DRIVERS, Driver, replay
from helpers.rulebook import SEAT, RulebookError, deal_scenarios, parse_rulebook, position_scenarios, rulebook
from schnapsen_env import Result, RuleSet
from schnapsen_env.match import Match, countdown, next_dealer, score_hand


# ------------------------------------------------------------------------------------ checks of expect: lines
def _points(**want):
    def check(d: Driver) -> None:
        got = {who: d.points(who) for who in want}
        assert got == want, f"points {got}, expected {want}"
    return check


def _legal(who: str, *cards: str):
    """``who`` may play exactly these cards and nothing else."""
    def check(d: Driver) -> None:
        assert d.legal(who) == {f"play {c}" for c in cards}
    return check


def _actions(who: str, *names: str):
    """``who``'s legal actions are exactly ``names``."""
    def check(d: Driver) -> None:
        assert d.legal(who) == set(names)
    return check


def _legal_is_hand(who: str, n: int):
    """``who`` may play any of the ``n`` cards held, and nothing else."""
    def check(d: Driver) -> None:
        assert len(d.hand(who)) == n
        assert d.legal(who) == {f"play {c}" for c in d.hand(who)}
    return check


def _offers(who: str, *names: str):
    def check(d: Driver) -> None:
        assert set(names) <= d.legal(who), (names, d.legal(who))
    return check


def _not_offered(who: str, *names: str):
    def check(d: Driver) -> None:
        assert not set(names) & d.legal(who), (names, d.legal(who))
    return check


def _refused(who: str, name: str):
    def check(d: Driver) -> None:
        d.refuse(who, name)
    return check


def _hand(who: str, *cards: str):
    def check(d: Driver) -> None:
        assert d.hand(who) == set(cards)
    return check


def _holds(who: str, *cards: str):
    def check(d: Driver) -> None:
        assert set(cards) <= d.hand(who), (cards, d.hand(who))
    return check


def _lacks(who: str, *cards: str):
    def check(d: Driver) -> None:
        assert not set(cards) & d.hand(who), (cards, d.hand(who))
    return check


def _turn_up(card: str | None):
    def check(d: Driver) -> None:
        assert d.turn_up() == card
    return check


def _stock(size: int, top: str | None = None):
    def check(d: Driver) -> None:
        assert len(d.stock()) == size
        if top is not None:
            assert d.stock()[0] == top
    return check


def _to_move(who: str):
    def check(d: Driver) -> None:
        assert d.to_move() == who
    return check


def _snapshot(points: int, tricks: int, closer: str):
    def check(d: Driver) -> None:
        assert d.position()["closed_by"] == SEAT[closer]
        assert d.snapshot() == (points, tricks)
    return check


def _tricks(who: str, n: int):
    def check(d: Driver) -> None:
        assert d.tricks(who) == n
    return check


def _pending(who: str, n: int):
    def check(d: Driver) -> None:
        assert d.pending(who) == n
    return check


def _marriages(who: str, *suits: str):
    def check(d: Driver) -> None:
        assert d.marriages(who) == list(suits)
    return check


def _not_over(d: Driver) -> None:
    assert not d.over


def _strict(d: Driver) -> None:
    assert d.is_strict()


def _all(*checks):
    def check(d: Driver) -> None:
        for c in checks:
            c(d)
    return check


# Every "expect:" line of RULES.md section 6, by (scenario, text as written).
EXPECT = {
    ("S02", "B may close (stock 10)"): _all(_offers("B", "close"), _stock(10)),
    ("S02", "B may not exchange (no trump jack)"): _all(_lacks("B", "JH"), _refused("B", "exchange")),
    ("S02", "A may not exchange (not on lead)"): _all(_holds("A", "JH"), _to_move("B"), _not_offered("A", "exchange")),
    ("S02", "B may not claim (no trick yet)"): _all(_tricks("B", 0), _refused("B", "claim")),
    ("S02", "KH and QH leads are 40-marriage leads"):
        _all(_not_offered("B", "play KH", "play QH"),
             _actions("B", "play AS", "play TS", "play KS", "marriage H", "close")),
    ("S03", "A has 14, B has 0 counted (40 pending)"):
        _all(_points(A=14, B=0), _pending("B", 40), _marriages("B", "H")),
    ("S03", "A drew TD, B drew KD"):
        _all(_hand("A", "QS", "JS", "JH", "AD", "TD"), _hand("B", "AS", "TS", "KS", "KH", "KD")),
    ("S03", "stock 8, top QD"): _stock(8, "QD"),
    ("S04", "A got TH, JH is now the turn-up"): _all(_holds("A", "TH"), _lacks("A", "JH"), _turn_up("JH")),
    ("S05", "B counted = 6 + 40 = 46"): _all(_points(B=46), _pending("B", 0)),
    ("S05", "B drew QD first, A drew JD"):
        _all(_hand("B", "AS", "TS", "KH", "KD", "QD"), _hand("A", "QS", "JH", "AD", "TD", "JD")),
    ("S06", "A legal = {KS}"): _legal("A", "KS"),
    ("S07", "A legal = {JS}"): _legal("A", "JS"),
    ("S09", "A legal = all 4"): _legal_is_hand("A", 4),
    ("S10", "A legal = {AH}"): _legal("A", "AH"),
    ("S12", "A legal = all 5"): _legal_is_hand("A", 5),
    ("S13", "A may discard JD although holding KS"): _all(_holds("A", "KS"), _legal_is_hand("A", 5)),
    ("S13", "B 26+13=39"): _points(B=39),
    ("S13", "B drew KC, A drew the turn-up TH"): _all(_holds("B", "KC"), _holds("A", "TH")),
    ("S13", "stock empty -> strict from trick 6"): _all(_stock(0), _strict),
    ("S16", "A holds TH, turn-up JH"): _all(_holds("A", "TH"), _lacks("A", "JH"), _turn_up("JH")),
    ("S16", "B won 7, drew KC; A drew JH back"):
        _all(_points(B=35 + 7), _holds("B", "KC"), _holds("A", "JH"), _stock(0)),
    ("S17", "A counted 28+40 = 68"): _points(A=68),
    ("S17", "claim window open"): _offers("A", "claim"),
    ("S19", "B must follow with JS"): _legal("B", "JS"),
    ("S20", "B must trump with JS"): _legal("B", "JS"),
    ("S20", "A must trump (any)"): _legal("A", "AS", "TS", "KS"),
    ("S20", "A 70, B 13 with 1 trick"): _all(_points(A=70, B=13), _tricks("B", 1)),
    ("S26", "snapshot B = (42, 2)"): _snapshot(42, 2, closer="A"),
    ("S26", "A must play a trump"): _legal("A", "QC", "JC"),
    ("S26", "B 77"): _points(B=77),
    ("S28", "A 69 (not claimed)"): _all(_points(A=69), _not_over),
    ("S28", "B must head with AC"): _legal("B", "AC"),
    ("S29", "A 70, B 33"): _points(A=70, B=33),
    ("S32", "A 63"): _points(A=63),
    ("S34", "A 73 unclaimed, B 55"): _all(_points(A=73, B=55), _not_over, _offers("A", "claim")),
    ("S34", "B must head: AC, TC or KC"): _legal("B", "AC", "TC", "KC"),
    ("S34", "B 69"): _points(B=69),
    ("S35", "A 62, B 58"): _points(A=62, B=58),
    ("S38", "no marriage for A; B won 15"): _all(_marriages("A"), _points(B=34 + 15), _tricks("B", 3)),
    ("S39", "A 49+20 = 69"): _all(_points(A=69), _offers("A", "claim")),
    ("S40", "A 66"): _points(A=66),
    ("S42", "snapshot A = (0,0)"): _snapshot(0, 0, closer="B"),
    ("S42", "A (no spades, no trumps) may play anything"): _legal_is_hand("A", 5),
    ("S42", "40 counts at once (B has a trick): 53"): _all(_points(B=53), _pending("B", 0)),
    ("S42", "B 74"): _points(B=74),
    ("S45", "both a marriage lead and a plain lead of KS exist"): _offers("A", "marriage S", "play KS"),
    ("S45", "A 46 (no 20)"): _all(_points(A=46), _marriages("A")),
    ("S46", "KH/QH are plain leads on the opening lead"):
        _all(_offers("B", "play KH", "play QH"), _refused("B", "marriage H")),
    ("T02", "B may declare 40 on opening lead"): _offers("B", "marriage H"),
    ("T02", "B may close (stock 12)"): _all(_offers("B", "close"), _stock(12)),
    ("T02", "A cannot exchange 9H (not on lead)"):
        _all(_holds("A", "9H"), _to_move("B"), _not_offered("A", "exchange"), _refused("B", "exchange")),
    ("T04", "close allowed at stock 2"): _all(_offers("A", "close"), _stock(2)),
    ("T04", "A holds TH, turn-up 9H"): _all(_holds("A", "TH"), _lacks("A", "9H"), _turn_up("9H")),
    ("T04", "A drew the 9H back"): _all(_holds("A", "9H"), _holds("B", "KC"), _points(B=12 + 7)),
    ("T06", "B must trump with 9S"): _legal("B", "9S"),
    ("T06", "65-65 after +10"): _all(_points(A=65, B=65), _tricks("B", 8)),
    ("T07", "A legal = {KS, JS}"): _legal("A", "KS", "JS"),
    ("T09", "A 68, B 62 (incl. +10)"): _points(A=68, B=62),
}

# The result reason of each scenario with a Result line, and of each variant that changes the result (the rule
# book gives the winner and the game points; the reason is the engine's name of the rule that ended the hand).
REASONS = {
    "S04": "false_claim", "S17": "claim", "S20": "claim", "S22": "claim", "S24": "false_claim", "S26": "claim",
    "S28": "closed_hand", "S29": "claim", "S32": "false_claim", "S34": "claim", "S35": "last_trick", "S39": "claim",
    "S40": "claim", "S42": "claim", "S43": "claim", "T06": "tie", "T09": "count",
    ("S20", 'closing_reference="at_end"'): "claim",
    ("S28", 'closed_hand_end="must_claim"'): "closed_hand",
    ("S32", 'false_claim="pagat"'): "false_claim",
}


# ------------------------------------------------------------------------------------------ variant checks
def _s32_reject(d: Driver) -> None:
    """CLAIM is not a legal action for A here (A must lead)."""
    d.refuse("A", "claim")
    assert d.legal("A") == {"play JS", "play JH", "play JD"}


def _s39_stock_open(d: Driver) -> None:
    """The KD lead is a plain lead, A stays at 49 and has no claim window until after the trick."""
    assert "play KD" in d.legal("A")
    d.refuse("A", "marriage D")
    d.refuse("A", "claim")
    d.act("A", "play KD")
    assert d.points("A") == 49 and d.marriages("A") == []
    assert d.to_move() == "B" and d.legal("A") == set()


def _t07_must_head(d: Driver) -> None:
    """Only KS is legal."""
    assert d.legal("A") == {"play KS"}


# Variants that do not change the result but what is legal: checked from the scenario's position under the
# variant's knobs. Variants that give another result ("A scores 2", "B wins, 3 game points") are replayed.
VARIANTS = {
    ("S32", 'false_claim="reject"'): _s32_reject,
    ("S39", 'marriage_window="stock_open"'): _s39_stock_open,
    ("T07", "must_head=true"): _t07_must_head,
}
_RESULT_VARIANT = re.compile(r"(?:.*: )?([AB]) (?:scores (\d+)|wins, (\d+) game points)\b.*")


def _variant_result(text: str) -> tuple[str, int] | None:
    """("A", 2) for "A scores 2 (...)" or "...: B wins, 3 game points (...)"; None for other variants."""
    m = _RESULT_VARIANT.fullmatch(text)
    return None if m is None else (m.group(1), int(m.group(2) or m.group(3)))


VARIANT_CASES = [pytest.param(sc, v, id=f"{sc.sid}-{v.key.replace(chr(34), '')}")
                 for sc in position_scenarios() for v in sc.variants]


# ---------------------------------------------------------------------------------- the rule book is covered
def test_every_scenario_is_tested(rulebook):
    """Each scenario is a position scenario (replayed below), a deal (test_deal_*) or a match scenario (M01, M02)."""
    kinds = {sid: "position" if sc.block else "deal" if sc.deal else "match" for sid, sc in rulebook.items()}
    assert {sid for sid, k in kinds.items() if k == "match"} == {"M01", "M02"}, kinds
    assert {sid for sid, k in kinds.items() if k == "deal"} == {"S01", "T01"}, kinds
    assert len([k for k in kinds.values() if k == "position"]) >= 30


def test_every_expect_line_has_exactly_one_check(rulebook):
    lines = [(sid, text) for sid, sc in rulebook.items() for text in sc.expect_lines()]
    assert len(lines) == len(set(lines)), "an expect line appears twice in one scenario"
    assert set(lines) - set(EXPECT) == set(), "expect lines of RULES.md without a check in EXPECT"
    assert set(EXPECT) - set(lines) == set(), "checks in EXPECT for lines RULES.md does not have (any more)"


def test_every_variant_has_exactly_one_check(rulebook):
    for sc, v in ((scenario, v) for scenario in rulebook.values() for v in scenario.variants):
        if _variant_result(v.text):
            assert (sc.sid, v.key) in REASONS and (sc.sid, v.key) not in VARIANTS, (sc.sid, v.key)
        else:
            assert (sc.sid, v.key) in VARIANTS, f"{sc.sid} variant {v.key}: no check in VARIANTS"
    keys = {(sc.sid, v.key) for sc in rulebook.values() for v in sc.variants}
    assert set(VARIANTS) <= keys and {k for k in REASONS if isinstance(k, tuple)} <= keys
    assert {sid for sid, sc in rulebook.items() if sc.outcome} == {k for k in REASONS if isinstance(k, str)}


# ----------------------------------------------------------------------------------------- the replays
def test_scenario(scenario, driver_kind):
    """The scenario's steps from its position, every expect and illegal line checked, then its Result line."""
    d = drivers.load(driver_kind, scenario)
    replay(scenario, d, EXPECT)
    if scenario.outcome is None:
        assert not d.over, "the scenario has no Result line, but the hand ended"
    else:
        d.assert_result(scenario.outcome.winner, scenario.outcome.game_points, REASONS[scenario.sid])


@pytest.mark.parametrize("driver_kind", DRIVERS)
@pytest.mark.parametrize("sc, variant", VARIANT_CASES)
def test_scenario_variant(sc, variant, driver_kind):
    """A ``Variant `knob=value`:`` sentence: the scenario's knobs plus the variant's."""
    d = drivers.load(driver_kind, sc, **variant.knobs)
    result = _variant_result(variant.text)
    if result is None:
        VARIANTS[(sc.sid, variant.key)](d)
    else:
        replay(sc, d, EXPECT)
        d.assert_result(*result, REASONS[(sc.sid, variant.key)])


@pytest.mark.parametrize("driver_kind", DRIVERS)
@pytest.mark.parametrize("sc", [s for s in position_scenarios() if s.claim_refused_under_reject],
                         ids=lambda s: s.sid)
def test_claim_refused_under_default_false_claim(sc, driver_kind):
    """'(under the default "reject" the claim is not a legal action here)': the same steps under
    ``false_claim="reject"`` reach the claim, and the claim is refused."""
    claim = next(s for s in sc.steps if s.kind == "claim")
    d = drivers.load(driver_kind, sc, false_claim="reject")
    replay(sc, d, EXPECT, stop_before=claim.number)
    d.refuse(claim.who, "claim")


# --------------------------------------------------------- what the scenarios' titles say beyond their steps
@pytest.mark.parametrize("driver_kind", DRIVERS)
@pytest.mark.parametrize("sid", ["S02", "T02"])
def test_opening_lead_40_announced_then_only_k_or_q_pending_40(rulebook, sid, driver_kind):
    """S02/T02: after B announces 40 on the opening lead only KH or QH may follow, and the 40 is pending."""
    d = drivers.load(driver_kind, rulebook[sid])
    d.act("B", "marriage H")
    assert d.legal("B") == {"play KH", "play QH"}
    assert d.pending("B") == 40 and d.points("B") == 0


@pytest.mark.parametrize("driver_kind", DRIVERS)
def test_s13_strict_from_trick_6(rulebook, driver_kind):
    """S13: once the last stock pair is drawn, A must follow B's spade lead."""
    sc = rulebook["S13"]
    d = drivers.load(driver_kind, sc)
    replay(sc, d, EXPECT)
    d.act("B", "play TS")
    assert d.legal("A") == {"play KS"}


@pytest.mark.parametrize("driver_kind", DRIVERS)
def test_s24_closing_snapshot(rulebook, driver_kind):
    """S24: the snapshot of B at the close is (34, 2): the failed close is worth max(2, v(34, 2)) = 2."""
    d = drivers.load(driver_kind, rulebook["S24"])
    d.act("A", "close")
    assert d.snapshot() == (34, 2)


@pytest.mark.parametrize("driver_kind", DRIVERS)
def test_s38_follower_cannot_announce(rulebook, driver_kind):
    """S38: A follows holding KS and QS: no marriage is offered, and stepping one is refused."""
    d = drivers.load(driver_kind, rulebook["S38"])
    assert {"KS", "QS"} <= d.hand("A")
    assert not any(n.startswith("marriage") for n in d.legal("A"))
    d.refuse("A", "marriage S")


@pytest.mark.parametrize("driver_kind", DRIVERS)
def test_s43_auto_claim_mode_never_offers_claim(rulebook, driver_kind):
    """S43: under claim_mode="auto" the claim is never an action, before or after the exchange."""
    d = drivers.load(driver_kind, rulebook["S43"])
    assert "claim" not in d.legal("A")
    d.act("A", "exchange")
    assert "claim" not in d.legal("A")


# ------------------------------------------------------------------------------------------ deals (S01, T01)
def _same_start(d: Driver, sc) -> None:
    """The dealt position is the scenario's position block (hands compared as sets)."""
    got, want = d.position(), sc.position
    for key in ("trump", "stock", "leader", "dealer", "table", "closed_by", "won", "marriages"):
        assert got[key] == want[key], (sc.sid, key)
    for p in SEAT.values():
        assert set(got["hands"][p]) == set(want["hands"][p]), (sc.sid, p)
        assert got["points"][p] == sc.block.counted[p] and got["tricks"][p] == sc.block.tricks[p]


@pytest.mark.parametrize("driver_kind", DRIVERS)
@pytest.mark.parametrize("sc", deal_scenarios(), ids=lambda s: s.sid)
def test_deal_mapping(sc, driver_kind):
    """The deck order dealt by the named dealer gives exactly the listed hands, turn-up, trump, stock and leader."""
    deal = sc.deal
    d = drivers.deal(driver_kind, sc.ruleset, {}, deal.deck, deal.dealer)
    for who in "AB":
        assert d.hand(who) == set(deal.hands[who]), who
    pos = d.position()
    assert d.turn_up() == deal.turn_up and pos["trump"] == deal.trump
    assert d.stock() == list(deal.stock) and len(d.stock()) == deal.stock_size
    assert pos["dealer"] == SEAT[deal.dealer] and pos["leader"] == SEAT[deal.leader] and d.to_move() == deal.leader
    assert pos["won"] == {"player_0": [], "player_1": []} and pos["table"] is None


@pytest.mark.parametrize("driver_kind", DRIVERS)
@pytest.mark.parametrize("sc, started", [(sc, rulebook()[sid]) for sc in deal_scenarios() for sid in sc.deal.starts],
                         ids=lambda s: s.sid)
def test_deal_is_the_start_of(sc, started, driver_kind):
    """'This is the starting state of ...': the deal gives that scenario's position, and the scenario replayed from
    the deal (under its own knobs) ends as the rule book says."""
    assert started.ruleset == sc.ruleset
    d = drivers.deal(driver_kind, sc.ruleset, dict(started.knobs), sc.deal.deck, sc.deal.dealer)
    _same_start(d, started)
    replay(started, d, EXPECT)
    if started.outcome is not None:
        d.assert_result(started.outcome.winner, started.outcome.game_points, REASONS[started.sid])


# ------------------------------------------------------------------------------------------ match (M01, M02)
def _sentence(sc, pattern: str) -> re.Match:
    m = re.search(pattern, sc.text)
    assert m, f"{sc.sid}: the rule book no longer says {pattern!r}; update this test with it"
    return m


def test_m01_end_of_match(rulebook):
    """M01: A at 6 wins a hand worth 2 against B at 4: A has 8, the match is over, the surplus is ignored."""
    sc = rulebook["M01"]
    a, b, worth = map(int, _sentence(sc, r"Game points are A (\d+), B (\d+), and A wins a hand worth (\d+)\.").groups())
    total = int(_sentence(sc, r"A has (\d+), so the match is over: A wins and B gets the Bummerl").group(1))
    countdown_text = _sentence(sc, r"A goes from (\d+) to −(\d+) and is shown as (\d+)")
    shown_from, shown_to, shown = map(int, countdown_text.groups())
    _sentence(sc, r"No further hand is dealt\.")
    rules = RuleSet.make("schnapsen20")
    new, carry, gained = score_hand(rules, [a, b], 0, Result(0, worth, "claim"))
    assert new == [total, b] and gained == [worth, 0] and carry == 0
    # the count-down display: A from 1 to -1, shown as 0
    assert rules.match_target - a == shown_from and rules.match_target - total == -shown_to
    assert countdown(a, rules.match_target) == shown_from and countdown(total, rules.match_target) == shown
    # through a Match: over, A wins (B gets the Bummerl), no further hand
    s39 = rulebook["S39"]  # a hand that A wins for 2 (its Result line)
    assert (s39.outcome.winner, s39.outcome.game_points) == ("A", worth)
    m = Match(rules, rng=np.random.default_rng(0), dealer=0)
    m.points = [a, b]
    m.state = s39.state(extra={"dealer": "player_0"})
    m.state.step("marriage D")
    m.state.step("claim")
    assert m.finish_hand() == [worth, 0]
    assert m.points == [total, b]
    assert m.over and m.winner == 0
    with pytest.raises(ValueError):
        m.next_hand()


@pytest.mark.parametrize("hand1_winner", [0, 1])
def test_m02_dealer_rotation(rulebook, hand1_winner):
    """M02: hand 2 is dealt by B and A leads trick 1, whoever won hand 1."""
    _sentence(rulebook["M02"], r"hand 2 is dealt by B and A leads trick 1, whoever won hand 1\.")
    rules = RuleSet.make("schnapsen20")
    assert next_dealer(rules, 0, Result(hand1_winner, 1, "claim")) == 1
    m = Match(rules, rng=np.random.default_rng(3), deck=list(rulebook["S01"].deal.deck), dealer=0)
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


def test_m02_dealer_rotation_after_tie_sixtysix24(rulebook):
    """M02: 'The same holds in `sixtysix24` after a 65–65 tie' (T06 is such a tie)."""
    _sentence(rulebook["M02"], r"The same holds in `sixtysix24` after a 65–65 tie\.")
    rules = RuleSet.make("sixtysix24")
    assert next_dealer(rules, 0, Result(None, 0, "tie")) == 1
    m = Match(rules, rng=np.random.default_rng(5), deck=list(rulebook["T01"].deal.deck), dealer=0)
    st = rulebook["T06"].state(extra={"dealer": "player_0"})
    st.step("play 9C")
    st.step("play 9S")
    assert st.result == Result(None, 0, "tie")
    m.state = st  # hand 1 (dealt by A) ended 65-65
    m.finish_hand()
    nxt = m.next_hand()
    assert nxt.dealer == 1
    assert nxt.leader == 0 and nxt.to_move == 0


# ------------------------------------------------------------------------------------- the parser fails loudly
@pytest.mark.parametrize("old, new, message", [
    ("2. A plays AH\n3. expect: A has 14", "2. A plyas AH\n3. expect: A has 14", "not a known step form"),
    ("A: hand KS JS AH TD QC |", "A: hand KS JS AH TD QC ", "cannot parse the player line"),
    ("**Result:** A wins the hand, **2** game point(s).", "**Result:** A wins, 2.", "not a known line"),
    ("Ruleset `sixtysix24`, defaults.", "Ruleset `sixtysix32`, defaults.", "unknown ruleset"),
    ("3. B plays JS\n4. A claims 66", "4. B plays JS\n4. A claims 66", "numbered 1..n"),
    ("1. B leads QH (marriage 40)", "1. B leads QH (marriage 20)", "is worth 40"),
    ("This is the starting state of T02.", "This is the starting state of T03.", "T03, which does not exist"),
], ids=["step", "position", "result", "ruleset", "numbering", "marriage", "deal"])
def test_rulebook_parser_names_what_it_cannot_read(tmp_path, old, new, message):
    from helpers.rulebook import RULES_MD

    text = RULES_MD.read_text(encoding="utf-8")
    assert old in text, f"the test's sample {old!r} is no longer in RULES.md"
    bad = tmp_path / "RULES.md"
    bad.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(RulebookError, match=message) as err:
        parse_rulebook(bad)
    assert re.search(r"RULES\.md:\d+", str(err.value)), "the error names the line"
