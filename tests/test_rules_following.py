"""Following a lead (RULES.md R9-R11, R66-5): free while the stock is open, strict (follow, head, trump) once
it is closed or exhausted.

Players: A = player_0 (seat 0), B = player_1 (seat 1), as in RULES.md section 6. Expected values are derived
from RULES.md; the rule is cited in each test name. Shared position helpers: :mod:`helpers.areas`.
"""

from __future__ import annotations

import pytest

from helpers.areas import at, legal, play, plays, rs, s12, s20


def test_r9_open_phase_any_card_s12():
    assert plays(s12()) == set("KS AH TD QC JC".split())


@pytest.mark.parametrize("sid, expect", [
    ("S06", {"KS"}),  # must head in the led suit
    ("S07", {"JS"}),  # must follow although unable to beat; may not trump
    ("S10", {"AH"}),  # trump led, must over-trump
])
def test_r10_strict_following(sid, expect):
    s = at(sid)
    assert plays(s) == expect
    assert legal(s) == {"play " + c for c in expect}  # R5: nothing but a card


def test_r10_void_in_suit_and_trump_anything_s09():
    s = at("S09")
    assert plays(s) == set("QD KC QC JC".split())


def test_r10_void_in_suit_must_trump_s20():
    s = s20()
    play(s, "close", "play AH")
    assert plays(s) == {"JS"}
    play(s, "play JS", "play AC")
    assert plays(s) == {"AS", "TS", "KS"}  # any trump, no heading duty across suits


@pytest.mark.parametrize("must_head, expect", [(False, {"KS", "JS"}), (True, {"KS"})])
def test_r66_5_heading_not_required_t07(must_head, expect):
    s = at("T07", rs("sixtysix24", must_head=must_head))
    assert plays(s) == expect
