"""Trainer throughput: this checkout's ``train.py`` (sampler processes and a learner) against a recorded commit's
single-process trainer, and the sampler rate of 1 and 2 Ray sampler actors.

Run:

    bash scripts/bootstrap.sh python benchmarks/trainer.py                       # peer: commit b341ce3
    bash scripts/bootstrap.sh --extras rllib python benchmarks/trainer.py --ray  # also Ray actors, 1 and 2
    bash scripts/bootstrap.sh python benchmarks/trainer.py --peer 6e744c5 --peer-like-ours  # a change, A/B
    bash scripts/bootstrap.sh python benchmarks/trainer.py --ceiling   # also the update alone: the ceiling here

Both trainers run the network of the peer's default, 256 x 2 (`--hidden` sets another width for both; `train.py`'s own default is 128), the batch (16,384 decisions), the minibatch (2,048),
the epochs (4) and the opponent mix, with 256 hands in flight in all (the peer's ``--num-envs 256``; ours: 2
samplers x 128), no evaluation; ours also with its defaults beyond the peer's (``--precision auto``, the endgame
teacher), and ``--variants`` adds rows for ours in float32, ours without the teacher and ours
without the overlap of sampling and update (``--no-overlap-sampling``). The peer's trainer (``train.py``, ``agents`` and ``schnapsen_env`` of the commit,
taken with ``git archive``, so this needs a clone with history) runs as it shipped: one process, one torch thread.
Each measurement is a fresh subprocess training ``--updates`` PPO updates (default 6) after a warm-up run of each
tree that fills its numba cache; the rate is learner decisions per second of the training loop, as each trainer
reports it (``steps_per_second``: start-up is not counted). Rounds are interleaved (peer, ours, peer, ours, ...);
the table gives each row's **median** over ``--rounds`` (default 3) with its minimum and maximum, and the ratio of
the medians with the range of the per-round ratios.

``--ray``: ours with the samplers as Ray actors on a local Ray (``--ray-address local``), 1 and then 2 actors of
128 hands each; the **sampler rate** is the decisions the actors played per second of sampling (the
``sampling_seconds`` of the summary: the learner's update is not counted, as it does not depend on the actors;
with ``--no-overlap-sampling``, so that the actors do not sample during the update, which that figure would not
count).

``--ceiling``: this checkout's PPO update alone (``train.ppo_update`` with the torch threads ours' learner takes
beside its 2 samplers, the cores they leave free, at least 1: one on a 2-core machine; ``--updates`` updates of one
batch that a sampler of the same recipe played first, nothing else running), as a rate in the same unit. Our
learner updates while the samplers play, so no arrangement of the samplers passes this rate on this machine: its
ratio to the peer is the ceiling of ours / peer here.

Goals: ours >= 2.5x the peer's learner decisions/s; 2 Ray sampler actors >= 1.6x the sampler rate of 1.
This file is a script, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's packages, as ours' workers use (not whichever one is installed)
from agents.learned.policy_net import native_bf16  # noqa: E402
from agents.training.recipe import cores  # noqa: E402
from schnapsen_env.files import check_output_file  # noqa: E402

sys.path.append(str(Path(__file__).resolve().parent))  # the shared harness, however this file is loaded
import harness  # noqa: E402

GOAL_TRAINER = 2.5
GOAL_RAY = 1.6
#: What each trainer runs, besides the defaults they share.
COMMON = dict(eval_every=0, final_eval_deals=0, progress=False, tensorboard=False, run_name="bench")
#: The tree's train.py is a script, not an installed module: the workers load it from its file (and its packages
#: from the tree, first on the path).
LOAD_TRAIN = """
import importlib.util, sys
sys.path.insert(0, {tree!r})
spec = importlib.util.spec_from_file_location("train", {tree!r} + "/train.py")
train = sys.modules["train"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(train)
"""
WORKER = LOAD_TRAIN + """
import json, tempfile
kw = json.loads({kw!r})
with tempfile.TemporaryDirectory() as tmp:
    out = train.main(train.Args(run_dir=tmp, **kw))
print("RESULT " + json.dumps({{k: out.get(k) for k in ("steps", "steps_per_second", "sampling_seconds", "sampler_decisions")}}))
"""
#: --ceiling: this checkout's PPO update alone (train.ppo_update on --threads), on one batch that a sampler of the
#: same recipe played first (not timed); the rate is the batch's decisions times the updates over their seconds.
WORKER_UPDATE = LOAD_TRAIN + """
import json, time
import numpy as np, torch
from agents.learned.policy_net import ActorCritic, resolve_precision
from agents.training.recipe import rules_of
from agents.training.self_play import Sampler, batch_tensors, sampler_kwargs
from schnapsen_env.encoding import obs_size
args = train.Args(**json.loads({kw!r}))
args.precision = resolve_precision(args.precision)
torch.set_num_threads(args.threads)
rules = rules_of(args)
model = ActorCritic(obs_size(rules), rules.n_actions, args.hidden, args.layers, canonical_trump=args.canonical_trump,
                    canonical_suits=args.canonical_suits)  # the network train.py builds, its relabelling included
model.precision = args.precision
sampler = Sampler(**sampler_kwargs(args, rules, model.config(), 0), threads=args.threads)
batch, _ = sampler.collect(model.state_dict(), None, args.batch_size)
tensors = batch_tensors(batch, torch.device("cpu"), args.precision, rules.n_actions, False)
optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=1e-5, fused=True)
rng = np.random.default_rng(args.seed)
train.ppo_update(model, optimizer, tensors, rng, args)  # warm-up
start = time.perf_counter()
for _ in range({updates}):
    train.ppo_update(model, optimizer, tensors, rng, args)
rate = len(tensors["actions"]) * {updates} / (time.perf_counter() - start)
print("RESULT " + json.dumps({{"steps_per_second": rate}}))
"""


def check_flags(tree: Path, kw: dict, commit: str) -> None:
    """Exit with one line when the trainer in ``tree`` lacks an argument ``kw`` sets (``--peer-like-ours`` with a
    peer from before the sampler processes), instead of the worker's TypeError."""
    code = "import dataclasses, json, train; print(json.dumps([f.name for f in dataclasses.fields(train.Args)]))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                          capture_output=True, text=True)
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        sys.exit(f"trainer.py: error: the train.py of commit {commit!r} does not import: {last}")
    missing = sorted(set(kw) - set(json.loads(proc.stdout.splitlines()[-1])))
    if missing:
        flags = ", ".join("--" + k.replace("_", "-") for k in missing)
        sys.exit(f"trainer.py: error: the train.py of commit {commit!r} has no {flags}: expected a commit with "
                 "sampler processes (bcf5418 or later) for --peer-like-ours, or leave that flag out")


def run(tree: Path, kw: dict, updates: int | None = None) -> dict:
    """One training run in a fresh subprocess with ``tree`` first on the path; its summary's figures. With
    ``updates``: that many PPO updates alone (:data:`WORKER_UPDATE`), its rate as ``steps_per_second``."""
    code = (WORKER.format(tree=str(tree), kw=json.dumps(kw)) if updates is None
            else WORKER_UPDATE.format(tree=str(tree), kw=json.dumps(kw), updates=updates))
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode or not lines:
        sys.exit(f"trainer.py: error: a run in {tree} failed:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def machine() -> str:
    """The CPU this runs on, its cores and whether it multiplies bfloat16 in hardware (what ``--precision auto``
    picks): the trainer's rate depends on all three (the README gives figures from two machines)."""
    bf16 = "bfloat16 in hardware" if native_bf16() else "no bfloat16 in hardware: --precision auto is fp32"
    return f"{harness.machine()}, {bf16}"


def row(label: str, values: list[float], unit: str = "decisions/s") -> str:
    med, low, high = harness.spread(values)
    return f"{label:<44}{med:>12,.0f}  ({low:,.0f}..{high:,.0f}) {unit}"


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--peer", default="b341ce3", help="commit of the peer trainer (default: b341ce3)")
    p.add_argument("--updates", type=int, default=6, help="PPO updates per measurement (default: 6)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default: 3)")
    p.add_argument("--ray", action="store_true", help="also measure 1 and 2 Ray sampler actors")
    p.add_argument("--variants", action="store_true",
                   help="also measure ours with --precision fp32, with --endgame-teacher-coef 0 and with "
                        "--no-overlap-sampling")
    p.add_argument("--ceiling", action="store_true",
                   help="also time this checkout's PPO update alone, on the threads ours' learner takes, with nothing "
                        "else running: the learner rate that no arrangement of the samplers can pass on this machine")
    p.add_argument("--peer-like-ours", action="store_true",
                   help="run the peer with ours' flags (2 samplers x 128 hands) instead of the single-process "
                        "trainer's (one process, 256 hands): for a peer commit that has sampler processes "
                        "(bcf5418 and later), to measure a change of this checkout against it")
    p.add_argument("--hidden", type=int, default=256,
                   help="network width of both trees (default: 256, the peer's default; train.py's own is 128)")
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    if args.updates < 1 or args.rounds < 1:
        p.error("--updates and --rounds must be >= 1")
    if args.hidden < 1:
        sys.exit(f"trainer.py: error: --hidden must be >= 1 (a layer width), got {args.hidden}")
    if args.json:
        try:
            check_output_file(args.json, f"--json {args.json!r}")
        except ValueError as e:
            p.error(str(e))
    batch = 16384
    common = dict(COMMON, hidden=args.hidden)
    steps = batch * args.updates
    # ours' learner updates on the cores its 2 samplers leave free, at least 1 (train.py's --threads default)
    ceiling_threads = max(1, cores() - 2)
    print(f"machine: {machine()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            peer = harness.peer_tree(args.peer, ["train.py", "agents", "schnapsen_env"], Path(tmp) / "peer")
        except harness.PeerError as e:
            sys.exit(f"trainer.py: error: {e}")
        peer_kw = (dict(common, total_steps=steps, num_envs=128, samplers=2) if args.peer_like_ours
                   else dict(common, total_steps=steps, num_envs=256))
        check_flags(peer, peer_kw, args.peer)
        configs = {
            "peer": (peer, peer_kw),
            "ours": (ROOT, dict(common, total_steps=steps, num_envs=128, samplers=2)),
        }
        if args.variants:  # where the gain comes from: ours in float32, and ours without the endgame teacher
            configs["ours_fp32"] = (ROOT, dict(common, total_steps=steps, num_envs=128, samplers=2, precision="fp32"))
            configs["ours_no_teacher"] = (ROOT, dict(common, total_steps=steps, num_envs=128, samplers=2,
                                                     endgame_teacher_coef=0.0))
            configs["ours_no_overlap"] = (ROOT, dict(common, total_steps=steps, num_envs=128, samplers=2,
                                                     overlap_sampling=False))
        if args.ray:
            for n in (1, 2):
                configs[f"ray{n}"] = (ROOT, dict(common, total_steps=steps, num_envs=128, samplers=n,
                                                 ray_address="local", overlap_sampling=False))
        if args.ceiling:  # the update with as many threads as ours' learner takes beside its 2 samplers
            configs["update_alone"] = (ROOT, dict(common, samplers=1, num_envs=256, threads=ceiling_threads))
        for key, (tree, kw) in configs.items():  # warm-up: numba caches of both trees, imports
            if key != "update_alone":
                run(tree, {**kw, "total_steps": 2000, "batch_size": 1024, "minibatch_size": 512})
        rounds: dict[str, list[dict]] = {k: [] for k in configs}
        for r in range(args.rounds):
            for key, (tree, kw) in configs.items():
                rounds[key].append(run(tree, kw, args.updates if key == "update_alone" else None))
                print(f"round {r + 1} {key}: {rounds[key][-1]['steps_per_second']:,.0f} decisions/s", flush=True)
    rate = {k: [x["steps_per_second"] for x in v] for k, v in rounds.items()}
    print(f"\nmedian of {args.rounds} interleaved rounds, {args.updates} updates of {batch:,} decisions each")
    print(row(f"peer {args.peer} " + ("(2 samplers, as ours)" if args.peer_like_ours else "(1 process, 1 thread)"),
              rate["peer"]))
    print(row("ours (2 samplers, overlapped learner)", rate["ours"]))
    ratio, low, high = harness.ratio(rate["ours"], rate["peer"])
    print(f"ours / peer: {ratio:.2f}x (per round {low:.2f}x..{high:.2f}x; goal {GOAL_TRAINER}x)")
    out = {"peer": args.peer, "peer_like_ours": args.peer_like_ours, "updates": args.updates, "rounds": args.rounds,
           "batch": batch, "hidden": args.hidden, "machine": machine(), "rate": rate, "ratio": ratio}
    for key, label in (("ours_fp32", "ours, --precision fp32"), ("ours_no_teacher", "ours, --endgame-teacher-coef 0"),
                       ("ours_no_overlap", "ours, --no-overlap-sampling")):
        if key in rate:
            print(row(label, rate[key]))
            print(f"  {label} / peer: {np.median(rate[key]) / np.median(rate['peer']):.2f}x")
    if args.ceiling:
        label = f"ours, the PPO update alone ({ceiling_threads} thread{'s' * (ceiling_threads > 1)})"
        ceiling = float(np.median(rate["update_alone"]) / np.median(rate["peer"]))
        print(row(label, rate["update_alone"]))
        print(f"  {label} / peer: {ceiling:.2f}x (the ceiling of ours / peer on this machine)")
        out.update(ceiling=ceiling, ceiling_threads=ceiling_threads)
    if args.ray:
        sampler_rate = {k: [sum(x["sampler_decisions"]) / x["sampling_seconds"] for x in rounds[k]]
                        for k in ("ray1", "ray2")}
        for k in ("ray1", "ray2"):
            print(row(f"Ray, {k[-1]} sampler actor(s): sampler rate", sampler_rate[k]))
            print(row(f"Ray, {k[-1]} sampler actor(s): training rate", rate[k]))
        scale = float(np.median(sampler_rate["ray2"]) / np.median(sampler_rate["ray1"]))
        print(f"2 actors / 1 actor, sampler rate: {scale:.2f}x (goal {GOAL_RAY}x)")
        out.update(sampler_rate=sampler_rate, ray_scale=scale)
    if args.json:
        figures = {**rate, **{f"{k}_sampler": v for k, v in out.get("sampler_rate", {}).items()}}
        out["rows"] = harness.rows_figures(figures)
        out["ratios"] = {f"{k} / peer": harness.ratio_figures(rate[k], rate["peer"],
                                                              GOAL_TRAINER if k == "ours" else None)
                         for k in rate if k != "peer" and not k.startswith("ray")}
        if args.ray:
            out["ratios"]["ray2 / ray1 sampler rate"] = harness.ratio_figures(
                out["sampler_rate"]["ray2"], out["sampler_rate"]["ray1"], GOAL_RAY)
        out["title"] = (f"learner decisions/s, median of {args.rounds} interleaved rounds, {args.updates} updates of "
                        f"{batch:,} decisions each, a {args.hidden}-wide network (peer: commit {args.peer})")
        out["unit"] = "decisions/s"
        harness.write_json(args.json, out, out["machine"])
    return out


if __name__ == "__main__":
    main()
