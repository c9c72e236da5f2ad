"""PPO self-play for Schnapsen, one file read top to bottom (in the manner of CleanRL's ppo.py).

    python train.py --help
    python train.py                          # default run: about 15 minutes on 2 CPU cores
    python train.py --total-steps 200000     # a quick run
    python train.py --resume runs/NAME/checkpoint.pt
    python train.py --backend rllib --env-runners 2   # the same recipe on Ray RLlib (extra "rllib")

* PPO (Schulman et al. 2017) with invalid-action masking by ``-inf`` logits (Huang & Ontañón 2022),
  generalised advantage estimation (Schulman et al. 2016).
* Self-play: one network plays both seats of ``num_envs`` hands of the vectorised env
  (:class:`schnapsen_env.vector.SchnapsenVectorEnv`). With probability ``pool_prob`` a hand instead
  pits it against an **opponent pool** of earlier snapshots (one seat, drawn at the hand's start),
  so the policy does not chase its own tail. ``heuristic_prob`` adds hands against the scripted
  ``HeuristicAgent`` to that mix.
* Each seat's decisions in one hand form a chain; the only reward is the hand's game points at its
  end, so advantages are computed per chain when the hand ends (no truncated chains, no bootstrap).
* Optional privileged critic (``--privileged-critic``): the value head also sees the env's
  omniscient ``state()`` vector plus the seat, as in PerfectDou (Yang et al. 2022); the policy never does.
* Periodic evaluation on duplicate deals through the arena (:mod:`agents.arena`) against
  ``random`` and ``heuristic`` (and ``rollout`` every ``eval_rollout_every`` evaluations).
* Checkpoints are written atomically with the arguments, versions, rules and observation layout;
  ``--resume`` continues exactly where the run stopped (env hands, chains, generators, optimiser).
* ``--backend rllib`` (section at the end, :func:`main_rllib`): Ray RLlib's PPO on the PettingZoo env
  for users who train on a Ray cluster; its ``policy.pt`` has the same format.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import platform
import re
import sys
import time
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

import numpy as np
import torch
import tyro
from tqdm import tqdm

from agents.checkpoint import CheckpointError, load_checkpoint, save_atomic
from agents.policy_net import ActorCritic, masked_entropy, masked_log_probs
from schnapsen_env import RuleSet
from schnapsen_env.encoding import layout_signature, obs_size, state_size
from schnapsen_env.argparsing import fits_hint
from schnapsen_env.files import (WriteError, atomic_write, check_output_folder, describe_os_error,
                                 remove_stale_temps)
from schnapsen_env.vector import SchnapsenVectorEnv


@dataclass
class Args:
    """PPO self-play trainer for Schnapsen / Sixty-Six."""

    seed: int = 1
    """seed of every generator (env deals, sampling, network init, opponent pool)"""
    total_steps: Optional[int] = None
    """learner decisions to train on (each is one action of the trained network; with --backend rllib: env
    steps, the decisions of both seats); default 6,000,000, or the
    resumed run's value"""
    ruleset: str = "schnapsen20"
    """"schnapsen20" or "sixtysix24" (default rule knobs)"""
    device: str = "cpu"
    """torch device: "cpu", or "cuda" when present"""
    threads: int = 1
    """torch CPU threads (1 is the safe choice on 2 cores: 7.5k steps/s idle; 2 threads give 9.4k idle but 1.5k
    as soon as anything else runs)"""
    num_envs: int = 256
    """hands played in parallel"""
    batch_size: int = 16384
    """at least this many finished learner decisions per PPO update (rllib: env steps per training batch)"""
    minibatch_size: int = 2048
    """minibatch size in the PPO epochs"""
    update_epochs: int = 4
    """PPO epochs per update"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0"""
    gamma: float = 1.0
    """discount per decision (hands are short; 1.0 is undiscounted)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_coef: float = 0.2
    """PPO clip range of the probability ratio (and of the value change)"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    hidden: int = 256
    """hidden layer width"""
    layers: int = 2
    """hidden layers in the shared trunk"""
    privileged_critic: bool = False
    """value head also sees the omniscient state vector (PerfectDou-style)"""
    pool_size: int = 10
    """earlier snapshots kept in the opponent pool"""
    pool_every: int = 10
    """updates between snapshots added to the pool"""
    pool_prob: float = 0.3
    """share of hands played against a pool opponent (once the pool is not empty)"""
    heuristic_prob: float = 0.3
    """share of hands played against the scripted HeuristicAgent (one seat), besides the pool"""
    eval_every: int = 60
    """updates between evaluations (0: only the final one)"""
    eval_deals: int = 200
    """duplicate deals (2 hands each) per periodic evaluation and opponent"""
    eval_rollout_every: int = 3
    """also evaluate against "rollout" every N-th periodic evaluation (0: never; it is slower)"""
    final_eval_deals: int = 1000
    """duplicate deals (2 hands each) per opponent in the final evaluation table (0: skip)"""
    final_eval_opponents: tuple[str, ...] = ("random", "heuristic")
    """opponents of the final evaluation table"""
    eval_workers: Optional[int] = None
    """processes for evaluation (default: all cores)"""
    checkpoint_every: int = 20
    """updates between checkpoints (the final one is always written)"""
    run_dir: str = "runs"
    """folder of the runs"""
    run_name: Optional[str] = None
    """name of this run (default: ruleset, seed and time)"""
    resume: Optional[str] = None
    """checkpoint to continue from (its arguments are used; --total-steps may extend the run)"""
    stop_after_updates: Optional[int] = None
    """stop (with a checkpoint, without the final evaluation) after this many updates in this invocation,
    for time-boxed jobs; --resume continues the run exactly"""
    tensorboard: bool = True
    """write TensorBoard logs to the run folder"""
    progress: bool = True
    """show a progress bar"""
    backend: Literal["torch", "rllib"] = "torch"
    """"torch": this file's PPO; "rllib": Ray RLlib's PPO on the PettingZoo env (extra "rllib"; see the
    README's Ray section). With rllib, --total-steps counts env steps (decisions of both seats)"""
    env_runners: int = 1
    """rllib: Ray env runners (sampling processes, one CPU each; at most the CPUs of a local Ray); 0 samples in
    the driver"""
    envs_per_runner: int = 8
    """rllib: env copies stepped by each runner (batched through the module: 8 gave 4.6x the steps/s of 1)"""
    ray_address: Optional[str] = None
    """rllib: address of a running Ray cluster (e.g. "auto" or "10.0.0.1:6379"); default: start a local Ray"""


DEFAULT_TOTAL_STEPS = 6_000_000
#: Flags taken from the command line on --resume (the rest come from the checkpoint).
PER_INVOCATION = ("stop_after_updates", "progress", "eval_workers", "device", "threads", "tensorboard",
                  "env_runners", "envs_per_runner", "ray_address")
#: Flags of the torch backend that the rllib backend does not have (it refuses non-default values).
TORCH_ONLY = ("privileged_critic", "resume", "stop_after_updates", "num_envs", "eval_every", "eval_deals",
              "eval_rollout_every", "device")
#: Flags of the rllib backend (the torch backend refuses non-default values).
RLLIB_ONLY = ("env_runners", "envs_per_runner", "ray_address")


#: Files of a run folder written atomically (their stale temporary files are removed when a run starts).
RUN_FILES = ("checkpoint.pt", "policy.pt", "eval_policy.pt", "summary.json")
#: Largest seed: torch and numpy take seeds in [0, 2**63 - 1] alike.
MAX_SEED = 2 ** 63 - 1
#: Largest --threads (torch's intra-op threads).
MAX_THREADS = 1024
#: Bytes of memory per env slot besides its buffer rows: the compiled state row, observation, mask, and its
#: position dict in checkpoints (measured about 2 KB; rounded up).
_BYTES_PER_ENV = 4096


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def memory_estimate(args: Args) -> tuple[int, int]:
    """Bytes the run needs, roughly: ``(hands and rollout buffer, networks)``.

    The networks: the model, its gradients, Adam's two moments, the pool opponent, ``pool_size`` snapshots and a
    copy while checkpointing (float32 each), plus the activations of one minibatch. The hands: the buffer rows
    (``batch_size + 40 * num_envs`` decisions of observation, mask and critic input) and the env slots.
    """
    rules = RuleSet.make(args.ruleset)
    n_obs, n_act = obs_size(rules), rules.n_actions
    crit = state_size(rules) + 2 if args.privileged_critic else 0
    h, layers = args.hidden, args.layers
    params = n_obs * h + h + (layers - 1) * (h * h + h) + h * n_act + n_act
    params += ((h + crit) * h + h + h + 1) if crit else h + 1
    rows = args.batch_size + args.num_envs * 40
    nets = 4 * params * (7 + args.pool_size) + 4 * 3 * min(args.minibatch_size, rows) * h * (layers + 2)
    hands = rows * (4 * n_obs + n_act + 4 * max(crit, 1) + 28) + args.num_envs * _BYTES_PER_ENV
    return hands, nets


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not on this platform
        return None


def check_run_name(name: str | None) -> None:
    """A run name is one plain folder name inside --run-dir.

    Raises:
        ValueError: a name with a path separator, ``.``/``..``, a NUL, or empty.
    """
    if name is None:
        return
    seps = [os.sep] + ([os.altsep] if os.altsep else []) + ["/"]
    if name in ("", ".", "..") or any(sep in name for sep in seps) or "\0" in name:
        raise ValueError(f"--run-name {name!r} is not a plain folder name: expected a name without '/' that is "
                         "not '.' or '..' (the run folder stays inside --run-dir)")


def validate(args: Args) -> None:
    """Check the arguments before any work. Raises ValueError naming the flag, its value and what it takes: values
    out of range, sizes this machine's memory cannot hold (:func:`memory_estimate`), a run name leaving --run-dir."""
    from agents.arena import MAX_DEALS, MAX_WORKERS

    positive = ("total_steps", "num_envs", "batch_size", "minibatch_size", "threads", "pool_size", "pool_every",
                "checkpoint_every", "hidden", "layers")
    for name in positive:
        if getattr(args, name) < 1:
            raise ValueError(f"{_flag(name)} must be >= 1, got {getattr(args, name)}")
    for name in ("update_epochs", "eval_every", "eval_deals", "eval_rollout_every", "final_eval_deals"):
        if getattr(args, name) < 0:
            raise ValueError(f"{_flag(name)} must be >= 0, got {getattr(args, name)}")
    if not 0 <= args.seed <= MAX_SEED:
        raise ValueError(f"--seed must be an int from 0 to 2**63 - 1, got {args.seed}")
    if args.threads > MAX_THREADS:
        raise ValueError(f"--threads must be at most {MAX_THREADS}, got {args.threads}")
    for name in ("eval_deals", "final_eval_deals"):
        if getattr(args, name) > MAX_DEALS:
            raise ValueError(f"{_flag(name)} must be at most {MAX_DEALS:,}, got {getattr(args, name)}")
    if args.eval_workers is not None and not 1 <= args.eval_workers <= MAX_WORKERS:
        raise ValueError(f"--eval-workers must be from 1 to {MAX_WORKERS}, got {args.eval_workers}")
    check_run_name(args.run_name)
    if not args.run_dir:
        raise ValueError("--run-dir is empty: expected a folder (default: runs)")
    if args.final_eval_deals and not args.final_eval_opponents:
        raise ValueError("--final-eval-opponents is empty: expected at least one agent (or --final-eval-deals 0)")
    if not (0 <= args.pool_prob <= 1 and 0 <= args.heuristic_prob <= 1 and args.pool_prob + args.heuristic_prob <= 1):
        raise ValueError(f"--pool-prob and --heuristic-prob must lie in [0, 1] with a sum <= 1, got "
                         f"{args.pool_prob} and {args.heuristic_prob}")
    ranges = {"learning_rate": (0, False, None, False), "gamma": (0, False, 1, True), "gae_lambda": (0, True, 1, True),
              "clip_coef": (0, False, None, False), "ent_coef": (0, True, None, False),
              "vf_coef": (0, True, None, False), "max_grad_norm": (0, False, None, False)}
    for name, (lo, lo_in, hi, hi_in) in ranges.items():
        v = getattr(args, name)
        ok = math.isfinite(v) and (v >= lo if lo_in else v > lo) and (hi is None or (v <= hi if hi_in else v < hi))
        if not ok:
            want = f"{'[' if lo_in else '('}{lo}, {hi if hi is not None else 'inf'}{']' if hi_in else ')'}"
            raise ValueError(f"--{name.replace('_', '-')} must be a finite number in {want}, got {v}")
    if args.stop_after_updates is not None and args.stop_after_updates < 1:
        raise ValueError(f"--stop-after-updates must be >= 1, got {args.stop_after_updates}")
    try:
        RuleSet.make(args.ruleset)
    except ValueError as e:  # RulesError names the valid rulesets
        raise ValueError(f"--ruleset: {e}") from None
    try:
        device = torch.device(args.device)
    except RuntimeError:
        raise ValueError(f"--device {args.device!r} is not a torch device: expected 'cpu' or 'cuda'") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda, but torch sees no CUDA device here: use --device cpu")
    if args.env_runners < 0 or args.envs_per_runner < 1:
        raise ValueError(f"--env-runners must be >= 0 and --envs-per-runner >= 1, got {args.env_runners} and "
                         f"{args.envs_per_runner}")
    defaults = Args()
    if args.backend == "rllib":
        for name in TORCH_ONLY:
            if getattr(args, name) != getattr(defaults, name):
                raise ValueError(f"--{name.replace('_', '-')} is a flag of --backend torch; --backend rllib does "
                                 "not support it")
        if args.minibatch_size > args.batch_size:
            raise ValueError(f"--minibatch-size ({args.minibatch_size}) must not exceed --batch-size "
                             f"({args.batch_size})")
        if args.update_epochs < 1:
            raise ValueError(f"--update-epochs must be >= 1 with --backend rllib, got {args.update_epochs}")
        cpus = os.cpu_count() or 1
        if args.ray_address is None and args.env_runners > cpus:
            raise ValueError(f"--env-runners {args.env_runners} needs {args.env_runners} CPUs, but the local Ray on "
                             f"this machine has {cpus}: use at most {cpus}, or --ray-address for a cluster")
    else:
        for name in RLLIB_ONLY:
            if getattr(args, name) != getattr(defaults, name):
                raise ValueError(f"--{name.replace('_', '-')} is a flag of --backend rllib; --backend torch does "
                                 "not support it")
    from agents.specs import resolve_agent

    rules = RuleSet.make(args.ruleset)
    for name in args.final_eval_opponents:
        try:
            resolve_agent(name, rules)
        except ValueError as e:  # it lists the valid names
            raise ValueError(f"--final-eval-opponents: {e}") from None
    total = _physical_memory()
    hands, nets = memory_estimate(args)
    if total is not None and hands + nets > total:
        def gib(n: int) -> str:
            x = n / 2 ** 30
            return f"{x:,.1f} GiB" if x < 1e6 else f"{x:.1e} GiB"

        raise ValueError(f"--num-envs {args.num_envs}, --batch-size {args.batch_size}, --hidden {args.hidden}, "
                         f"--layers {args.layers} and --pool-size {args.pool_size} need about {gib(hands + nets)} of "
                         f"memory ({gib(hands)} for the hands and the rollout buffer, {gib(nets)} for the networks), "
                         f"more than this machine's {gib(total)}: expected smaller values")


# ----------------------------------------------------------------------------------------- PPO pieces
def ppo_losses(new_logp, old_logp, advantages, new_values, old_values, returns, entropy, clip_coef):
    """The PPO loss pieces (all tensors ``(B,)``; returns scalars).

    Returns:
        dict with ``pg_loss`` (clipped surrogate, to minimise), ``v_loss`` (0.5 * max of the clipped
        and unclipped squared value errors), ``entropy`` (mean), ``approx_kl`` ((ratio - 1) - log ratio,
        mean; Schulman's k3 estimator) and ``clipfrac``.
    """
    log_ratio = new_logp - old_logp
    ratio = log_ratio.exp()
    pg1 = -advantages * ratio
    pg2 = -advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
    pg_loss = torch.max(pg1, pg2).mean()
    v_clipped = old_values + torch.clamp(new_values - old_values, -clip_coef, clip_coef)
    v_loss = 0.5 * torch.max((new_values - returns) ** 2, (v_clipped - returns) ** 2).mean()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean()
        clipfrac = ((ratio - 1.0).abs() > clip_coef).float().mean()
    return {"pg_loss": pg_loss, "v_loss": v_loss, "entropy": entropy.mean(), "approx_kl": approx_kl,
            "clipfrac": clipfrac}


def chain_gae(values: np.ndarray, final_reward: float, gamma: float, lam: float):
    """GAE over one seat's decisions in one hand: reward only after the last decision, value 0 after it.

    Args:
        values: ``(T,)`` value estimates of the chain's decisions.
    Returns:
        ``(advantages, returns)``, both ``(T,)`` float32.
    """
    T = len(values)
    adv = np.zeros(T, dtype=np.float32)
    last = 0.0
    for t in range(T - 1, -1, -1):
        next_v = values[t + 1] if t + 1 < T else 0.0
        r = final_reward if t == T - 1 else 0.0
        delta = r + gamma * next_v - values[t]
        last = delta + gamma * lam * last
        adv[t] = last
    return adv, adv + values.astype(np.float32)


def sample_actions(logits: torch.Tensor, masks: np.ndarray, rng: np.random.Generator):
    """Sample from the masked distributions with the Gumbel-max trick driven by ``rng``.

    Returns ``(actions (B,) int64, log_probs (B,) float32)``.
    """
    mask_t = torch.from_numpy(masks).bool()
    logp = masked_log_probs(logits, mask_t)
    gumbel = torch.from_numpy(-np.log(-np.log(rng.random(masks.shape) + 1e-20) + 1e-20).astype(np.float32))
    actions = torch.argmax(logp + gumbel, dim=-1)
    return actions.numpy(), logp.gather(1, actions[:, None]).squeeze(1).numpy()


# ----------------------------------------------------------------------------------------- the buffer
class ChainBuffer:
    """Learner decisions, grouped per (env, seat) chain until the hand ends, then ready for PPO."""

    def __init__(self, capacity: int, obs_dim: int, n_actions: int, critic_dim: int) -> None:
        self.obs = np.zeros((capacity, obs_dim), np.float32)
        self.masks = np.zeros((capacity, n_actions), np.int8)
        self.critic = np.zeros((capacity, critic_dim), np.float32)
        self.actions = np.zeros(capacity, np.int64)
        self.logp = np.zeros(capacity, np.float32)
        self.values = np.zeros(capacity, np.float32)
        self.adv = np.zeros(capacity, np.float32)
        self.ret = np.zeros(capacity, np.float32)
        self.size = 0
        self.ready: list[int] = []
        self.chains: dict[tuple[int, int], list[int]] = {}

    def add(self, envs, seats, obs, masks, critic, actions, logp, values) -> None:
        k = len(envs)
        i = self.size
        if i + k > len(self.obs):
            raise RuntimeError("chain buffer full: raise batch_size headroom")
        sl = slice(i, i + k)
        self.obs[sl], self.masks[sl], self.actions[sl] = obs, masks, actions
        self.logp[sl], self.values[sl] = logp, values
        if critic is not None:
            self.critic[sl] = critic
        for j, (e, s) in enumerate(zip(envs.tolist(), seats.tolist())):
            self.chains.setdefault((e, s), []).append(i + j)
        self.size += k

    def end_hand(self, env: int, rewards: np.ndarray, gamma: float, lam: float) -> None:
        for seat in (0, 1):
            rows = self.chains.pop((env, seat), None)
            if rows:
                adv, ret = chain_gae(self.values[rows], float(rewards[seat]), gamma, lam)
                self.adv[rows], self.ret[rows] = adv, ret
                self.ready.extend(rows)

    def compact(self) -> None:
        """Drop the rows used by an update; keep the unfinished chains' rows at the front."""
        keep = sorted(r for rows in self.chains.values() for r in rows)
        remap = {old: new for new, old in enumerate(keep)}
        for arr in (self.obs, self.masks, self.critic, self.actions, self.logp, self.values):
            arr[:len(keep)] = arr[keep]
        self.chains = {key: [remap[r] for r in rows] for key, rows in self.chains.items()}
        self.size = len(keep)
        self.ready = []

    def state(self) -> dict:
        n = self.size
        return {"obs": torch.from_numpy(self.obs[:n].copy()), "masks": torch.from_numpy(self.masks[:n].copy()),
                "critic": torch.from_numpy(self.critic[:n].copy()),
                "actions": torch.from_numpy(self.actions[:n].copy()),
                "logp": torch.from_numpy(self.logp[:n].copy()), "values": torch.from_numpy(self.values[:n].copy()),
                "chains": [[e, s, rows] for (e, s), rows in self.chains.items()]}

    def load(self, st: dict) -> None:
        n = len(st["actions"])
        self.obs[:n], self.masks[:n], self.critic[:n] = st["obs"].numpy(), st["masks"].numpy(), st["critic"].numpy()
        self.actions[:n], self.logp[:n], self.values[:n] = (st["actions"].numpy(), st["logp"].numpy(),
                                                           st["values"].numpy())
        self.chains = {(int(e), int(s)): [int(r) for r in rows] for e, s, rows in st["chains"]}
        self.size, self.ready = n, []


# ----------------------------------------------------------------------------------------- helpers
def versions() -> dict:
    import gymnasium
    import pettingzoo

    import schnapsen_env

    return {"schnapsen_env": schnapsen_env.__version__, "torch": str(torch.__version__), "numpy": np.__version__,
            "gymnasium": gymnasium.__version__, "pettingzoo": pettingzoo.__version__,
            "python": platform.python_version()}


def critic_inputs(venv: SchnapsenVectorEnv, idx: np.ndarray, seats: np.ndarray) -> np.ndarray:
    states = np.stack([venv.states_row(int(i)) for i in idx]) if len(idx) else np.zeros((0, 0), np.float32)
    onehot = np.eye(2, dtype=np.float32)[seats]
    return np.concatenate([states, onehot], axis=1)


def tensorboard_writer(args, rules, run_dir, resumed_step: int | None = None):
    """A TensorBoard ``SummaryWriter`` in ``run_dir`` with the arguments and rules as text (None without
    ``--tensorboard``).

    Args:
        resumed_step: the checkpoint's step when resuming. The killed run may have logged updates after its last
            checkpoint; they are played again, so TensorBoard is told to drop the events after this step
            (``purge_step``) and no step is logged twice. The text entries were logged by the first run.
    """
    if not args.tensorboard:
        return None
    from torch.utils.tensorboard import SummaryWriter

    if resumed_step is not None:
        return SummaryWriter(str(run_dir), purge_step=resumed_step + 1)
    writer = SummaryWriter(str(run_dir))
    writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
        f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()))
    writer.add_text("rules", json.dumps(rules.to_dict()))
    return writer


def policy_checkpoint(model, rules, args) -> dict:
    return {"model": model.state_dict(), "net": model.config(), "rules": rules.to_dict(),
            "layout": layout_signature(rules), "args": dataclasses.asdict(args), "versions": versions()}


def evaluate(model, rules, args, opponents, deals, seed, run_dir):
    """Arena on duplicate deals: the current policy (greedy) against each opponent."""
    from agents.arena import play_match

    path = Path(run_dir) / "eval_policy.pt"
    save_atomic(policy_checkpoint(model, rules, args), path)
    out = {}
    for name in opponents:
        res = play_match(str(path), name, n_deals=deals, ruleset=rules.name, seed=seed,
                         workers=args.eval_workers, progress=False)
        out[name] = res
    return out


def evaluation_table(policy_path, results) -> str:
    """The final evaluation as a plain-text table (game points per hand for the policy)."""
    lines = [f"evaluation of {policy_path} (greedy), duplicate deals",
             f"{'opponent':<12}{'deals':>7}{'game points/hand':>18}{'95% CI':>20}{'hand win rate':>15}"]
    for name, r in results.items():
        ci = f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}]" if r.ci_low is not None else "n/a"
        lines.append(f"{name:<12}{r.deals:>7}{r.mean:>+18.3f}{ci:>20}{r.hand_win_rate:>15.1%}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------- resume
#: Keys of a trainer checkpoint's ``"trainer"`` entry: the state ``--resume`` restores.
TRAINER_KEYS = ("optimizer", "pool", "opp_seat", "opp_kind", "buffer", "venv", "rng", "torch_rng", "global_step",
                "update", "hands", "evals", "history")
#: Keys of the rollout buffer's state (:meth:`ChainBuffer.state`).
BUFFER_KEYS = ("obs", "masks", "critic", "actions", "logp", "values", "chains")


def _one_line(text: object, limit: int = 300) -> str:
    """Error text on one line (torch's size-mismatch messages span many), cut at ``limit`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def versions_text(ckpt: dict) -> str:
    """Both versions, for a refusal to resume: the checkpoint's writer and this program."""
    saved = ckpt.get("versions") if isinstance(ckpt.get("versions"), dict) else {}
    ours = versions()
    return (f"the checkpoint was written by schnapsen_env {saved.get('schnapsen_env', '(unknown)')} with torch "
            f"{saved.get('torch', '(unknown)')}; this is schnapsen_env {ours['schnapsen_env']} with torch "
            f"{ours['torch']}")


def resumed_args(ckpt: dict, given: Args) -> Args:
    """The arguments of a resumed run: the checkpoint's, with the given --total-steps (to extend a run; this
    changes the learning-rate schedule) and the flags that belong to this machine and invocation
    (:data:`PER_INVOCATION`).

    Raises:
        CheckpointError: no trainer state, or saved arguments of another version of train.py (unknown, missing or
            mistyped ones); the message names both versions.
        ValueError: a flag given on the command line that differs from the checkpoint's (it would be ignored).
    """
    path = given.resume
    if "trainer" not in ckpt:
        raise CheckpointError(f"{path!r} is a policy checkpoint without trainer state: cannot resume (expected the "
                              "checkpoint.pt of a run folder)")
    saved = ckpt["args"]
    if not isinstance(saved, dict):
        raise CheckpointError(f"checkpoint {path!r}: its 'args' is a {type(saved).__name__}, expected the dict of "
                              f"train.py's arguments; {versions_text(ckpt)}")
    hints = typing.get_type_hints(Args)
    names = [f.name for f in dataclasses.fields(Args)]
    unknown = sorted(map(str, set(saved) - set(names)))
    missing = [n for n in names if n not in saved]
    if unknown or missing:
        raise CheckpointError(f"checkpoint {path!r} comes from an incompatible version of train.py (arguments "
                              f"unknown here: {unknown}, missing: {missing}); {versions_text(ckpt)}: resume it with "
                              "the version that wrote it, or start a new run")
    bad = [n for n in names if not fits_hint(saved[n], hints[n])]
    if bad:
        raise CheckpointError(f"checkpoint {path!r}: saved argument(s) " + ", ".join(
            f"{n}={saved[n]!r}" for n in bad) + f" do not have the types train.py takes ({versions_text(ckpt)}): "
            "expected a checkpoint.pt written by train.py")
    saved = {**saved, "final_eval_opponents": tuple(saved["final_eval_opponents"])}
    defaults = Args()
    for n in names:
        if n in PER_INVOCATION or n in ("resume", "total_steps"):
            continue
        value = getattr(given, n)
        if value != getattr(defaults, n) and value != saved[n]:
            raise ValueError(f"{_flag(n)} {value!r} differs from the resumed run's {saved[n]!r}: --resume continues "
                             "the run with its own arguments; expected only --total-steps and "
                             f"{', '.join(_flag(k) for k in PER_INVOCATION)} besides --resume")
    total = given.total_steps if given.total_steps is not None else saved["total_steps"]
    return Args(**{**saved, "resume": path, "total_steps": total, **{k: getattr(given, k) for k in PER_INVOCATION}})


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _tensor_problem(name: str, t, shape: tuple, dtypes: tuple) -> str | None:
    if not isinstance(t, torch.Tensor):
        return f"{name} is a {type(t).__name__}, expected a tensor"
    if tuple(t.shape) != shape:
        return f"{name} has shape {tuple(t.shape)}, expected {shape}"
    if t.dtype not in dtypes:
        return f"{name} has dtype {t.dtype}, expected {' or '.join(map(str, dtypes))}"
    return None


def trainer_state_problem(tr, args: Args, model: ActorCritic, n_obs: int, n_actions: int, capacity: int,
                          critic_cols: int) -> str | None:
    """What is wrong with a checkpoint's trainer state for this run (None when it fits): its keys, counters,
    opponent seats, pool snapshots, optimizer state, rollout buffer and generator states are checked before any of
    it is used (the env's hands are checked when they are loaded)."""
    if not isinstance(tr, dict):
        return f"'trainer' is a {type(tr).__name__}, expected a dict"
    missing = [k for k in TRAINER_KEYS if k not in tr]
    unknown = sorted(map(str, set(tr) - set(TRAINER_KEYS)))
    if missing or unknown:
        return f"'trainer' lacks {missing} and has unknown {unknown}: expected the keys {list(TRAINER_KEYS)}"
    for k in ("global_step", "update", "hands", "evals"):
        if not _is_int(tr[k]) or tr[k] < 0:
            return f"trainer {k!r} is {tr[k]!r}, expected an int >= 0"
    n = args.num_envs
    for k, allowed in (("opp_seat", (-1, 0, 1)), ("opp_kind", (0, 1))):
        problem = _tensor_problem(f"trainer {k!r}", tr[k], (n,), (torch.int64, torch.int32, torch.int8))
        if problem:
            return problem
        if not set(tr[k].tolist()) <= set(allowed):
            return f"trainer {k!r} holds values outside {allowed}"
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}

    def weights_problem(name, sd):
        if not isinstance(sd, dict) or list(sd) != list(shapes):
            return f"{name} does not have the network's parameters {list(shapes)}"
        for k, v in sd.items():
            problem = _tensor_problem(f"{name} {k!r}", v, shapes[k], (torch.float32,))
            if problem:
                return problem
        return None

    if not isinstance(tr["pool"], list) or len(tr["pool"]) > args.pool_size:
        return f"trainer 'pool' must be a list of at most {args.pool_size} snapshots (--pool-size)"
    for i, snap in enumerate(tr["pool"]):
        problem = weights_problem(f"pool snapshot {i}", snap)
        if problem:
            return problem
    opt = tr["optimizer"]
    if not isinstance(opt, dict) or set(opt) != {"state", "param_groups"} or not isinstance(opt["state"], dict):
        return "trainer 'optimizer' is not the state of torch.optim.Adam (keys 'state', 'param_groups')"
    params = list(model.parameters())
    groups = opt["param_groups"]
    if not (isinstance(groups, list) and len(groups) == 1 and isinstance(groups[0], dict)
            and groups[0].get("params") == list(range(len(params)))):
        return f"trainer 'optimizer' does not hold one group of the network's {len(params)} parameters"
    for i, st in opt["state"].items():
        if not (_is_int(i) and 0 <= i < len(params)) or not isinstance(st, dict):
            return f"trainer 'optimizer' has state for an unknown parameter {i!r}"
        for k in ("exp_avg", "exp_avg_sq"):
            problem = _tensor_problem(f"optimizer state {i} {k!r}", st.get(k), tuple(params[i].shape),
                                      (torch.float32,))
            if problem:
                return problem
    b = tr["buffer"]
    if not isinstance(b, dict) or set(b) != set(BUFFER_KEYS):
        return f"trainer 'buffer' must be a dict with keys {list(BUFFER_KEYS)}"
    if not isinstance(b["actions"], torch.Tensor) or b["actions"].dim() != 1:
        return "buffer 'actions' must be a 1-d tensor"
    rows = int(b["actions"].shape[0])
    if rows > capacity:
        return f"the buffer holds {rows} decisions, more than this run's {capacity}"
    for k, shape, dtypes in (("obs", (rows, n_obs), (torch.float32,)), ("masks", (rows, n_actions), (torch.int8,)),
                             ("critic", (rows, critic_cols), (torch.float32,)), ("actions", (rows,), (torch.int64,)),
                             ("logp", (rows,), (torch.float32,)), ("values", (rows,), (torch.float32,))):
        problem = _tensor_problem(f"buffer {k!r}", b[k], shape, dtypes)
        if problem:
            return problem
    seen: set[int] = set()
    if not isinstance(b["chains"], list):
        return "buffer 'chains' must be a list"
    for chain in b["chains"]:
        if not (isinstance(chain, (list, tuple)) and len(chain) == 3 and _is_int(chain[0]) and 0 <= chain[0] < n
                and chain[1] in (0, 1) and _is_int(chain[1]) and isinstance(chain[2], list)
                and all(_is_int(r) and 0 <= r < rows and r not in seen and not seen.add(r) for r in chain[2])):
            return f"buffer chain {_one_line(repr(chain), 80)} is not [env < {n}, seat 0/1, distinct rows < {rows}]"
    ref = torch.get_rng_state()
    problem = _tensor_problem("trainer 'torch_rng'", tr["torch_rng"], tuple(ref.shape), (ref.dtype,))
    if problem:
        return problem
    if not isinstance(tr["rng"], dict) or tr["rng"].get("bit_generator") != "PCG64":
        return "trainer 'rng' is not the state of numpy's PCG64 generator"
    if not isinstance(tr["history"], list) or not all(isinstance(h, dict) for h in tr["history"]):
        return "trainer 'history' must be a list of dicts"
    return None


# ----------------------------------------------------------------------------------------- main
def main(args: Args) -> dict:
    """Train (or resume) a run; returns its summary (run folder, steps, steps/s, final evaluation).

    Raises:
        ValueError: bad flags (naming the flag, its value and what it takes), sizes beyond this machine's memory, a
            run folder that cannot be written, flags that conflict with a resumed run.
        CheckpointError: a --resume checkpoint that is missing, corrupt, without trainer state, or from an
            incompatible version (the message names both versions).
        WriteError: a checkpoint, policy or summary could not be written (full disk, read-only folder); the message
            names the last good checkpoint, which is kept.
    """
    if args.backend == "rllib":
        return main_rllib(args)
    resume_ckpt = None
    if not args.resume and args.total_steps is None:
        args = dataclasses.replace(args, total_steps=DEFAULT_TOTAL_STEPS)
    if args.resume:
        resume_ckpt = load_checkpoint(args.resume)
        args = resumed_args(resume_ckpt, args)
    validate(args)
    rules = RuleSet.make(args.ruleset)
    if resume_ckpt is not None:
        if resume_ckpt["rules"] != rules.to_dict() or resume_ckpt["layout"] != layout_signature(rules):
            raise CheckpointError(
                f"checkpoint {args.resume!r} has rules {_one_line(resume_ckpt['rules'], 120)} and observation layout "
                f"{_one_line(resume_ckpt['layout'], 120)}; this version plays {rules.to_dict()} with layout "
                f"{layout_signature(rules)} ({versions_text(resume_ckpt)}): resume it with the version that wrote it")
        run_dir = Path(args.resume).parent
    else:
        run_name = args.run_name or f"{rules.name}_s{args.seed}_{time.strftime('%Y%m%d-%H%M%S')}"
        run_dir = Path(args.run_dir) / run_name
    check_output_folder(run_dir, f"the run folder {str(run_dir)!r} (--run-dir, --run-name or --resume)")
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    # Seeding: one block for every generator (CleanRL style).
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)

    venv = SchnapsenVectorEnv(args.num_envs, ruleset=rules.name)
    obs, masks, to_move = venv.reset(seed=args.seed)
    n_envs = args.num_envs
    critic_dim = state_size(rules) + 2 if args.privileged_critic else 0
    model = ActorCritic(obs_size(rules), rules.n_actions, args.hidden, args.layers, critic_dim).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=1e-5)
    opponent = ActorCritic(obs_size(rules), rules.n_actions, args.hidden, args.layers, critic_dim).to(device)
    pool: list[dict] = []
    opp_seat = np.full(n_envs, -1, dtype=np.int64)  # seat played by an opponent this hand, -1: self-play
    opp_kind = np.zeros(n_envs, dtype=np.int64)  # 0: pool snapshot, 1: heuristic
    from agents.heuristic import HeuristicAgent

    heuristic = HeuristicAgent(rules=rules, seed=args.seed)
    capacity = args.batch_size + n_envs * 40
    buf = ChainBuffer(capacity, obs_size(rules), rules.n_actions, max(critic_dim, 1))
    global_step, update, hands, evals = 0, 0, 0, 0
    history: list[dict] = []
    if resume_ckpt is not None:
        tr = resume_ckpt["trainer"]
        problem = trainer_state_problem(tr, args, model, obs_size(rules), rules.n_actions, capacity,
                                        max(critic_dim, 1))
        try:
            if problem is None:
                model.load_state_dict(resume_ckpt["model"])
                optimizer.load_state_dict(tr["optimizer"])
                obs, masks, to_move = venv.set_state(tr["venv"])
                rng.bit_generator.state = tr["rng"]
                torch.set_rng_state(tr["torch_rng"])
        except (ValueError, TypeError, KeyError, IndexError, RuntimeError, AttributeError) as e:
            problem = f"{type(e).__name__}: {_one_line(e)}"
        if problem is not None:
            raise CheckpointError(f"checkpoint {args.resume!r} cannot be resumed: {problem} ({versions_text(resume_ckpt)}):"
                                  " expected the checkpoint.pt of a run of this version with these arguments")
        pool = list(tr["pool"])
        opp_seat = tr["opp_seat"].numpy().astype(np.int64)
        opp_kind = tr["opp_kind"].numpy().astype(np.int64)
        buf.load(tr["buffer"])
        global_step, update, hands, evals = tr["global_step"], tr["update"], tr["hands"], tr["evals"]
        history = list(tr["history"])

    run_dir.mkdir(parents=True, exist_ok=True)
    for name in RUN_FILES:  # temporary files of writes killed in an earlier run
        remove_stale_temps(run_dir / name)
    ckpt_path = run_dir / "checkpoint.pt"
    #: The last checkpoint known to be complete: (update, step), for the message when a write fails.
    last_good = (update, global_step) if resume_ckpt is not None else None

    def write_failed(e: WriteError) -> WriteError:
        if last_good is None:
            kept = "no checkpoint of this run was written yet"
        else:
            kept = (f"the last good checkpoint {str(ckpt_path)!r} (update {last_good[0]}, {last_good[1]:,} steps) is "
                    f"kept: free space or fix the folder, then continue with --resume {ckpt_path}")
        return WriteError(e.errno, f"{e}; {kept}")

    writer = tensorboard_writer(args, rules, run_dir, resumed_step=global_step if resume_ckpt is not None else None)
    print(f"run {run_dir}  seed {args.seed}  rules {json.dumps(rules.to_dict())}", flush=True)

    n_updates_total = max(1, args.total_steps // args.batch_size)
    bar = tqdm(total=args.total_steps, initial=min(global_step, args.total_steps), disable=not args.progress,
               unit="step", dynamic_ncols=True)
    latest_eval = ""
    t_start, steps_at_start = time.time(), global_step
    pool_net_idx = -1

    def save_checkpoint(path):
        ck = policy_checkpoint(model, rules, args)
        ck["trainer"] = {
            "optimizer": optimizer.state_dict(), "pool": pool, "opp_seat": torch.from_numpy(opp_seat.copy()),
            "opp_kind": torch.from_numpy(opp_kind.copy()),
            "buffer": buf.state(), "venv": venv.get_state(), "rng": rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(), "global_step": global_step, "update": update, "hands": hands,
            "evals": evals, "history": history}
        try:
            save_atomic(ck, path)
        except WriteError as e:
            raise write_failed(e) from None
        nonlocal last_good
        last_good = (update, global_step)

    def run_evaluation(opponents, deals, seed):
        try:
            return evaluate(model, rules, args, opponents, deals, seed=seed, run_dir=run_dir)
        except WriteError as e:
            raise write_failed(e) from None

    updates_this_call = 0
    while global_step < args.total_steps:
        if args.stop_after_updates is not None and updates_this_call >= args.stop_after_updates:
            break
        # Pick this iteration's pool opponent.
        if pool:
            pool_net_idx = int(rng.integers(len(pool)))
            opponent.load_state_dict(pool[pool_net_idx])
        # ---------------------------------------------------------------- rollout
        rollout_hands = 0
        result_sum, opp_hands = 0.0, 0
        while len(buf.ready) < args.batch_size:
            learner = opp_seat != to_move
            idx_l = np.flatnonzero(learner)
            idx_o = np.flatnonzero(~learner)
            actions = np.zeros(n_envs, dtype=np.int64)
            with torch.no_grad():
                if idx_l.size:
                    crit = critic_inputs(venv, idx_l, to_move[idx_l]) if critic_dim else None
                    logits, values = model(torch.from_numpy(obs[idx_l]).to(device),
                                           None if crit is None else torch.from_numpy(crit).to(device))
                    a, logp = sample_actions(logits.cpu(), masks[idx_l], rng)
                    actions[idx_l] = a
                    buf.add(idx_l, to_move[idx_l].astype(np.int64), obs[idx_l], masks[idx_l], crit, a, logp,
                            values.cpu().numpy())
                idx_h = idx_o[opp_kind[idx_o] == 1]
                idx_p = idx_o[opp_kind[idx_o] == 0]
                if idx_p.size:
                    logits = opponent.act_logits(torch.from_numpy(obs[idx_p]).to(device))
                    a, _ = sample_actions(logits.cpu(), masks[idx_p], rng)
                    actions[idx_p] = a
                for i in idx_h.tolist():
                    actions[i] = heuristic.act({"observation": obs[i], "action_mask": masks[i]})
            obs, masks, to_move, rewards, dones, _ = venv.step(actions)
            bar.update(max(0, min(int(idx_l.size), args.total_steps - bar.n)))  # the bar stops at its total
            global_step += int(idx_l.size)
            for i in np.flatnonzero(dones).tolist():
                buf.end_hand(i, rewards[i], args.gamma, args.gae_lambda)
                hands += 1
                rollout_hands += 1
                if opp_seat[i] >= 0:
                    result_sum += rewards[i, 1 - opp_seat[i]]
                    opp_hands += 1
                u = rng.random()
                if u < args.heuristic_prob:
                    opp_seat[i], opp_kind[i] = int(rng.integers(2)), 1
                elif pool and u < args.heuristic_prob + args.pool_prob:
                    opp_seat[i], opp_kind[i] = int(rng.integers(2)), 0
                else:
                    opp_seat[i] = -1

        # ---------------------------------------------------------------- PPO update
        if args.anneal_lr:
            frac = max(0.0, 1.0 - update / n_updates_total)
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate
        rows = np.array(buf.ready, dtype=np.int64)
        b_obs = torch.from_numpy(buf.obs[rows]).to(device)
        b_masks = torch.from_numpy(buf.masks[rows]).to(device)
        b_crit = torch.from_numpy(buf.critic[rows]).to(device) if critic_dim else None
        b_actions = torch.from_numpy(buf.actions[rows]).to(device)
        b_logp = torch.from_numpy(buf.logp[rows]).to(device)
        b_values = torch.from_numpy(buf.values[rows]).to(device)
        b_adv = torch.from_numpy(buf.adv[rows]).to(device)
        b_ret = torch.from_numpy(buf.ret[rows]).to(device)
        n = len(rows)
        stats: dict[str, list[float]] = {}
        for _ in range(args.update_epochs):
            perm = torch.from_numpy(rng.permutation(n))
            for start in range(0, n, args.minibatch_size):
                mb = perm[start:start + args.minibatch_size]
                logits, new_values = model(b_obs[mb], None if b_crit is None else b_crit[mb])
                logp_all = masked_log_probs(logits, b_masks[mb])
                new_logp = logp_all.gather(1, b_actions[mb][:, None]).squeeze(1)
                entropy = masked_entropy(logp_all, b_masks[mb])
                mb_adv = b_adv[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std(unbiased=False) + 1e-8)  # a minibatch may hold 1 row
                parts = ppo_losses(new_logp, b_logp[mb], mb_adv, new_values, b_values[mb], b_ret[mb], entropy,
                                   args.clip_coef)
                loss = parts["pg_loss"] - args.ent_coef * parts["entropy"] + args.vf_coef * parts["v_loss"]
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                for k, v in parts.items():
                    stats.setdefault(k, []).append(float(v.detach()))
        y_pred, y_true = b_values.cpu().numpy(), b_ret.cpu().numpy()
        var_y = np.var(y_true)
        explained_var = float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)
        buf.compact()
        update += 1
        updates_this_call += 1
        sps = (global_step - steps_at_start) / max(1e-9, time.time() - t_start)
        if update % args.pool_every == 0:
            pool.append(copy.deepcopy(model.state_dict()))
            pool = pool[len(pool) - args.pool_size:] if len(pool) > args.pool_size else pool
        if writer is not None:
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
            writer.add_scalar("charts/SPS", sps, global_step)
            writer.add_scalar("charts/hands", hands, global_step)
            if opp_hands:
                writer.add_scalar("charts/opponent_game_points_per_hand", result_sum / opp_hands, global_step)
            for k, v in stats.items():
                writer.add_scalar(f"losses/{k}", float(np.mean(v)), global_step)
            writer.add_scalar("losses/explained_variance", explained_var, global_step)

        # ---------------------------------------------------------------- evaluation and checkpoints
        final = global_step >= args.total_steps
        if args.eval_every and update % args.eval_every == 0 and not final:
            evals += 1
            opponents = ["random", "heuristic"]
            if args.eval_rollout_every and evals % args.eval_rollout_every == 0:
                opponents.append("rollout")
            res = run_evaluation(opponents, args.eval_deals, seed=10_000 + evals)
            history.append({"step": global_step, **{k: v.mean for k, v in res.items()}})
            latest_eval = " ".join(f"{k} {v.mean:+.2f}" for k, v in res.items())
            tqdm.write(f"eval at {global_step:,} steps: " + ", ".join(
                f"{k} {v.mean:+.3f} gp/hand (win {v.hand_win_rate:.1%})" for k, v in res.items()))
            if writer is not None:
                for k, v in res.items():
                    writer.add_scalar(f"eval/{k}_game_points_per_hand", v.mean, global_step)
                    writer.add_scalar(f"eval/{k}_hand_win_rate", v.hand_win_rate, global_step)
        bar.set_postfix_str(f"{sps:,.0f} steps/s {latest_eval}")
        if update % args.checkpoint_every == 0 or final:
            save_checkpoint(run_dir / "checkpoint.pt")
    bar.close()
    sps = (global_step - steps_at_start) / max(1e-9, time.time() - t_start)
    print(f"trained {global_step:,} learner decisions, {hands:,} hands, {update} updates, {sps:,.0f} steps/s",
          flush=True)
    save_checkpoint(run_dir / "checkpoint.pt")
    if global_step < args.total_steps:
        print(f"stopped after {updates_this_call} updates; continue with --resume {run_dir / 'checkpoint.pt'}")
        close_writer(writer)
        return {"run_dir": str(run_dir), "steps": global_step, "steps_per_second": sps, "evaluation": {}}
    try:
        save_atomic(policy_checkpoint(model, rules, args), run_dir / "policy.pt")
    except WriteError as e:
        raise write_failed(e) from None
    summary = {"run_dir": str(run_dir), "steps": global_step, "steps_per_second": sps, "evaluation": {}}
    if args.final_eval_deals:
        res = run_evaluation(list(args.final_eval_opponents), args.final_eval_deals, seed=999_999)
        summary["evaluation"] = {k: v.to_dict() for k, v in res.items()}
        print(evaluation_table(run_dir / "policy.pt", res), flush=True)
        if writer is not None:
            for k, v in res.items():
                writer.add_scalar(f"final/{k}_game_points_per_hand", v.mean, global_step)
    try:
        atomic_write(run_dir / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
    except WriteError as e:
        raise write_failed(e) from None
    close_writer(writer)
    return summary


def close_writer(writer) -> None:
    """Close the TensorBoard writer; a failure to flush its last events (a full disk) is reported in one line, as
    the checkpoint and results are already written."""
    if writer is None:
        return
    try:
        writer.close()
    except OSError as e:
        print(f"train.py: warning: the last TensorBoard events could not be written ({describe_os_error(e)})",
              file=sys.stderr)


# ------------------------------------------------------------------------------------------ RLlib backend
def main_rllib(args: Args) -> dict:
    """The same self-play recipe on Ray RLlib's PPO (new API stack): ``schnapsen_v0`` through RLlib's
    PettingZoo wrapper, the masked :class:`agents.rllib_module.MaskedActorCriticModule` shared by both seats
    (module "main"), frozen snapshots of it as an opponent pool (modules "opponent_<k>", refreshed every
    ``pool_every`` iterations) plus the scripted heuristic, mapped per hand by the policy mapping function.
    Writes ``policy.pt`` (the project's checkpoint format, so ``PolicyAgent`` and the arena load it) and
    ``rllib_checkpoint/`` (RLlib's own; ``agents.rllib_module.load_rllib_policy`` reads it)."""
    if args.total_steps is None:
        args = dataclasses.replace(args, total_steps=DEFAULT_TOTAL_STEPS)
    validate(args)
    try:
        import ray
        from ray.rllib.algorithms.ppo import PPOConfig
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec
        from ray.tune.registry import register_env
    except ImportError:
        raise ValueError('--backend rllib needs Ray RLlib: pip install -e ".[rllib]" '
                         '(or: bash scripts/bootstrap.sh --extras rllib python train.py --backend rllib)') from None
    from agents import rllib_module as rm

    rules = RuleSet.make(args.ruleset)
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
            .environment("schnapsen_v0", env_config={"ruleset": rules.name}, disable_env_checking=True)
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
        print(f"run {run_dir}  backend rllib  seed {args.seed}  env runners {args.env_runners}  "
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
        save_atomic(policy_checkpoint(model, rules, args), run_dir / "policy.pt")
    finally:
        if algo is not None:
            algo.stop()
        if started_ray:
            ray.shutdown()
    summary = {"run_dir": str(run_dir), "backend": "rllib", "steps": steps, "iterations": it,
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


# ------------------------------------------------------------------------------------------ command line
class UsageError(ValueError):
    """A command line that tyro refused, as one line naming the flag, the problem and what it takes."""


def _usage_line(event) -> str:
    """One line for one of tyro's parse-error events (``tyro._errors``)."""
    kind = type(event).__name__
    arg = getattr(event, "argument", None)
    try:
        flag = "/".join(arg.lowered.name_or_flags) or arg.display_name()
        metavar = arg.lowered.metavar
    except AttributeError:
        flag, metavar = "an argument", None
    want = f"{flag} {metavar}" if metavar else flag
    if kind == "UnrecognizedArgs":
        return (f"unrecognized argument(s) {' '.join(map(str, event.tokens))}: expected the flags that "
                "train.py --help lists (each --flag followed by its value, if it takes one)")
    if kind == "InvalidChoice":
        return f"{flag} {event.value!r} is not a valid choice: expected one of {', '.join(map(str, event.choices))}"
    if kind == "BadValue":
        if getattr(event, "offending_value", None) is not None:
            return f"{flag} takes no value, got {event.offending_value!r}: expected {want}"
        return f"{flag} needs a value: expected {want}"
    if kind == "InstantiationFailure":
        message = _one_line(event.message)
        union = re.search(r"could be instantiated from \[(.*?)\]\.", message)
        if union:  # an Optional flag: tyro lists every alternative's failure; name the value and the alternatives
            kinds = " or ".join(k.strip("{}") for k in str(metavar).split("|"))
            return f"{flag} {union.group(1)} is not a valid value: expected {kinds}"
        return f"{flag}: {message}: expected {want}"
    if kind == "MissingArgs":
        return "missing argument(s): expected the flags that train.py --help marks as required"
    return f"the command line was refused ({kind}): expected the flags that train.py --help lists"


def parse_args(argv: list[str] | None = None) -> Args:
    """The arguments from the command line (tyro, from :class:`Args`).

    Raises:
        UsageError: an unknown flag, a value of the wrong type, a choice not offered, a missing value: one line
            (through tyro's parse-error hook, ``tyro._errors.on_parse_error``; a tyro without it prints its own
            message and exits with status 2).
    """
    try:
        from tyro import _errors as tyro_errors
        on_parse_error = tyro_errors.on_parse_error
    except (ImportError, AttributeError):  # a tyro without the hook: its own message, flattened to one line
        return _parse_flattened(argv)

    def refuse(event) -> None:
        raise UsageError(_usage_line(event))

    with on_parse_error(refuse):
        return tyro.cli(Args, args=argv, prog="train.py")


def _parse_flattened(argv: list[str] | None) -> Args:
    """tyro.cli with its error box (stderr) turned into one line: :class:`UsageError`."""
    import contextlib
    import io

    box = io.StringIO()
    try:
        with contextlib.redirect_stderr(box):
            return tyro.cli(Args, args=argv, prog="train.py")
    except SystemExit as e:
        if e.code in (0, None):
            sys.stderr.write(box.getvalue())
            raise
        text = re.sub(r"\x1b\[[0-9;]*m|[\u2500-\u257f]", " ", box.getvalue())  # colours and box drawing
        text = _one_line(text.split("For full helptext")[0])
        raise UsageError(f"{text}: expected the flags that train.py --help lists") from None


def cli(argv: list[str] | None = None) -> int:
    """``python train.py``: parse the flags, run :func:`main`, return the exit status.

    A user's mistake never ends in a traceback: a bad flag or value, a path that cannot be used, a bad or
    incompatible checkpoint print one line ``train.py: error: ...`` and return 2; a write that fails (a full disk)
    prints one line naming the last good checkpoint and returns 1.
    """
    try:
        args = parse_args(argv)
        main(args)
    except ValueError as e:  # bad flags, paths, checkpoints (CheckpointError and UsageError are ValueErrors)
        print(f"train.py: error: {_one_line(e, 2000)}", file=sys.stderr)
        return 2
    except OSError as e:  # a write that failed (WriteError names the file and the last good checkpoint)
        print(f"train.py: error: {_one_line(e, 2000)}", file=sys.stderr)
        return 1
    except MemoryError:
        print("train.py: error: out of memory: expected smaller --num-envs, --batch-size or --hidden",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ntrain.py: interrupted: the last checkpoint written is kept (continue with --resume)",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(cli())
