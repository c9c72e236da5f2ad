"""Ray RLlib's PPO on the Schnapsen PettingZoo env: the same self-play recipe as ``train.py``, for users whose
tooling is RLlib (CleanRL keeps one file per variant; this is that file).

    bash scripts/bootstrap.sh --extras rllib python train_rllib.py --total-steps 300000 --env-runners 2
    python train_rllib.py --ray-address auto --env-runners 30      # on a Ray cluster

``schnapsen_v0`` through RLlib's PettingZoo wrapper, the masked :class:`agents.training.rllib_module.MaskedActorCriticModule`
shared by both seats (module "main"), frozen snapshots of it as an opponent pool (modules "opponent_<k>", refreshed
every ``pool_every`` iterations) plus the scripted heuristic, mapped per hand by the policy mapping function.
Writes ``policy.pt`` (the project's checkpoint format, :mod:`agents.learned.policy_net`, so ``PolicyAgent`` and the arena
load it) and ``rllib_checkpoint/`` (RLlib's own; ``agents.training.rllib_module.load_rllib_policy`` reads it).

**Throughput.** RLlib steps one PettingZoo env per Python call in each env runner, so it samples far fewer decisions
per second than ``train.py``'s samplers, which step the compiled vector env (the README's "Ray RLlib" section has
the measured figures; ``benchmarks/rllib.py`` reproduces them). Prefer ``train.py --ray-address`` to scale out;
use this file when your pipeline is RLlib's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from agents.learned.policy_net import ActorCritic, save_policy
from agents.training.command_line import cli
from agents.training.recipe import DEFAULT_TOTAL_STEPS, PPOArgs, cores, rules_of, validate_recipe
from agents.training.reporting import close_writer, evaluate, evaluation_table, tensorboard_writer
from schnapsen_env.encoding import obs_size
from schnapsen_env.files import atomic_write, check_output_folder


@dataclass
class RLlibArgs(PPOArgs):
    """PPO self-play for Schnapsen on Ray RLlib (extra "rllib"). --total-steps counts env steps (decisions of both
    seats)."""

    env_runners: int = 1
    """Ray env runners (sampling processes, one CPU each; at most the CPUs of a local Ray); 0 samples in the
    driver"""
    envs_per_runner: int = 8
    """env copies stepped by each runner (batched through the module; README: throughput)"""
    ray_address: str | None = None
    """address of a running Ray cluster (e.g. "auto" or "10.0.0.1:6379"); default: start a local Ray"""


def validate(args: RLlibArgs) -> None:
    """:func:`agents.training.recipe.validate_recipe` plus this file's flags. Raises ValueError naming the flag and
    what it takes."""
    validate_recipe(args)
    if args.env_runners < 0 or args.envs_per_runner < 1:
        raise ValueError(f"--env-runners must be >= 0 and --envs-per-runner >= 1, got {args.env_runners} and "
                         f"{args.envs_per_runner}")
    if args.minibatch_size > args.batch_size:
        raise ValueError(f"--minibatch-size ({args.minibatch_size}) must not exceed --batch-size "
                         f"({args.batch_size})")
    if args.update_epochs < 1:
        raise ValueError(f"--update-epochs must be >= 1 with RLlib, got {args.update_epochs}")
    cpus = os.cpu_count() or 1
    if args.ray_address is None and args.env_runners > cpus:
        raise ValueError(f"--env-runners {args.env_runners} needs {args.env_runners} CPUs, but the local Ray on "
                         f"this machine has {cpus}: use at most {cpus}, or --ray-address for a cluster")


def main(args: RLlibArgs) -> dict:
    """The same self-play recipe on Ray RLlib's PPO (new API stack): ``schnapsen_v0`` through RLlib's
    PettingZoo wrapper, the masked :class:`agents.training.rllib_module.MaskedActorCriticModule` shared by both seats
    (module "main"), frozen snapshots of it as an opponent pool (modules "opponent_<k>", refreshed every
    ``pool_every`` iterations) plus the scripted heuristic, mapped per hand by the policy mapping function.
    Writes ``policy.pt`` (the project's checkpoint format, so ``PolicyAgent`` and the arena load it) and
    ``rllib_checkpoint/`` (RLlib's own; ``agents.training.rllib_module.load_rllib_policy`` reads it)."""
    if args.total_steps is None:
        args = dataclasses.replace(args, total_steps=DEFAULT_TOTAL_STEPS)
    validate(args)
    args = dataclasses.replace(args, threads=args.threads or cores())
    try:
        import ray
        from ray.rllib.algorithms.ppo import PPOConfig
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec
        from ray.tune.registry import register_env
    except ImportError:
        raise ValueError('train_rllib.py needs Ray RLlib: pip install -e ".[rllib]" '
                         '(or: bash scripts/bootstrap.sh --extras rllib python train_rllib.py)') from None
    from agents.training import rllib_module as rm

    rules = rules_of(args)
    torch.set_num_threads(args.threads)
    run_dir = Path(args.run_dir) / (args.run_name or f"{rules.name}_rllib_s{args.seed}_{time.strftime('%Y%m%d-%H%M%S')}")
    check_output_folder(run_dir, f"the run folder {str(run_dir)!r} (--run-dir, --run-name)")
    torch.manual_seed(args.seed)
    started_ray = not ray.is_initialized()
    if started_ray:
        # Worker output (an env runner's traceback, e.g. an IllegalActionError) reaches this console.
        ray.init(address=args.ray_address, include_dashboard=False)
    algo = None
    try:
        register_env("schnapsen_v0", rm.make_env)
        net = {"hidden": args.hidden, "layers": args.layers}
        specs = {rm.MAIN: RLModuleSpec(module_class=rm.MaskedActorCriticModule, model_config=net)}
        specs.update({rm.opponent_id(k): RLModuleSpec(module_class=rm.MaskedActorCriticModule, model_config=net)
                      for k in range(args.pool_size)})
        if args.heuristic_prob > 0:
            specs[rm.HEURISTIC] = RLModuleSpec(module_class=rm.HeuristicModule,
                                               model_config={"seed": args.seed, "rules": rules.to_dict()})
        lr = [[0, args.learning_rate], [args.total_steps, 0.0]] if args.anneal_lr else args.learning_rate
        mapping = rm.make_policy_mapping_fn(args.pool_size, args.pool_prob, args.heuristic_prob, seed=args.seed)
        config = (
            PPOConfig()
            # RLlib's env pre-check steps unmasked random actions, which the strict env refuses by design.
            .environment("schnapsen_v0", env_config={"rules": rules.to_dict()}, disable_env_checking=True)
            .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=args.envs_per_runner)
            .multi_agent(policies=set(specs), policies_to_train=[rm.MAIN], policy_mapping_fn=mapping)
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
            # As the torch backend: no KL penalty (RLlib's default adds one), the same PPO coefficients.
            .training(lr=lr, gamma=args.gamma, lambda_=args.gae_lambda, clip_param=args.clip_coef,
                      entropy_coeff=args.ent_coef, vf_loss_coeff=args.vf_coef, grad_clip=args.max_grad_norm,
                      use_kl_loss=False, train_batch_size_per_learner=args.batch_size,
                      minibatch_size=args.minibatch_size, num_epochs=args.update_epochs)
            .fault_tolerance(restart_failed_env_runners=False)  # an illegal action must stop the run, not be retried
            .debugging(seed=args.seed)
        )
        algo = config.build_algo()
        run_dir.mkdir(parents=True, exist_ok=True)
        print(f"run {run_dir}  rllib  seed {args.seed}  env runners {args.env_runners}  "
              f"rules {json.dumps(rules.to_dict())}", flush=True)

        def snapshot(slots):
            """Copy "main"'s weights into the given opponent slots, on the learner and on every env runner."""
            state = algo.learner_group.get_state(components=f"learner/rl_module/{rm.MAIN}")
            main_state = state["learner"]["rl_module"][rm.MAIN]
            algo.learner_group.foreach_learner(lambda ln: [ln.module[s].set_state(main_state) for s in slots])
            algo.env_runner_group.foreach_env_runner(lambda er: [er.module[s].set_state(main_state) for s in slots],
                                                     local_env_runner=True)

        snapshot([rm.opponent_id(k) for k in range(args.pool_size)])  # the pool starts as the initial policy
        writer = tensorboard_writer(args, rules, run_dir)
        bar = tqdm(total=args.total_steps, disable=not args.progress, unit="step", dynamic_ncols=True)
        steps, it, t_start, module_steps = 0, 0, time.time(), {}
        while steps < args.total_steps:
            result = algo.train()
            it += 1
            new_steps = int(result.get("num_env_steps_sampled_lifetime", steps))
            bar.update(max(0, min(new_steps, args.total_steps) - bar.n))
            steps = new_steps
            module_steps = dict(result.get("env_runners", {}).get("num_module_steps_sampled_lifetime", module_steps))
            sps = steps / max(1e-9, time.time() - t_start)
            bar.set_postfix_str(f"{sps:,.0f} steps/s")
            if it % args.pool_every == 0 and args.pool_size:
                snapshot([rm.opponent_id((it // args.pool_every - 1) % args.pool_size)])
            if writer is not None:
                writer.add_scalar("charts/steps_per_second", sps, steps)
                learner = result.get("learners", {}).get(rm.MAIN, {})
                for key in ("policy_loss", "vf_loss", "entropy", "vf_explained_var"):
                    if key in learner:
                        writer.add_scalar(f"losses/{key}", float(learner[key]), steps)
            if it % args.checkpoint_every == 0:
                algo.save_to_path(str((run_dir / "rllib_checkpoint").resolve()))
        bar.close()
        sps = steps / max(1e-9, time.time() - t_start)
        print(f"trained {steps:,} env steps in {it} iterations, {sps:,.0f} env steps/s", flush=True)
        algo.save_to_path(str((run_dir / "rllib_checkpoint").resolve()))
        state = algo.learner_group.get_state(components=f"learner/rl_module/{rm.MAIN}")["learner"]["rl_module"][rm.MAIN]
        model = ActorCritic(obs_size(rules), rules.n_actions, args.hidden, args.layers)
        model.load_state_dict({k.removeprefix("net."): torch.as_tensor(v) for k, v in state.items()})
        save_policy(run_dir / "policy.pt", model, rules, args)
    finally:
        if algo is not None:
            algo.stop()
        if started_ray:
            ray.shutdown()
    summary = {"run_dir": str(run_dir), "steps": steps, "iterations": it,
               "steps_per_second": sps, "env_runners": args.env_runners, "envs_per_runner": args.envs_per_runner,
               "module_steps": {k: int(v) for k, v in module_steps.items()}, "evaluation": {}}
    if args.final_eval_deals:
        res = evaluate(model, rules, args, list(args.final_eval_opponents), args.final_eval_deals,
                       seed=999_999, run_dir=run_dir)
        summary["evaluation"] = {k: v.to_dict() for k, v in res.items()}
        print(evaluation_table(run_dir / "policy.pt", res), flush=True)
    atomic_write(run_dir / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
    close_writer(writer)
    return summary


if __name__ == "__main__":
    sys.exit(cli(None, RLlibArgs, "train_rllib.py", main))
