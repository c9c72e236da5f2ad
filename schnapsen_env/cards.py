"""Cards, suits, ranks and card points (RULES.md section 1).

A card is a two-character code, rank then suit: ``"TH"`` is the ten of hearts,
``"9C"`` the nine of clubs. Inside the engine a card is a small ``int``, its
*card id*, which is also the action id of ``play XX`` (RULES.md section 4):
suits in the order ``C D H S``, inside a suit ranks ``A T K Q J 9``, so

* ``schnapsen20``: ``card id = 5 * suit + rank`` (20 cards, ids 0..19);
* ``sixtysix24``:  ``card id = 6 * suit + rank`` (24 cards, ids 0..23);
* ``schnapsen10``: ``card id = 5 * suit + rank`` over clubs and diamonds only (10 cards, ids 0..9).

Sets of cards (hands, tricks won) are ``int`` bit sets: bit ``i`` set means
card id ``i`` is in the set. :class:`Deck` holds the per-deck lookup tables.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from schnapsen_env.errors import InvalidPositionError


class Suit(IntEnum):
    """The four suits in action order (RULES.md section 4)."""

    C = 0  # clubs
    D = 1  # diamonds
    H = 2  # hearts
    S = 3  # spades


class Rank(IntEnum):
    """Ranks from highest to lowest inside a suit (RULES.md section 1)."""

    A = 0
    T = 1
    K = 2
    Q = 3
    J = 4
    NINE = 5


SUIT_LETTERS = "CDHS"
RANK_LETTERS = "ATKQJ9"
SUIT_SYMBOLS = "♣♦♥♠"
#: Card points by rank: A 11, T 10, K 4, Q 3, J 2, 9 0 (RULES.md section 1, R66-1).
RANK_POINTS = (11, 10, 4, 3, 2, 0)


def popcount(bits: int) -> int:
    """Number of cards in a card set (a bit set)."""
    return bits.bit_count()


def bits_of(ids) -> int:
    """Bit set of an iterable of card ids."""
    m = 0
    for i in ids:
        m |= 1 << i
    return m


#: Byte -> its 8 bits, little-endian: int8 ``(256, 8)``.
BIT_TABLE = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.int8)


def bits_to_array(bits: int, n: int) -> np.ndarray:
    """Int bit set -> ``np.ndarray`` of shape ``(n,)``, dtype int8 (1 where the bit is set)."""
    nbytes = (n + 7) // 8
    return BIT_TABLE[np.frombuffer(bits.to_bytes(nbytes, "little"), dtype=np.uint8)].reshape(-1)[:n]


def iter_bits(bits: int):
    """Yield the card ids of a card set (a bit set) in increasing order."""
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


#: The decks there are, as (cards, suits): schnapsen20, sixtysix24 and schnapsen10 (RULES.md sections 2, 3, 3a).
DECK_SHAPES = ((20, 4), (24, 4), (10, 2))


class Deck:
    """Lookup tables for one deck: 20 cards (``schnapsen20``), 24 (``sixtysix24``) or 10 (``schnapsen10``).

    The suits are the first ``n_suits`` of ``C D H S`` and the ranks the first ``ranks_per_suit`` of
    ``A T K Q J 9``, so a card's rank index is its :class:`Rank` in every deck.

    Attributes:
        size: number of cards, 20, 24 or 10.
        n_suits: 4, or 2 (``schnapsen10``: clubs and diamonds).
        ranks_per_suit: 5 or 6.
        codes: card codes by card id, e.g. ``codes[0] == "AC"``.
        suit, rank, points: per card id (``tuple[int, ...]`` of length ``size``);
            points in card points.
        suit_bits: bit set of the cards of each suit, indexed by :class:`Suit` (4 entries; 0 for a suit
            the deck lacks).
        higher: per card id, the bit set of the cards of the same suit that beat it.
        pair_bits: per suit, the bit set of its king and queen (the marriage pair, R12; 4 entries, the
            pair of a suit the deck lacks lies outside the deck, so no hand ever holds it).
        full: bit set of the whole deck.
    """

    def __init__(self, size: int, n_suits: int = 4) -> None:
        if (size, n_suits) not in DECK_SHAPES:
            raise ValueError(f"deck (size, n_suits) must be one of {DECK_SHAPES}, got {(size, n_suits)!r}")
        self.size = size
        self.n_suits = n_suits
        self.ranks_per_suit = size // n_suits
        rps = self.ranks_per_suit
        self.codes = tuple(RANK_LETTERS[r] + SUIT_LETTERS[s] for s in range(n_suits) for r in range(rps))
        self.suit = tuple(i // rps for i in range(size))
        self.rank = tuple(i % rps for i in range(size))
        self.points = tuple(RANK_POINTS[i % rps] for i in range(size))
        self.suit_bits = tuple(((1 << rps) - 1) << (s * rps) if s < n_suits else 0 for s in range(4))
        self.higher = tuple(((1 << (i % rps)) - 1) << (i // rps * rps) for i in range(size))
        self.pair_bits = tuple((1 << s * rps + Rank.K) | (1 << s * rps + Rank.Q) for s in range(4))
        self.full = (1 << size) - 1
        self._index = {c: i for i, c in enumerate(self.codes)}

    def card(self, suit: int, rank: int) -> int:
        """Card id of ``rank`` of ``suit``."""
        return suit * self.ranks_per_suit + rank

    def index(self, code: str) -> int:
        """Card id of a card code.

        Raises:
            InvalidPositionError: the code is not a card of this deck.
        """
        try:
            return self._index[code]
        except (KeyError, TypeError):
            raise InvalidPositionError(
                f"unknown card code {code!r}: expected one of {' '.join(self.codes)}"
            ) from None

    def bits(self, codes) -> int:
        """Bit set of a list of card codes (duplicates are not detected here)."""
        m = 0
        for c in codes:
            m |= 1 << self.index(c)
        return m

    def codes_of(self, bits: int) -> list[str]:
        """Card codes of a bit set, in card-id order."""
        return [self.codes[i] for i in iter_bits(bits)]

    def points_of(self, bits: int) -> int:
        """Card points of the cards in a bit set."""
        pts = self.points
        return sum(pts[i] for i in iter_bits(bits))


DECK20 = Deck(20)
DECK24 = Deck(24)
DECK10 = Deck(10, 2)
