"""The rule-knob sets that the lockstep tests of the two rules implementations run over (shared data, not a
test module).

Add a set anywhere: tests seed their runs with :func:`case_seed` (from the set's content, so other sets keep their
seeds), and the slower tests that run a subset (every third or fifth set) may skip a new one; the lockstep tests
(``test_core_lockstep.py``, ``test_vector_exact.py``, ``test_env_core_observe.py``, ``test_heuristic_batch.py``)
play every set.
"""

import json
import zlib

# Every knob value of RULES.md section 5 other than the defaults, alone and in a few combinations.
KNOBS_20 = [
    {},
    {"false_claim": "mirror"},
    {"false_claim": "pagat"},
    {"claim_mode": "auto"},
    {"marriage_declaration": "optional"},
    {"marriage_on_opening_lead": False},
    {"marriage_window": "stock_open"},
    {"marriage_window": "first_6_tricks"},
    {"must_head": False},
    {"exchange_min_stock": 2, "close_min_stock": 2},
    {"closed_hand_end": "must_claim"},
    {"closing_reference": "at_end"},
    {"failed_close_value": "flat3"},
    {"unclaimed_last_trick_value": "one"},
    {"last_trick_bonus": 10, "last_trick_bonus_when_closed": True, "match_target": 11},
    {"false_claim": "mirror", "closing_reference": "at_end", "failed_close_value": "flat3",
     "close_min_stock": 2, "marriage_declaration": "optional"},
    {"false_claim": "pagat", "closed_hand_end": "must_claim", "exchange_min_stock": 2,
     "marriage_on_opening_lead": False, "next_dealer": "loser"},
    {"claim_mode": "auto", "closed_hand_end": "must_claim", "closing_reference": "at_end",
     "marriage_window": "stock_open", "close_min_stock": 2},
]
#: Sets that combine many non-default values (the OpenSpiel game's checks run them).
COMBINED_20 = KNOBS_20[-1]
KNOBS_24 = [
    {},
    {"false_claim": "mirror"},
    {"false_claim": "pagat"},
    {"claim_mode": "auto"},
    {"marriage_declaration": "optional", "marriage_on_opening_lead": False},
    {"marriage_window": "any"},
    {"marriage_window": "stock_open"},
    {"must_head": True},
    {"exchange_min_stock": 4, "close_min_stock": 4},
    {"exchange_rank": "J"},
    {"closed_hand_end": "must_claim", "closing_reference": "at_end"},
    {"failed_close_value": "flat3", "last_trick_bonus_when_closed": True},
    {"tie": "none"},
    {"tie": "last_trick"},
    {"last_trick_bonus": 0, "next_dealer": "winner", "match_target": 11},
    {"false_claim": "pagat", "closed_hand_end": "must_claim", "failed_close_value": "flat3",
     "last_trick_bonus_when_closed": True, "exchange_rank": "J"},
    {"claim_mode": "auto", "closing_reference": "at_end", "must_head": True, "tie": "last_trick"},
]
COMBINED_24 = KNOBS_24[-1]
#: schnapsen10 (RULES.md section 3a) takes schnapsen20's knobs, except the stock minimums: its stock of 2 allows
#: no other value (RS4).
KNOBS_10 = [k for k in KNOBS_20 if "exchange_min_stock" not in k and "close_min_stock" not in k]
COMBINED_10 = KNOBS_10[-1]
CASES = ([("schnapsen20", k) for k in KNOBS_20] + [("sixtysix24", k) for k in KNOBS_24]
         + [("schnapsen10", k) for k in KNOBS_10])


def case_seed(case) -> int:
    """A seed for the runs of ``case`` (a ``(ruleset, knobs)`` pair), from its content: adding or moving a set
    leaves the other sets' seeds as they are."""
    ruleset, knobs = case
    return zlib.crc32(json.dumps([ruleset, sorted(knobs.items())]).encode())
