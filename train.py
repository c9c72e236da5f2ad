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
  own tail; ``heuristic_prob`` adds hands against the scripted ``HeuristicAgent``, ``random_prob`` hands against a
  uniformly random player (exploration: the teachers then label positions self-play never reaches), and
  ``--opponent`` with ``--opponent-prob`` hands against a frozen target policy (1.0: a learned best response to it).
* Each seat's decisions in one hand form a chain; the only reward is the hand's game points at its end, so
  advantages are computed per chain when the hand ends (no truncated chains). With ``--endgame-bootstrap`` a
  chain's decisions before the exhausted stock end there instead, with the solver's exact value of the position.
* Teachers: once the stock is exhausted, the exact solver's best actions (``--endgame-teacher-coef``); while cards
  are hidden, on a share of the decisions, the expert's search on the learner's observation
  (``--search-teacher-share``, expert iteration, Anthony, Tian & Barber 2017); both add ``-log P(best actions)``.
* Tail weight averaging (``--average-last``, SWA, Izmailov et al. 2018): the policy the run writes is the mean of
  the weights after each of its last updates; training goes on with the last weights.
* Optional privileged critic (``--privileged-critic``): the value head also sees the env's omniscient ``state()``
  vector plus the seat, as in PerfectDou (Yang et al. 2022); the policy never does.
* Periodic evaluation on duplicate deals through the arena (:mod:`agents.evaluation.arena`) against
  ``--eval-opponents`` (``random`` and ``heuristic``; ``rollout`` every ``eval_rollout_every`` evaluations), with
  the learner decisions and the training seconds (evaluations excluded): the learning curves.
* The network and its checkpoint format have one owner, :mod:`agents.learned.policy_net`. Checkpoints are written
  atomically with the arguments, versions, rules and observation layout; ``--resume`` continues exactly where the
  run stopped (every sampler's hands, chains and generator, the learner's optimiser and generators).

This file is the recipe (:class:`Args`; the flags shared with ``train_rllib.py`` are
:class:`agents.training.recipe.PPOArgs`) and the loop: sample, PPO update, evaluate, checkpoint. GAE is computed
in the samplers when a hand ends (:func:`agents.training.self_play.chain_gae`): they run in their own processes or
Ray actors, which import the package, never this script. The plumbing lives in :mod:`agents.training`: flag
checks and the arguments a run trains with (``recipe``, ``trainer_flags``), ``--resume`` and where a run stands
(``resume``), the run folder (``run_files``), the tail average (``tail_average``), TensorBoard, evaluation and the
samplers' counts (``reporting``), and the command line's one-line errors (``command_line``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

# The learner's OpenMP threads sleep while they wait instead of spinning: a spinning thread holds its core while
# the samplers or any other program need it, and on a busy 2-core machine the 2-thread update took several times
# longer (measured). Set before torch loads its OpenMP runtime; an explicit setting of the user's wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
from tqdm import tqdm  # noqa: E402

from agents.learned.policy_net import ActorCritic, sparse_rows  # noqa: E402
from agents.training import command_line, resume, trainer_flags  # noqa: E402
from agents.training.recipe import PPOArgs, rules_of  # noqa: E402
from agents.training.reporting import (  # noqa: E402
    SamplerTally,
    close_writer,
    eval_panel,
    evaluation_table,
    log_update,
    measure_nash_conv,
    next_steps,
    record_evaluation,
    rules_text,
    search_teacher_report,
    tensorboard_writer,
)
from agents.training.run_files import RunFiles, run_folder  # noqa: E402
from agents.training.self_play import (  # noqa: E402
    SAMPLER_NICE,
    SamplerError,
    batch_tensors,
    equilibrium_table,
    sampler_capacity,
    start_samplers,
)
from agents.training.tail_average import TailAverage  # noqa: E402
from schnapsen_env.encoding import obs_size, state_size  # noqa: E402


@dataclass
class Args(PPOArgs):
    """PPO self-play trainer for Schnapsen / Sixty-Six: sampler processes and a learner."""

    learning_rate: float = 1e-3
    """Adam learning rate (train_rllib.py keeps 3e-4); at 1e-3 the default run ends far stronger against pimc
    and expert than at 3e-4 (docs/training.md, benchmarks/recipe_variants_schnapsen20.json)"""
    hidden: int = 128
    """hidden layer width (train_rllib.py keeps 256); at 128 the default run ties expert within 20 minutes on a
    2-core AVX2-only machine, which the 256-wide network does not (docs/training.md,
    benchmarks/default_run_schnapsen20.json)"""
    samplers: int | None = None
    """sampler processes (default: this machine's cores); a seeded run is reproducible for a fixed count"""
    num_envs: int = 256
    """hands played in parallel by each sampler"""
    inline_samplers: bool = False
    """run the samplers in the learner's process, one after another; the same results as processes at the same
    --threads, whose default differs between the two (for debugging)"""
    ray_address: str | None = None
    """Ray to run the samplers on as actors (one CPU each); "local" starts one here, "auto" or "HOST:PORT" joins a
    running cluster (extra "rllib")"""
    device: str = "cpu"
    """torch device of the learner: "cpu", or "cuda" when present (samplers always act on the CPU)"""
    precision: str = "auto"
    """how the trunk computes: "fp32", "bf16" or "auto"; in the learner and the samplers: "fp32", "bf16" (bfloat16 matrix
    products under torch.autocast, weights and optimiser in float32; about half the update's time where the
    hardware has bfloat16 arithmetic) or "auto" (bf16 on a CPU with AVX512-BF16 or AMX and on a CUDA device with
    bfloat16, else fp32); the checkpoint records the resolved value"""
    torch_deterministic: bool = True
    """deterministic torch kernels; torch.use_deterministic_algorithms (on CUDA it also sets
    CUBLAS_WORKSPACE_CONFIG=:4096:8 when unset, as cuBLAS requires); --no-torch-deterministic may be faster on a
    GPU"""
    privileged_critic: bool = False
    """value head also sees the omniscient state vector; as in PerfectDou (Yang et al. 2022)"""
    canonical_trump: bool = False
    """the network sees every hand as one of clubs trumps; the observation's suits relabelled so that trump is
    clubs and the logits mapped back (agents/learned/policy_net.py): the game is the same under any relabelling of
    the suits, so what it learns from one trump's hands holds for all four"""
    canonical_suits: bool = True
    """as --canonical-trump, and the other suits sorted; in a canonical order, by what the observation shows of each
    (its cards in every card plane, then its marriages), so that hands which differ only in the names of their suits
    look the same to the network (agents/learned/policy_net.py); the default run ends ahead of trump alone and far
    ahead of the suits as dealt against expert (docs/training.md)"""
    overlap_sampling: bool = True
    """the samplers play the next batch while the learner updates; they act with the weights from before the
    update (one update of lag: PPO's ratio is taken to the log-probabilities the samplers recorded, so the clipped
    ratio corrects for it); --no-overlap-sampling samples and updates in turn, on-policy"""
    sampler_nice: int = SAMPLER_NICE
    """the local samplers' nice under --overlap-sampling; how much lower than the learner's the local sampler
    processes' scheduling priority is (POSIX nice, 0 to 19): the update keeps its core while they play; they also yield to every
    other program, so on a machine shared with other busy jobs 0 (equal priority) can be faster"""
    average_last: float = 0.1
    """share of the run's last updates averaged into policy.pt; tail weight averaging (SWA, Izmailov et al.
    2018): policy.pt and the final evaluation are the uniform average of the weights after each of the last share
    of the --total-steps / --batch-size updates planned, and after the last update always (0: the last weights;
    0.1 ended closer to expert than 0 and 0.25, docs/training.md); training, the pool and the periodic
    evaluations use the last weights, and checkpoint.pt keeps both, so --resume continues the average exactly"""
    endgame_teacher_coef: float = 1.0
    """weight of the endgame teacher's loss; once the stock is exhausted the position is one of perfect
    information, so the samplers label each such learner decision with its exactly best actions (the compiled
    solver) and the update adds -log P(best actions) on those decisions; 0 turns the teacher off"""
    endgame_bootstrap: bool = False
    """returns end at the exhausted stock with its exact value; each seat's decisions before its first
    decision once the stock is exhausted (S = 0: perfect information) get that position's exact value as their final
    reward, as if both seats played perfectly from then on, instead of the hand's result (tablebase rescoring, as
    Leela Chess Zero rescores its games); the decisions from there on keep the hand's result"""
    search_teacher_share: float = 0.0
    """share of hidden-card decisions the expert labels; the search teacher (expert iteration): that share of the
    learner's decisions while cards are hidden (the stock open or closed, with a choice) is labelled by the samplers
    with the best actions of the expert's search (full-depth PIMC, agents/search/expert.py) on the learner's own
    observation, for a loss like the endgame teacher's; 0: off. A search costs tens of milliseconds where a decision
    costs microseconds, so shares are small; the run reports what the search cost (docs/training.md measures one)"""
    search_teacher_nodes: int = 200_000
    """the search teacher's node budget a decision; the expert's max_nodes (1,500,000 when it plays)"""
    search_teacher_stock: int | None = None
    """label where the open stock has <= this many cards or is closed; the search teacher's positions
    (R18: a closed stock); default: every hidden-card decision. 6 in schnapsen20 labels from the third trick on, where the expert is
    strongest against a policy (policy+expert hands it the same positions)"""
    search_teacher_coef: float = 1.0
    """weight of the search teacher's loss; -log P(the search's best actions) on the labelled decisions"""
    search_teacher: str = "expert"
    """who labels for the search teacher, "expert" or "cfr"; "expert": full-depth PIMC, its best actions;
    --ruleset schnapsen10 only, "cfr": the game's CFR+ equilibrium (agents/game_theory/exact.py, --cfr-iterations, solved
    once at the start, a minute or two, and kept in the run folder as equilibrium.npz), one action sampled from its
    mixed strategy on the learner's observation, so the loss is in expectation the cross-entropy to it"""
    cfr_iterations: int = 100
    """CFR+ iterations of --search-teacher cfr; 100: NashConv about 0.0015 (0.003 written down by observation)"""
    opponent: str | None = None
    """frozen target (a .pt, shipped name or agent spec); a train.py .pt or a shipped policy of this ruleset
    (trained-220m, trained-schnapsen10, ...), any network size, plays its masked softmax, sampled with the samplers'
    seeded generators; an agent that searches one observation at a time (expert, pimc, ...) plays as the
    deterministic strategy whose exploitability agents/game_theory/exact.py measures (its generator seeded from the
    observation), a search a decision; neither is trained (benchmarks/learned_best_response.py)"""
    opponent_greedy: bool = False
    """the --opponent policy plays its argmax; its most probable legal action: a deterministic strategy, as the arena plays a
    policy, instead of sampling its softmax (an agent --opponent is deterministic already)"""
    random_prob: float = 0.0
    """share of hands against a uniformly random player; one seat, drawn at the hand's start: exploration, the
    teachers label the positions its moves lead to, which self-play never reaches and a best responder does"""
    opponent_prob: float = 0.0
    """share of hands against --opponent; one seat, drawn at the hand's start; 1.0: every hand, a best response to
    it (then also --pool-prob 0 --heuristic-prob 0); the four shares (pool, heuristic, random, opponent) sum to at
    most 1, self-play is the rest"""
    eval_every: int = 200
    """updates between evaluations (0: only the final one)"""
    eval_opponents: tuple[str, ...] = ("random", "heuristic")
    """opponents of every periodic evaluation; agent specs, e.g. random heuristic pimc expert; each
    evaluation's results, training seconds and learner decisions go to TensorBoard and summary.json's history"""
    eval_deals: int = 200
    """duplicate deals (2 hands each) per evaluation and opponent"""
    eval_rollout_every: int = 3
    """also evaluate against "rollout" every N-th evaluation; 0: never; every N-th periodic evaluation only, as it
    is slower"""
    nash_conv_every: int = 0
    """--ruleset schnapsen10 only: updates between exact measurements of the policy's exploitability (NashConv of
    its masked softmax in fp32 over the whole game tree, agents/game_theory/exact.py; about 1.5 minutes each on one core, the
    learner waiting), logged to TensorBoard (exact/nash_conv) and summary.json, and once more at the end; 0: never"""
    init_from: str | None = None
    """start from a policy's weights (a .pt or shipped name); a train.py .pt or a shipped policy's name, of this
    ruleset and network size (with another critic, --privileged-critic or not, only the actor: trunk and policy
    head); the optimizer, pool and step count start afresh: fine-tuning, or a best response that
    starts at its target; a --resume keeps the weights of its checkpoint"""
    resume: str | None = None
    """checkpoint to continue from (its arguments are used; --total-steps may extend the run)"""
    stop_after_updates: int | None = None
    """updates after which this invocation stops; with a checkpoint, without the final evaluation, for time-boxed
    jobs; --resume continues the run exactly"""



# ----------------------------------------------------------------------------------------- PPO
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


def ppo_update(model: ActorCritic, optimizer: torch.optim.Optimizer, b: dict, rng: np.random.Generator,
               args: Args) -> dict[str, list[float]]:
    """One PPO update on the batch ``b`` (:func:`agents.training.self_play.batch_tensors`): ``args.update_epochs``
    epochs over minibatches of ``args.minibatch_size`` rows in the order of ``rng``'s permutations, each minibatch
    one Adam step on the clipped surrogate, the entropy bonus, the value loss and (``args.endgame_teacher_coef``) the
    teacher's loss, and (``args.search_teacher_coef`` with ``args.search_teacher_share``) the same loss on the
    search teacher's labels.

    Returns:
        Every minibatch's loss pieces by name (:func:`ppo_losses`' keys, plus ``"teacher"`` when
        ``args.endgame_teacher_coef`` is not 0 and ``"search_teacher"`` when the search teacher is on), as floats.
    """
    search_coef = args.search_teacher_coef if args.search_teacher_share else 0.0
    n = len(b["actions"])
    # once for all epochs (it depends on no weight), a minibatch of rows at a time (trainer_flags.memory_estimate
    # counts the relabelled copy)
    obs, table = model.relabel(b["obs"], rows=args.minibatch_size)
    # the first layer reads the observations' non-zero entries (most are zeros) where the trunk runs in float32,
    # found once for all epochs, a minibatch of rows at a time (the temporaries a chunk's, as the relabelling's;
    # memory_estimate counts what is kept)
    sparse = sparse_rows(obs, rows=args.minibatch_size) if model.precision == "fp32" else None
    stats: dict[str, list[float]] = {}
    for _ in range(args.update_epochs):
        perm = torch.from_numpy(rng.permutation(n)).to(b["actions"].device)
        for start in range(0, n, args.minibatch_size):
            mb = perm[start:start + args.minibatch_size]
            pick = lambda t, mb=mb: t.index_select(0, mb)  # the rows of the minibatch (faster than t[mb])
            critic = None if b["critic"] is None else pick(b["critic"])
            _, new_logp, entropy, new_values, log_probs = model.get_action_and_value(
                pick(obs), pick(b["masks"]), pick(b["actions"]), critic, return_log_probs=True,
                relabelled=None if table is None else pick(table),
                sparse=None if sparse is None else (pick(sparse[0]), pick(sparse[1])))
            mb_adv = pick(b["adv"])
            mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std(unbiased=False) + 1e-8)  # a minibatch may hold 1 row
            parts = ppo_losses(new_logp, pick(b["logp"]), mb_adv, new_values, pick(b["values"]), pick(b["ret"]),
                               entropy, args.clip_coef)
            loss = parts["pg_loss"] - args.ent_coef * parts["entropy"] + args.vf_coef * parts["v_loss"]
            if args.endgame_teacher_coef:
                parts["teacher"] = teacher_loss(log_probs, pick(b["teach"]), pick(b["taught"]))
                loss = loss + args.endgame_teacher_coef * parts["teacher"]
            if search_coef:
                parts["search_teacher"] = teacher_loss(log_probs, pick(b["search"]), pick(b["searched"]))
                loss = loss + search_coef * parts["search_teacher"]
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            for k, v in parts.items():
                stats.setdefault(k, []).append(float(v.detach()))
    return stats


def sampling_request(model: ActorCritic, pool: list[dict], rng: np.random.Generator) -> dict:
    """What the samplers play the next batch with: the learner's weights now and a pool opponent (None while the
    pool is empty)."""
    opponent = pool[int(rng.integers(len(pool)))] if pool else None
    return {"weights": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}, "opponent": opponent}


# ----------------------------------------------------------------------------------------- main
def main(args: Args, typed: frozenset[str] = frozenset()) -> dict:
    """Train (or resume) a run; returns its summary (run folder, steps, steps/s, sampler counts, final evaluation).
    ``typed``: the fields whose flags the command line named (:func:`cli` passes them), for ``--resume``'s refusal
    of a flag typed at its default that differs from the checkpoint's (:func:`agents.training.resume.resumed_args`).

    Raises:
        ValueError: bad flags (naming the flag, its value and what it takes), sizes beyond this machine's memory, a
            run folder that cannot be written, flags that conflict with a resumed run.
        CheckpointError: a --resume checkpoint that is missing, corrupt, without trainer state, or from an
            incompatible version (the message names both versions).
        WriteError: a checkpoint, policy or summary could not be written (full disk, read-only folder); the message
            names the last good checkpoint, which is kept.
        SamplerError: a sampler process or actor failed (its traceback is in the message) or died
            (:class:`agents.training.self_play.SamplerDied`: one line naming it, and its Ray node); the message ends
            with the last good checkpoint, which is kept, and the command that continues from it.
    """
    given = args  # as given: the flags of this invocation that a --resume needs again
    args, resume_ckpt = trainer_flags.resolve(args, typed)
    target = trainer_flags.load_target(args)  # --opponent's frozen policy (None without one)
    rules = rules_of(args)
    if resume_ckpt is not None:
        resume.check_rules(resume_ckpt, rules, args.resume)
    run_dir = run_folder(args, rules, resuming=resume_ckpt is not None)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    # Seeding: one block for every generator (CleanRL style); the samplers seed theirs from (seed, index).
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    if args.torch_deterministic and device.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS's condition for deterministic GEMMs
    torch.use_deterministic_algorithms(args.torch_deterministic)

    critic_dim = state_size(rules) + 2 if args.privileged_critic else 0
    model = ActorCritic(obs_size(rules), rules.n_actions, args.hidden, args.layers, critic_dim,
                        args.canonical_trump, args.canonical_suits).to(device)
    model.precision = args.precision
    # fused: one kernel for every parameter's step (the same values up to float rounding); the per-tensor loop
    # took a sixth of the 256-wide update on 2 AVX2 cores
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=1e-5, fused=True)
    capacity = sampler_capacity(-(-args.batch_size // args.samplers), args.num_envs)
    if resume_ckpt is None:
        run = resume.Progress()
        trainer_flags.load_init(args, rules, model)
    else:
        run = resume.restore(resume_ckpt, args, model, optimizer, rng, obs_size(rules), rules.n_actions, capacity,
                             max(critic_dim, 1))
        if run.global_step >= args.total_steps and (run_dir / "policy.pt").exists():  # else: write the final policy
            raise ValueError(f"the run in {str(run_dir)!r} already finished at {run.global_step:,} learner decisions "
                             f"(--total-steps {args.total_steps:,}): pass a larger --total-steps to extend it")
    files = RunFiles(run_dir, last_good=(run.update, run.global_step) if resume_ckpt is not None else None,
                     resume_command=resume.resume_command(given, run_dir / "checkpoint.pt"))

    if args.progress:  # the bar stays at 0 while the samplers start, which can take a minute the first time
        print(f"starting {args.samplers} sampler(s); on a machine's first run numba compiles the engine first "
              "(up to a minute)", flush=True)
    equilibrium = None
    if args.search_teacher == "cfr" and args.search_teacher_share > 0 and args.search_teacher_coef > 0:
        equilibrium = equilibrium_table(rules, args.cfr_iterations, run_dir / "equilibrium.npz")
    try:
        samplers = start_samplers(args, rules, model.config(), target, equilibrium)
    except SamplerError as e:  # one that died or failed while starting
        raise files.sampler_lost(e) from None
    try:
        if run.samplers is not None:
            resume.restore_samplers(samplers, run.samplers, resume_ckpt, args.resume)
        writer = tensorboard_writer(args, rules, run_dir,
                                    resumed_step=run.global_step if resume_ckpt is not None else None)
        print(f"run {run_dir}  seed {args.seed}  samplers {args.samplers}  precision {args.precision}  "
              f"rules {rules_text(rules)}", flush=True)  # precision: what --precision auto chose on this machine
        if samplers.describe():
            print(samplers.describe(), flush=True)

        n_updates_total = max(1, args.total_steps // args.batch_size)
        average = TailAverage(args.average_last, n_updates_total, args.total_steps, run.average, model, run.update,
                              run.global_step)  # --average-last
        bar = tqdm(total=args.total_steps, initial=min(run.global_step, args.total_steps),
                   disable=None if args.progress else True,  # None: no bar where the output is not a terminal
                   unit=" decisions", unit_scale=True, dynamic_ncols=True)
        latest_eval = ""
        t_start, steps_at_start = time.time(), run.global_step
        rows_trained, tally = 0, SamplerTally(args.samplers)
        # Wall-clock seconds the learner waited for batches (under --overlap-sampling, only the part of the
        # sampling that the update did not cover) and spent in the PPO updates.
        sampling_s = update_s = 0.0
        # The training time of the learning curves: this loop's seconds without the evaluations' (eval_s).
        t_loop, eval_s = time.perf_counter(), 0.0
        train_seconds = lambda: run.train_seconds + time.perf_counter() - t_loop - eval_s  # noqa: E731
        search_trained = 0  # labelled decisions of the search teacher trained in this invocation
        exact_tree = None  # built on the first exact measurement (--nash-conv-every)
        rows_per_sampler = -(-args.batch_size // args.samplers)
        updates_this_call = 0
        in_flight = False  # the samplers are playing next_request's batch (--overlap-sampling)
        overlapped = 0  # batches the samplers played during an update
        checkpoint = lambda: files.save_checkpoint(model, rules, args, resume.trainer_state(  # noqa: E731
            optimizer, samplers, rng, run, train_seconds(), average.state()))
        while run.global_step < args.total_steps:
            if args.stop_after_updates is not None and updates_this_call >= args.stop_after_updates:
                break
            # ------------------------------------------------------------ sampling (the samplers, in parallel)
            t0 = time.perf_counter()
            if not in_flight:
                run.next_request = run.next_request or sampling_request(model, run.pool, rng)
                samplers.submit(run.next_request["weights"], run.next_request["opponent"], rows_per_sampler)
            results = samplers.gather()
            in_flight, run.next_request = False, None
            t1 = time.perf_counter()
            sampling_s += t1 - t0
            batch = {k: np.concatenate([b[k] for b, _ in results]) for k in results[0][0]}
            played = tally.add([st for _, st in results])
            bar.update(max(0, min(played["decisions"], args.total_steps - bar.n)))  # the bar stops at its total
            run.global_step += played["decisions"]
            run.hands += played["hands"]
            # --overlap-sampling: the next batch is played with the weights from before this update (one update of
            # lag), during the update; where a checkpoint follows (it saves the samplers' states, which a batch in
            # flight would change) the request waits in the checkpoint, so a resumed run plays the same batches.
            if args.overlap_sampling and run.global_step < args.total_steps:
                run.next_request = sampling_request(model, run.pool, rng)
                if ((run.update + 1) % args.checkpoint_every != 0
                        and (args.stop_after_updates is None or updates_this_call + 1 < args.stop_after_updates)):
                    samplers.submit(run.next_request["weights"], run.next_request["opponent"], rows_per_sampler)
                    in_flight = True
                    overlapped += 0 if args.inline_samplers else 1  # inline samplers play it when gathered

            # ------------------------------------------------------------ PPO update (the learner)
            if args.anneal_lr:
                # Linear decay; a run's last batches (each at least --batch-size, so the count rounds up) keep the
                # last step's rate instead of 0.
                frac = max(1.0 - run.update / n_updates_total, 1.0 / n_updates_total)
                optimizer.param_groups[0]["lr"] = frac * args.learning_rate
            tensors = batch_tensors(batch, device, model.precision, rules.n_actions, critic_dim > 0)
            rows_trained += len(tensors["actions"])
            stats = ppo_update(model, optimizer, tensors, rng, args)
            searched = int(tensors["searched"].sum()) if args.search_teacher_share else 0
            search_trained += searched
            update_s += time.perf_counter() - t1
            run.update += 1
            updates_this_call += 1
            sps = (run.global_step - steps_at_start) / max(1e-9, time.time() - t_start)
            average.add(model, run.update, run.global_step)
            if run.update % args.pool_every == 0:
                run.pool.append({k: v.detach().cpu().clone() for k, v in model.state_dict().items()})
                run.pool = run.pool[len(run.pool) - args.pool_size:] if len(run.pool) > args.pool_size else run.pool
            if writer is not None:  # (the labelled share would cost a device sync an update for nothing)
                charts = {"charts/learning_rate": optimizer.param_groups[0]["lr"], "charts/SPS": sps,
                          "charts/hands": run.hands}
                if played["opponent_hands"]:
                    charts["charts/opponent_game_points_per_hand"] = (played["opponent_points"]
                                                                      / played["opponent_hands"])
                if args.endgame_teacher_coef:
                    charts["charts/teacher_labelled_share"] = float(tensors["taught"].float().mean())
                if args.search_teacher_share:
                    charts.update({"charts/search_teacher_labels": searched,
                                   "charts/search_teacher_seconds": tally.search_seconds})
                log_update(writer, run.global_step, charts, stats, batch)

            # ------------------------------------------------------------ evaluation and checkpoints
            final = run.global_step >= args.total_steps
            t_eval = time.perf_counter()
            if args.eval_every and run.update % args.eval_every == 0 and not final:
                run.evals += 1
                res = files.evaluate(model, rules, args, eval_panel(args, run.evals), args.eval_deals,
                                     seed=10_000 + run.evals)
                latest_eval = " ".join(f"{k} {v.mean:+.2f}" for k, v in res.items())
                tqdm.write(record_evaluation(res, run.global_step,
                                             train_seconds() - (time.perf_counter() - t_eval), run.history, writer))
            if args.nash_conv_every and (run.update % args.nash_conv_every == 0 or final):
                # the last measurement is of the policy the run writes (the tail average where there is one)
                measured = average.policy(model) if final else model
                exact_tree = measure_nash_conv(measured, rules, exact_tree, run.global_step, run.history, writer)
            eval_s += time.perf_counter() - t_eval
            bar.set_postfix_str(latest_eval)  # the bar shows the rate itself
            if run.update % args.checkpoint_every == 0 or final:
                checkpoint()
        bar.close()
        sps = (run.global_step - steps_at_start) / max(1e-9, time.time() - t_start)
        print(f"trained {run.global_step:,} learner decisions, {run.hands:,} hands, {run.update} updates, "
              f"{sps:,.0f} decisions/s", flush=True)
        search_cost = search_teacher_report(tally.search_labels, search_trained, tally.search_seconds, args.samplers,
                                            train_seconds() - run.train_seconds)
        if args.search_teacher_share:
            print(f"search teacher: {tally.search_labels:,} decisions labelled, {tally.search_seconds:,.1f} s of "
                  f"search in the samplers ({search_cost['share_of_sampler_time']:.1%} of their time)", flush=True)
        checkpoint()
    except SamplerError as e:  # the run ends; its last checkpoint was written before the sampler was lost
        raise files.sampler_lost(e) from None
    except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM: the message says what is kept and how to continue
        raise type(e)(files.kept()) from None
    finally:
        samplers.close()
    summary = {"run_dir": str(run_dir), "steps": run.global_step, "steps_per_second": sps, "samplers": args.samplers,
               **tally.summary(), "sampler_nodes": [p["node"] for p in samplers.placement],
               "decisions_trained": rows_trained, "sampling_seconds": sampling_s, "update_seconds": update_s,
               "batches_overlapped": overlapped, "train_seconds": train_seconds(), "eval_seconds": eval_s,
               "averaged_updates": average.count, "search_teacher": search_cost, "history": run.history,
               "nash_conv": [{"step": h["step"], "nash_conv": h["nash_conv"], "exploitability": h["exploitability"]}
                             for h in run.history if "nash_conv" in h],
               "evaluation": {}}
    if run.global_step < args.total_steps:
        print(f"stopped after {updates_this_call} updates; continue with: {files.resume_command}")
        close_writer(writer)
        return summary
    policy = average.policy(model)  # the network policy.pt holds
    files.save_policy(policy, rules, args)
    if args.final_eval_deals:
        if args.progress:
            print(f"final evaluation: {args.final_eval_deals:,} duplicate deals against each of "
                  f"{', '.join(args.final_eval_opponents)}", flush=True)
        # its bars as the training's: none where standard error is not a terminal (a log file gets the table alone)
        bars = args.progress and sys.stderr is not None and sys.stderr.isatty()
        res = files.evaluate(policy, rules, args, list(args.final_eval_opponents), args.final_eval_deals, seed=999_999,
                             label="policy.pt", progress=bars)
        summary["evaluation"] = {k: v.to_dict() for k, v in res.items()}
        print(evaluation_table(run_dir / "policy.pt", res), flush=True)
        if writer is not None:
            for k, v in res.items():
                writer.add_scalar(f"final/{k}_game_points_per_hand", v.mean, run.global_step)
    files.write_summary(json.dumps(summary, indent=2, default=str) + "\n")
    close_writer(writer)
    print(next_steps(run_dir, summary["evaluation"], rules), flush=True)
    return summary


def cli(argv: list[str] | None = None) -> int:
    """``python train.py``: parse the flags, run :func:`main`, return the exit status; a user's mistake prints one
    line (:func:`agents.training.command_line.cli`)."""
    typed = command_line.typed_fields(argv, Args)
    return command_line.cli(argv, Args, "train.py", lambda args: main(args, typed))


if __name__ == "__main__":
    sys.exit(cli())
