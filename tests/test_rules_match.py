"""The match (RULES.md R25, R26, R66-10, R66-11): the end of the match, dealer rotation, carried ties.

Players: A = player_0 (seat 0), B = player_1 (seat 1), as in RULES.md section 6. Expected values are derived
from RULES.md; the rule is cited in each test name. Shared position helpers: :mod:`helpers.areas`.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.areas import DECK20, DECK24, A, B, hand, play, rs, s29, s34, s39, t06, t09
from schnapsen_env import Result
from schnapsen_env.match import Match, countdown, next_dealer, score_hand


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
