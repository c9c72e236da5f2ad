"""``train.py --resume``: the arguments of a resumed run and the checks of a checkpoint's trainer state before any
of it is used, so that a checkpoint of another version or another run is refused in one line naming both versions
instead of failing (or, worse, training on) halfway; and where a run stands (:class:`Progress`), which a checkpoint
keeps.

A trainer checkpoint is a policy checkpoint (:func:`agents.learned.policy_net.save_policy`) with a ``"trainer"``
entry (:func:`trainer_state`): the optimiser, the opponent pool, every sampler's hands, chains and generator, the
learner's generators and counters, and the samplers' next batch under ``--overlap-sampling``.
"""

from __future__ import annotations

import dataclasses
import shlex
import typing

import numpy as np
import torch

from agents.learned.checkpoint import CheckpointError
from agents.learned.policy_net import ActorCritic, resolve_precision, versions
from agents.specs import fits_hint
from agents.training.recipe import flag
from agents.training.self_play import SAMPLER_NICE, SamplerDied, SamplerError, sampler_state_problem, tensor_problem
from schnapsen_env import RuleSet
from schnapsen_env.encoding import layout_signature
from schnapsen_env.errors import one_line

#: Flags taken from the command line on --resume (the rest come from the checkpoint).
PER_INVOCATION = ("stop_after_updates", "progress", "eval_workers", "device", "threads", "tensorboard",
                  "inline_samplers", "ray_address", "final_eval_deals", "final_eval_opponents", "nash_conv_every",
                  "sampler_nice")
#: Arguments added to train.py since checkpoints were first written, with the value that reproduces a run from
#: before them (a resumed checkpoint that lacks one gets this value).
ADDED_ARGS = {"precision": "fp32", "endgame_teacher_coef": 0.0, "overlap_sampling": False, "nash_conv_every": 0,
              "sampler_nice": SAMPLER_NICE, "search_teacher_share": 0.0, "search_teacher_nodes": 200_000,
              "search_teacher_stock": None,
              "search_teacher_coef": 1.0, "eval_opponents": ("random", "heuristic"), "opponent": None,
              "opponent_prob": 0.0, "search_teacher": "expert", "cfr_iterations": 100,
              "random_prob": 0.0, "init_from": None, "opponent_greedy": False,
              "average_last": 0.0, "endgame_bootstrap": False,
              "canonical_trump": False, "canonical_suits": False}

#: Keys of a trainer checkpoint's ``"trainer"`` entry: the state ``--resume`` restores.
TRAINER_KEYS = ("optimizer", "pool", "samplers", "rng", "torch_rng", "global_step", "update", "hands", "evals",
                "history", "next_request", "train_seconds", "average")


def versions_text(ckpt: dict) -> str:
    """Both versions, for a refusal to resume: the checkpoint's writer and this program."""
    saved = ckpt.get("versions") if isinstance(ckpt.get("versions"), dict) else {}
    ours = versions()
    return (f"the checkpoint was written by schnapsen_env {saved.get('schnapsen_env', '(unknown)')} with torch "
            f"{saved.get('torch', '(unknown)')}; this is schnapsen_env {ours['schnapsen_env']} with torch "
            f"{ours['torch']}")


def resumed_args(ckpt: dict, given, typed: frozenset[str] = frozenset()):
    """The arguments of a resumed run: the checkpoint's, with the given --total-steps (to extend a run; this
    changes the learning-rate schedule) and the flags that belong to this machine and invocation
    (:data:`PER_INVOCATION`).

    Args:
        typed: the fields whose flags the command line named (:func:`agents.training.command_line.typed_fields`):
            one of them typed at its default is refused as well where the checkpoint's value differs.

    Raises:
        CheckpointError: no trainer state, or saved arguments of another version of train.py (unknown, missing or
            mistyped ones); the message names both versions.
        ValueError: a flag given on the command line that differs from the checkpoint's (it would be ignored), its
            default included where it is in ``typed``.
    """
    path = given.resume
    if "trainer" not in ckpt:
        raise CheckpointError(f"{path!r} is a policy checkpoint without trainer state: cannot resume (expected the "
                              "checkpoint.pt of a run folder)")
    saved = ckpt["args"]
    if not isinstance(saved, dict):
        raise CheckpointError(f"checkpoint {path!r}: its 'args' is a {type(saved).__name__}, expected the dict of "
                              f"train.py's arguments; {versions_text(ckpt)}")
    cls = type(given)
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
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
    saved = {**saved, "final_eval_opponents": tuple(saved["final_eval_opponents"]), "knob": tuple(saved["knob"]),
             "eval_opponents": tuple(saved["eval_opponents"])}
    defaults = cls()
    for n in names:
        if n in PER_INVOCATION or n in ("resume", "total_steps"):
            continue
        value = getattr(given, n)
        shown = repr(value)
        if n == "precision" and value == "auto" and n in typed:  # the run's --precision auto, saved as what it chose
            try:
                value = resolve_precision(value, given.device)
            except (RuntimeError, ValueError):  # a --device torch does not know: validate refuses it, naming it
                value = saved[n]
            shown = f"'auto' (here {value!r})"
        if (value != getattr(defaults, n) or n in typed) and value != saved[n]:
            raise ValueError(f"{flag(n)} {shown} differs from the resumed run's {saved[n]!r}: --resume continues "
                             "the run with its own arguments; expected only --total-steps and "
                             f"{', '.join(flag(k) for k in PER_INVOCATION)} besides --resume")
    total = given.total_steps if given.total_steps is not None else saved["total_steps"]
    return cls(**{**saved, "resume": path, "total_steps": total, **{k: getattr(given, k) for k in PER_INVOCATION}})


def resume_command(given, checkpoint, prog: str = "train.py") -> str:
    """The command that continues the run of this invocation from ``checkpoint``, as a user types it:
    ``python train.py --resume CHECKPOINT`` and this invocation's flags of :data:`PER_INVOCATION` that are not at
    their defaults (a resumed run takes those from its command line, not from the checkpoint: ``--ray-address``,
    ``--threads``, ``--device``, ...), plus ``--total-steps`` where this invocation extended a resumed run (its
    checkpoints may not record it yet).

    Args:
        given: the arguments as this invocation was given them (before ``main`` fills in defaults or reads a
            checkpoint).
    """
    defaults = type(given)()
    words = ["python", prog, "--resume", str(checkpoint)]
    for n in PER_INVOCATION + (("total_steps",) if given.resume else ()):
        value = getattr(given, n)
        if value is None or value == getattr(defaults, n) or value == ():
            continue
        if isinstance(value, bool):
            words.append(flag(n) if value else "--no-" + flag(n)[2:])
        elif isinstance(value, (list, tuple)):
            words += [flag(n), *map(str, value)]
        else:
            words += [flag(n), str(value)]
    return shlex.join(words)


def _weights_problem(name: str, sd, shapes: dict) -> str | None:
    """What is wrong with a network's saved weights (None when they are the network's float32 parameters)."""
    if not isinstance(sd, dict) or list(sd) != list(shapes):
        return f"{name} does not have the network's parameters {list(shapes)}"
    for k, v in sd.items():
        problem = tensor_problem(f"{name} {k!r}", v, shapes[k], (torch.float32,))
        if problem:
            return problem
        if not torch.isfinite(v).all():
            return f"{name} {k!r} holds NaN or inf"
    return None


def trainer_state_problem(tr, args, model: ActorCritic, n_obs: int, n_actions: int, capacity: int,
                          critic_cols: int) -> str | None:
    """What is wrong with a checkpoint's trainer state for this run (None when it fits): its keys, counters, pool
    snapshots, optimizer state, every sampler's state (:func:`agents.training.self_play.sampler_state_problem`) and the
    generator states are checked before any of it is used (the env's hands are checked when they are loaded)."""
    if not isinstance(tr, dict):
        return f"'trainer' is a {type(tr).__name__}, expected a dict"
    # checkpoints from before --overlap-sampling, the clock, --average-last
    tr = {"next_request": None, "train_seconds": 0.0, "average": None, **tr}
    missing = [k for k in TRAINER_KEYS if k not in tr]
    unknown = sorted(map(str, set(tr) - set(TRAINER_KEYS)))
    if missing or unknown:
        return f"'trainer' lacks {missing} and has unknown {unknown}: expected the keys {list(TRAINER_KEYS)}"
    for k in ("global_step", "update", "hands", "evals"):
        if not fits_hint(tr[k], int) or tr[k] < 0:
            return f"trainer {k!r} is {tr[k]!r}, expected an int >= 0"
    if isinstance(tr["train_seconds"], bool) or not isinstance(tr["train_seconds"], (int, float)) \
            or not 0 <= tr["train_seconds"] < float("inf"):
        return f"trainer 'train_seconds' is {tr['train_seconds']!r}, expected a number of seconds >= 0"
    if not isinstance(tr["samplers"], list) or len(tr["samplers"]) != args.samplers:
        return f"trainer 'samplers' must be a list of the states of the run's {args.samplers} samplers"
    for i, st in enumerate(tr["samplers"]):
        problem = sampler_state_problem(st, args.num_envs, n_obs, n_actions, capacity, critic_cols)
        if problem:
            return f"sampler {i}: {problem}"
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}

    if not isinstance(tr["pool"], list) or len(tr["pool"]) > args.pool_size:
        return f"trainer 'pool' must be a list of at most {args.pool_size} snapshots (--pool-size)"
    for i, snap in enumerate(tr["pool"]):
        problem = _weights_problem(f"pool snapshot {i}", snap, shapes)
        if problem:
            return problem
    req = tr["next_request"]
    if req is not None:
        if not isinstance(req, dict) or set(req) != {"weights", "opponent"}:
            return "trainer 'next_request' must be None or a dict with keys 'weights' and 'opponent'"
        problem = _weights_problem("trainer 'next_request' weights", req["weights"], shapes) or (
            None if req["opponent"] is None
            else _weights_problem("trainer 'next_request' opponent", req["opponent"], shapes))
        if problem:
            return problem
        if not args.overlap_sampling:
            return "trainer 'next_request' is set, but the run does not overlap sampling"
    avg = tr["average"]
    if avg is not None:
        if not isinstance(avg, dict) or set(avg) != {"weights", "count"}:
            return "trainer 'average' must be None or a dict with keys 'weights' and 'count'"
        if not fits_hint(avg["count"], int) or not 1 <= avg["count"] <= tr["update"]:
            return (f"trainer 'average' count is {avg['count']!r}, expected the number of updates averaged, from 1 "
                    f"to the run's {tr['update']} updates")
        if not args.average_last:
            return "trainer 'average' is set, but the run does not average its weights (--average-last 0)"
        problem = _weights_problem("trainer 'average' weights", avg["weights"], shapes)
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
        if not (fits_hint(i, int) and 0 <= i < len(params)) or not isinstance(st, dict):
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


def check_rules(ckpt: dict, rules: RuleSet, path: str) -> None:
    """Refuse a checkpoint whose rules or observation layout differ from the ones this version plays.

    Raises:
        CheckpointError: naming both rules, both layouts and both versions.
    """
    if ckpt["rules"] != rules.to_dict() or ckpt["layout"] != layout_signature(rules):
        raise CheckpointError(
            f"checkpoint {path!r} has rules {one_line(ckpt['rules'], 120)} and observation layout "
            f"{one_line(ckpt['layout'], 120)}; this version plays {rules.to_dict()} with layout "
            f"{layout_signature(rules)} ({versions_text(ckpt)}): resume it with the version that wrote it")


def restore(ckpt: dict, args, model: ActorCritic, optimizer: torch.optim.Optimizer, rng: np.random.Generator,
            n_obs: int, n_actions: int, capacity: int, critic_cols: int) -> Progress:
    """Load a checkpoint's network, optimiser and generators (numpy's ``rng`` and torch's) into the learner, after
    :func:`trainer_state_problem` found nothing wrong; returns the run's :class:`Progress` (the counters, the pool,
    the samplers' states) for the caller to continue from.

    Raises:
        CheckpointError: a trainer state that does not fit this run (the message names the problem and both
            versions).
    """
    tr = ckpt["trainer"]
    problem = trainer_state_problem(tr, args, model, n_obs, n_actions, capacity, critic_cols)
    try:
        if problem is None:
            model.load_state_dict(ckpt["model"])
            # how to step (fused, foreach) is this version's, not the checkpoint's: load_state_dict takes the
            # param group's flags from the checkpoint, and one written before the learner stepped Adam fused holds
            # fused None (the run would step per tensor for the rest of its life)
            impl = {k: optimizer.defaults[k] for k in ("fused", "foreach") if k in optimizer.defaults}
            opt = tr["optimizer"]
            optimizer.load_state_dict({**opt, "param_groups": [{**g, **impl} for g in opt["param_groups"]]})
            rng.bit_generator.state = tr["rng"]
            torch.set_rng_state(tr["torch_rng"])
    except (ValueError, TypeError, KeyError, IndexError, RuntimeError, AttributeError) as e:
        problem = f"{type(e).__name__}: {one_line(e, 300)}"
    if problem is not None:
        raise CheckpointError(f"checkpoint {args.resume!r} cannot be resumed: {problem} ({versions_text(ckpt)}):"
                              " expected the checkpoint.pt of a run of this version with these arguments")
    return Progress(global_step=tr["global_step"], update=tr["update"], hands=tr["hands"], evals=tr["evals"],
                    history=list(tr["history"]), pool=list(tr["pool"]), next_request=tr.get("next_request"),
                    train_seconds=tr.get("train_seconds", 0.0), samplers=tr["samplers"], average=tr.get("average"))


def restore_samplers(samplers, states: list, ckpt: dict, path: str) -> None:
    """Give every sampler its hands, chains and generator from the checkpoint.

    Raises:
        CheckpointError: a sampler state that does not load (the env names what is wrong).
    """
    try:
        samplers.set_state(states)
    except SamplerDied:  # a lost sampler, not a bad checkpoint
        raise
    except Exception as e:  # a hand that does not load (the env names what is wrong)
        reason = e.reason if isinstance(e, SamplerError) else f"{type(e).__name__}: {e}"
        raise CheckpointError(f"checkpoint {path!r} cannot be resumed: a sampler state does not load: "
                              f"{one_line(reason, 300)} ({versions_text(ckpt)})") from None


@dataclasses.dataclass
class Progress:
    """Where a run stands: the learner's counters and what a checkpoint keeps of them, so that ``--resume``
    continues exactly (a new run starts from the defaults)."""

    global_step: int = 0
    """learner decisions the samplers played for the updates so far"""
    update: int = 0
    """PPO updates done"""
    hands: int = 0
    """hands finished"""
    evals: int = 0
    """periodic evaluations done"""
    history: list = dataclasses.field(default_factory=list)
    """the evaluations' and exact measurements' entries (the learning curves of summary.json)"""
    pool: list = dataclasses.field(default_factory=list)
    """the opponent pool: earlier weights (state dicts)"""
    next_request: dict | None = None
    """the samplers' next batch (weights, pool opponent) drawn before a checkpoint under --overlap-sampling"""
    train_seconds: float = 0.0
    """seconds of training (evaluations excluded) before this invocation"""
    samplers: list | None = None
    """a resumed run's sampler states, for :func:`restore_samplers` (None: a new run)"""
    average: dict | None = None
    """a resumed run's tail average (:meth:`agents.training.tail_average.TailAverage.state`)"""


def trainer_state(optimizer: torch.optim.Optimizer, samplers, rng: np.random.Generator, progress: Progress,
                  train_seconds: float, average: dict | None) -> dict:
    """A checkpoint's ``"trainer"`` entry (:data:`TRAINER_KEYS`): the optimiser's, the samplers' and the
    generators' states, ``progress``'s counters, history, pool and next request, the run's ``train_seconds`` so
    far and the tail ``average`` (:meth:`agents.training.tail_average.TailAverage.state`)."""
    state = {"optimizer": optimizer.state_dict(), "samplers": samplers.get_state(), "rng": rng.bit_generator.state,
             "torch_rng": torch.get_rng_state(), "pool": progress.pool, "global_step": progress.global_step,
             "update": progress.update, "hands": progress.hands, "evals": progress.evals,
             "history": progress.history, "next_request": progress.next_request, "train_seconds": train_seconds,
             "average": average}
    return {k: state[k] for k in TRAINER_KEYS}
