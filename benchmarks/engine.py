"""Rules-engine speed: random legal play of whole hands, ours against a peer, in one process.

Run:

    bash scripts/bootstrap.sh --extras bench python benchmarks/engine.py

Options: ``--seconds S`` (wall time per measurement, default 5), ``--hands N`` (a fixed number of
hands/games per measurement instead of a wall time), ``--seed K``.

What is measured, each for the same wall time (or hand count):

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

The ratio is ours/peer in hands (games) per second; the goal is >= 3x.
This file is a script, not a test: it lives outside ``tests/`` and pytest does not collect it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np

from schnapsen_env import GameState, RuleSet

GOAL = 3.0
BLOCK = 4096  # uniforms drawn per rng.random call


def run_ours(rules_name: str, seed: int, seconds: float, hands: int | None) -> tuple[int, int, float]:
    """Random legal play of whole hands with our engine; returns (hands, decisions, elapsed seconds)."""
    rules = RuleSet.make(rules_name)
    rng = np.random.default_rng(seed)
    new_hand = GameState.new_hand
    buf: list[float] = []
    k = 0
    n_hands = n_dec = 0
    clock = time.perf_counter
    t0 = clock()
    deadline = t0 + seconds
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
        if hands is not None:
            if n_hands >= hands:
                break
        elif clock() >= deadline:
            break
    return n_hands, n_dec, clock() - t0


def run_peer(seed: int, seconds: float, hands: int | None) -> tuple[int, int, float]:
    """Two RandBots play whole games on the schnapsen 0.0.5 engine; returns (games, decisions, elapsed)."""
    from schnapsen.bots.rand import RandBot
    from schnapsen.game import SchnapsenGamePlayEngine

    class CountingRandBot(RandBot):
        """RandBot that counts its get_move calls."""

        calls = 0

        def get_move(self, perspective, leader_move):
            CountingRandBot.calls += 1
            return RandBot.get_move(self, perspective, leader_move)

    CountingRandBot.calls = 0
    engine = SchnapsenGamePlayEngine()
    deal_rng = random.Random(seed)
    bot1 = CountingRandBot(random.Random(seed + 1), "rand1")
    bot2 = CountingRandBot(random.Random(seed + 2), "rand2")
    n_games = 0
    clock = time.perf_counter
    t0 = clock()
    deadline = t0 + seconds
    while True:
        engine.play_game(bot1, bot2, deal_rng)
        n_games += 1
        if hands is not None:
            if n_games >= hands:
                break
        elif clock() >= deadline:
            break
    return n_games, CountingRandBot.calls, clock() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="wall time per measurement (default 5)")
    parser.add_argument("--hands", type=int, default=None, help="fixed hands/games per measurement instead")
    parser.add_argument("--seed", type=int, default=0, help="seed for every generator (default 0)")
    args = parser.parse_args(argv)
    random.seed(args.seed)
    np.random.seed(args.seed)

    budget = f"{args.hands} hands" if args.hands is not None else f"{args.seconds:g} s"
    print(f"engine benchmark: random legal play, seed {args.seed}, {budget} per row, Python "
          f"{sys.version.split()[0]}, numpy {np.__version__}")
    rows = []
    for name in ("schnapsen20", "sixtysix24"):
        rows.append((f"ours {name}",) + run_ours(name, args.seed, args.seconds, args.hands))
    try:
        from importlib.metadata import version
        peer_label = f"peer schnapsen {version('schnapsen')}"
        rows.append((peer_label,) + run_peer(args.seed, args.seconds, args.hands))
    except ImportError as exc:
        print(f"peer not installed ({exc}); run with: bash scripts/bootstrap.sh --extras bench ...")
        peer_label = None

    print(f"{'engine':<24} {'hands':>8} {'decisions':>10} {'time s':>7} {'hands/s':>9} {'decisions/s':>12} "
          f"{'dec/hand':>8}")
    rate = {}
    for label, n, d, t in rows:
        rate[label] = n / t
        print(f"{label:<24} {n:>8d} {d:>10d} {t:>7.2f} {n / t:>9.0f} {d / t:>12.0f} {d / n:>8.1f}")
    if peer_label is not None:
        ratio = rate["ours schnapsen20"] / rate[peer_label]
        verdict = "holds" if ratio >= GOAL else "MISSED"
        print(f"ratio ours schnapsen20 / peer (hands/s): {ratio:.2f}x; goal >= {GOAL:g}x {verdict}")
        print(f"ratio ours sixtysix24  / peer (hands/s): {rate['ours sixtysix24'] / rate[peer_label]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
