"""The self-play PPO recipe that ``train.py`` and ``train_rllib.py`` share: its flags (:class:`PPOArgs`), their
checks (:func:`validate_recipe`) and what they mean (:func:`rules_of`, :func:`knobs_of`, :func:`cores`).

Each check raises ``ValueError`` naming the flag, its value and what it takes; the command line prints it as one
line (:mod:`agents.training.command_line`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from agents.evaluation.arena import MAX_DEALS, MAX_WORKERS
from agents.specs import parse_value, resolve_agent
from schnapsen_env import RuleSet
from schnapsen_env.errors import one_line, short_repr

#: --total-steps when neither the command line nor a resumed run gives it.
DEFAULT_TOTAL_STEPS = 18_000_000
#: Largest seed: torch and numpy take seeds in [0, 2**63 - 1] alike.
MAX_SEED = 2 ** 63 - 1
#: Largest --threads (torch's intra-op threads).
MAX_THREADS = 1024


@dataclass
class PPOArgs:
    """The self-play PPO recipe, shared by ``train.py`` and ``train_rllib.py``."""

    seed: int = 1
    """seed of every generator (deals, sampling, network init, pool)"""
    total_steps: int | None = None
    """learner decisions to train on (each is one action of the trained network; train_rllib.py: env steps, the
    decisions of both seats); default 18,000,000, or the resumed run's value"""
    ruleset: str = "schnapsen20"
    """"schnapsen20", "sixtysix24" or "schnapsen10" (its default rule knobs, changed by --knob)"""
    knob: tuple[str, ...] = ()
    """rule knobs as KEY=VALUE (RULES.md section 5), e.g. --knob false_claim=mirror close_min_stock=3 (or --knob
    repeated, one knob each)"""
    threads: int | None = None
    """torch CPU threads of the learner's update; default: the cores the local samplers leave free under
    --overlap-sampling in bf16 or on a GPU, at least 1, else this machine's cores; samplers use 1 each"""
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
    """PPO clip range (probability ratio and value change)"""
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
    """share of hands against a pool opponent; once the pool is not empty"""
    heuristic_prob: float = 0.3
    """share of hands against the scripted HeuristicAgent; one seat, besides the pool's"""
    final_eval_deals: int = 1000
    """duplicate deals (2 hands each) per opponent in the final evaluation table (0: skip)"""
    final_eval_opponents: tuple[str, ...] = ("random", "heuristic")
    """opponents of the final evaluation table"""
    eval_workers: int | None = None
    """processes for evaluation (default: all cores)"""
    checkpoint_every: int = 20
    """updates between checkpoints (the final one is always written)"""
    run_dir: str = "runs"
    """folder of the runs"""
    run_name: str | None = None
    """name of this run (default: ruleset, seed and time)"""
    tensorboard: bool = True
    """write TensorBoard logs to the run folder"""
    progress: bool = True
    """show a progress bar"""


def flag(name: str) -> str:
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
            raise ValueError(f"--knob {one_line(text, 80)}: the ruleset is chosen with --ruleset: expected a rule "
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


def check_agents(name: str, specs, rules: RuleSet) -> None:
    """Build each agent spec of the flag ``name`` (an attribute name, ``final_eval_opponents``) for ``rules``, so
    that one that cannot play them fails before the training.

    Raises:
        ValueError: naming the flag and the spec: an unknown name (the message lists the valid ones), a bad option,
            or an agent that cannot play ``rules``.
    """
    for spec in specs:
        try:
            _, factory = resolve_agent(spec, rules)
            factory(seed=0)
        except (ValueError, TypeError) as e:
            raise ValueError(f"{flag(name)} {short_repr(spec)}: {e}") from None


def validate_recipe(args: PPOArgs) -> None:
    """Check the flags of the shared recipe (:class:`PPOArgs`). Raises ValueError naming the flag, its value and
    what it takes."""
    positive = ("total_steps", "batch_size", "minibatch_size", "pool_size", "pool_every", "checkpoint_every",
                "hidden", "layers")
    for name in positive:
        if getattr(args, name) < 1:
            raise ValueError(f"{flag(name)} must be >= 1, got {getattr(args, name)}")
    for name in ("update_epochs", "final_eval_deals"):
        if getattr(args, name) < 0:
            raise ValueError(f"{flag(name)} must be >= 0, got {getattr(args, name)}")
    if not 0 <= args.seed <= MAX_SEED:
        raise ValueError(f"--seed must be an int from 0 to 2**63 - 1, got {args.seed}")
    if args.threads is not None and not 1 <= args.threads <= MAX_THREADS:
        raise ValueError(f"--threads must be from 1 to {MAX_THREADS}, got {args.threads}")
    for name in ("final_eval_deals",):
        if getattr(args, name) > MAX_DEALS:
            raise ValueError(f"{flag(name)} must be at most {MAX_DEALS:,}, got {getattr(args, name)}")
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
    check_agents("final_eval_opponents", args.final_eval_opponents, rules_of(args))
