"""The scenarios of ``docs/RULES.md`` section 6, parsed: the tests read them from the rule book, not from copies.

Each scenario (``#### S20 – title``) becomes a :class:`Scenario`:

- position scenarios (most): the ``Ruleset ...`` line (ruleset and knobs), the position block in the notation
  below, the numbered steps (:class:`Step`: actions, ``expect:`` and ``illegal:`` lines), the ``**Result:**`` line
  and the ``Variant ...`` sentences (:class:`Variant`);
- deal scenarios (S01, T01): a deck order and the hands, turn-up, stock and leader it must give (:class:`Deal`);
- match scenarios (M01, M02): prose only (``Scenario.text``); their tests match its sentences.

The position notation (A = ``player_0``, B = ``player_1``)::

    trump: H   stock: QD JD KC [TH]  (size 4; top first, [turn-up] last)
    A: hand KS AH TD QC JC | won AD KD = 15 card pts, 1 trick(s) | marriages – | counted 15
    B (leader): hand TS JS KH QH | won AC TC QS JH = 26 card pts, 2 trick(s) | marriages – | counted 26
    table: B has led AS; A to play

``(dealer)`` sets ``dealer``; ``(leader)`` or a ``table:`` line sets ``leader``; ``marriages H20 S40`` gives the
suit letters. Anything the parser does not recognise raises :class:`RulebookError` naming the file, the line and
the scenario, so a changed rule book fails loudly instead of being half read.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from schnapsen_env import GameState, RuleSet
from schnapsen_env.scoring import MARRIAGE_POINTS, TRUMP_MARRIAGE_POINTS

RULES_MD = Path(__file__).resolve().parents[2] / "docs" / "RULES.md"
SEAT = {"A": "player_0", "B": "player_1"}
NONE_MARKS = ("–", "-", "—")
SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
RULESETS = ("schnapsen20", "sixtysix24")


class RulebookError(Exception):
    """A scenario of docs/RULES.md section 6 that the tests cannot read."""


@dataclass(frozen=True)
class Block:
    """A parsed position block: the position dict plus the totals it lists (to cross-check the load)."""

    _position: dict  # read it through .position (a fresh copy: tests may change it)
    card_points: dict  # player -> card points listed
    tricks: dict  # player -> tricks listed
    counted: dict  # player -> counted points listed
    stock_size: int

    @property
    def position(self) -> dict:
        """The position dict for ``GameState.from_position`` (a fresh copy on every access)."""
        return copy.deepcopy(self._position)


@dataclass(frozen=True)
class Step:
    """One numbered step. ``kind`` is one of ``play`` (a lead or a follow), ``exchange``, ``close``, ``claim``,
    ``scored`` ("no claim is made; the hand is scored"), ``expect`` and ``illegal``.

    ``actions`` are the engine action names the step stands for (RULES.md section 6 notation): "A leads KS
    (marriage 20)" is ``marriage S``, ``play KS``, or ``marriage S`` alone when the next action is a claim (the card
    is never played) or, under ``claim_mode="auto"``, when it is the scenario's last action (the hand ends on the
    announcement). A claim written after the last trick is the engine's W3 claim: the replay expects the hand to
    be over already and steps nothing.
    """

    number: int
    text: str
    kind: str
    who: str | None = None  # "A" / "B"
    card: str | None = None  # play: the card; exchange: the trump jack (or nine) given away
    marriage: int | None = None  # play: 20 / 40 when the lead announces a marriage
    turn_up: str | None = None  # exchange: the turn-up taken
    actions: tuple[str, ...] = ()
    expect: str | None = None  # expect: the text after "expect: "


@dataclass(frozen=True)
class Variant:
    """``Variant `knob=value`: what happens`` (one sentence of the rule book)."""

    key: str  # the knobs as written, e.g. 'closing_reference="at_end"'
    knobs: MappingProxyType
    text: str


@dataclass(frozen=True)
class Outcome:
    """The ``**Result:**`` line: winner ``"A"``/``"B"`` (None for a tie) and game points."""

    winner: str | None
    game_points: int


@dataclass(frozen=True)
class Deal:
    """A deal scenario: the deck order, the dealer and what the deal gives."""

    deck: tuple
    dealer: str  # "A" / "B"
    hands: MappingProxyType  # "A"/"B" -> frozenset of cards
    turn_up: str
    trump: str
    stock: tuple  # top first, turn-up last
    stock_size: int
    leader: str
    starts: tuple  # scenario ids that start from this deal


@dataclass(frozen=True, repr=False)
class Scenario:
    """One scenario of section 6 (frozen: the parsed rule book is shared by every test of a session)."""

    sid: str
    title: str
    line: int  # line number of the heading in RULES.md
    text: str  # the body as written
    ruleset: str | None = None
    knobs: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    block: Block | None = None
    steps: tuple = ()
    outcome: Outcome | None = None
    variants: tuple = ()
    deal: Deal | None = None
    # the Ruleset line says '(under the default `"reject"` the claim is not a legal action here)'
    claim_refused_under_reject: bool = False

    def __repr__(self) -> str:  # short, for test ids and assertion messages
        return f"Scenario({self.sid})"

    @property
    def position(self) -> dict | None:
        """The position dict (a fresh copy), or None for a deal or match scenario."""
        return None if self.block is None else self.block.position

    def rules(self, **knobs) -> RuleSet:
        """The scenario's ruleset and knobs, with ``knobs`` added or replaced."""
        return RuleSet.make(self.ruleset, **{**self.knobs, **knobs})

    def state(self, rules: RuleSet | None = None, extra: dict | None = None, **knobs) -> GameState:
        """The scenario's position loaded under ``rules`` (default: the scenario's rules with ``knobs``), checked
        against the card points, tricks, counted points and stock size the block lists. ``extra`` adds or replaces
        position keys (e.g. ``{"dealer": "player_0"}``)."""
        if self.block is None:
            raise RulebookError(f"{self.sid} has no position block")
        return load_block(self.block, rules or self.rules(**knobs), extra)

    def actions(self) -> list[str]:
        """The action names of the steps, in order, without their checks (the full replay with checks is
        ``helpers.drivers.replay``). A claim written after the last trick is the engine's W3 claim: leave it out."""
        return [a for s in self.steps if s.kind in ("play", "exchange", "close", "claim") for a in s.actions]

    def expect_lines(self) -> list[str]:
        return [s.expect for s in self.steps if s.kind == "expect"]


# --------------------------------------------------------------------------------------------- position blocks
def _marriage_value(suit: str, trump: str) -> int:
    """What a marriage in ``suit`` is worth with ``trump`` (R12), as the engine scores it."""
    return TRUMP_MARRIAGE_POINTS if suit == trump else MARRIAGE_POINTS


def _cards(text: str) -> list[str]:
    text = text.strip()
    if text in NONE_MARKS or not text:
        return []
    return text.split()


def parse_block(text: str, where: str = "position block") -> Block:
    """Parse a position block in the notation of the module docstring; :class:`RulebookError` if it does not fit."""

    def fail(msg: str, line: str | None = None):
        raise RulebookError(f"{where}: {msg}" + (f": {line!r}" if line is not None else ""))

    trump = None
    stock: list[str] = []
    size = 0
    hands, won, marriages = {}, {}, {}
    card_points, tricks, counted = {}, {}, {}
    leader = dealer = None
    table = None
    for raw in text.strip().splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("trump:"):
            m = re.fullmatch(r"trump:\s*([CDHS])\s+stock:\s*(.*)", line)
            if not m:
                fail("cannot parse the trump/stock line", line)
            trump, rest = m.group(1), m.group(2)
            if rest == "empty (exhausted)":
                stock, size = [], 0
            else:
                m2 = re.fullmatch(r"((?:\w\w )*)\[(\w\w)\]\s+\(size (\d+); top first, \[turn-up\] last\)", rest)
                if not m2:
                    fail("cannot parse the stock", line)
                stock = m2.group(1).split() + [m2.group(2)]
                size = int(m2.group(3))
                if len(stock) != size:
                    fail(f"the stock lists {len(stock)} cards but says size {size}", line)
        elif line.startswith("table:"):
            m = re.fullmatch(r"table:\s*([AB]) has led (\w\w); ([AB]) to play", line)
            if not m or m.group(3) == m.group(1):
                fail("cannot parse the table line", line)
            leader = SEAT[m.group(1)]
            table = m.group(2)
        else:
            m = re.fullmatch(
                r"([AB])(?: \((leader|dealer)\))?: hand (.*?) \| won (.*?) = (\d+) card pts, (\d+) trick\(s\) \| "
                r"marriages (.*?) \| counted (\d+)", line)
            if not m:
                fail("cannot parse the player line", line)
            p = SEAT[m.group(1)]
            if p in hands:
                fail(f"player {m.group(1)} listed twice", line)
            if m.group(2) == "leader":
                leader = p
            elif m.group(2) == "dealer":
                dealer = p
            hands[p] = _cards(m.group(3))
            won[p] = _cards(m.group(4))
            card_points[p] = int(m.group(5))
            tricks[p] = int(m.group(6))
            suits = []
            mar = m.group(7).strip()
            if mar not in NONE_MARKS:
                for tok in mar.split():
                    mm = re.fullmatch(r"([CDHS])(\d+)", tok)
                    if not mm:
                        fail(f"bad marriage {tok!r}", line)
                    if int(mm.group(2)) != _marriage_value(mm.group(1), trump):
                        fail(f"marriage {tok}: {TRUMP_MARRIAGE_POINTS} in trumps, else {MARRIAGE_POINTS}", line)
                    suits.append(mm.group(1))
            marriages[p] = suits
            counted[p] = int(m.group(8))
    if trump is None:
        fail("no trump/stock line")
    if set(hands) != set(SEAT.values()):
        fail("both players A and B must be listed")
    if leader is None:
        fail("nobody leads: mark a player (leader) or add a table line")
    pos = {
        "trump": trump,
        "stock": stock,
        "closed_by": None,
        "closing_snapshot": None,
        "hands": hands,
        "won": won,
        "marriages": marriages,
        "announced": None,
        "leader": leader,
        "table": table,
    }
    if dealer is not None:
        pos["dealer"] = dealer
    return Block(pos, card_points, tricks, counted, size)


def load_block(block: Block | str, rules: RuleSet, extra: dict | None = None) -> GameState:
    """Load a position block (parsed or as text) under ``rules``; the loaded state must agree with the card points,
    tricks, counted points and stock size that the block lists."""
    if isinstance(block, str):
        block = parse_block(block)
    st = GameState.from_position(rules, {**block.position, **(extra or {})})
    pos = st.position()
    for p in SEAT.values():
        assert st.card_points[int(p[-1])] == block.card_points[p], (p, "card points", st.card_points)
        assert pos["tricks"][p] == block.tricks[p], (p, "tricks", pos["tricks"])
        assert pos["points"][p] == block.counted[p], (p, "counted", pos["points"])
    assert len(st.stock) == block.stock_size, ("stock size", len(st.stock))
    return st


# ------------------------------------------------------------------------------------------------ scenario text
_VALUE = r'(?:"[^"`]*"|true|false|-?\d+)'
_REJECT_NOTE = 'under the default `"reject"` the claim is not a legal action here'


def _knob_value(text: str):
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"'):
        return text.strip('"')
    return int(text)


def _knobs(text: str) -> dict:
    return {k: _knob_value(v) for k, v in re.findall(rf"`(\w+)=({_VALUE})`", text)}


_STEP_FORMS = [
    ("play", re.compile(r"([AB]) (?:leads|plays) (\w\w)(?: \((?:marriage (\d+)|plain lead, no marriage)\))?")),
    ("exchange", re.compile(r"([AB]) exchanges (\w\w) for the turn-up (\w\w)")),
    ("close", re.compile(r"([AB]) closes the stock")),
    ("claim", re.compile(r"([AB]) claims 66")),
    ("scored", re.compile(r"no claim is made; the hand is scored")),
    ("illegal", re.compile(r"illegal: ([AB]) (exchange|close|claim|marriage [CDHS]|play \w\w)")),
    ("expect", re.compile(r"expect: (.+)")),
]


def _parse_step(number: int, text: str, fail) -> Step:
    for kind, rx in _STEP_FORMS:
        m = rx.fullmatch(text)
        if not m:
            continue
        if kind == "play":
            who, card, mar = m.group(1), m.group(2), m.group(3)
            if mar and "leads" not in text:
                fail(f"step {number}: only a lead announces a marriage", text)
            if mar and card[0] not in "KQ":
                fail(f"step {number}: a marriage is led with its K or Q", text)
            return Step(number, text, kind, who=who, card=card, marriage=int(mar) if mar else None)
        if kind == "exchange":
            return Step(number, text, kind, who=m.group(1), card=m.group(2), turn_up=m.group(3),
                        actions=("exchange",))
        if kind in ("close", "claim"):
            return Step(number, text, kind, who=m.group(1), actions=(kind,))
        if kind == "scored":
            return Step(number, text, kind)
        if kind == "illegal":
            return Step(number, text, kind, who=m.group(1), actions=(m.group(2),))
        return Step(number, text, kind, expect=m.group(1))
    fail(f"step {number}: not a known step form (see helpers/rulebook.py _STEP_FORMS)", text)


def _expand_marriages(steps: list[Step], knobs: dict, trump: str, fail) -> list[Step]:
    """Fill in the actions of play steps (see :class:`Step`)."""
    out = []
    acting = [i for i, s in enumerate(steps) if s.kind in ("play", "exchange", "close", "claim")]
    for i, s in enumerate(steps):
        if s.kind != "play":
            out.append(s)
            continue
        if s.marriage is None:
            out.append(Step(**{**s.__dict__, "actions": (f"play {s.card}",)}))
            continue
        if s.marriage != _marriage_value(s.card[1], trump):
            fail(f"step {s.number}: a marriage in {s.card[1]} is worth {_marriage_value(s.card[1], trump)}", s.text)
        later = [steps[j] for j in acting if j > i]
        nxt = later[0] if later else None
        claim_next = nxt is not None and nxt.kind == "claim" and nxt.who == s.who
        auto_end = nxt is None and knobs.get("claim_mode") == "auto"
        actions = (f"marriage {s.card[1]}",) if claim_next or auto_end else (f"marriage {s.card[1]}", f"play {s.card}")
        out.append(Step(**{**s.__dict__, "actions": actions}))
    return out


def _parse_variants(line: str, fail) -> list[Variant]:
    parts = re.split(r"(?=Variant `)", line)
    if parts[0].strip():
        fail("text before a variant", line)
    out = []
    for part in parts[1:]:
        m = re.fullmatch(rf"Variant ((?:`\w+={_VALUE}`(?:, )?)+)(?: \([^)]*\))?: (.+?)\s*", part)
        if not m:
            fail("cannot parse the variant", part)
        key = ", ".join(re.findall(r"`([^`]+)`", m.group(1)))
        out.append(Variant(key, MappingProxyType(_knobs(m.group(1))), m.group(2)))
    return out


def _parse_deal(lines: list[str], fail) -> Deal:
    text = "\n".join(lines)
    m = re.search(r"^Deck order[^:]*: `([^`]+)`; ([AB]) deals\.$", text, re.M)
    if not m:
        fail("no 'Deck order ...: `...`; X deals.' line")
    deck, dealer = m.group(1).split(), m.group(2)
    facts = {
        "hands": re.compile(r"- \*\*Expect:\*\* ([AB])(?: \([^)]*\))? holds `([^`]+)`; ([AB]) holds `([^`]+)`\."),
        "turn_up": re.compile(r"- The turn-up is `(\w\w)`(?:, so trump is|\s*\(trump) ([♣♦♥♠])\)?\."),
        "stock": re.compile(r"- Stock: `([^`]+) \[(\w\w)\]`, S = (\d+)\. ([AB]) leads\."),
        "starts": re.compile(r"- This is the starting state of (.+)\."),
    }
    found = {}
    for line in lines:
        if line == m.group(0) or not line.strip():
            continue
        for name, rx in facts.items():
            mm = rx.fullmatch(line)
            if mm:
                if name in found:
                    fail(f"two '{name}' lines", line)
                found[name] = mm
                break
        else:
            fail("not a known line of a deal scenario", line)
    missing = set(facts) - set(found)
    if missing:
        fail(f"missing {sorted(missing)}")
    h = found["hands"]
    if {h.group(1), h.group(3)} != {"A", "B"}:
        fail("the hands of both A and B must be listed", h.group(0))
    starts = []
    for tok in re.split(r",\s*|\s+and\s+", found["starts"].group(1)):
        r = re.fullmatch(r"([STM])(\d\d)(?:[–-]([STM])(\d\d))?", tok.strip())
        if not r:
            fail(f"cannot read the scenario id {tok!r}", found["starts"].group(0))
        lo = int(r.group(2))
        hi = int(r.group(4)) if r.group(4) else lo
        starts += [f"{r.group(1)}{n:02d}" for n in range(lo, hi + 1)]
    s = found["stock"]
    stock = s.group(1).split() + [s.group(2)]
    t = found["turn_up"]
    if t.group(1) != s.group(2):
        fail("the turn-up and the stock's last card differ", t.group(0))
    hands = {h.group(1): frozenset(h.group(2).split()), h.group(3): frozenset(h.group(4).split())}
    return Deal(deck=tuple(deck), dealer=dealer, hands=MappingProxyType(hands), turn_up=t.group(1),
                trump=SUIT_SYMBOLS[t.group(2)], stock=tuple(stock), stock_size=int(s.group(3)), leader=s.group(4),
                starts=tuple(starts))


def _parse_scenario(sid: str, title: str, line_no: int, lines: list[str], path: Path) -> Scenario:
    def fail(msg: str, text: str | None = None):
        raise RulebookError(f"{path}:{line_no}: scenario {sid}: {msg}" + (f": {text!r}" if text is not None else ""))

    text = "\n".join(lines).strip()
    if any(line.startswith("Deck order") for line in lines):
        deal = _parse_deal(lines, fail)
        ruleset = {20: "schnapsen20", 24: "sixtysix24"}.get(len(deal.deck)) or fail(f"a deck of {len(deal.deck)} cards")
        return Scenario(sid, title, line_no, text, ruleset=ruleset, deal=deal)
    if not any(line.startswith("Ruleset ") for line in lines):
        return Scenario(sid, title, line_no, text)  # a match scenario (M01, M02): prose, read by its tests
    ruleset = None
    knobs: dict = {}
    claim_refused_under_reject = False
    outcome = None
    variants: list[Variant] = []
    in_block = False
    block_lines: list[str] = []
    raw_steps = []
    for line in lines:
        if line.startswith("```"):
            if not in_block and block_lines:
                fail("a second position block", line)
            in_block = not in_block
            continue
        if in_block:
            block_lines.append(line)
            continue
        if not line.strip():
            continue
        if m := re.fullmatch(r"Ruleset `(\w+)`, defaults(?: except ((?:`\w+=[^`]+`(?:, )?)+))?(?: \((.+)\))?\.", line):
            if m.group(1) not in RULESETS:
                fail(f"unknown ruleset {m.group(1)!r}", line)
            ruleset = m.group(1)
            knobs = _knobs(m.group(2) or "")
            if m.group(2) and len(knobs) != m.group(2).count("`") // 2:
                fail("cannot read every knob of the 'defaults except' list", line)
            if m.group(3) == _REJECT_NOTE:
                claim_refused_under_reject = True
            elif m.group(3) is not None:
                fail("unknown remark on the Ruleset line", m.group(3))
        elif m := re.fullmatch(r"(\d+)\. (.+)", line):
            raw_steps.append((int(m.group(1)), m.group(2).strip()))
        elif m := re.fullmatch(r"\*\*Result:\*\* (?:([AB]) wins the hand, \*\*(\d+)\*\* game point\(s\)|"
                               r"(no game points) \(tie\))\.", line):
            if outcome is not None:
                fail("two Result lines", line)
            outcome = Outcome(None, 0) if m.group(3) else Outcome(m.group(1), int(m.group(2)))
        elif line.startswith("Variant "):
            variants += _parse_variants(line, fail)
        else:
            fail("not a known line of a position scenario", line)
    if in_block:
        fail("the position block is not closed")
    if ruleset is None:
        fail("no 'Ruleset `...`, defaults...' line")
    if not block_lines:
        fail("no position block")
    block = parse_block("\n".join(block_lines), f"{path}:{line_no}: scenario {sid}")
    if [n for n, _ in raw_steps] != list(range(1, len(raw_steps) + 1)):
        fail(f"steps must be numbered 1..n, got {[n for n, _ in raw_steps]}")
    steps = [_parse_step(n, t, fail) for n, t in raw_steps]
    if not steps:
        fail("no steps")
    steps = _expand_marriages(steps, knobs, block.position["trump"], fail)
    if claim_refused_under_reject and not any(st.kind == "claim" for st in steps):
        fail("says the claim is refused under the default, but has no claim step")
    return Scenario(sid, title, line_no, text, ruleset=ruleset, knobs=MappingProxyType(knobs), block=block,
                    steps=tuple(steps), outcome=outcome, variants=tuple(variants),
                    claim_refused_under_reject=claim_refused_under_reject)

def parse_rulebook(path: Path = RULES_MD) -> dict[str, Scenario]:
    """Every scenario of section 6 of the rule book at ``path``, by id, in the book's order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if re.match(r"## 6\. ", line))
    except StopIteration:
        raise RulebookError(f"{path}: no '## 6. Scenarios' section") from None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    out: dict[str, Scenario] = {}
    heading = None
    body: list[str] = []
    for i in range(start + 1, end + 1):
        line = lines[i] if i < end else "#### END"
        if line.startswith("#### "):
            if heading is not None:
                sid, title, line_no = heading
                if sid in out:
                    raise RulebookError(f"{path}:{line_no}: scenario {sid} appears twice")
                out[sid] = _parse_scenario(sid, title, line_no, body, path)
            m = re.fullmatch(r"#### ([STM]\d\d) – (.+)", line)
            if not m and line != "#### END":
                raise RulebookError(f"{path}:{i + 1}: cannot parse the scenario heading: {line!r}")
            heading = (m.group(1), m.group(2), i + 1) if m else None
            body = []
        elif heading is not None:
            body.append(line)
    if not out:
        raise RulebookError(f"{path}: no scenario in section 6")
    for sc in out.values():
        if sc.deal is not None:
            for sid in sc.deal.starts:
                if sid not in out:
                    raise RulebookError(f"{path}:{sc.line}: scenario {sc.sid} names {sid}, which does not exist")
    return out


@functools.cache
def rulebook() -> dict[str, Scenario]:
    """The scenarios of ``docs/RULES.md`` (parsed once per process)."""
    return parse_rulebook(RULES_MD)


def scenario(sid: str) -> Scenario:
    """One scenario of the rule book by id (``"S20"``)."""
    try:
        return rulebook()[sid]
    except KeyError:
        raise KeyError(f"docs/RULES.md section 6 has no scenario {sid!r}") from None


def position_scenarios() -> list[Scenario]:
    """Scenarios with a position block and steps, in the book's order."""
    return [s for s in rulebook().values() if s.block is not None]


def deal_scenarios() -> list[Scenario]:
    return [s for s in rulebook().values() if s.deal is not None]


def variants() -> list[tuple[Scenario, Variant]]:
    return [(s, v) for s in position_scenarios() for v in s.variants]
