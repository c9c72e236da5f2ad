"""Rule sets and the fixed action table (RULES.md sections 4 and 5).

A :class:`RuleSet` is a frozen dataclass whose fields are exactly the rule knobs
of RULES.md section 5, plus ``name`` (the preset it was built from). Build one
with :meth:`RuleSet.make` (or the :meth:`RuleSet.schnapsen20` /
:meth:`RuleSet.sixtysix24` shortcuts) and keyword overrides::

    >>> RuleSet.make("schnapsen20", close_min_stock=2).close_min_stock
    2
    >>> RuleSet.make().action_names[:3]
    ('play AC', 'play TC', 'play KC')
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from schnapsen_env.cards import DECK10, DECK20, DECK24, SUIT_LETTERS, Deck
from schnapsen_env.errors import IllegalActionError, RulesError
from schnapsen_env.scoring import (
    CLAIM_TARGET,
    MARRIAGE_POINTS,
    SCHNEIDER_BELOW,
    TRUMP_MARRIAGE_POINTS,
    game_value,
    marriage_points,
)

RULESETS = ("schnapsen20", "sixtysix24", "schnapsen10")


@dataclass(frozen=True)
class Shape:
    """What a ruleset fixes besides its knobs: the deck, the hand, the targets and the marriage values.

    Attributes:
        deck: the :class:`~schnapsen_env.cards.Deck`.
        hand_size: cards in a hand while the stock is open (R2, R66-2, RS2).
        claim_target: counted points a correct claim needs (R20: 66; RS3: 33).
        schneider_below: a loser with a trick and fewer counted points than this pays 2 game points
            (section 1: 33; RS3: 17).
        marriage: card points of a marriage outside and in the trump suit (R12: 20 and 40; RS3: 10 and 20).
        family: ``"schnapsen"`` (R22 decides an unclaimed last trick) or ``"sixtysix"`` (R66-10).
    """

    deck: Deck
    hand_size: int
    claim_target: int
    schneider_below: int
    marriage: tuple[int, int]
    family: str


#: Per ruleset, its :class:`Shape` (RULES.md sections 1, 2, 3 and 3a).
SHAPES: dict[str, Shape] = {
    "schnapsen20": Shape(DECK20, 5, CLAIM_TARGET, SCHNEIDER_BELOW, (MARRIAGE_POINTS, TRUMP_MARRIAGE_POINTS), "schnapsen"),
    "sixtysix24": Shape(DECK24, 6, CLAIM_TARGET, SCHNEIDER_BELOW, (MARRIAGE_POINTS, TRUMP_MARRIAGE_POINTS), "sixtysix"),
    "schnapsen10": Shape(DECK10, 4, 33, 17, (10, 20), "schnapsen"),  # RS1-RS3
}

# Allowed values of the string and bool knobs (RULES.md section 5).
_CHOICES: dict[str, tuple] = {
    "marriage_declaration": ("automatic", "optional"),
    "marriage_on_opening_lead": (True, False),
    "marriage_window": ("any", "first_6_tricks", "stock_open"),
    "must_head": (True, False),
    "claim_mode": ("manual", "auto"),
    "false_claim": ("reject", "mirror", "pagat"),
    "unclaimed_last_trick_value": ("formula", "one"),
    "closed_hand_end": ("closer_score", "must_claim"),
    "closing_reference": ("at_close", "at_end"),
    "failed_close_value": ("min2", "flat3"),
    "last_trick_bonus_when_closed": (True, False),
    "exchange_rank": ("J", "9"),
    "tie": ("carry", "none", "last_trick"),
    "next_dealer": ("alternate", "loser", "winner"),
}
_INT_KNOBS = ("exchange_min_stock", "close_min_stock", "last_trick_bonus", "match_target")
# Knobs marked "—" in RULES.md section 5: no effect in that ruleset, so passing them is an error.
_NOT_IN = {"schnapsen20": ("tie",), "sixtysix24": ("unclaimed_last_trick_value",), "schnapsen10": ("tie",)}

_PRESETS: dict[str, dict[str, Any]] = {
    "schnapsen20": dict(
        exchange_min_stock=4,  # R16, TJGER: "more than two cards on the stock"
        close_min_stock=4,  # R18
        marriage_declaration="automatic",  # R12
        marriage_on_opening_lead=True,  # R13
        marriage_window="any",  # R13
        must_head=True,  # R10
        claim_mode="manual",  # R21
        false_claim="reject",  # R21a
        unclaimed_last_trick_value="formula",  # R22
        closed_hand_end="closer_score",  # R23
        closing_reference="at_close",  # R19, R23
        failed_close_value="min2",  # R23
        last_trick_bonus=0,
        last_trick_bonus_when_closed=False,
        exchange_rank="J",  # R15
        tie=None,
        next_dealer="alternate",  # R26
        match_target=7,  # R25
    ),
    "sixtysix24": dict(
        exchange_min_stock=2,  # R66-3
        close_min_stock=2,  # R66-4
        marriage_declaration="automatic",
        marriage_on_opening_lead=True,
        marriage_window="first_6_tricks",  # R66-6
        must_head=False,  # R66-5
        claim_mode="manual",  # R66-8
        false_claim="reject",
        unclaimed_last_trick_value=None,
        closed_hand_end="closer_score",  # R66-9
        closing_reference="at_close",
        failed_close_value="min2",
        last_trick_bonus=10,  # R66-7
        last_trick_bonus_when_closed=False,
        exchange_rank="9",  # R66-3
        tie="carry",  # R66-10
        next_dealer="alternate",  # R66-11
        match_target=7,  # R66-11
    ),
}
# RS4: schnapsen10 plays schnapsen20's knobs; its stock of 2 (the turn-up and one card) allows no other minimum.
_PRESETS["schnapsen10"] = dict(_PRESETS["schnapsen20"], exchange_min_stock=2, close_min_stock=2)


#: The knob keys of RULES.md section 5, in its table's order.
KNOBS: tuple[str, ...] = tuple(_PRESETS["schnapsen20"])


def _default(key: str):
    """A RuleSet field whose default is the schnapsen20 preset's value (so that it is written once)."""
    return field(default=_PRESETS["schnapsen20"][key])


class SpecialAction(IntEnum):
    """The non-play actions in action-id order (RULES.md section 4): action id = deck size + member.

    The play actions come first, ``play XX`` with the card id of XX (:mod:`schnapsen_env.cards`)."""

    MARRIAGE_C = 0  # marriage in clubs; MARRIAGE_C + suit for any suit (R12)
    MARRIAGE_D = 1
    MARRIAGE_H = 2
    MARRIAGE_S = 3
    EXCHANGE = 4  # R15-R17
    CLOSE = 5  # R18, R19
    CLAIM = 6  # R20, R21


@dataclass(frozen=True)
class RuleSet:
    """One complete set of rule knobs (RULES.md section 5). Immutable and hashable.

    Attributes are the knob keys of RULES.md section 5 with their documented
    values; ``name`` is the preset (``"schnapsen20"``, ``"sixtysix24"`` or ``"schnapsen10"``).
    Derived, read-only attributes: ``shape`` (:class:`Shape`), ``deck``
    (:class:`~schnapsen_env.cards.Deck`), ``n_cards``, ``hand_size`` (5, 6 or 4), ``n_tricks``
    (10, 12 or 5), ``n_actions`` (27, 31 or 17), ``action_names``, ``claim_target``, ``schneider_below``.
    """

    name: str = "schnapsen20"
    # The knobs, with the schnapsen20 preset's values as defaults (declared once, in _PRESETS).
    exchange_min_stock: int = _default("exchange_min_stock")
    close_min_stock: int = _default("close_min_stock")
    marriage_declaration: str = _default("marriage_declaration")
    marriage_on_opening_lead: bool = _default("marriage_on_opening_lead")
    marriage_window: str = _default("marriage_window")
    must_head: bool = _default("must_head")
    claim_mode: str = _default("claim_mode")
    false_claim: str = _default("false_claim")
    unclaimed_last_trick_value: str | None = _default("unclaimed_last_trick_value")
    closed_hand_end: str = _default("closed_hand_end")
    closing_reference: str = _default("closing_reference")
    failed_close_value: str = _default("failed_close_value")
    last_trick_bonus: int = _default("last_trick_bonus")
    last_trick_bonus_when_closed: bool = _default("last_trick_bonus_when_closed")
    exchange_rank: str = _default("exchange_rank")
    tie: str | None = _default("tie")
    next_dealer: str = _default("next_dealer")
    match_target: int = _default("match_target")
    # Derived (not knobs); filled in __post_init__.
    shape: Shape = field(init=False, repr=False, compare=False)
    deck: Deck = field(init=False, repr=False, compare=False)
    action_names: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.name not in RULESETS:
            raise RulesError(f"unknown ruleset {self.name!r}: expected one of {', '.join(RULESETS)}")
        shape = SHAPES[self.name]
        deck = shape.deck
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "deck", deck)
        for key in _NOT_IN[self.name]:
            if getattr(self, key) is not None:
                raise RulesError(
                    f"rule key {key!r} has no effect in {self.name} (RULES.md section 5 marks it '—'); "
                    "do not pass it"
                )
        for key, allowed in _CHOICES.items():
            if key in _NOT_IN[self.name]:
                continue
            value = getattr(self, key)
            if not any(value is a if isinstance(a, bool) else (value == a and not isinstance(value, bool))
                       for a in allowed):
                raise RulesError(f"rule key {key!r} got {value!r}: expected one of {list(allowed)}")
        if self.exchange_rank == "9" and deck.ranks_per_suit == 5:
            raise RulesError(f"rule key 'exchange_rank' got '9', but {self.name} has no nines: expected 'J'")
        initial_stock = deck.size - 2 * shape.hand_size
        for key in _INT_KNOBS:
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool):
                raise RulesError(f"rule key {key!r} got {value!r}: expected an int")
        for key in ("exchange_min_stock", "close_min_stock"):
            value = getattr(self, key)
            if not 2 <= value <= initial_stock:
                raise RulesError(f"rule key {key!r} got {value}: expected an int from 2 to {initial_stock}")
        if self.last_trick_bonus < 0:
            raise RulesError(f"rule key 'last_trick_bonus' got {self.last_trick_bonus}: expected an int >= 0")
        if self.match_target < 1:
            raise RulesError(f"rule key 'match_target' got {self.match_target}: expected an int >= 1")
        names = [f"play {c}" for c in deck.codes]
        names += [f"marriage {s}" for s in SUIT_LETTERS] + ["exchange", "close", "claim"]
        object.__setattr__(self, "action_names", tuple(names))

    # ----------------------------------------------------------------- presets
    @classmethod
    def make(cls, ruleset: str = "schnapsen20", **overrides: Any) -> RuleSet:
        """Build a rule set from a preset plus knob overrides.

        Args:
            ruleset: ``"schnapsen20"`` (default), ``"sixtysix24"`` or ``"schnapsen10"``.
            **overrides: any knob of RULES.md section 5, e.g. ``false_claim="mirror"``.

        Raises:
            RulesError: unknown ruleset, unknown key, a key marked "—" for this
                ruleset, or a value the knob does not take.
        """
        if isinstance(ruleset, RuleSet):
            return ruleset.replace(**overrides) if overrides else ruleset
        if not isinstance(ruleset, str) or ruleset not in _PRESETS:
            raise RulesError(f"unknown ruleset {ruleset!r}: expected one of {', '.join(RULESETS)}")
        knobs = dict(_PRESETS[ruleset])
        for key, value in overrides.items():
            if key not in knobs:
                raise RulesError(
                    f"unknown rule key {key!r}: expected one of {', '.join(sorted(knobs))}"
                )
            if key in _NOT_IN[ruleset]:
                raise RulesError(
                    f"rule key {key!r} has no effect in {ruleset} (RULES.md section 5 marks it '—'); "
                    "do not pass it"
                )
            knobs[key] = value
        return cls(name=ruleset, **knobs)

    @classmethod
    def schnapsen20(cls, **overrides: Any) -> RuleSet:
        """The default ruleset, 20-card Austrian Schnapsen (RULES.md section 2)."""
        return cls.make("schnapsen20", **overrides)

    @classmethod
    def sixtysix24(cls, **overrides: Any) -> RuleSet:
        """24-card Sixty-Six (RULES.md section 3)."""
        return cls.make("sixtysix24", **overrides)

    @classmethod
    def schnapsen10(cls, **overrides: Any) -> RuleSet:
        """10-card Schnapsen, the small variant for exact evaluation (RULES.md section 3a)."""
        return cls.make("schnapsen10", **overrides)

    def replace(self, **overrides: Any) -> RuleSet:
        """A copy with some knobs changed (validated as in :meth:`make`)."""
        return RuleSet.make(self.name, **{**self.knobs(), **overrides})

    def knobs(self) -> dict[str, Any]:
        """The knob values as a JSON-compatible dict (without knobs marked "—")."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init and f.name != "name"}
        for key in _NOT_IN[self.name]:
            out.pop(key)
        return out

    def to_dict(self) -> dict[str, Any]:
        """``{"ruleset": name, **knobs}``; :meth:`from_dict` inverts it."""
        return {"ruleset": self.name, **self.knobs()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleSet:
        """Inverse of :meth:`to_dict`. Raises :class:`RulesError` on bad keys or values."""
        if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
            raise RulesError(f"rules must be a dict like {{'ruleset': 'schnapsen20', knob: value, ...}}, got {data!r}")
        data = dict(data)
        return cls.make(data.pop("ruleset", "schnapsen20"), **data)

    # ----------------------------------------------------------------- derived
    @property
    def n_cards(self) -> int:
        return self.deck.size

    @property
    def hand_size(self) -> int:
        return self.shape.hand_size

    @property
    def claim_target(self) -> int:
        """Counted points a correct claim needs (R20: 66; schnapsen10 RS3: 33)."""
        return self.shape.claim_target

    @property
    def schneider_below(self) -> int:
        """A loser with a trick and fewer counted points than this pays 2 (section 1: 33; RS3: 17)."""
        return self.shape.schneider_below

    @property
    def stock0(self) -> int:
        """Cards on the stock after the deal, the turn-up included (R2: 10, R66-2: 12, RS2: 2)."""
        return self.deck.size - 2 * self.shape.hand_size

    def marriage_points(self, suits: int, trump: int) -> int:
        """Points of the marriages announced in ``suits`` (a 4-bit set of suit indices) with ``trump`` (R12,
        RS3)."""
        return marriage_points(suits, trump, *self.shape.marriage)

    def game_value(self, points: int, tricks: int) -> int:
        """Game value ``v(points, tricks)`` of the loser (RULES.md section 1, RS3): 3 if no trick, 2 with
        fewer than :attr:`schneider_below` counted points, else 1."""
        return game_value(points, tricks, self.shape.schneider_below)

    @property
    def n_tricks(self) -> int:
        return self.deck.size // 2

    @property
    def n_actions(self) -> int:
        return self.deck.size + len(SpecialAction)

    @property
    def exchange_rank_index(self) -> int:
        return 4 if self.exchange_rank == "J" else 5

    def action_id(self, name: str) -> int:
        """Action id of an action name such as ``"play KS"`` or ``"marriage H"``.

        Raises:
            IllegalActionError: the name is not an action of this ruleset.
        """
        try:
            return self.action_names.index(name)
        except ValueError:
            raise IllegalActionError(
                f"unknown action name {name!r}: expected 'play XX' (XX a card code of {self.name}), "
                "'marriage S' (S in C D H S), 'exchange', 'close' or 'claim'"
            ) from None

    # Action ids of the non-play actions (deck size + :class:`SpecialAction`).
    def marriage_action(self, suit: int) -> int:
        return self.deck.size + SpecialAction.MARRIAGE_C + suit

    @property
    def exchange_action(self) -> int:
        return self.deck.size + SpecialAction.EXCHANGE

    @property
    def close_action(self) -> int:
        return self.deck.size + SpecialAction.CLOSE

    @property
    def claim_action(self) -> int:
        return self.deck.size + SpecialAction.CLAIM

    def exchange_card(self, trump: int) -> int:
        """Card id that the trump exchange takes from the hand (the trump jack, or the nine under
        ``exchange_rank="9"``; R15, R66-3)."""
        return self.deck.card(trump, self.exchange_rank_index)
