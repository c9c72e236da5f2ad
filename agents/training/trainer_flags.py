"""The checks of ``train.py``'s own flags, beyond the shared recipe's (:func:`agents.training.recipe.validate_recipe`):
sampler, evaluation, device and precision flags, and the memory a run's sizes need (:func:`memory_estimate`),
refused before any work when this machine does not have it; and the arguments a run trains with
(:func:`resolve`: a new run's defaults, or a resumed run's from its checkpoint).
"""

from __future__ import annotations

import dataclasses
import math
import os

import torch

from agents.evaluation.arena import MAX_DEALS
from agents.learned.checkpoint import load_checkpoint
from agents.learned.data import SHIPPED_BY_NAME
from agents.learned.policy_net import PRECISIONS, load_policy, resolve_precision
from agents.training import resume
from agents.training.recipe import DEFAULT_TOTAL_STEPS, check_agents, cores, flag, rules_of, validate_recipe
from agents.training.self_play import sampler_capacity
from schnapsen_env.encoding import obs_nonzero_bound, obs_size, state_size

#: Largest --search-teacher-nodes (a search of a billion nodes takes minutes).
MAX_SEARCH_NODES = 1_000_000_000
#: Largest --cfr-iterations (200 iterations take about 3 minutes on one core).
MAX_CFR_ITERATIONS = 100_000
#: Largest --samplers.
MAX_SAMPLERS = 1024
#: Bytes of memory per env slot besides its buffer rows: the compiled state row, observation, mask, and its
#: position dict in checkpoints (measured about 2 KB; rounded up).
_BYTES_PER_ENV = 4096


def memory_estimate(args) -> tuple[int, int]:
    """Bytes the run needs, roughly: ``(hands and rollout buffer, networks)``.

    The networks: the model, its gradients, Adam's two moments, the pool opponent, ``pool_size`` snapshots and a
    copy while checkpointing (float32 each), plus the activations of one minibatch, and each sampler's two
    networks. The hands: every sampler's buffer rows (its share of the batch plus 40 decisions per hand in flight,
    of observation, mask and critic input), the learner's batch (and its relabelled observations with
    ``canonical_trump`` or ``canonical_suits``; and unless ``precision`` is ``bf16``, the update's non-zero entries of
    them, an int64 column and a float32 value each, at most :func:`~schnapsen_env.encoding.obs_nonzero_bound` a row),
    and the env slots.
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
    if args.canonical_trump or args.canonical_suits:  # the update's relabelled copy of the batch (ActorCritic.relabel with rows)
        hands += args.batch_size * (4 * n_obs + 8)
    if args.precision != "bf16":  # the float32 update's first layer reads sparse_rows of the (relabelled) batch
        hands += args.batch_size * 12 * obs_nonzero_bound(rules)
    return hands, nets


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not on this platform
        return None


def _gib(n: int) -> str:
    x = n / 2 ** 30
    return f"{x:,.1f} GiB" if x < 1e6 else f"{x:.1e} GiB"


def default_threads(args) -> int:
    """The learner's torch threads where ``--threads`` is not given (``args.precision`` resolved): the cores that
    overlapping local samplers leave, at least 1, where the update is quick (bfloat16 hardware, a GPU); else every
    core, since in float32 on a CPU the update is most of the work (on a 2-core AVX2 machine one thread left the
    other core mostly idle) and the samplers, at a lower priority, take what it leaves."""
    overlapped = args.overlap_sampling and not args.inline_samplers and args.ray_address is None
    quick = args.precision == "bf16" or args.device != "cpu"
    return max(1, cores() - args.samplers) if overlapped and quick else cores()


def resolve(args, typed: frozenset[str] = frozenset()):
    """The arguments a run trains with, checked: a new run's defaults filled in (``--total-steps``, ``--samplers``)
    or a resumed run's from its checkpoint (:func:`agents.training.resume.resumed_args`, ``typed`` the flags the
    command line named), then :func:`validate`, ``--precision`` resolved and ``--threads``' default
    (:func:`default_threads`). Returns ``(args, the --resume checkpoint or None)``.

    Raises:
        ValueError: bad flags (:func:`validate`), flags that conflict with the resumed run.
        CheckpointError: a --resume checkpoint that is missing, corrupt or of another version.
    """
    ckpt = None
    if not args.resume:
        args = dataclasses.replace(
            args, total_steps=DEFAULT_TOTAL_STEPS if args.total_steps is None else args.total_steps,
            samplers=cores() if args.samplers is None else args.samplers)  # 0 is refused by validate, not replaced
    else:
        ckpt = load_checkpoint(args.resume)
        args = resume.resumed_args(ckpt, args, typed)
    validate(args)
    args = dataclasses.replace(args, precision=resolve_precision(args.precision, args.device))
    if args.threads is None:
        args = dataclasses.replace(args, threads=default_threads(args))
    return args, ckpt


def load_target(args) -> dict | None:
    """The frozen target of ``--opponent`` as the samplers take it (:class:`agents.training.self_play.Sampler`):
    a policy, ``{"net": its network config, "weights": its float32 state dict}`` (its own network size, read with
    ``torch.load(weights_only=True)``), an agent, ``{"spec": its spec}``, or None without ``--opponent``. A name of
    :data:`agents.learned.data.SHIPPED_BY_NAME` is that shipped file, an existing file a policy; anything else is
    read as an agent spec (:mod:`agents.specs`, e.g. ``expert`` or ``pimc:n_samples=16``).

    Raises:
        ValueError: naming ``--opponent``: an unreadable file, a checkpoint that is not train.py's, one trained for
            another ruleset than ``--ruleset`` or with another observation layout; neither a file nor a policy's
            name nor an agent that plays ``--ruleset``.
    """
    if args.opponent is None:
        return None
    rules = rules_of(args)
    if args.opponent not in SHIPPED_BY_NAME and not os.path.isfile(args.opponent):
        if args.opponent.endswith(".pt"):
            raise ValueError(f"--opponent {args.opponent!r}: no such file and no shipped policy of that name: "
                             "expected a policy.pt written by train.py")
        try:
            check_agents("opponent", [args.opponent], rules)
        except ValueError as e:
            raise ValueError(f"{e} (--opponent takes a policy.pt written by train.py, a shipped policy's name, "
                             f"{', '.join(sorted(SHIPPED_BY_NAME))}, or an agent spec)") from None
        return {"spec": args.opponent}
    model = policy_by_name("--opponent", args.opponent, rules)
    return {"net": model.config(), "weights": {k: v.detach().clone() for k, v in model.state_dict().items()},
            "greedy": bool(getattr(args, "opponent_greedy", False))}


def policy_by_name(flag: str, name: str, rules):
    """The network of a shipped policy's name or of a train.py ``.pt`` path, for ``rules``.

    Raises:
        ValueError: naming ``flag`` and ``name``: a missing or unreadable file, a checkpoint that is not
            train.py's, one of another ruleset or observation layout.
    """
    shipped = SHIPPED_BY_NAME.get(name)
    path = shipped.path if shipped is not None else name
    if shipped is None and not os.path.isfile(path):
        raise ValueError(f"{flag} {name!r}: no such file and no shipped policy of that name: expected a policy.pt "
                         f"written by train.py or one of {', '.join(sorted(SHIPPED_BY_NAME))}")
    try:
        model, _, _ = load_policy(path, rules)
    except ValueError as e:  # CheckpointError: unreadable, another ruleset or layout, bad weights
        raise ValueError(f"{flag} {name!r}: {' '.join(str(e).split())}") from None
    return model


def load_init(args, rules, model) -> None:
    """Start ``model`` from the weights of ``--init-from`` (a shipped policy's name or a train.py ``.pt``); nothing
    without the flag. A fine-tuning of a policy, or a best response that starts at its target
    (``benchmarks/learned_best_response.py --init-from target``): a fresh optimizer, pool and step count.

    Raises:
        ValueError: naming ``--init-from``: a missing or unreadable file, a checkpoint of another ruleset or
            observation layout, or a network of another ``--hidden``, ``--layers``, ``--canonical-trump`` or ``--canonical-suits`` (the
            message gives both). A
            network with another critic (``--privileged-critic`` or not) gives its actor (trunk and policy head);
            the critic starts fresh.
    """
    if args.init_from is None:
        return
    init = policy_by_name("--init-from", args.init_from, rules)
    have, want = init.config(), model.config()
    if (have["hidden"], have["layers"]) != (want["hidden"], want["layers"]):
        raise ValueError(f"--init-from {args.init_from!r}: its network is --hidden {have['hidden']} --layers "
                         f"{have['layers']}, this run's --hidden {want['hidden']} --layers {want['layers']}: expected "
                         "the same sizes (pass its --hidden and --layers)")
    for key in ("canonical_suits", "canonical_trump"):  # suits first: it implies trump
        if have.get(key, False) != want.get(key, False):
            had, name = have.get(key, False), "--" + key.replace("_", "-")
            # every flag that makes this run's network the init's, at once: its --canonical-suits, and its
            # --canonical-trump where that is not implied by --canonical-suits
            need = {"canonical_suits": have.get("canonical_suits", False)}
            if not need["canonical_suits"]:
                need["canonical_trump"] = have.get("canonical_trump", False)
            flags = " ".join(("--" if on else "--no-") + k.replace("_", "-") for k, on in need.items()
                             if bool(getattr(args, k)) != on)
            raise ValueError(f"--init-from {args.init_from!r}: its network was trained {'with' if had else 'without'} "
                             f"{name}, this run's {'without' if had else 'with'} it: expected the same (pass {flags})")
    weights = init.state_dict()
    if have["critic_extra"] != want["critic_extra"]:  # another critic: the actor is taken, the critic starts fresh
        weights = {k: v for k, v in weights.items() if not k.startswith("critic_net.")}
        weights |= {k: v for k, v in model.state_dict().items() if k.startswith("critic_net.")}
    model.load_state_dict(weights)


def validate(args) -> None:
    """Check ``train.py``'s arguments (its ``Args``) before any work. Raises ValueError naming the flag, its value
    and what it takes: values out of range, sizes this machine's memory cannot hold (:func:`memory_estimate`), a run
    name leaving --run-dir."""
    validate_recipe(args)
    if args.num_envs < 1:
        raise ValueError(f"--num-envs must be >= 1, got {args.num_envs}")
    for name in ("eval_every", "eval_deals", "eval_rollout_every", "nash_conv_every"):
        if getattr(args, name) < 0:
            raise ValueError(f"{flag(name)} must be >= 0, got {getattr(args, name)}")
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
    if not 0 <= args.average_last <= 1:  # also refuses NaN
        raise ValueError(f"--average-last must be a share of the run's updates from 0 to 1, got {args.average_last}")
    if not args.endgame_teacher_coef >= 0 or not math.isfinite(args.endgame_teacher_coef):
        raise ValueError(f"--endgame-teacher-coef must be a number >= 0, got {args.endgame_teacher_coef}")
    if not 0 <= args.search_teacher_share <= 1:  # also refuses NaN
        raise ValueError(f"--search-teacher-share must be a share from 0 to 1, got {args.search_teacher_share}")
    if not 1 <= args.search_teacher_nodes <= MAX_SEARCH_NODES:
        raise ValueError(f"--search-teacher-nodes must be from 1 to {MAX_SEARCH_NODES:,}, got "
                         f"{args.search_teacher_nodes}")
    if args.search_teacher_stock is not None and args.search_teacher_stock < 0:
        raise ValueError(f"--search-teacher-stock must be a card count >= 0 (the open stock's size), got "
                         f"{args.search_teacher_stock}")
    if not args.search_teacher_coef >= 0 or not math.isfinite(args.search_teacher_coef):
        raise ValueError(f"--search-teacher-coef must be a number >= 0, got {args.search_teacher_coef}")
    if args.search_teacher not in ("expert", "cfr"):
        raise ValueError(f"--search-teacher {args.search_teacher!r}: expected 'expert' or 'cfr'")
    if args.search_teacher == "cfr" and args.ruleset != "schnapsen10":
        raise ValueError(f"--search-teacher cfr needs --ruleset schnapsen10 (the ruleset small enough to solve, "
                         f"RULES.md section 3a), got --ruleset {args.ruleset}")
    if not 1 <= args.cfr_iterations <= MAX_CFR_ITERATIONS:
        raise ValueError(f"--cfr-iterations must be from 1 to {MAX_CFR_ITERATIONS:,}, got {args.cfr_iterations}")
    if args.search_teacher == "cfr" and not (args.search_teacher_share > 0 and args.search_teacher_coef > 0):
        raise ValueError(f"--search-teacher cfr with --search-teacher-share {args.search_teacher_share:g} and "
                         f"--search-teacher-coef {args.search_teacher_coef:g} labels nothing (the equilibrium would "
                         "not even be solved): expected a share and a coefficient > 0, e.g. --search-teacher-share 1.0")
    if not 0 <= args.opponent_prob <= 1:  # also refuses NaN
        raise ValueError(f"--opponent-prob must be a share from 0 to 1, got {args.opponent_prob}")
    if not 0 <= args.random_prob <= 1:  # also refuses NaN
        raise ValueError(f"--random-prob must be a share from 0 to 1, got {args.random_prob}")
    shares = args.pool_prob + args.heuristic_prob + args.random_prob + args.opponent_prob
    if shares > 1 + 1e-9:  # a float sum of shares written to total 1 may round above it (0.2+0.4+0.3+0.1)
        raise ValueError(f"--pool-prob {args.pool_prob}, --heuristic-prob {args.heuristic_prob}, --random-prob "
                         f"{args.random_prob} and --opponent-prob {args.opponent_prob} sum to {shares:g}: expected at "
                         "most 1 (self-play is the rest; a best response: --opponent-prob 1 --pool-prob 0 "
                         "--heuristic-prob 0 --random-prob 0)")
    if (args.opponent is None) != (args.opponent_prob == 0):
        raise ValueError(f"--opponent {args.opponent!r} with --opponent-prob {args.opponent_prob}: expected both "
                         "(a policy and a share > 0) or neither")
    if args.opponent is not None:
        target = load_target(args)
        if args.opponent_greedy and target is not None and "spec" in target:
            raise ValueError(f"--opponent-greedy with the agent --opponent {args.opponent!r}: expected a policy "
                             "(.pt or shipped name); an agent plays one action an observation already")
    elif args.opponent_greedy:
        raise ValueError("--opponent-greedy without --opponent: expected a policy --opponent to play greedily")
    if args.eval_every and not args.eval_opponents:
        raise ValueError("--eval-opponents is empty: expected at least one agent (or --eval-every 0)")
    check_agents("eval_opponents", args.eval_opponents, rules_of(args))
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
        raise ValueError(f"--num-envs {args.num_envs}, --batch-size {args.batch_size}, --hidden {args.hidden}, "
                         f"--layers {args.layers} and --pool-size {args.pool_size} need about {_gib(hands + nets)} of "
                         f"memory ({_gib(hands)} for the hands and the rollout buffer, {_gib(nets)} for the networks), "
                         f"more than this machine's {_gib(total)}: expected smaller values")
