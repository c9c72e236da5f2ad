"""Positions of the RULES.md section 7 fault tests that section 6 does not list, in the rule book's notation
(:func:`helpers.engine.load`). The SVG drawing test draws them too."""

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
FAULT7_OPENING = """\
trump: H   stock: TD KD QD JD 9D AC TC KC QC JC 9S [JH]  (size 12; top first, [turn-up] last)
A (dealer): hand 9C AH TH QS JS AD | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
B (leader): hand AS TS KS KH QH 9H | won – = 0 card pts, 0 trick(s) | marriages – | counted 0
"""
FAULT8 = """\
trump: H   stock: JC JD 9S [AH]  (size 4; top first, [turn-up] last)
A: hand QC KD QD KH QH JH | won 9C 9D = 0 card pts, 1 trick(s) | marriages – | counted 0
B (leader): hand KS QS JS TH 9H KC | won AS TS AD TD AC TC = 63 card pts, 3 trick(s) | marriages – | counted 63
"""

# name -> (block, ruleset)
FAULT_POSITIONS = {
    "FAULT6_20": (FAULT6_20, "schnapsen20"),
    "FAULT6_24": (FAULT6_24, "sixtysix24"),
    "FAULT7_OPENING": (FAULT7_OPENING, "sixtysix24"),
    "FAULT8": (FAULT8, "sixtysix24"),
}
