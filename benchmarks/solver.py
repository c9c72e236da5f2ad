"""Solver speed on exhausted-stock positions: one move decision, ours against a peer, in one process.

Run:

    bash scripts/bootstrap.sh --extras bench python benchmarks/solver.py

Options: ``--positions N`` (positions per row, default 300; 0 skips the timing and only does
``--check``/``--write``), ``--seed K`` (default 0), ``--check`` (compare the seeded node counts with
``benchmarks/solver_nodes.json``; exit status 1 on any difference), ``--write`` (rewrite that file).

What is measured (one *move decision* per position; the milliseconds are wall time of that call):

* **positions, ours**: for ``schnapsen20`` and ``sixtysix24``, one ``numpy.random.default_rng(K)``
  per rule set deals ``GameState.new_hand(rules, rng)`` and pushes a uniformly random legal id
  (``rng.integers(len(legal_actions()))``) until the stock is exhausted (S = 0, not closed); a hand
  that ends first, or whose stock gets closed, is dropped and a new one dealt. The position is the
  state at that moment (the leader to move, no card on the table), with the hand not over. The same
  generator carries on to the next position, so the first 50 positions of a longer run are the
  50 positions of a shorter one.
* **ours Solver**: ``Solver().solve(state)`` (``tests/helpers/reference_solver.py``: alpha-beta with a transposition
  table, searched to the end of the hand), a fresh solver per position (an empty table, as in one
  move decision). Nodes are ``Solver.nodes`` (calls of its ``_search``).
* **ours PIMC**: ``PIMCAgent(rules, seed=0).act(obs)`` (``agents/search/pimc.py``) on the same positions, with
  ``obs = {"observation": encoding.observation(state, state.to_move), "action_mask":
  state.action_mask()}`` built before the clock starts. With S = 0 it solves the one determinisation
  (the true position), scoring every legal action with a full window (``Solver.action_values``),
  so it searches more than ``solve``; one agent serves all positions (it clears its table before each
  search). Nodes are ``agent.solver.nodes`` after the call.
* **peer**: the ``schnapsen`` package 0.0.5 from PyPI (the VU Amsterdam course platform, installed
  by the ``bench`` extra): its ``AlphaBetaBot`` (``schnapsen/bots/alphabeta.py``, a plain alpha-beta
  without a table, phase two only). Positions come from the package's own
  ``SchnapsenGamePlayEngine().get_random_phase_two_state(random.Random(K))`` (random play until the
  talon is empty, the hand not over: the leader to move with 5 cards each, like ours on
  ``schnapsen20``); timed is ``bot.get_move(LeaderPerspective(state, engine), None)``, the call the
  engine makes. Its node count (calls of ``AlphaBetaBot.value``, one per leader or follower
  decision, as ours) comes from a second, untimed pass with a counting subclass, so the count does
  not slow the timed pass.

A few untimed warm-up calls precede every row. The ``cpu`` column is process CPU time / wall time
over a row's timed calls: well below 100% means the row lost time to other processes on this shared
machine. Printed: median ms per move with the spread over the positions (min, p90, max; there are no
rounds: every position is timed once) and median nodes per row, the ratio of medians
peer / ours (the peer plays 20-card Schnapsen only, so it is set against ``schnapsen20``), and
whether our median is under 5 ms per move (the goal).

Node counts as data (a regression guard for the search, as python-chess keeps perft counts):
``benchmarks/solver_nodes.json`` holds, for one seed, ``Solver().solve`` node counts of the first
50 positions per rule set. ``--check`` recomputes them with the file's seed and reports every
difference; ``--write`` stores the current counts (seed ``--seed``). A change in the search, in the
engine's legal moves or in the dealing changes them: re-run ``--write`` only when that was intended.
This file is a script, not a test: it lives outside ``tests/`` and pytest does not collect it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout, not an installed copy
sys.path.insert(1, str(ROOT / "tests"))  # the reference solver, a test helper
sys.path.append(str(Path(__file__).resolve().parent))  # the shared harness, however this file is loaded

import harness  # noqa: E402

from agents.search.pimc import PIMCAgent  # noqa: E402
from helpers.reference_solver import Solver  # noqa: E402
from schnapsen_env import GameState, RuleSet  # noqa: E402
from schnapsen_env.encoding import observation  # noqa: E402

GOAL_MS = 5.0
RULESETS = ("schnapsen20", "sixtysix24")
NODES_FILE = Path(__file__).with_name("solver_nodes.json")
NODES_POSITIONS = 50
WARMUP = 5


def exhausted_positions(rules_name: str, seed: int, n: int) -> list[GameState]:
    """``n`` positions with the stock exhausted (S = 0, not closed) and the hand not over, by seeded random play."""
    rules = RuleSet.make(rules_name)
    rng = np.random.default_rng(seed)
    out: list[GameState] = []
    while len(out) < n:
        st = GameState.new_hand(rules, rng)
        while st.result is None and st.closed_by < 0 and st.stock:
            acts = st.legal_actions()
            st.push(acts[int(rng.integers(len(acts)))])
        if st.result is None and st.closed_by < 0 and not st.stock:
            out.append(st)
    return out


def summary(ms: list[float]) -> tuple[float, float, float, float]:
    a = np.asarray(ms)
    return float(np.median(a)), float(a.min()), float(np.percentile(a, 90)), float(a.max())


def timed(calls: Iterable[Callable[[], object]]) -> tuple[list[float], float]:
    """Wall ms of every call of ``calls`` (zero-argument functions; the iterable makes each before its clock starts
    and may count after its clock stops), and process CPU time / wall time over the calls."""
    ms = []
    clock, cpu = time.perf_counter, time.process_time
    wall_sum = cpu_sum = 0.0
    for call in calls:
        c0 = cpu()
        t0 = clock()
        call()
        t1 = clock()
        cpu_sum += cpu() - c0
        wall_sum += t1 - t0
        ms.append((t1 - t0) * 1e3)
    return ms, cpu_sum / wall_sum


def time_solver(states: list[GameState]) -> tuple[list[float], list[int], float]:
    """ms per ``Solver().solve`` (fresh solver each), nodes, and CPU/wall over the timed calls."""
    for st in states[:WARMUP]:
        Solver().solve(st)
    nodes = []

    def calls():
        for st in states:
            solver = Solver()
            yield partial(solver.solve, st)
            nodes.append(solver.nodes)

    ms, cpu_share = timed(calls())
    return ms, nodes, cpu_share


def time_pimc(states: list[GameState]) -> tuple[list[float], list[int], float]:
    """ms per ``PIMCAgent(rules, seed=0).act(obs)``, the agent's solver nodes, and CPU/wall."""
    agent = PIMCAgent(states[0].rules, seed=0)
    obs = [{"observation": observation(st, st.to_move), "action_mask": st.action_mask()} for st in states]
    for o in obs[:WARMUP]:
        agent.act(o)
    agent = PIMCAgent(states[0].rules, seed=0)
    nodes = []

    def calls():
        for o in obs:
            agent.solver.nodes = 0  # act() skips the search when only one action is legal
            yield partial(agent.act, o)
            nodes.append(agent.solver.nodes)

    ms, cpu_share = timed(calls())
    return ms, nodes, cpu_share


def time_peer(seed: int, n: int) -> tuple[list[float], list[int], float]:
    """ms per ``AlphaBetaBot.get_move`` on ``n`` phase-two states of the schnapsen 0.0.5 package, nodes, CPU/wall."""
    from schnapsen.bots.alphabeta import AlphaBetaBot
    from schnapsen.game import LeaderPerspective, SchnapsenGamePlayEngine

    class CountingAlphaBetaBot(AlphaBetaBot):
        """AlphaBetaBot that counts its ``value`` calls (used only in the untimed pass)."""

        calls = 0

        def value(self, *args, **kwargs):
            CountingAlphaBetaBot.calls += 1
            return AlphaBetaBot.value(self, *args, **kwargs)

    engine = SchnapsenGamePlayEngine()
    rng = random.Random(seed)
    states = [engine.get_random_phase_two_state(rng) for _ in range(n)]
    bot = AlphaBetaBot()
    for gs in states[:WARMUP]:
        bot.get_move(LeaderPerspective(gs, engine), None)
    ms, cpu_share = timed(partial(bot.get_move, LeaderPerspective(gs, engine), None) for gs in states)
    counter = CountingAlphaBetaBot()
    nodes = []
    for gs in states:
        CountingAlphaBetaBot.calls = 0
        counter.get_move(LeaderPerspective(gs, engine), None)
        nodes.append(CountingAlphaBetaBot.calls)
    return ms, nodes, cpu_share


def node_counts(seed: int, n: int) -> dict[str, list[int]]:
    """``Solver().solve`` node counts of the first ``n`` positions per rule set."""
    out = {}
    for name in RULESETS:
        counts = []
        for st in exhausted_positions(name, seed, n):
            solver = Solver()
            solver.solve(st)
            counts.append(solver.nodes)
        out[name] = counts
    return out


def write_nodes(seed: int) -> None:
    counts = node_counts(seed, NODES_POSITIONS)
    data = {
        "about": "Solver().solve node counts on the first positions of benchmarks/solver.py "
                 "(exhausted stock, seeded random play); compare with: python benchmarks/solver.py --check",
        "seed": seed,
        "positions": NODES_POSITIONS,
        **counts,
    }
    text = "{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items()) + "\n}\n"
    NODES_FILE.write_text(text)
    totals = ", ".join(f"{name} {sum(counts[name])}" for name in RULESETS)
    print(f"node counts written to {NODES_FILE.name}: seed {seed}, first {NODES_POSITIONS} positions per "
          f"rule set, total nodes {totals}")


def check_nodes() -> bool:
    """Recompute the node counts with the file's seed; print every difference. True when all match."""
    if not NODES_FILE.exists():
        print(f"node check: {NODES_FILE.name} is missing; create it with --write")
        return False
    data = json.loads(NODES_FILE.read_text())
    seed, n = int(data["seed"]), int(data["positions"])
    current = node_counts(seed, n)
    ok = True
    for name in RULESETS:
        stored = data.get(name)
        now = current[name]
        if stored is None:
            print(f"node check {name}: not in {NODES_FILE.name}")
            ok = False
            continue
        diffs = [(i, a, b) for i, (a, b) in enumerate(zip(stored, now)) if a != b]
        if len(stored) != len(now):
            diffs.append((min(len(stored), len(now)), len(stored), len(now)))
        if diffs:
            ok = False
            shown = ", ".join(f"#{i}: {a} -> {b}" for i, a, b in diffs[:10])
            more = f" (+{len(diffs) - 10} more)" if len(diffs) > 10 else ""
            print(f"node check {name}: {len(diffs)} of {n} positions differ; total nodes {sum(stored)} -> "
                  f"{sum(now)}; {shown}{more}")
        else:
            print(f"node check {name}: all {n} counts match (seed {seed}, total nodes {sum(now)})")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=300, help="positions per row (default 300; 0: no timing)")
    parser.add_argument("--seed", type=int, default=0, help="seed for every generator (default 0)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help=f"compare node counts with {NODES_FILE.name}")
    group.add_argument("--write", action="store_true", help=f"write node counts to {NODES_FILE.name}")
    harness.json_option(parser)
    args = parser.parse_args(argv)
    random.seed(args.seed)
    np.random.seed(args.seed)
    n = args.positions

    if n > 0:
        print(f"solver benchmark: one move decision on exhausted-stock positions, seed {args.seed}, {n} positions "
              f"per row, Python {sys.version.split()[0]}, numpy {np.__version__}")
        rows = []
        for name in RULESETS:
            states = exhausted_positions(name, args.seed, n)
            rows.append((f"ours Solver {name}",) + time_solver(states))
            rows.append((f"ours PIMC {name}",) + time_pimc(states))
        peer_label = None
        try:
            from importlib.metadata import version
            peer_label = f"peer AlphaBetaBot schnapsen {version('schnapsen')}"
            rows.append((peer_label,) + time_peer(args.seed, n))
        except ImportError as exc:
            print(f"peer not installed ({exc}); run with: bash scripts/bootstrap.sh --extras bench ...")
            peer_label = None

        print(f"{'row':<36} {'median ms':>9} {'min ms':>8} {'p90 ms':>8} {'max ms':>8} {'median nodes':>12} "
              f"{'cpu':>5}")
        med = {}
        for label, ms, nodes, cpu_share in rows:
            m, mn, p90, mx = summary(ms)
            med[label] = m
            print(f"{label:<36} {m:>9.2f} {mn:>8.2f} {p90:>8.2f} {mx:>8.2f} {np.median(nodes):>12.0f} "
                  f"{cpu_share:>5.0%}")
        if peer_label is not None:
            for label in ("ours Solver schnapsen20", "ours PIMC schnapsen20"):
                print(f"ratio peer / {label} (median ms): {med[peer_label] / med[label]:.1f}x")
        verdicts = "; ".join(f"{label[5:]} {med[label]:.2f} ms {'holds' if med[label] < GOAL_MS else 'MISSED'}"
                             for label in med if label.startswith("ours"))
        print(f"goal: our median < {GOAL_MS:g} ms per move: {verdicts}")
        if args.json:
            figures = {}
            for label, ms, nodes, _cpu in rows:
                m, mn, _p90, mx = summary(ms)
                figures[label] = {"median": m, "min": mn, "max": mx, "median_nodes": float(np.median(nodes))}
            harness.write_json(args.json, {
                "title": f"one move decision on exhausted-stock positions, {n} positions per row, seed {args.seed}",
                "unit": "ms a move", "rows": figures,
                "ratios": {} if peer_label is None else {
                    f"peer / {label} (median ms)": {"ratio": med[peer_label] / med[label], "low": None, "high": None,
                                                    "goal": None}
                    for label in ("ours Solver schnapsen20", "ours PIMC schnapsen20")},
                "goal_median_ms": GOAL_MS})

    if args.write:
        write_nodes(args.seed)
    elif args.check:
        if not check_nodes():
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
