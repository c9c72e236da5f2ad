"""A training run's folder: where it is (:func:`run_folder`), what it holds (:data:`RUN_FILES`, written atomically)
and what a failed write says (:class:`RunFiles`: the message names the last good checkpoint, which is kept).
"""

from __future__ import annotations

import time
from pathlib import Path

from agents.learned.policy_net import save_policy
from agents.training.reporting import evaluate
from agents.training.self_play import SamplerError
from schnapsen_env import RuleSet
from schnapsen_env.files import WriteError, atomic_write, check_output_folder, remove_stale_temps

#: Files of a run folder written atomically (their stale temporary files are removed when a run starts).
RUN_FILES = ("checkpoint.pt", "policy.pt", "eval_policy.pt", "summary.json")


def run_folder(args, rules: RuleSet, resuming: bool) -> Path:
    """The run's folder: the resumed checkpoint's, or ``--run-dir``/``--run-name`` (default: ruleset, seed and
    time), checked to be writable.

    Raises:
        ValueError: a folder that cannot be written, or (a new run) one that already holds a run.
    """
    if resuming:
        run_dir = Path(args.resume).parent
    else:
        run_name = args.run_name or f"{rules.name}_s{args.seed}_{time.strftime('%Y%m%d-%H%M%S')}"
        run_dir = Path(args.run_dir) / run_name
    check_output_folder(run_dir, f"the run folder {str(run_dir)!r} (--run-dir, --run-name or --resume)")
    if not resuming and any((run_dir / name).exists() for name in ("checkpoint.pt", "policy.pt")):
        raise ValueError(f"the run folder {str(run_dir)!r} already holds a run: continue it with --resume "
                         f"{str(run_dir / 'checkpoint.pt')!r}, or give another --run-name (or remove the folder)")
    return run_dir


class RunFiles:
    """The files of the run in ``run_dir``, written atomically; a write that fails raises :class:`WriteError`
    naming the last good checkpoint, which is kept.

    Attributes:
        last_good: ``(update, step)`` of the last checkpoint known to be complete (None before the first).
    """

    def __init__(self, run_dir: Path, last_good: tuple[int, int] | None, resume_command: str | None = None) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        for name in RUN_FILES:  # temporary files of writes killed in an earlier run
            remove_stale_temps(run_dir / name)
        self.run_dir, self.checkpoint = run_dir, run_dir / "checkpoint.pt"
        self.last_good = last_good
        self.resume_command = resume_command or f"python train.py --resume {self.checkpoint}"

    def kept(self, todo: str = "") -> str:
        """What a run that stops on an error keeps: the last good checkpoint, then ``todo`` and the command that
        continues from it (:func:`agents.training.resume.resume_command`)."""
        if self.last_good is None:
            return "no checkpoint of this run was written yet"
        return (f"the last good checkpoint {str(self.checkpoint)!r} (update {self.last_good[0]}, "
                f"{self.last_good[1]:,} steps) is kept: {todo}continue with: {self.resume_command}")

    def failed(self, e: WriteError) -> WriteError:
        """``e`` with what is kept: the last good checkpoint and how to continue from it."""
        return WriteError(e.errno, f"{e}; {self.kept('free space or fix the folder, then ')}")

    def sampler_lost(self, e: SamplerError) -> SamplerError:
        """``e`` (a sampler that died or failed) with what is kept and how to continue; the same kind of error."""
        return type(e)(f"{e.reason}; {self.kept()}", e.details)

    def save_checkpoint(self, model, rules: RuleSet, args, trainer: dict) -> None:
        """Write ``checkpoint.pt``: the policy with the trainer state (:func:`agents.training.resume.trainer_state`)."""
        try:
            save_policy(self.checkpoint, model, rules, args, {"trainer": trainer})
        except WriteError as e:
            raise self.failed(e) from None
        self.last_good = (trainer["update"], trainer["global_step"])

    def save_policy(self, model, rules: RuleSet, args) -> None:
        """Write the final ``policy.pt``."""
        try:
            save_policy(self.run_dir / "policy.pt", model, rules, args)
        except WriteError as e:
            raise self.failed(e) from None

    def evaluate(self, model, rules: RuleSet, args, opponents: list[str], deals: int, seed: int,
                 label: str = "eval_policy.pt", progress: bool = False) -> dict:
        """:func:`agents.training.reporting.evaluate` in this folder (it writes ``eval_policy.pt``)."""
        try:
            return evaluate(model, rules, args, opponents, deals, seed=seed, run_dir=self.run_dir, label=label,
                            progress=progress)
        except WriteError as e:
            raise self.failed(e) from None

    def write_summary(self, text: str) -> None:
        """Write ``summary.json``."""
        try:
            atomic_write(self.run_dir / "summary.json", text)
        except WriteError as e:
            raise self.failed(e) from None
