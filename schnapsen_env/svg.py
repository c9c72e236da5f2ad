"""A picture of the table as SVG: card faces with suit colours, the trick in progress, stock and turn-up,
scores. Notebooks display :class:`TableView` inline (it has ``_repr_svg_``).

The opponent's hidden cards are shown face down unless ``reveal=True``; cards it made public (R27) are
shown face up. :func:`card_svg` draws one card face (or the back) on its own, the same drawing as the table's,
for pages that lay out the cards themselves (``schnapsen-web``). No dependency beyond the standard library.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from schnapsen_env.cards import SUIT_LETTERS, SUIT_SYMBOLS, iter_bits
from schnapsen_env.render import tricks_text
from schnapsen_env.rules import PLAYERS, GameState

CARD_W, CARD_H = 56, 80
RED = "#c62828"
BLACK = "#1a1a1a"


def _card(x: float, y: float, code: str | None, dim: bool = False, rotate: bool = False) -> str:
    """One card at (x, y): a face for ``code``, a back for None."""
    transform = f' transform="rotate(90 {x + CARD_W / 2} {y + CARD_H / 2})"' if rotate else ""
    if code is None:
        return (f'<g{transform}><rect x="{x}" y="{y}" width="{CARD_W}" height="{CARD_H}" rx="6" fill="#2e5fa3" '
                f'stroke="#ffffff" stroke-width="2"/><rect x="{x + 6}" y="{y + 6}" width="{CARD_W - 12}" '
                f'height="{CARD_H - 12}" rx="4" fill="none" stroke="#9fc0ee" stroke-width="1.5"/></g>')
    rank = "10" if code[0] == "T" else code[0]
    suit = SUIT_LETTERS.index(code[1])
    colour = RED if code[1] in "HD" else BLACK
    opacity = ' opacity="0.45"' if dim else ""
    sym = SUIT_SYMBOLS[suit]
    return (f'<g{transform}{opacity}><rect x="{x}" y="{y}" width="{CARD_W}" height="{CARD_H}" rx="6" fill="#ffffff" '
            f'stroke="#555" stroke-width="1.2"/>'
            f'<text x="{x + 5}" y="{y + 17}" font-size="15" font-family="sans-serif" font-weight="bold" '
            f'fill="{colour}">{rank}</text>'
            f'<text x="{x + 5}" y="{y + 33}" font-size="15" font-family="sans-serif" fill="{colour}">{sym}</text>'
            f'<text x="{x + CARD_W / 2}" y="{y + 60}" font-size="30" text-anchor="middle" font-family="sans-serif" '
            f'fill="{colour}">{sym}</text></g>')


def card_svg(code: str | None, dim: bool = False) -> str:
    """One card as a standalone SVG element, 56 x 80 plus a 1-unit margin for its outline (scale it with CSS).

    Args:
        code: a card code (``"QH"``, ``"TS"``, ``"9C"``) for its face, or None for the back.
        dim: draw the face faded (as the table draws the turn-up after closing).

    Returns:
        SVG markup: the same drawing as the cards of :func:`table_svg`.

    Raises:
        ValueError: ``code`` is not a card code (a rank of ``ATKQJ9`` and a suit of ``CDHS``).

    >>> card_svg("QH").startswith('<svg xmlns="http://www.w3.org/2000/svg" viewBox="-1 -1 58 82"')
    True
    """
    if code is not None and not (isinstance(code, str) and len(code) == 2 and code[0] in "ATKQJ9"
                                 and code[1] in SUIT_LETTERS):
        raise ValueError(f"card code {code!r}: expected a rank of ATKQJ9 and a suit of CDHS, e.g. 'QH'")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="-1 -1 {CARD_W + 2} {CARD_H + 2}" '
            f'width="{CARD_W + 2}" height="{CARD_H + 2}">{_card(0, 0, code, dim)}</svg>')


def _text(x: float, y: float, s: str, size: int = 14, anchor: str = "start", colour: str = "#ffffff") -> str:
    return (f'<text x="{x}" y="{y}" font-size="{size}" font-family="sans-serif" text-anchor="{anchor}" '
            f'fill="{colour}">{escape(s)}</text>')


def table_svg(s: GameState, viewer: int = 0, reveal: bool = False) -> str:
    """SVG markup (a string) of ``s`` seen by seat ``viewer``.

    Args:
        s: the game state.
        viewer: seat shown at the bottom with its hand face up.
        reveal: show the opponent's hidden cards face up too.
    """
    d = s.deck
    codes = d.codes
    opp = 1 - viewer
    hs = s.rules.hand_size
    width = max(560, 40 + (hs + 1) * (CARD_W + 8) + 200)
    height = 420
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">',
             f'<rect width="{width}" height="{height}" rx="12" fill="#1f6b3a"/>']
    # Opponent's hand (top).
    x = 20
    for c in iter_bits(s.hands[opp]):
        shown = reveal or bool(s.known[opp] >> c & 1)
        parts.append(_card(x, 30, codes[c] if shown else None))
        x += CARD_W + 8
    parts.append(_text(20, 22, f"{PLAYERS[opp]} (opponent): {s.counted(opp)} points, {tricks_text(s.tricks[opp])}"
                       + (f", {s.pending_marriage_points(opp)} pending" if s.pending_marriage_points(opp) else "")))
    # Stock and turn-up (left middle).
    if s.stock:
        parts.append(_card(72, 165, codes[s.stock[-1]], dim=s.closed_by >= 0, rotate=True))
        parts.append(_card(20, 165, None))
        state = "closed" if s.closed_by >= 0 else "stock"
        parts.append(_text(20, 265, f"{state}: {len(s.stock)}"))
    else:
        parts.append(_text(20, 210, "stock exhausted"))
    parts.append(_text(20, 285, f"trump {SUIT_SYMBOLS[s.trump]}", 16,
                       colour="#ffd0d0" if SUIT_LETTERS[s.trump] in "HD" else "#ffffff"))
    # Trick in progress (centre).
    cx = width / 2 - CARD_W / 2
    if s.table >= 0:
        parts.append(_card(cx, 165, codes[s.table]))
        parts.append(_text(cx + CARD_W / 2, 160, f"led by {PLAYERS[s.leader]}", 12, "middle"))
    elif s.history:
        last = s.history[-1]
        parts.append(_card(cx - 30, 165, codes[last.lead], dim=True))
        parts.append(_card(cx + 30, 165, codes[last.follow], dim=True))
        parts.append(_text(cx + CARD_W / 2, 160, f"last trick: {PLAYERS[last.winner]}", 12, "middle"))
    # Status (right middle).
    rx = width - 170
    status = [f"trick {s.trick_number}/{s.rules.n_tricks}" if s.result is None else "hand over"]
    if s.closed_by >= 0:
        status.append(f"closed by {PLAYERS[s.closed_by]}")
    if s.result is not None:
        w = s.result.winner
        status.append("tie" if w is None else f"{PLAYERS[w]} wins {s.result.game_points}")
        status.append(f"({s.result.reason})")
    else:
        status.append(f"{PLAYERS[s.to_move]} to move")
    for k, line in enumerate(status):
        parts.append(_text(rx, 190 + 20 * k, line))
    # Viewer's hand (bottom).
    x = 20
    for c in iter_bits(s.hands[viewer]):
        parts.append(_card(x, 315, codes[c]))
        x += CARD_W + 8
    parts.append(_text(20, 410, f"{PLAYERS[viewer]} (you): {s.counted(viewer)} points, {tricks_text(s.tricks[viewer])}"
                       + (f", {s.pending_marriage_points(viewer)} pending"
                          if s.pending_marriage_points(viewer) else "")))
    parts.append("</svg>")
    return "".join(parts)


class TableView:
    """Displays inline in Jupyter: ``TableView(state, viewer=0)``."""

    def __init__(self, state: GameState, viewer: int = 0, reveal: bool = False) -> None:
        self.svg = table_svg(state, viewer, reveal)

    def _repr_svg_(self) -> str:
        return self.svg
