"""The observation layout docs/envs.md documents is the encoder's (``schnapsen_env.encoding``): its blocks in order
with their sizes, the card order within a card block for every ruleset, and the ``trick`` entry together with what
``decode_observation`` gives for it, checked on hands played with a fixed seed."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from schnapsen_env import schnapsen_v0
from schnapsen_env.encoding import decode_observation, layout
from schnapsen_env.ruleset import RuleSet

DOC = (Path(__file__).resolve().parent.parent / "docs" / "envs.md").read_text(encoding="utf-8")
SECTION = DOC.split("## Observation layout", 1)[1].split("\n## ", 1)[0]
RULESETS = ("schnapsen20", "sixtysix24", "schnapsen10")


def _documented_blocks(n: int) -> list[tuple[str, int]]:
    """(name, size) of each block of the layout table, in its order (a row ``| `a`, `b` | 2n |`` is two blocks of
    n, ``1+2`` two blocks of 1 and 2)."""
    out = []
    for names, size in re.findall(r"^\| ((?:`\w+`(?:, )?)+) \| ([\dn+]+) \|", SECTION, re.M):
        names = re.findall(r"`(\w+)`", names)
        if "+" in size:
            sizes = [int(k) for k in size.split("+")]
        elif size.endswith("n"):
            sizes = [int(size[:-1] or 1) * n // len(names)] * len(names)
        else:
            sizes = [int(size)]
        assert len(sizes) == len(names), (names, size)
        out += list(zip(names, sizes))
    return out


def _documented_card_order() -> dict[str, list[str]]:
    return {name: codes.split() for name, codes in re.findall(r"^\| `(\w+)` \| [^|]+ \| `([A-Z9 ]+)` \|", SECTION, re.M)}


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_documented_blocks_are_the_layout(ruleset):
    rules = RuleSet.make(ruleset)
    blocks = [(name, sl.stop - sl.start) for name, sl in layout(rules).items()]
    assert _documented_blocks(rules.n_cards) == blocks


def test_the_documented_card_order_is_the_card_ids():
    order = _documented_card_order()
    assert sorted(order) == sorted(RULESETS)
    for ruleset, codes in order.items():
        assert codes == list(RuleSet.make(ruleset).deck.codes), ruleset


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_played_hand_puts_each_card_and_the_trick_where_the_page_says(ruleset):
    """At every decision of a seeded hand, the mover's hand block holds a 1 at the documented entry of each of its
    cards (and nowhere else), the cards it won and the card on the table are at theirs, and the ``trick`` entry is
    the completed tricks / n_tricks, which ``decode_observation`` gives as the number of the trick being played."""
    env = schnapsen_v0.env(ruleset=ruleset)
    env.reset(seed=5)
    rules = env.unwrapped.rules
    order = _documented_card_order()[ruleset]
    blocks = _documented_blocks(rules.n_cards)
    start = {name: sum(size for _, size in blocks[:k]) for k, (name, _) in enumerate(blocks)}
    rng = np.random.default_rng(5)
    decisions = 0
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        v, position = obs["observation"], env.unwrapped.position()
        me = agent
        hand = sorted(position["hands"][me], key=order.index)
        assert [order[i] for i in np.flatnonzero(v[start["hand"]:start["hand"] + rules.n_cards])] == hand
        won = sorted(position["won"][me], key=order.index)
        assert [order[i] for i in np.flatnonzero(v[start["me_won"]:start["me_won"] + rules.n_cards])] == won
        if position["table"] is not None:
            assert v[start["table"] + order.index(position["table"])] == 1.0
        completed = sum(position["tricks"].values())
        assert v[start["trick"]] == pytest.approx(completed / rules.n_tricks)
        assert decode_observation(v, rules)["trick"] == completed + 1
        decisions += 1
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert decisions >= rules.n_tricks  # a whole hand (at least one decision a trick)
