"""The compiled solver against the reference Python solver, in one process: speed, exactness, seeded node counts.

Run:

    bash scripts/bootstrap.sh python benchmarks/solver_core.py                  # speed (about 3 minutes)
    bash scripts/bootstrap.sh python benchmarks/solver_core.py --exactness 5000 # values on 5,000 positions
    bash scripts/bootstrap.sh python benchmarks/solver_core.py --record-nodes   # rewrite solver_core_nodes.json

**Speed** (``--deals N``, default 30; ``--rounds R``, default 3): for ``schnapsen20``, N seeded deals
(``GameState.new_hand(rules, default_rng(seed))``, seeds 0..N-1). Rows, each timed per position with
``time.perf_counter`` around one call, a fresh table per call (the compiled solver starts a new table
generation; the reference solver is built anew), a few untimed warm-up calls first:

* ``trick 1, compiled``: ``CoreSolver(rules).solve(state)`` from trick 1, no closing below the root (the reference
  solver's default tree), and ``trick 1, compiled, closing`` with ``close_below_root=True`` (the expert's tree);
* ``trick 1, reference``: ``Solver().solve(state)`` (``tests/helpers/reference_solver.py``) on the first ``--reference-deals``
  deals (default 8; it takes about a second each);
* ``trick 4, compiled`` / ``trick 4, reference``: the same two solvers on the position after three tricks of
  seeded random card play (both fast enough for every deal).

Every row is measured ``--rounds`` times, interleaved; the table prints the median ms per solve over all rounds
and positions, the spread of the per-round medians, the median nodes and the node rate (nodes / s over the row),
and the ratios compiled / reference of the node rates and of the median ms on the same positions. Goals of the
compiled core: node rate >= 50x the reference; a full solve from trick 1 in a median
of at most 10 ms.

**Expert move time** (``--expert N``, ``--expert-ruleset``, default ``schnapsen20``; ``--expert-agent NAME``,
default ``expert``, times another registered agent the same way): ``expert`` at its default budget plays N seeded hands (seeds 0..N-1, seat alternating) against ``heuristic``; every decision with more than
one legal action is timed with ``time.perf_counter`` around ``act``, after one untimed hand of another expert (seed
10**6: numba's compilation or cache load is not a move). Prints the median, p90 and max ms a move, the median
worlds, the median and largest nodes, and the moves searched to a horizon (their exact worlds did not fit the
budget). Goals: a median of at most 250 ms and a slowest move of at most 2 s on one core.

**Exactness** (``--exactness N``): N positions from random play (special actions often) in both rulesets with
random knob sets of ``tests/helpers/knob_cases.py``, a third each with the stock open, closed and exhausted, at least
three tricks played (four, and ``schnapsen20`` only, with closing below the root, where the reference solver is
slow); every legal action's full-depth value from both solvers, and the number of positions where
any differs (exit status 1 if any does). ``tests/test_solver_core.py`` runs a small version in CI.

**Node counts** (``--record-nodes``): writes ``agents.search.solver_core.perft_nodes()`` to
``benchmarks/solver_core_nodes.json``, which ``tests/test_solver_core.py`` checks. This file is a script, not a
test.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout, not an installed copy
sys.path.insert(1, str(ROOT / "tests"))

import harness  # noqa: E402

from agents.search.solver_core import CoreSolver, perft_nodes  # noqa: E402
from schnapsen_env.rules import GameState  # noqa: E402
from schnapsen_env.ruleset import RULESETS, RuleSet  # noqa: E402

NODES_FILE = ROOT / "benchmarks" / "solver_core_nodes.json"
GOAL_NODE_RATE = 50.0  # compiled / reference node rate
GOAL_TRICK1_MS = 10.0  # median full solve from trick 1
GOAL_EXPERT_MS = 250.0  # median expert move
GOAL_EXPERT_MAX_MS = 2000.0  # slowest expert move
from helpers.knob_cases import CASES  # noqa: E402  (the knob sets of the lockstep tests)
from helpers.reference_solver import Solver  # noqa: E402  (the readable reference, a test helper)
from helpers.solver_positions import positions  # noqa: E402  (the same position generator as the CI test)


def deals(rules: RuleSet, n: int, tricks: int) -> list[GameState]:
    out = []
    for seed in range(n):
        rng = np.random.default_rng(seed)
        g = GameState.new_hand(rules, rng=rng)
        while g.tricks[0] + g.tricks[1] < tricks and g.result is None:
            g.push(int(rng.choice([a for a in g.legal_actions() if a < rules.n_cards])))
        if g.result is None:
            out.append(g)
    return out


def time_row(make, states: list[GameState]) -> tuple[list[float], list[int]]:
    for g in states[:2]:
        make().solve(g)
    ms, nodes = [], []
    for g in states:
        solver = make()
        t0 = time.perf_counter()
        solver.solve(g)
        ms.append((time.perf_counter() - t0) * 1e3)
        nodes.append(solver.nodes)
    return ms, nodes


def speed(args) -> dict:
    rules = RuleSet.make()
    first, fourth = deals(rules, args.deals, 0), deals(rules, args.deals, 3)
    compiled, closing = CoreSolver(rules), CoreSolver(rules, close_below_root=True)
    rows = {
        "trick 1, compiled": (lambda: compiled, first),
        "trick 1, compiled, closing": (lambda: closing, first),
        "trick 1, reference": (Solver, first[:args.reference_deals]),
        "trick 1, compiled (same deals)": (lambda: compiled, first[:args.reference_deals]),
        "trick 4, compiled": (lambda: compiled, fourth),
        "trick 4, reference": (Solver, fourth),
    }
    rounds = harness.interleaved({name: lambda make=make, states=states: time_row(make, states)
                                  for name, (make, states) in rows.items()}, args.rounds)
    results = {name: ([m for ms, _ in runs for m in ms], [k for _, nodes in runs for k in nodes],
                      [float(np.median(ms)) for ms, _ in runs]) for name, runs in rounds.items()}
    print(f"full solves (schnapsen20, default knobs), {args.rounds} interleaved rounds")
    print(f"{'row':<32}{'positions':>10}{'median ms':>11}{'round medians':>20}{'median nodes':>14}{'Mnodes/s':>10}")
    rate = {}
    for name, (ms, nodes, medians) in results.items():
        rate[name] = sum(nodes) / (sum(ms) / 1e3) / 1e6
        print(f"{name:<32}{len(rows[name][1]):>10}{np.median(ms):>11.2f}"
              f"{f'{min(medians):.2f}..{max(medians):.2f}':>20}{np.median(nodes):>14,.0f}{rate[name]:>10.3f}")
    med = {name: float(np.median(v[0])) for name, v in results.items()}
    print(f"node rate compiled / reference, trick 1: {rate['trick 1, compiled (same deals)'] / rate['trick 1, reference']:.1f}x;"
          f" trick 4: {rate['trick 4, compiled'] / rate['trick 4, reference']:.1f}x (goal >= 50x)")
    print(f"median ms reference / compiled, trick 1: {med['trick 1, reference'] / med['trick 1, compiled (same deals)']:.1f}x;"
          f" trick 4: {med['trick 4, reference'] / med['trick 4, compiled']:.1f}x")
    print(f"full solve from trick 1: median {med['trick 1, compiled']:.2f} ms, with closing below the root "
          f"{med['trick 1, compiled, closing']:.2f} ms (goal <= 10 ms)")
    return {
        "title": f"full solves (schnapsen20, default knobs), {args.rounds} interleaved rounds",
        "rows": {name: {"positions": len(rows[name][1]), "median_ms": med[name], "round_medians_ms":
                        [min(medians), max(medians)], "median_nodes": float(np.median(nodes)),
                        "mnodes_per_s": rate[name]} for name, (ms, nodes, medians) in results.items()},
        "node_rate_ratio": {"trick 1": rate["trick 1, compiled (same deals)"] / rate["trick 1, reference"],
                            "trick 4": rate["trick 4, compiled"] / rate["trick 4, reference"]},
        "time_ratio": {"trick 1": med["trick 1, reference"] / med["trick 1, compiled (same deals)"],
                       "trick 4": med["trick 4, reference"] / med["trick 4, compiled"]},
        "goal_node_rate_ratio": GOAL_NODE_RATE, "goal_trick1_ms": GOAL_TRICK1_MS}


def expert_moves(n: int, ruleset: str = "schnapsen20", agent: str = "expert", options: dict | None = None) -> dict:
    """The move times of ``agent`` (with its ``options``, e.g. ``{"postpone": 1}``) as the module docstring says."""
    from agents import make_agent
    from schnapsen_env import encoding

    rules = RuleSet.make(ruleset)
    searches = agent == "expert"  # worlds and nodes are the expert's own figures
    ms, worlds, nodes, horizon = [], [], [], 0
    for seed in [-1] + list(range(n)):  # first an untimed hand with another expert: numba's compilation or cache
        warm_up = seed == -1            # load is not a move, and the timed expert's draws stay those of seed 0
        if warm_up:
            expert = make_agent(agent, rules, seed=1, **(options or {}))
            seed = 10 ** 6
        elif seed == 0:
            expert = make_agent(agent, rules, seed=0, **(options or {}))
        expert.reset()
        g = GameState.new_hand(rules, rng=np.random.default_rng(seed))
        other = make_agent("heuristic", rules, seed=seed)
        seat = seed % 2
        while g.result is None:
            obs = {"observation": encoding.observation(g, g.to_move), "action_mask": g.action_mask()}
            if g.to_move != seat:
                g.push(other.act(obs))
                continue
            t0 = time.perf_counter()
            a = expert.act(obs)
            dt = time.perf_counter() - t0
            if int(obs["action_mask"].sum()) > 1 and not warm_up:
                ms.append(dt * 1e3)
                if searches:
                    worlds.append(expert.last_worlds)
                    nodes.append(expert.last_nodes)
                    horizon += expert.last_depth is not None
            g.push(a)
    search = (f"; median {np.median(worlds):.0f} worlds, {np.median(nodes):,.0f} nodes, at most {max(nodes):,}; "
              f"{horizon} moves searched to a horizon") if searches else ""
    label = agent + (":" + ",".join(f"{k}={v}" for k, v in options.items()) if options else "")
    print(f"{label} ({'options' if options else 'defaults'}) vs heuristic, {ruleset}, {n} hands, {len(ms)} timed moves: median {np.median(ms):.1f} "
          f"ms, p90 {np.percentile(ms, 90):.1f} ms, max {max(ms):.1f} ms a move{search} "
          f"(goal: median <= {GOAL_EXPERT_MS:g} ms, max <= {GOAL_EXPERT_MAX_MS:g} ms)")
    figures = {"agent": label, "ruleset": ruleset, "hands": n, "moves": len(ms), "median_ms": float(np.median(ms)),
               "p90_ms": float(np.percentile(ms, 90)), "max_ms": max(ms), "goal_median_ms": GOAL_EXPERT_MS,
               "goal_max_ms": GOAL_EXPERT_MAX_MS}
    if searches:
        figures.update(median_worlds=float(np.median(worlds)), median_nodes=float(np.median(nodes)),
                       max_nodes=max(nodes), horizon_moves=horizon)
    return figures


def exactness(n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    checked = differ = 0
    by_phase = {"open": 0, "closed": 0, "exhausted": 0}
    while checked < n:
        ruleset, knobs = CASES[int(rng.integers(len(CASES)))]
        rules = RuleSet.make(ruleset, **knobs)
        close = ruleset == "schnapsen20" and bool(rng.integers(2))  # the reference is too slow for 24 cards
        fast = CoreSolver(rules, close_below_root=close)
        for g in positions(rules, rng, 3, min_tricks=4 if close else 3):
            by_phase["closed" if g.closed_by >= 0 else ("open" if g.stock else "exhausted")] += 1
            if fast.action_values(g) != Solver(close_below_root=close).action_values(g):
                differ += 1
                print("differs:", rules.to_dict(), g.position(), file=sys.stderr)
            checked += 1
    print(f"exactness: {checked} positions ({by_phase}), both rulesets, random knob sets of "
          f"tests/helpers/knob_cases.py: {differ} with a differing action value")
    return {"positions": checked, "by_phase": by_phase, "differ": differ}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=30)
    parser.add_argument("--reference-deals", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--exactness", type=int, default=0, metavar="N", help="check N positions instead of timing")
    parser.add_argument("--expert", type=int, default=0, metavar="N", help="time expert's moves over N hands")
    parser.add_argument("--expert-ruleset", default="schnapsen20", choices=sorted(RULESETS),
                        help="the ruleset of --expert's hands")
    parser.add_argument("--expert-agent", default="expert", metavar="NAME",
                        help="the registered agent --expert times (default expert; e.g. expert+, policy-rollout)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--record-nodes", action="store_true", help=f"write {NODES_FILE.name}")
    harness.json_option(parser)
    args = parser.parse_args(argv)
    if min(args.deals, args.reference_deals, args.rounds) < 1 or min(args.exactness, args.expert) < 0:
        parser.error("--deals, --reference-deals and --rounds must be >= 1, --exactness and --expert >= 0")
    if args.expert:
        from agents import agent_names, can_play

        if args.expert_agent not in agent_names() or not can_play(args.expert_agent, args.expert_ruleset):
            parser.error(f"--expert-agent must be a registered agent that plays {args.expert_ruleset} "
                         f"({', '.join(agent_names())}), got {args.expert_agent!r}")
    if args.record_nodes:
        data = {"about": "agents.search.solver_core.perft_nodes(): [value, nodes] of full solves from trick 1 of seeded "
                         "deals; checked by tests/test_solver_core.py", "core": perft_nodes()}
        NODES_FILE.write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {NODES_FILE}")
        return 0
    if args.exactness:
        figures = {"exactness": exactness(args.exactness, args.seed)}
    elif args.expert:
        figures = {"expert": expert_moves(args.expert, args.expert_ruleset, args.expert_agent)}
    else:
        figures = {"speed": speed(args)}
    if args.json:
        harness.write_json(args.json, figures)
    return 1 if figures.get("exactness", {}).get("differ") else 0


if __name__ == "__main__":
    sys.exit(main())
