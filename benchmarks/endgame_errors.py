"""How often a trained policy misses an exactly best action once every card is known, in self-play and against a
uniformly random player.

Run:

    bash scripts/bootstrap.sh python benchmarks/endgame_errors.py --policies trained-schnapsen10 runs/X/policy.pt \\
        --ruleset schnapsen10 --json benchmarks/endgame_errors_schnapsen10.json

Each policy plays ``--hands`` hands (``--num-envs`` at a time in a vector env, the deals from ``--seed``) twice:
against itself (its masked softmax, sampled, both seats) and, as seat 0, against a player that draws each of its
moves uniformly from the legal ones. At every decision of the policy where the stock is exhausted (never closed),
so that each player can tell the other's hand (RULES.md R27), and there is more than one legal action, the compiled
solver (:meth:`agents.search.solver_core.CoreSolver.best_action_bits`) gives the set of exactly best actions to the
end of the hand, and the policy's argmax (its move as ``PolicyAgent`` plays) is counted as a miss when it is not in
that set. A row per policy and opponent gives the decisions, the misses and the miss rate with its 95% Wilson
interval (scipy).

What it shows: the endgame teacher (``train.py --endgame-teacher-coef``) labels the positions the samplers visit;
a policy can fit those and still err in the positions a better opponent leads it to, which is what an exact best
response finds (``benchmarks/exploitability.py``) and what ``train.py --random-prob`` adds to the training data.
Bad input (an unknown policy, a policy of another ruleset, a count out of range, a --json path that cannot be
written) is one line and exit 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

from schnapsen_env.ruleset import RULESETS, RuleSet  # noqa: E402

OPPONENTS = ("self-play", "random")


def endgame_misses(model, rules: RuleSet, opponent: str, hands: int, num_envs: int, seed: int) -> dict:
    """Play ``hands`` hands of ``model`` against ``opponent`` (:data:`OPPONENTS`) and count its exhausted-stock
    decisions with a choice and the misses of its argmax (module docstring).

    Returns:
        ``{"opponent", "hands", "decisions", "misses", "rate", "ci"}``, ``ci`` the 95% Wilson interval of the rate.
    """
    import torch
    from scipy.stats import binomtest

    from agents.learned.policy_net import masked_logits
    from agents.search.solver_core import CoreSolver
    from agents.training.self_play import gumbel_noise, uniform_actions
    from schnapsen_env.state_layout import F
    from schnapsen_env.vector import SchnapsenVectorEnv

    rng = np.random.default_rng(seed)
    knobs = {k: v for k, v in rules.to_dict().items() if k != "ruleset"}
    venv = SchnapsenVectorEnv(num_envs, ruleset=rules.name, **knobs)
    obs, masks, to_move = venv.reset(seed=seed)[:3]
    solver = CoreSolver(rules)
    decisions = misses = done = 0
    while done < hands:
        with torch.no_grad():
            logits = masked_logits(model.act_logits(torch.from_numpy(obs)).float(),
                                   torch.from_numpy(masks.astype(bool)))
        greedy = logits.argmax(dim=1).numpy()
        sampled = (logits + gumbel_noise(rng, tuple(logits.shape))).argmax(dim=1).numpy()
        policy_moves = np.ones(num_envs, bool) if opponent == "self-play" else to_move == 0
        st = venv.state_arrays
        known = (st[:, F.stock_top] == st[:, F.stock_end]) & (st[:, F.closed_by] < 0)
        rows = np.flatnonzero(policy_moves & known & (masks.sum(axis=1) > 1))
        if rows.size:
            best = solver.best_action_bits(st, rows)
            misses += int((((best >> greedy[rows]) & 1) == 0).sum())
            decisions += int(rows.size)
        actions = sampled.astype(np.int64)
        if opponent == "random":
            other = np.flatnonzero(~policy_moves)
            actions[other] = uniform_actions(rng, masks[other])
        obs, masks, to_move, _, dones, _ = venv.step(actions)
        done += int(dones.sum())
    ci = binomtest(misses, decisions).proportion_ci(method="wilson") if decisions else None
    return {"opponent": opponent, "hands": done, "decisions": decisions, "misses": misses,
            "rate": misses / decisions if decisions else None, "ci": [ci.low, ci.high] if ci else None}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", required=True, metavar="POLICY",
                        help="shipped policies' names or train.py .pt files of --ruleset")
    parser.add_argument("--ruleset", default="schnapsen10", choices=sorted(RULESETS), help="ruleset (schnapsen10)")
    parser.add_argument("--hands", type=int, default=20_000, help="hands per policy and opponent (20000)")
    parser.add_argument("--num-envs", type=int, default=256, help="hands played at a time (256)")
    parser.add_argument("--seed", type=int, default=3, help="seed of the deals and the moves (3)")
    harness.json_option(parser)
    args = parser.parse_args(argv)
    if not 1 <= args.hands <= 10_000_000:
        parser.error(f"--hands must be from 1 to 10,000,000, got {args.hands}")
    if not 1 <= args.num_envs <= 65_536:
        parser.error(f"--num-envs must be from 1 to 65,536, got {args.num_envs}")
    harness.check_json(parser, args)

    import torch

    from agents.learned.data import SHIPPED_BY_NAME
    from agents.learned.policy_net import load_policy

    torch.set_num_threads(1)
    rules = RuleSet.make(args.ruleset)
    models = {}
    for name in args.policies:  # every policy checked before the minutes of play
        shipped = SHIPPED_BY_NAME.get(name)
        if shipped is None and not Path(name).is_file():
            parser.error(f"--policies {name}: no such file and no shipped policy of that name: expected a policy.pt "
                         f"written by train.py or one of {', '.join(sorted(SHIPPED_BY_NAME))}")
        try:
            models[name] = load_policy(shipped.path if shipped else name, args.ruleset)[0]
        except Exception as e:  # CheckpointError and ValueError name the file and the fault
            parser.error(f"--policies {name}: {str(e).splitlines()[0]}")
    print(f"{'policy':<40}{'opponent':<12}{'decisions':>11}{'misses':>9}{'rate':>9}  95% CI")
    rows = []
    for name, model in models.items():
        for opponent in OPPONENTS:
            t = time.perf_counter()
            row = {"policy": name, **endgame_misses(model, rules, opponent, args.hands, args.num_envs, args.seed),
                   "seconds": time.perf_counter() - t}
            rows.append(row)
            ci = f"[{row['ci'][0]:.4f}, {row['ci'][1]:.4f}]" if row["ci"] else "-"
            rate = f"{row['rate']:.4f}" if row["rate"] is not None else "-"
            print(f"{name:<40}{opponent:<12}{row['decisions']:>11,}{row['misses']:>9,}{rate:>9}  {ci}", flush=True)
    if args.json:
        harness.write_json(args.json, {"ruleset": args.ruleset, "hands": args.hands, "seed": args.seed, "rows": rows})
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
