"""``schnapsen-play`` narrates a scripted hand exactly as its golden transcript says (tests/data/play_narration.*):
every trick's winner and card points, the card drawn, the marriage, the exchange, closing and the game points at
the end, and why a typed move is not legal. Regenerate the golden files after an intended change of wording with
``SCHNAPSEN_REGENERATE_GOLDEN=1 python -m pytest tests/test_play_narration.py``."""

from __future__ import annotations

import io
import os
from pathlib import Path

from agents.cli import play

DATA = Path(__file__).resolve().parent / "data"
ARGV = ["--opponent", "heuristic", "--seed", "8", "--seat", "player_1"]


class ScriptedPlayer(io.StringIO):
    """Standard input that reads the screen so far and types: first '?', then a word that is no move, then for
    each turn the K of an announceable marriage (refused), the marriage, 'close' once when legal, else the first
    legal card, by its code or as the table shows it, in turn."""

    def __init__(self, screen: io.StringIO) -> None:
        super().__init__()
        self.screen, self.typed, self.n = screen, [], 0
        self.tried_king = self.did_close = False

    def readline(self, limit: int = -1) -> str:
        legal = [line for line in self.screen.getvalue().splitlines() if "your move: " in line][-1]
        legal = legal.split("your move: ", 1)[1].split(", ")
        self.n += 1
        if self.n == 1:
            move = "?"
        elif self.n == 2:
            move = "xyz"
        elif any(a.startswith("marriage") for a in legal):
            suit = next(a for a in legal if a.startswith("marriage"))[-1]
            move = f"K{suit}" if not self.tried_king else f"marriage {suit}"
            self.tried_king = True
        elif "close" in legal and not self.did_close and self.n > 6:
            move, self.did_close = "close", True
        else:
            card = next(a for a in legal if a not in ("exchange", "close", "claim"))
            move = card if self.n % 2 else card.replace("10", "T").translate(str.maketrans("♣♦♥♠", "CDHS"))
        self.typed.append(move)
        return move + "\n"


def _play(inp) -> str:
    out = io.StringIO()
    if inp is None:
        inp = ScriptedPlayer(out)
    assert play.main(ARGV, inp=inp, out=out) == 0
    return out.getvalue(), inp


def test_the_narration_of_a_scripted_hand_is_the_golden_transcript():
    if os.environ.get("SCHNAPSEN_REGENERATE_GOLDEN") == "1":
        text, scripted = _play(None)
        (DATA / "play_narration.in").write_text("\n".join(scripted.typed) + "\n", encoding="utf-8")
        (DATA / "play_narration.out").write_text(text, encoding="utf-8")
    typed = (DATA / "play_narration.in").read_text(encoding="utf-8")
    text, _ = _play(io.StringIO(typed))
    assert text == (DATA / "play_narration.out").read_text(encoding="utf-8")


def test_the_golden_transcript_shows_what_it_must():
    """The golden hand holds each kind of narration (so the test above covers them)."""
    text = (DATA / "play_narration.out").read_text(encoding="utf-8")
    for words in ("the opponent wins the trick", "you win the trick", "card points (R8)", "you drew ",
                  "the opponent drew", "announce the marriage in", "belongs to a marriage: announce it first",
                  "is neither a card code", "legal: ", "game point"):
        assert words in text, words


def _trick_counters(text: str) -> list[str]:
    return [line.split("  ")[2] for line in text.splitlines() if line.startswith("schnapsen20  trump ")]


def test_the_trick_counter_of_a_closed_hand_counts_the_tricks_it_lasts():
    """Closed at its first lead, a hand lasts the five tricks of the cards in the hands (the closed stock is dead,
    R19): the table counts them 1/5 to 5/5, and after the last trick says so (not "trick 6/10")."""
    moves = ["close"] + ["AC TC KC QC JC AD TD KD QD JD AH TH KH QH JH AS TS KS QS JS".replace(" ", "\n")] * 5
    out = io.StringIO()
    assert play.main(["--opponent", "heuristic", "--seed", "4", "--seat", "player_0"],
                     inp=io.StringIO("\n".join(moves) + "\n"), out=out) == 0
    text = out.getvalue()
    assert "closed by player_0" in text and "reason closed_hand" in text, text[-2000:]
    counters = _trick_counters(text)
    assert counters[0] == "trick 1/10" and counters[-1] == "after trick 5/5", counters
    assert set(counters[1:-1]) <= {f"trick {k}/5" for k in range(1, 6)} and "trick 5/5" in counters, counters


def test_the_trick_counter_after_a_claim_names_the_last_trick_played():
    """The golden hand ends with a claim after trick 7: the last table says "after trick 7/10" (an eighth trick
    was never played)."""
    counters = _trick_counters((DATA / "play_narration.out").read_text(encoding="utf-8"))
    assert counters[-1] == "after trick 7/10" and counters[-2] == "trick 7/10", counters
