"""PPO self-play for Schnapsen, one file read top to bottom (in the manner of CleanRL's ppo.py).

    python train.py --help
    python train.py                          # the default run (its time and result: README, "Training")
    python train.py --total-steps 200000     # a quick run
    python train.py --resume runs/NAME/checkpoint.pt
    python train.py --ray-address auto       # the samplers as Ray actors on a cluster (extra "rllib")
    python train_rllib.py                    # the same recipe on Ray RLlib's PPO (its own file)

* PPO (Schulman et al. 2017) with invalid-action masking by ``-inf`` logits (Huang & Ontañón 2022),
  generalised advantage estimation (Schulman et al. 2016).
* **Samplers and a learner.** ``--samplers`` sampler processes (default: one per core) each play ``--num-envs``
  hands of the vectorised env with a CPU copy of the policy and its opponents (:mod:`agents.training.self_play`) and send
  finished decision chains; this process, the learner, runs the PPO update on ``--device`` while the samplers
  play the next batch with the weights from before the update (``--overlap-sampling``, the default: one update
  of lag, corrected by PPO's clipped ratio to the behaviour log-probabilities the samplers record), then sends the
  new weights; ``--no-overlap-sampling`` alternates sampling and updating, strictly on-policy. With
  ``--ray-address`` the same samplers run as Ray actors on a cluster; ``--inline-samplers`` runs them in this
  process (debugging).
* Self-play: one network plays both seats. With probability ``pool_prob`` a hand instead pits it against an
  **opponent pool** of earlier snapshots (one seat, drawn at the hand's start), so the policy does not chase its
  own tail; ``heuristic_prob`` adds hands against the scripted ``HeuristicAgent``.
* Each seat's decisions in one hand form a chain; the only reward is the hand's game points at its end, so
  advantages are computed per chain when the hand ends (no truncated chains, no bootstrap).
* Optional privileged critic (``--privileged-critic``): the value head also sees the env's omniscient ``state()``
  vector plus the seat, as in PerfectDou (Yang et al. 2022); the policy never does.
* Periodic evaluation on duplicate deals through the arena (:mod:`agents.evaluation.arena`) against ``random`` and
  ``heuristic`` (and ``rollout`` every ``eval_rollout_every`` evaluations).
* The network and its checkpoint format have one owner, :mod:`agents.learned.policy_net`. Checkpoints are written
  atomically with the arguments, versions, rules and observation layout; ``--resume`` continues exactly where the
  run stopped (every sampler's hands, chains and generator, the learner's optimiser and generators).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import re
import sys
import time
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

# The learner's OpenMP threads sleep while they wait instead of spinning: a spinning thread holds its core while
# the samplers or any other program need it, and on a busy 2-core machine the 2-thread update took several times
# longer (measured). Set before torch loads its OpenMP runtime; an explicit setting of the user's wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
import tyro  # noqa: E402
from tqdm import tqdm

from agents.learned.checkpoint import CheckpointError, load_checkpoint, save_atomic
from agents.learned.policy_net import (PRECISIONS, ActorCritic, build_network, policy_checkpoint, resolve_precision,
                               save_policy, versions)
from agents.training.self_play import (SAMPLER_NICE, InProcessSamplers, ProcessSamplers, RaySamplers, SamplerError,
                              sampler_capacity, sampler_state_problem)
from agents.specs import parse_value
from schnapsen_env import RuleSet
from agents.specs import fits_hint
from schnapsen_env.errors import short_repr
from schnapsen_env.encoding import layout_signature, obs_size, state_size
from schnapsen_env.files import (WriteError, atomic_write, check_output_folder, describe_os_error,
                                 remove_stale_temps)


@dataclass
class PPOArgs:
    """The self-play PPO recipe, shared by ``train.py`` and ``train_rllib.py``."""

    seed: int = 1
    """seed of every generator (env deals, sampling, network init, opponent pool)"""
    total_steps: Optional[int] = None
    """learner decisions to train on (each is one action of the trained network; train_rllib.py: env steps, the
    decisions of both seats); default 18,000,000, or the resumed run's value"""
    ruleset: str = "schnapsen20"
    """"schnapsen20", "sixtysix24" or "schnapsen10" (its default rule knobs, changed by --knob)"""
    knob: tuple[str, ...] = ()
    """rule knobs as KEY=VALUE (RULES.md section 5), e.g. --knob false_claim=mirror close_min_stock=3 (or --knob
    repeated, one knob each)"""
    threads: Optional[int] = None
    """torch CPU threads of the learner's update (default: the cores the local samplers leave free under
    --overlap-sampling, at least 1; else this machine's cores); samplers use 1 each"""
    batch_size: int = 16384
    """at least this many finished learner decisions per PPO update (train_rllib.py: env steps per batch)"""
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
    pool_size: int = 10
    """earlier snapshots kept in the opponent pool"""
    pool_every: int = 10
    """updates between snapshots added to the pool"""
    pool_prob: float = 0.3
    """share of hands played against a pool opponent (once the pool is not empty)"""
    heuristic_prob: float = 0.3
    """share of hands played against the scripted HeuristicAgent (one seat), besides the pool"""
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
    tensorboard: bool = True
    """write TensorBoard logs to the run folder"""
    progress: bool = True
    """show a progress bar"""


@dataclass
class Args(PPOArgs):
    """PPO self-play trainer for Schnapsen / Sixty-Six: sampler processes and a learner."""

    samplers: Optional[int] = None
    """sampler processes (default: this machine's cores); a seeded run is reproducible for a fixed count"""
    num_envs: int = 256
    """hands played in parallel by each sampler"""
    inline_samplers: bool = False
    """run the samplers in the learner's process, one after another (same results as processes; for debugging)"""
    ray_address: Optional[str] = None
    """run the samplers as Ray actors (one CPU each) on this Ray: "local" starts one here, "auto" or
    "HOST:PORT" joins a running cluster (extra "rllib")"""
    device: str = "cpu"
    """torch device of the learner: "cpu", or "cuda" when present (samplers always act on the CPU)"""
    precision: str = "auto"
    """how the network's trunk computes, in the learner and the samplers: "fp32", "bf16" (bfloat16 matrix
    products under torch.autocast, weights and optimiser in float32; about half the update's time where the
    hardware has bfloat16 arithmetic) or "auto" (bf16 on a CPU with AVX512-BF16 or AMX and on a CUDA device with
    bfloat16, else fp32); the checkpoint records the resolved value"""
    torch_deterministic: bool = True
    """torch.use_deterministic_algorithms (on CUDA it also sets CUBLAS_WORKSPACE_CONFIG=:4096:8 when unset, as
    cuBLAS requires); --no-torch-deterministic may be faster on a GPU"""
    privileged_critic: bool = False
    """value head also sees the omniscient state vector (PerfectDou-style)"""
    overlap_sampling: bool = True
    """the samplers play the next batch while the learner updates, acting with the weights from before the
    update (one update of lag: PPO's ratio is taken to the log-probabilities the samplers recorded, so the clipped
    ratio corrects for it); --no-overlap-sampling samples and updates in turn, on-policy"""
    sampler_nice: int = SAMPLER_NICE
    """how much lower than the learner's the local sampler processes' scheduling priority is under
    --overlap-sampling (POSIX nice, 0 to 19): the update keeps its core while they play; they also yield to every
    other program, so on a machine shared with other busy jobs 0 (equal priority) can be faster"""
    endgame_teacher_coef: float = 1.0
    """weight of the endgame teacher's loss: once the stock is exhausted the position is one of perfect
    information, so the samplers label each such learner decision with its exactly best actions (the compiled
    solver) and the update adds -log P(best actions) on those decisions; 0 turns the teacher off"""
    eval_every: int = 200
    """updates between evaluations (0: only the final one)"""
    eval_deals: int = 200
    """duplicate deals (2 hands each) per periodic evaluation and opponent"""
    eval_rollout_every: int = 3
    """also evaluate against "rollout" every N-th periodic evaluation (0: never; it is slower)"""
    nash_conv_every: int = 0
    """--ruleset schnapsen10 only: updates between exact measurements of the policy's exploitability (NashConv of
    its masked softmax in fp32 over the whole game tree, agents/game_theory/exact.py; about 1.5 minutes each on one core, the
    learner waiting), logged to TensorBoard (exact/nash_conv) and summary.json, and once more at the end; 0: never"""
    resume: Optional[str] = None
    """checkpoint to continue from (its arguments are used; --total-steps may extend the run)"""
    stop_after_updates: Optional[int] = None
    """stop (with a checkpoint, without the final evaluation) after this many updates in this invocation,
    for time-boxed jobs; --resume continues the run exactly"""


DEFAULT_TOTAL_STEPS = 18_000_000
#: Flags taken from the command line on --resume (the rest come from the checkpoint).
PER_INVOCATION = ("stop_after_updates", "progress", "eval_workers", "device", "threads", "tensorboard",
                  "inline_samplers", "ray_address", "final_eval_deals", "final_eval_opponents", "nash_conv_every",
                  "sampler_nice")
#: Arguments added to train.py since checkpoints were first written, with the value that reproduces a run from
#: before them (a resumed checkpoint that lacks one gets this value).
ADDED_ARGS = {"precision": "fp32", "endgame_teacher_coef": 0.0, "overlap_sampling": False, "nash_conv_every": 0,
              "sampler_nice": SAMPLER_NICE}
#: Files of a run folder written atomically (their stale temporary files are removed when a run starts).
RUN_FILES = ("checkpoint.pt", "policy.pt", "eval_policy.pt", "summary.json")
#: Largest seed: torch and numpy take seeds in [0, 2**63 - 1] alike.
MAX_SEED = 2 ** 63 - 1
#: Largest --threads (torch's intra-op threads) and --samplers.
MAX_THREADS = 1024
MAX_SAMPLERS = 1024
#: Bytes of memory per env slot besides its buffer rows: the compiled state row, observation, mask, and its
#: position dict in checkpoints (measured about 2 KB; rounded up).
_BYTES_PER_ENV = 4096


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def knobs_of(args: PPOArgs) -> dict:
    """The ``--knob KEY=VALUE`` entries as a dict (values parsed as in agent specs: ints, floats, bools, strings).

    Raises:
        ValueError: an entry without ``=`` or without a key, or a key given twice.
    """
    out: dict = {}
    for text in args.knob:
        key, eq, value = text.partition("=")
        if not eq or not key:
            raise ValueError(f"--knob {text!r} is not KEY=VALUE: expected a rule knob of RULES.md section 5 and its "
                             "value, e.g. --knob close_min_stock=3")
        if key == "ruleset":  # RuleSet.make's own argument, not a knob
            raise ValueError(f"--knob {_one_line(text, 80)}: the ruleset is chosen with --ruleset: expected a rule "
                             "knob of RULES.md section 5")
        if key in out:
            raise ValueError(f"--knob {key} is given twice: expected each knob once")
        out[key] = parse_value(value)
    return out


def rules_of(args: PPOArgs) -> RuleSet:
    """The run's rules: ``--ruleset`` with its ``--knob`` overrides.

    Raises:
        ValueError: an unknown ruleset or knob, a value the knob does not take (the message lists what it takes).
    """
    knobs = knobs_of(args)
    try:
        return RuleSet.make(args.ruleset, **knobs)
    except ValueError as e:  # RulesError names the valid rulesets, knobs and values
        raise ValueError(f"--ruleset/--knob: {e}") from None


def cores() -> int:
    """This machine's cores (the default of --samplers and --threads)."""
    return os.cpu_count() or 1


def memory_estimate(args: Args) -> tuple[int, int]:
    """Bytes the run needs, roughly: ``(hands and rollout buffer, networks)``.

    The networks: the model, its gradients, Adam's two moments, the pool opponent, ``pool_size`` snapshots and a
    copy while checkpointing (float32 each), plus the activations of one minibatch, and each sampler's two
    networks. The hands: every sampler's buffer rows (its share of the batch plus 40 decisions per hand in flight,
    of observation, mask and critic input), the learner's batch, and the env slots.
    """
    rules = rules_of(args)
    n_samplers = args.samplers or cores()
    n_obs, n_act = obs_size(rules), rules.n_actions
    crit = state_size(rules) + 2 if args.privileged_critic else 0
    h, layers = args.hidden, args.layers
    params = n_obs * h + h + (layers - 1) * (h * h + h) + h * n_act + n_act
    params += ((h + crit) * h + h + h + 1) if crit else h + 1
    rows = n_samplers * sampler_capacity(-(-args.batch_size // n_samplers), args.num_envs) + args.batch_size
    nets = 4 * params * (7 + 2 * n_samplers + args.pool_size) + 4 * 3 * min(args.minibatch_size, rows) * h * (layers + 2)
    hands = rows * (4 * n_obs + n_act + 4 * max(crit, 1) + 28) + n_samplers * args.num_envs * _BYTES_PER_ENV
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


def validate_recipe(args: PPOArgs) -> None:
    """Check the flags of the shared recipe (:class:`PPOArgs`). Raises ValueError naming the flag, its value and
    what it takes."""
    from agents.evaluation.arena import MAX_DEALS, MAX_WORKERS

    positive = ("total_steps", "batch_size", "minibatch_size", "pool_size", "pool_every", "checkpoint_every",
                "hidden", "layers")
    for name in positive:
        if getattr(args, name) < 1:
            raise ValueError(f"{_flag(name)} must be >= 1, got {getattr(args, name)}")
    for name in ("update_epochs", "final_eval_deals"):
        if getattr(args, name) < 0:
            raise ValueError(f"{_flag(name)} must be >= 0, got {getattr(args, name)}")
    if not 0 <= args.seed <= MAX_SEED:
        raise ValueError(f"--seed must be an int from 0 to 2**63 - 1, got {args.seed}")
    if args.threads is not None and not 1 <= args.threads <= MAX_THREADS:
        raise ValueError(f"--threads must be from 1 to {MAX_THREADS}, got {args.threads}")
    for name in ("final_eval_deals",):
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
    rules = rules_of(args)
    from agents.specs import resolve_agent

    for name in args.final_eval_opponents:
        try:
            _, factory = resolve_agent(name, rules)
            factory(seed=0)  # built here, so that an agent that cannot play these rules fails before the training
        except (ValueError, TypeError) as e:  # an unknown name lists the valid names
            raise ValueError(f"--final-eval-opponents {short_repr(name)}: {e}") from None


def validate(args: Args) -> None:
    """Check the arguments before any work. Raises ValueError naming the flag, its value and what it takes: values
    out of range, sizes this machine's memory cannot hold (:func:`memory_estimate`), a run name leaving --run-dir."""
    from agents.evaluation.arena import MAX_DEALS

    validate_recipe(args)
    if args.num_envs < 1:
        raise ValueError(f"--num-envs must be >= 1, got {args.num_envs}")
    for name in ("eval_every", "eval_deals", "eval_rollout_every", "nash_conv_every"):
        if getattr(args, name) < 0:
            raise ValueError(f"{_flag(name)} must be >= 0, got {getattr(args, name)}")
    if args.nash_conv_every and args.ruleset != "schnapsen10":
        raise ValueError(f"--nash-conv-every needs --ruleset schnapsen10 (the ruleset small enough for exact "
                         f"exploitability, RULES.md section 3a), got --ruleset {args.ruleset}")
    if args.eval_deals > MAX_DEALS:
        raise ValueError(f"--eval-deals must be at most {MAX_DEALS:,}, got {args.eval_deals}")
    if args.samplers is not None and not 1 <= args.samplers <= MAX_SAMPLERS:
        raise ValueError(f"--samplers must be from 1 to {MAX_SAMPLERS}, got {args.samplers}")
    if args.inline_samplers and args.ray_address is not None:
        raise ValueError("--inline-samplers and --ray-address exclude each other: expected at most one of them")
    if args.ray_address is not None and not args.ray_address.strip():
        raise ValueError("--ray-address is empty: expected \"local\", \"auto\" or HOST:PORT")
    if not 0 <= args.sampler_nice <= 19:
        raise ValueError(f"--sampler-nice must be from 0 to 19 (a POSIX nice increment), got {args.sampler_nice}")
    if args.stop_after_updates is not None and args.stop_after_updates < 1:
        raise ValueError(f"--stop-after-updates must be >= 1, got {args.stop_after_updates}")
    if not args.endgame_teacher_coef >= 0 or not math.isfinite(args.endgame_teacher_coef):
        raise ValueError(f"--endgame-teacher-coef must be a number >= 0, got {args.endgame_teacher_coef}")
    if args.precision not in ("auto", *PRECISIONS):
        raise ValueError(f"--precision {args.precision!r}: expected 'auto', 'fp32' or 'bf16'")
    try:
        device = torch.device(args.device)
    except RuntimeError:
        raise ValueError(f"--device {args.device!r} is not a torch device: expected 'cpu' or 'cuda'") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda, but torch sees no CUDA device here: use --device cpu")
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


def teacher_loss(log_probs: torch.Tensor, best: torch.Tensor, taught: torch.Tensor) -> torch.Tensor:
    """The endgame teacher's loss: the mean of ``-log P(best actions)`` over the labelled rows (0 when none is).

    Args:
        log_probs: ``(B, A)`` masked log-probabilities (``-inf`` on illegal actions).
        best: ``(B, A)`` bool, the exactly best actions of a labelled row (each a legal action).
        taught: ``(B,)`` bool, the rows with a label.
    """
    if not bool(taught.any()):
        return log_probs.new_zeros(())
    lp = log_probs[taught].masked_fill(~best[taught], float("-inf"))
    return -torch.logsumexp(lp, dim=1).mean()


def batch_tensors(batch: dict, device: torch.device, precision: str, n_actions: int, critic: bool) -> dict:
    """The samplers' joined batch (numpy arrays, :data:`agents.training.self_play.BATCH_KEYS`) as the update's tensors on
    ``device``: ``obs`` (rows, obs_size) float32, or bfloat16 when ``precision`` is ``"bf16"`` (autocast would round
    it in every minibatch's forward; rounding once per batch gives the same products, tested), ``masks`` bool,
    ``critic`` (None without a privileged critic), ``actions`` int64, ``logp``, ``values``, ``adv``, ``ret``
    float32 (rows,), and the endgame teacher's labels: ``teach`` (rows, n_actions) bool, the exactly best actions
    (all False: no label), and ``taught`` (rows,) bool, the labelled rows."""
    out = {k: torch.from_numpy(batch[k]).to(device)
           for k in ("obs", "masks", "critic", "actions", "logp", "values", "adv", "ret")}
    out["teach"] = torch.from_numpy((batch["teach"][:, None] >> np.arange(n_actions)) & 1 == 1).to(device)
    out["taught"] = out["teach"].any(dim=1)
    out["critic"] = out["critic"] if critic else None
    out["masks"] = out["masks"].bool()  # once per batch, not in every minibatch's masked_fill
    if precision == "bf16":
        out["obs"] = out["obs"].to(torch.bfloat16)
    return out


def ppo_update(model: ActorCritic, optimizer: torch.optim.Optimizer, b: dict, rng: np.random.Generator,
               args: Args) -> dict[str, list[float]]:
    """One PPO update on the batch ``b`` (:func:`batch_tensors`): ``args.update_epochs`` epochs over minibatches of
    ``args.minibatch_size`` rows in the order of ``rng``'s permutations, each minibatch one Adam step on the
    clipped surrogate, the entropy bonus, the value loss and (``args.endgame_teacher_coef``) the teacher's loss.

    Returns:
        Every minibatch's loss pieces by name (:func:`ppo_losses`' keys, plus ``"teacher"`` when
        ``args.endgame_teacher_coef`` is not 0), as floats.
    """
    n = len(b["actions"])
    stats: dict[str, list[float]] = {}
    for _ in range(args.update_epochs):
        perm = torch.from_numpy(rng.permutation(n)).to(b["actions"].device)
        for start in range(0, n, args.minibatch_size):
            mb = perm[start:start + args.minibatch_size]
            pick = lambda t: t.index_select(0, mb)  # the rows of the minibatch (faster than t[mb])
            critic = None if b["critic"] is None else pick(b["critic"])
            _, new_logp, entropy, new_values, log_probs = model.get_action_and_value(
                pick(b["obs"]), pick(b["masks"]), pick(b["actions"]), critic, return_log_probs=True)
            mb_adv = pick(b["adv"])
            mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std(unbiased=False) + 1e-8)  # a minibatch may hold 1 row
            parts = ppo_losses(new_logp, pick(b["logp"]), mb_adv, new_values, pick(b["values"]), pick(b["ret"]),
                               entropy, args.clip_coef)
            loss = parts["pg_loss"] - args.ent_coef * parts["entropy"] + args.vf_coef * parts["v_loss"]
            if args.endgame_teacher_coef:
                parts["teacher"] = teacher_loss(log_probs, pick(b["teach"]), pick(b["taught"]))
                loss = loss + args.endgame_teacher_coef * parts["teacher"]
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            for k, v in parts.items():
                stats.setdefault(k, []).append(float(v.detach()))
    return stats


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


def evaluate(model, rules, args, opponents, deals, seed, run_dir):
    """Arena on duplicate deals: the current policy (greedy) against each opponent, under the run's rules."""
    from agents.evaluation.arena import play_match

    path = Path(run_dir) / "eval_policy.pt"
    save_policy(path, model, rules, args)
    knobs = {k: v for k, v in rules.to_dict().items() if k != "ruleset"}
    return {name: play_match(str(path), name, n_deals=deals, ruleset=rules.name, seed=seed, workers=args.eval_workers,
                             progress=False, **knobs)
            for name in opponents}


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
TRAINER_KEYS = ("optimizer", "pool", "samplers", "rng", "torch_rng", "global_step", "update", "hands", "evals",
                "history", "next_request")


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
    saved = {**ADDED_ARGS, **saved}
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
    saved = {**saved, "final_eval_opponents": tuple(saved["final_eval_opponents"]), "knob": tuple(saved["knob"])}
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


def trainer_state_problem(tr, args: Args, model: ActorCritic, n_obs: int, n_actions: int, capacity: int,
                          critic_cols: int) -> str | None:
    """What is wrong with a checkpoint's trainer state for this run (None when it fits): its keys, counters, pool
    snapshots, optimizer state, every sampler's state (:func:`agents.training.self_play.sampler_state_problem`) and the
    generator states are checked before any of it is used (the env's hands are checked when they are loaded)."""
    from agents.training.self_play import tensor_problem

    if not isinstance(tr, dict):
        return f"'trainer' is a {type(tr).__name__}, expected a dict"
    tr = {"next_request": None, **tr}  # checkpoints from before --overlap-sampling have none
    missing = [k for k in TRAINER_KEYS if k not in tr]
    unknown = sorted(map(str, set(tr) - set(TRAINER_KEYS)))
    if missing or unknown:
        return f"'trainer' lacks {missing} and has unknown {unknown}: expected the keys {list(TRAINER_KEYS)}"
    for k in ("global_step", "update", "hands", "evals"):
        if not _is_int(tr[k]) or tr[k] < 0:
            return f"trainer {k!r} is {tr[k]!r}, expected an int >= 0"
    if not isinstance(tr["samplers"], list) or len(tr["samplers"]) != args.samplers:
        return f"trainer 'samplers' must be a list of the states of the run's {args.samplers} samplers"
    for i, st in enumerate(tr["samplers"]):
        problem = sampler_state_problem(st, args.num_envs, n_obs, n_actions, capacity, critic_cols)
        if problem:
            return f"sampler {i}: {problem}"
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}

    def weights_problem(name, sd):
        if not isinstance(sd, dict) or list(sd) != list(shapes):
            return f"{name} does not have the network's parameters {list(shapes)}"
        for k, v in sd.items():
            problem = tensor_problem(f"{name} {k!r}", v, shapes[k], (torch.float32,))
            if problem:
                return problem
            if not torch.isfinite(v).all():
                return f"{name} {k!r} holds NaN or inf"
        return None

    if not isinstance(tr["pool"], list) or len(tr["pool"]) > args.pool_size:
        return f"trainer 'pool' must be a list of at most {args.pool_size} snapshots (--pool-size)"
    for i, snap in enumerate(tr["pool"]):
        problem = weights_problem(f"pool snapshot {i}", snap)
        if problem:
            return problem
    req = tr["next_request"]
    if req is not None:
        if not isinstance(req, dict) or set(req) != {"weights", "opponent"}:
            return "trainer 'next_request' must be None or a dict with keys 'weights' and 'opponent'"
        problem = weights_problem("trainer 'next_request' weights", req["weights"]) or (
            None if req["opponent"] is None else weights_problem("trainer 'next_request' opponent", req["opponent"]))
        if problem:
            return problem
        if not args.overlap_sampling:
            return "trainer 'next_request' is set, but the run does not overlap sampling"
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
            problem = tensor_problem(f"optimizer state {i} {k!r}", st.get(k), tuple(params[i].shape),
                                     (torch.float32,))
            if problem:
                return problem
    ref = torch.get_rng_state()
    problem = tensor_problem("trainer 'torch_rng'", tr["torch_rng"], tuple(ref.shape), (ref.dtype,))
    if problem:
        return problem
    if not isinstance(tr["rng"], dict) or tr["rng"].get("bit_generator") != "PCG64":
        return "trainer 'rng' is not the state of numpy's PCG64 generator"
    if not isinstance(tr["history"], list) or not all(isinstance(h, dict) for h in tr["history"]):
        return "trainer 'history' must be a list of dicts"
    return None


def sampler_kwargs(args: Args, rules: RuleSet, net: dict, index: int) -> dict:
    """The keyword arguments of the run's sampler ``index`` (:class:`agents.training.self_play.Sampler`), for ``args`` as
    :func:`main` resolves them (``samplers`` set, ``precision`` "fp32" or "bf16")."""
    return dict(index=index, rules=rules.to_dict(), num_envs=args.num_envs, seed=args.seed, net=net,
                rows_per_call=-(-args.batch_size // args.samplers), pool_prob=args.pool_prob,
                heuristic_prob=args.heuristic_prob, gamma=args.gamma, gae_lambda=args.gae_lambda,
                precision=args.precision, endgame_teacher=args.endgame_teacher_coef > 0)


def start_samplers(args: Args, rules: RuleSet, net: dict):
    """The run's samplers (:mod:`agents.training.self_play`): in this process, local processes, or Ray actors."""
    kwargs = [sampler_kwargs(args, rules, net, i) for i in range(args.samplers)]
    if args.ray_address is not None:
        return RaySamplers(kwargs, args.ray_address)
    if args.inline_samplers:
        return InProcessSamplers(kwargs)
    return ProcessSamplers(kwargs, nice=args.sampler_nice if args.overlap_sampling else 0)


# ----------------------------------------------------------------------------------------- main
def main(args: Args) -> dict:
    """Train (or resume) a run; returns its summary (run folder, steps, steps/s, sampler counts, final evaluation).

    Raises:
        ValueError: bad flags (naming the flag, its value and what it takes), sizes beyond this machine's memory, a
            run folder that cannot be written, flags that conflict with a resumed run.
        CheckpointError: a --resume checkpoint that is missing, corrupt, without trainer state, or from an
            incompatible version (the message names both versions).
        WriteError: a checkpoint, policy or summary could not be written (full disk, read-only folder); the message
            names the last good checkpoint, which is kept.
        SamplerError: a sampler process or actor failed or died (its traceback is in the message).
    """
    resume_ckpt = None
    if not args.resume:
        args = dataclasses.replace(
            args, total_steps=DEFAULT_TOTAL_STEPS if args.total_steps is None else args.total_steps,
            samplers=cores() if args.samplers is None else args.samplers)  # 0 is refused by validate, not replaced
    else:
        resume_ckpt = load_checkpoint(args.resume)
        args = resumed_args(resume_ckpt, args)
    if args.threads is None:  # overlapping local samplers hold their cores during the update; else all of them
        overlapped = args.overlap_sampling and not args.inline_samplers and args.ray_address is None
        args = dataclasses.replace(args, threads=max(1, cores() - args.samplers) if overlapped else cores())
    validate(args)
    args = dataclasses.replace(args, precision=resolve_precision(args.precision, args.device))
    rules = rules_of(args)
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
    if resume_ckpt is None and any((run_dir / name).exists() for name in ("checkpoint.pt", "policy.pt")):
        raise ValueError(f"the run folder {str(run_dir)!r} already holds a run: continue it with --resume "
                         f"{str(run_dir / 'checkpoint.pt')!r}, or give another --run-name (or remove the folder)")
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    # Seeding: one block for every generator (CleanRL style); the samplers seed theirs from (seed, index).
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    if args.torch_deterministic and device.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS's condition for deterministic GEMMs
    torch.use_deterministic_algorithms(args.torch_deterministic)

    critic_dim = state_size(rules) + 2 if args.privileged_critic else 0
    model = ActorCritic(obs_size(rules), rules.n_actions, args.hidden, args.layers, critic_dim).to(device)
    model.precision = args.precision
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=1e-5)
    capacity = sampler_capacity(-(-args.batch_size // args.samplers), args.num_envs)
    pool: list[dict] = []
    global_step, update, hands, evals = 0, 0, 0, 0
    history: list[dict] = []
    sampler_states = None
    next_request = None  # the samplers' next batch, drawn before the last update (--overlap-sampling)
    if resume_ckpt is not None:
        tr = resume_ckpt["trainer"]
        problem = trainer_state_problem(tr, args, model, obs_size(rules), rules.n_actions, capacity,
                                        max(critic_dim, 1))
        try:
            if problem is None:
                model.load_state_dict(resume_ckpt["model"])
                optimizer.load_state_dict(tr["optimizer"])
                rng.bit_generator.state = tr["rng"]
                torch.set_rng_state(tr["torch_rng"])
        except (ValueError, TypeError, KeyError, IndexError, RuntimeError, AttributeError) as e:
            problem = f"{type(e).__name__}: {_one_line(e)}"
        if problem is not None:
            raise CheckpointError(f"checkpoint {args.resume!r} cannot be resumed: {problem} ({versions_text(resume_ckpt)}):"
                                  " expected the checkpoint.pt of a run of this version with these arguments")
        pool = list(tr["pool"])
        next_request = tr.get("next_request")
        sampler_states = tr["samplers"]
        global_step, update, hands, evals = tr["global_step"], tr["update"], tr["hands"], tr["evals"]
        history = list(tr["history"])
        if global_step >= args.total_steps and (run_dir / "policy.pt").exists():  # else: write the final policy
            raise ValueError(f"the run in {str(run_dir)!r} already finished at {global_step:,} learner decisions "
                             f"(--total-steps {args.total_steps:,}): pass a larger --total-steps to extend it")

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

    if args.progress:  # the bar stays at 0 while the samplers start, which can take a minute the first time
        print(f"starting {args.samplers} sampler(s); on a machine's first run numba compiles the engine first "
              "(up to a minute)", flush=True)
    samplers = start_samplers(args, rules, model.config())
    try:
        if sampler_states is not None:
            try:
                samplers.set_state(sampler_states)
            except Exception as e:  # a hand that does not load (the env names what is wrong)
                reason = e.reason if isinstance(e, SamplerError) else f"{type(e).__name__}: {e}"
                raise CheckpointError(f"checkpoint {args.resume!r} cannot be resumed: a sampler state does not load: "
                                      f"{_one_line(reason)} ({versions_text(resume_ckpt)})") from None
        writer = tensorboard_writer(args, rules, run_dir,
                                    resumed_step=global_step if resume_ckpt is not None else None)
        print(f"run {run_dir}  seed {args.seed}  samplers {args.samplers}  rules {json.dumps(rules.to_dict())}",
              flush=True)

        n_updates_total = max(1, args.total_steps // args.batch_size)
        bar = tqdm(total=args.total_steps, initial=min(global_step, args.total_steps), disable=not args.progress,
                   unit="step", dynamic_ncols=True)
        latest_eval = ""
        t_start, steps_at_start = time.time(), global_step
        rows_trained, pending, per_sampler = 0, 0, [0] * args.samplers
        # Wall-clock seconds the learner waited for batches (under --overlap-sampling, only the part of the
        # sampling that the update did not cover) and spent in the PPO updates.
        sampling_s = update_s = 0.0
        pids: set[int] = set()

        def save_checkpoint(path):
            extra = {"trainer": {
                "optimizer": optimizer.state_dict(), "pool": pool, "samplers": samplers.get_state(),
                "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(), "global_step": global_step,
                "update": update, "hands": hands, "evals": evals, "history": history, "next_request": next_request}}
            try:
                save_policy(path, model, rules, args, extra)
            except WriteError as e:
                raise write_failed(e) from None
            nonlocal last_good
            last_good = (update, global_step)

        def run_evaluation(opponents, deals, seed):
            try:
                return evaluate(model, rules, args, opponents, deals, seed=seed, run_dir=run_dir)
            except WriteError as e:
                raise write_failed(e) from None

        exact_tree = []  # built on the first exact measurement (agents.game_theory.exact.Tree, about 5 s)

        def measure_nash_conv() -> None:
            """The current policy's exact NashConv (schnapsen10), into the history, TensorBoard and the log."""
            from agents.game_theory import exact

            if not exact_tree:
                exact_tree.append(exact.Tree(rules))
            was_training = model.training
            model.eval()
            try:
                res = exact_tree[0].nash_conv(exact.network_policy(model))
            finally:
                model.train(was_training)
            history.append({"step": global_step, "nash_conv": res["nash_conv"],
                            "exploitability": res["exploitability"]})
            tqdm.write(f"exact at {global_step:,} steps: NashConv {res['nash_conv']:.4f} game points "
                       f"(exploitability {res['exploitability']:.4f})")
            if writer is not None:
                writer.add_scalar("exact/nash_conv", res["nash_conv"], global_step)
                writer.add_scalar("exact/exploitability", res["exploitability"], global_step)

        def sampling_request() -> dict:
            """What the samplers play the next batch with: the learner's weights now and a pool opponent."""
            opponent = pool[int(rng.integers(len(pool)))] if pool else None
            return {"weights": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
                    "opponent": opponent}

        rows_per_sampler = -(-args.batch_size // args.samplers)
        updates_this_call = 0
        in_flight = False  # the samplers are playing next_request's batch (--overlap-sampling)
        overlapped = 0  # batches the samplers played during an update
        while global_step < args.total_steps:
            if args.stop_after_updates is not None and updates_this_call >= args.stop_after_updates:
                break
            # ------------------------------------------------------------ sampling (the samplers, in parallel)
            t0 = time.perf_counter()
            if not in_flight:
                next_request = next_request or sampling_request()
                samplers.submit(next_request["weights"], next_request["opponent"], rows_per_sampler)
            results = samplers.gather()
            in_flight, next_request = False, None
            t1 = time.perf_counter()
            sampling_s += t1 - t0
            batch = {k: np.concatenate([b[k] for b, _ in results]) for k in results[0][0]}
            for i, (b, st) in enumerate(results):
                per_sampler[i] += st["decisions"]
                pids.add(st["pid"])
            new_steps = sum(st["decisions"] for _, st in results)
            bar.update(max(0, min(new_steps, args.total_steps - bar.n)))  # the bar stops at its total
            global_step += new_steps
            hands += sum(st["hands"] for _, st in results)
            opp_hands = sum(st["opponent_hands"] for _, st in results)
            opp_points = sum(st["opponent_points"] for _, st in results)
            pending = sum(st["pending"] for _, st in results)
            # --overlap-sampling: the next batch is played with the weights from before this update (one update of
            # lag), during the update; where a checkpoint follows (it saves the samplers' states, which a batch in
            # flight would change) the request waits in the checkpoint, so a resumed run plays the same batches.
            if args.overlap_sampling and global_step < args.total_steps:
                next_request = sampling_request()
                if ((update + 1) % args.checkpoint_every != 0
                        and (args.stop_after_updates is None or updates_this_call + 1 < args.stop_after_updates)):
                    samplers.submit(next_request["weights"], next_request["opponent"], rows_per_sampler)
                    in_flight = True
                    overlapped += 0 if args.inline_samplers else 1  # inline samplers play it when gathered

            # ------------------------------------------------------------ PPO update (the learner)
            if args.anneal_lr:
                # Linear decay; a run's last batches (each at least --batch-size, so the count rounds up) keep the
                # last step's rate instead of 0.
                frac = max(1.0 - update / n_updates_total, 1.0 / n_updates_total)
                optimizer.param_groups[0]["lr"] = frac * args.learning_rate
            tensors = batch_tensors(batch, device, model.precision, rules.n_actions, critic_dim > 0)
            n = len(tensors["actions"])
            rows_trained += n
            stats = ppo_update(model, optimizer, tensors, rng, args)
            update_s += time.perf_counter() - t1
            y_pred, y_true = batch["values"], batch["ret"]
            var_y = np.var(y_true)
            explained_var = float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)
            update += 1
            updates_this_call += 1
            sps = (global_step - steps_at_start) / max(1e-9, time.time() - t_start)
            if update % args.pool_every == 0:
                pool.append({k: v.detach().cpu().clone() for k, v in model.state_dict().items()})
                pool = pool[len(pool) - args.pool_size:] if len(pool) > args.pool_size else pool
            if writer is not None:
                writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
                writer.add_scalar("charts/SPS", sps, global_step)
                writer.add_scalar("charts/hands", hands, global_step)
                if opp_hands:
                    writer.add_scalar("charts/opponent_game_points_per_hand", opp_points / opp_hands, global_step)
                for k, v in stats.items():
                    writer.add_scalar(f"losses/{k}", float(np.mean(v)), global_step)
                writer.add_scalar("losses/explained_variance", explained_var, global_step)
                if args.endgame_teacher_coef:
                    writer.add_scalar("charts/teacher_labelled_share", float(tensors["taught"].float().mean()),
                                      global_step)

            # ------------------------------------------------------------ evaluation and checkpoints
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
            if args.nash_conv_every and (update % args.nash_conv_every == 0 or final):
                measure_nash_conv()
            bar.set_postfix_str(f"{sps:,.0f} steps/s {latest_eval}")
            if update % args.checkpoint_every == 0 or final:
                save_checkpoint(ckpt_path)
        bar.close()
        sps = (global_step - steps_at_start) / max(1e-9, time.time() - t_start)
        print(f"trained {global_step:,} learner decisions, {hands:,} hands, {update} updates, {sps:,.0f} steps/s",
              flush=True)
        save_checkpoint(ckpt_path)
    finally:
        samplers.close()
    summary = {"run_dir": str(run_dir), "steps": global_step, "steps_per_second": sps, "samplers": args.samplers,
               "sampler_decisions": per_sampler, "sampler_pids": sorted(pids), "decisions_trained": rows_trained,
               "decisions_pending": pending, "sampling_seconds": sampling_s, "update_seconds": update_s,
               "batches_overlapped": overlapped,
               "nash_conv": [{"step": h["step"], "nash_conv": h["nash_conv"], "exploitability": h["exploitability"]}
                             for h in history if "nash_conv" in h],
               "evaluation": {}}
    if global_step < args.total_steps:
        print(f"stopped after {updates_this_call} updates; continue with --resume {ckpt_path}")
        close_writer(writer)
        return summary
    try:
        save_policy(run_dir / "policy.pt", model, rules, args)
    except WriteError as e:
        raise write_failed(e) from None
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


# ------------------------------------------------------------------------------------------ command line
class UsageError(ValueError):
    """A command line that tyro refused, as one line naming the flag, the problem and what it takes."""


def _usage_line(event, prog: str = "train.py") -> str:
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
                f"{prog} --help lists (each --flag followed by its value, if it takes one)")
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
        return f"missing argument(s): expected the flags that {prog} --help marks as required"
    return f"the command line was refused ({kind}): expected the flags that {prog} --help lists"


def parse_args(argv: list[str] | None = None, cls: type = Args, prog: str = "train.py"):
    """The arguments from the command line (tyro, from the dataclass ``cls``: :class:`Args`, or
    ``train_rllib.RLlibArgs``).

    Raises:
        UsageError: an unknown flag, a value of the wrong type, a choice not offered, a missing value: one line
            (through tyro's parse-error hook, ``tyro._errors.on_parse_error``; a tyro without it prints its own
            message and exits with status 2).
    """
    try:
        from tyro import _errors as tyro_errors
        on_parse_error = tyro_errors.on_parse_error
    except (ImportError, AttributeError):  # a tyro without the hook: its own message, flattened to one line
        return _parse_flattened(argv, cls, prog)

    def refuse(event) -> None:
        raise UsageError(_usage_line(event, prog))

    with on_parse_error(refuse):
        return tyro.cli(cls, args=merge_repeated(argv, "--knob"), prog=prog)


def merge_repeated(argv: list[str] | None, flag: str) -> list[str]:
    """The command line with every ``flag`` (a flag taking several values) gathered into one at its end.

    tyro keeps only the values of the last occurrence of such a flag, so ``--knob a=1 --knob b=2`` would train
    without ``a=1``, silently; the arena takes ``--knob`` repeated, so train.py takes both ``--knob a=1 b=2`` and
    ``--knob a=1 --knob b=2``. The values of one occurrence are the tokens after it up to the next one that starts
    with ``-`` (or ``--flag=VALUE``: that one value), as argparse reads them.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if sum(tok == flag or tok.startswith(flag + "=") for tok in argv) < 2:
        return argv
    rest: list[str] = []
    values: list[str] = []
    tail: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        i += 1
        if tok == "--":  # everything after it is positional
            tail = argv[i - 1:]
            break
        if tok.startswith(flag + "="):
            values.append(tok[len(flag) + 1:])
        elif tok == flag:
            while i < len(argv) and not argv[i].startswith("-"):
                values.append(argv[i])
                i += 1
        else:
            rest.append(tok)
    return rest + [flag, *values] + tail


def _parse_flattened(argv: list[str] | None, cls: type, prog: str):
    """tyro.cli with its error box (stderr) turned into one line: :class:`UsageError`."""
    import contextlib
    import io

    box = io.StringIO()
    try:
        with contextlib.redirect_stderr(box):
            return tyro.cli(cls, args=merge_repeated(argv, "--knob"), prog=prog)
    except SystemExit as e:
        if e.code in (0, None):
            sys.stderr.write(box.getvalue())
            raise
        text = re.sub(r"\x1b\[[0-9;]*m|[\u2500-\u257f]", " ", box.getvalue())  # colours and box drawing
        text = _one_line(text.split("For full helptext")[0])
        raise UsageError(f"{text}: expected the flags that {prog} --help lists") from None


def cli(argv: list[str] | None = None, cls: type = Args, prog: str = "train.py", run=None) -> int:
    """``python train.py`` (or ``train_rllib.py``: ``cls``, ``prog`` and ``run`` of that file): parse the flags,
    run :func:`main`, return the exit status.

    A user's mistake never ends in a traceback: a bad flag or value, a path that cannot be used, a bad or
    incompatible checkpoint print one line ``train.py: error: ...`` and return 2; a write that fails (a full disk)
    prints one line naming the last good checkpoint and returns 1. A sampler that fails (a bug, not a user's
    mistake) prints its traceback and returns 1.
    """
    try:
        args = parse_args(argv, cls, prog)
        (run or main)(args)
    except ValueError as e:  # bad flags, paths, checkpoints (CheckpointError and UsageError are ValueErrors)
        print(f"{prog}: error: {_one_line(e, 2000)}", file=sys.stderr)
        return 2
    except SamplerError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a write that failed (WriteError names the file and the last good checkpoint)
        print(f"{prog}: error: {_one_line(e, 2000)}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{prog}: error: out of memory: expected smaller --num-envs, --batch-size or --hidden",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted: the last checkpoint written is kept (continue with --resume)",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(cli())
