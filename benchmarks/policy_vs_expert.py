"""Where a policy loses to ``expert``: its decisions by phase of the hand, judged by the expert's search.

Run:

    bash scripts/bootstrap.sh python benchmarks/policy_vs_expert.py trained-long --hands 200

The policy (a registered agent name or a ``.pt`` checkpoint) plays ``--hands`` hands of ``schnapsen20`` against
``expert`` (seats alternating, deals from ``--seed``). At every decision of the policy with more than one legal
action, a second, independent ``expert`` (another seed, the same budget) values every legal action on the policy's
own observation (:meth:`agents.search.expert.ExpertAgent.action_values`: mean game points over the sampled worlds, each
solved to the end of the hand); the decision's **cost** is the best action's value minus the value of the action
the policy chose (0 where it chose a best one). The table gives, per phase, the decisions judged, the share where
the policy chose an action the judge also ranks best, and the cost summed over the phase's decisions per hand
(game points per hand). Phases: the opening lead (trick 1), later leads and follows while the stock is open,
leads and follows once a player has closed, and once the stock is exhausted; a close, an exchange or a marriage
counts in the phase where it was chosen.

What the figures mean: once the stock is exhausted the judge is exact (one world, the true position), so that
row is the policy's true loss there. While cards are hidden the judge is PIMC (Frank and Basin, 1998: strategy
fusion and non-locality bias its values), so those rows are the expert's opinion, not the truth: they say where the
two disagree and what the expert thinks the disagreements cost, which is where distilling the expert's choices
into the policy would change its play. The judge is noisy too (a world sample of its own): ``expert`` itself as the
policy gives the floor, the cost that an expert of another seed shows by that noise alone. This file is a script,
not a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's packages, not an installed copy
sys.path.append(str(Path(__file__).resolve().parent))  # the shared harness, however this file is loaded
import harness  # noqa: E402

from agents.evaluation.arena import resolve_agent  # noqa: E402
from agents.search.expert import ExpertAgent  # noqa: E402
from schnapsen_env import schnapsen_v0  # noqa: E402

PHASES = ("opening lead", "open stock: lead", "open stock: follow", "closed: lead", "closed: follow",
          "exhausted: lead", "exhausted: follow")


def phase(position: dict) -> str:
    """The phase of the decision in ``position`` (the env's :meth:`position` dict), one of :data:`PHASES`."""
    role = "lead" if position["table"] is None else "follow"
    if position["closed_by"] is not None:
        return f"closed: {role}"
    if not position["stock"]:
        return f"exhausted: {role}"
    if not position["history"] and role == "lead":
        return "opening lead"
    return f"open stock: {role}"


def judge(policy_spec: str, hands: int, seed: int, progress: bool = True) -> dict:
    """Play ``hands`` hands of the policy against ``expert`` and judge the policy's decisions (module doc).

    Returns:
        ``{"hands", "phases": {phase: {"decisions", "agree" (share, None without decisions), "cost_per_hand"}}}``.
    """
    env = schnapsen_v0.env(ruleset="schnapsen20")
    _, factory = resolve_agent(policy_spec, env.unwrapped.rules)
    policy = factory(seed=seed)
    opponent = ExpertAgent(env.unwrapped.rules, seed=seed + 1)
    judge_ = ExpertAgent(env.unwrapped.rules, seed=seed + 2)
    rows: dict[str, list[tuple[bool, float]]] = {p: [] for p in PHASES}
    for hand in tqdm(range(hands), disable=not progress, unit="hand"):
        env.reset(seed=seed + hand)
        seat = env.possible_agents[hand % 2]  # the policy's seat alternates
        for agent in (policy, opponent):
            getattr(agent, "reset", lambda: None)()
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if name != seat:
                env.step(opponent.act(obs))
                continue
            action = policy.act(obs)
            if int(np.sum(obs["action_mask"])) > 1:
                values = judge_.action_values(obs)
                best = max(values.values())
                rows[phase(env.unwrapped.position())].append((values[action] >= best - 1e-9, best - values[action]))
            env.step(action)
    result = {"hands": hands, "phases": {}}
    for p in PHASES:
        agree = [a for a, _ in rows[p]]
        cost = [c for _, c in rows[p]]
        result["phases"][p] = {"decisions": len(rows[p]), "agree": float(np.mean(agree)) if agree else None,
                               "cost_per_hand": float(np.sum(cost)) / hands}
    return result


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("policy", help="a registered agent name (trained-long) or a .pt checkpoint")
    p.add_argument("--hands", type=int, default=200, help="hands played (default: 200)")
    p.add_argument("--seed", type=int, default=2026, help="seed of the deals and the two experts (default: 2026)")
    harness.json_option(p)
    args = p.parse_args(argv)
    if args.hands < 1:
        p.error("--hands must be >= 1")
    try:
        out = judge(args.policy, args.hands, args.seed)
    except ValueError as e:  # an unknown agent or a checkpoint that does not load
        p.error(str(e))
    print(f"{args.policy} against expert, {args.hands} hands: its decisions judged by a second expert")
    print(f"{'phase':<22}{'decisions':>10}{'agrees':>9}{'cost (game points/hand)':>26}")
    for name, r in out["phases"].items():
        agree = "n/a" if r["agree"] is None else f"{r['agree']:.1%}"
        print(f"{name:<22}{r['decisions']:>10}{agree:>9}{r['cost_per_hand']:>26.4f}")
    total = sum(r["cost_per_hand"] for r in out["phases"].values())
    print(f"{'all':<22}{sum(r['decisions'] for r in out['phases'].values()):>10}{'':>9}{total:>26.4f}")
    out["cost_per_hand"] = total
    if args.json:
        try:
            harness.write_json(args.json, {**out, "policy": args.policy, "hands": args.hands, "seed": args.seed})
        except OSError as e:  # the table is printed above; the file could not be written
            raise SystemExit(f"policy_vs_expert.py: --json {args.json}: {e.strerror or e}: the results are printed "
                             "above") from None
    return out


if __name__ == "__main__":
    main()
