"""Rules-engine speed: random legal play of whole hands, ours against a peer, in one process.

Run:

    bash scripts/bootstrap.sh --extras bench python benchmarks/engine.py

Options: ``--seconds S`` (wall time per measurement, default 1), ``--hands N`` (a fixed number of
hands/games per measurement instead of a wall time), ``--rounds R`` (default 7), ``--seed K``. The script
measures the checkout it lives in (its root goes first on ``sys.path``).

What is measured, each for the same wall time (or hand count) per round:

* **ours**: ``GameState.new_hand(rules, rng)``, then push a uniformly random id from
  ``legal_actions()`` until ``st.result is not None``, for ``schnapsen20`` and ``sixtysix24``.
  The random index comes from a seeded ``numpy.random.Generator``, drawn in blocks
  (``rng.random(4096)``) so that numpy's per-call overhead (about 3 us per scalar
  ``rng.integers``, as much as a whole engine step) is not charged to the engine. A decision is
  one ``push`` (a marriage announcement, an exchange, a close and a claim each count as one).
* **peer**: the ``schnapsen`` package 0.0.5 from PyPI (the VU Amsterdam course platform,
  installed by the ``bench`` extra): ``SchnapsenGamePlayEngine().play_game(bot1, bot2, rng)``
  with two ``RandBot``s, each seeded with its own ``random.Random``, the deal shuffled by a third.
  One game there is one 20-card Schnapsen hand (play to 66, worth 1-3 game points), so it is
  compared with our ``schnapsen20`` hands. Decisions are counted by a ``RandBot`` subclass whose
  ``get_move`` adds one and calls ``RandBot.get_move`` (a trump exchange and the lead that follows
  are two moves there; a marriage and its card are one).

Every row is measured ``--rounds`` times, the rounds interleaved (round 1 of every row, then round 2, ...), each
row's generators carrying on from round to round. The table reports each row's **median** hands/s over the rounds
with the slowest and fastest round (the spread), and its median decisions/s. The ratio is ours/peer of the median
hands (games) per second, with the range of the per-round ratios; the goal is >= 3x.
This file is a script, not a test: it lives outside ``tests/`` and pytest does not collect it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # measure this checkout, not an installed copy

import harness  # noqa: E402

from schnapsen_env import GameState, RuleSet  # noqa: E402

GOAL = 3.0
BLOCK = 4096  # uniforms drawn per rng.random call


def budget(t0: float, seconds: float, hands: int | None):
    """``done(n)``: whether a measurement that started at ``t0`` (``time.perf_counter``) has played its ``hands``
    hands, or with ``hands`` None, its ``seconds``."""
    if hands is not None:
        return lambda n: n >= hands
    deadline = t0 + seconds
    return lambda _n: time.perf_counter() >= deadline


def run_ours(rules_name: str, rng: np.random.Generator, seconds: float, hands: int | None) -> tuple[int, int, float]:
    """Random legal play of whole hands with our engine; returns (hands, decisions, elapsed seconds)."""
    rules = RuleSet.make(rules_name)
    new_hand = GameState.new_hand
    buf: list[float] = []
    k = 0
    n_hands = n_dec = 0
    clock = time.perf_counter
    t0 = clock()
    done = budget(t0, seconds, hands)
    while True:
        st = new_hand(rules, rng)
        push = st.push
        legal = st.legal_actions
        while st.result is None:
            acts = legal()
            if k == len(buf):
                buf = rng.random(BLOCK).tolist()
                k = 0
            push(acts[int(buf[k] * len(acts))])
            k += 1
            n_dec += 1
        n_hands += 1
        if done(n_hands):
            break
    return n_hands, n_dec, clock() - t0


def peer_runner(seed: int):
    """A function ``(seconds, hands) -> (games, decisions, elapsed)``: two RandBots play whole games on the
    schnapsen 0.0.5 engine, their generators carrying on from call to call. Raises ImportError without the peer."""
    from schnapsen.bots.rand import RandBot
    from schnapsen.game import SchnapsenGamePlayEngine

    class CountingRandBot(RandBot):
        """RandBot that counts its get_move calls."""

        calls = 0

        def get_move(self, perspective, leader_move):
            CountingRandBot.calls += 1
            return RandBot.get_move(self, perspective, leader_move)

    engine = SchnapsenGamePlayEngine()
    deal_rng = random.Random(seed)
    bot1 = CountingRandBot(random.Random(seed + 1), "rand1")
    bot2 = CountingRandBot(random.Random(seed + 2), "rand2")
    return lambda seconds, hands: run_peer(engine, bot1, bot2, deal_rng, CountingRandBot, seconds, hands)


def run_peer(engine, bot1, bot2, deal_rng, counter, seconds: float, hands: int | None) -> tuple[int, int, float]:
    """Two counting RandBots play whole games on the schnapsen 0.0.5 engine; returns (games, decisions, elapsed)."""
    counter.calls = 0
    n_games = 0
    clock = time.perf_counter
    t0 = clock()
    done = budget(t0, seconds, hands)
    while True:
        engine.play_game(bot1, bot2, deal_rng)
        n_games += 1
        if done(n_games):
            break
    return n_games, counter.calls, clock() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="wall time per measurement (default 1)")
    parser.add_argument("--hands", type=int, default=None, help="fixed hands/games per measurement instead")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds per row, median kept (default 7)")
    parser.add_argument("--seed", type=int, default=0, help="seed for every generator (default 0)")
    harness.json_option(parser)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0 or (args.hands is not None and args.hands < 1):
        parser.error("--rounds and --hands must be >= 1 and --seconds > 0")
    random.seed(args.seed)
    np.random.seed(args.seed)

    budget = f"{args.hands} hands" if args.hands is not None else f"{args.seconds:g} s"
    print(f"engine benchmark: random legal play, seed {args.seed}, median of {args.rounds} interleaved rounds of "
          f"{budget} per row, {harness.versions()}")
    rows = []
    for name in ("schnapsen20", "sixtysix24"):
        rng = np.random.default_rng(args.seed)
        rows.append((f"ours {name}", lambda s, h, name=name, rng=rng: run_ours(name, rng, s, h)))
    peer_label = None
    try:
        from importlib.metadata import version

        peer = peer_runner(args.seed)
        peer_label = f"peer schnapsen {version('schnapsen')}"
        rows.append((peer_label, peer))
    except ImportError as exc:
        print(f"peer not installed ({exc}); run with: bash scripts/bootstrap.sh --extras bench ...")
    results = harness.interleaved({label: lambda fn=fn: fn(args.seconds, args.hands) for label, fn in rows},
                                  args.rounds, progress=None)

    print(f"{'engine':<24} {'hands/s':>9} {'min':>8} {'max':>8} {'decisions/s':>12} {'dec/hand':>8}")
    rate: dict[str, list[float]] = {}
    for label, _ in rows:
        runs = results[label]
        rate[label] = [n / t for n, _d, t in runs]
        dec = float(np.median([d / t for _n, d, t in runs]))
        per_hand = sum(d for _n, d, _t in runs) / sum(n for n, _d, _t in runs)
        med, low, high = harness.spread(rate[label])
        print(f"{label:<24} {med:>9,.0f} {low:>8,.0f} {high:>8,.0f} {dec:>12,.0f} {per_hand:>8.1f}")
    if peer_label is not None:
        for name in ("schnapsen20", "sixtysix24"):
            ours, theirs = rate[f"ours {name}"], rate[peer_label]
            goal = f"; {harness.verdict(harness.ratio(ours, theirs)[0], GOAL)}" if name == "schnapsen20" else ""
            print(f"ratio ours {name:<11} / peer (median hands/s): {harness.ratio_text(ours, theirs)}{goal}")
    if args.json:
        harness.write_json(args.json, {
            "title": f"random legal play, seed {args.seed}, median of {args.rounds} interleaved rounds of {budget} per "
                     "row",
            "unit": "hands/s", "rows": harness.rows_figures(rate),
            "ratios": {} if peer_label is None else {
                f"ours {name} / peer": harness.ratio_figures(rate[f"ours {name}"], rate[peer_label],
                                                             GOAL if name == "schnapsen20" else None)
                for name in ("schnapsen20", "sixtysix24")}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
