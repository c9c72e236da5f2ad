"""Shared helpers of the per-area rule tests (``tests/test_rules_<area>.py``): short position builders and
checks, with seats ``A = 0`` and ``B = 1`` (RULES.md section 6 calls them A and B).

- :func:`at` loads the position of a rule-book scenario (``at("S26")``) under a ruleset's defaults or the given
  rules; ``s12()`` ... ``t09()`` are its short names.
- :func:`load` builds a position from keyword notation (card lists as space-separated strings) for the positions
  the rule book does not list.
"""

from __future__ import annotations

from helpers.rulebook import scenario
from schnapsen_env import GameState, RuleSet

A, B = 0, 1
P = ("player_0", "player_1")
DECK20 = list(scenario("S01").deal.deck)  # S01's deck order
DECK24 = list(scenario("T01").deal.deck)  # T01's deck order


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
def at(sid: str, rules: RuleSet | None = None) -> GameState:
    """The position of rule-book scenario ``sid`` under ``rules``; by default under the defaults of the scenario's
    ruleset (not the scenario's own knobs)."""
    sc = scenario(sid)
    return sc.state(rules or rs(sc.ruleset))


def s12(rules=None):
    """S12: stock QD JD KC [TH], B has led AS, A to play."""
    return at("S12", rules)


def s13(rules=None):
    """S13: last stock pair KC [TH], B has led AS, A to play."""
    return at("S13", rules)


def s15(rules=None):
    """S15/S16: A to lead with JH at stock KC [TH]."""
    return at("S15", rules)


def s17(rules=None):
    """S17/S19/S43: A to lead, stock JD AH TH KS QS [KH], B without a trick."""
    return at("S17", rules)


def s20(rules=None):
    return at("S20", rules)


def s22(rules=None):
    return at("S22", rules)


def s24(rules=None):
    return at("S24", rules)


def s26(rules=None):
    return at("S26", rules)


def s28(rules=None):
    return at("S28", rules)


def s29(rules=None):
    return at("S29", rules)


def s32(rules=None):
    return at("S32", rules)


def s34(rules=None):
    return at("S34", rules)


def s35(rules=None):
    return at("S35", rules)


def s39(rules=None):
    return at("S39", rules)


def s40(rules=None):
    return at("S40", rules)


def s42(rules=None):
    return at("S42", rules)


def t04(rules=None):
    return at("T04", rules or rs("sixtysix24"))


def t06(rules=None):
    return at("T06", rules or rs("sixtysix24"))


def t09(rules=None):
    return at("T09", rules or rs("sixtysix24"))


def fresh20(rules=None, dealer="player_0"):
    """S01: the deck order dealt by ``dealer`` (the start of S02-S05 and S46 when A deals)."""
    return GameState.from_deck(rules or rs(), DECK20, dealer)


def sixtysix_trick(n: int, **knobs) -> GameState:
    """sixtysix24, A to lead trick ``n`` (6: stock JD [9D]; 7: exhausted) holding KH QH."""
    rules = rs("sixtysix24", **knobs)
    if n == 7:
        return load(rules, trump="D", stock="", a="KH QH AS TS 9S 9C", b="AH TH JH 9H KS QS",
                    won_a="AD TD KD QD JD 9D", won_b="AC TC KC QC JC JS")
    return load(rules, trump="D", stock="JD 9D", a="KH QH AS TS 9S 9C", b="AH TH JH 9H KS QS",
                won_a="AD TD KD QD", won_b="AC TC KC QC JC JS")
