"""What a training run reports: TensorBoard logs (:func:`tensorboard_writer`, :func:`close_writer`), the arena's
evaluation of the current policy on duplicate deals (:func:`evaluate`, :func:`evaluation_table`; shared by
``train.py`` and ``train_rllib.py``), ``train.py``'s exact exploitability measurements (:func:`measure_nash_conv`), each update's scalars
(:func:`log_update`) and the samplers' counts (:class:`SamplerTally`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from agents.evaluation.arena import play_match
from agents.game_theory import exact
from agents.learned.data import STRONGEST_POLICIES
from agents.learned.policy_net import save_policy
from schnapsen_env.files import describe_os_error


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
    from torch.utils.tensorboard import SummaryWriter  # only with --tensorboard: it loads the tensorboard package

    if resumed_step is not None:
        return SummaryWriter(str(run_dir), purge_step=resumed_step + 1)
    writer = SummaryWriter(str(run_dir))
    writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
        f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()))
    writer.add_text("rules", json.dumps(rules.to_dict()))
    return writer


def evaluate(model, rules, args, opponents, deals, seed, run_dir, label: str = "eval_policy.pt",
             progress: bool = False):
    """Arena on duplicate deals: the current policy (greedy, saved as ``eval_policy.pt``) against each opponent,
    under the run's rules; ``label`` names it in the results (``"policy.pt"`` for the final table, whose weights
    ``policy.pt`` holds), ``progress`` shows the arena's bar for each opponent."""
    path = Path(run_dir) / "eval_policy.pt"
    save_policy(path, model, rules, args)
    knobs = {k: v for k, v in rules.to_dict().items() if k != "ruleset"}
    return {name: play_match((label, str(path)), name, n_deals=deals, ruleset=rules.name, seed=seed,
                             workers=args.eval_workers, progress=progress, **knobs)
            for name in opponents}


def eval_panel(args, evals: int) -> list[str]:
    """The opponents of the ``evals``-th periodic evaluation (1-based): ``--eval-opponents``, plus ``rollout`` every
    ``--eval-rollout-every``-th time when the panel lacks it."""
    opponents = list(args.eval_opponents)
    if args.eval_rollout_every and evals % args.eval_rollout_every == 0 and "rollout" not in opponents:
        opponents.append("rollout")
    return opponents


def record_evaluation(res: dict, step: int, train_seconds: float, history: list, writer) -> str:
    """One periodic evaluation (the arena's results by opponent, :class:`agents.evaluation.arena.RatingResult`)
    into ``history`` and TensorBoard, the learning curve against learner decisions and training time; returns
    the line for the log.

    A history entry: ``step`` (learner decisions), ``train_seconds`` (seconds the training loop ran since the run
    started, across resumes, without the evaluations' own time), each opponent's mean game points a hand by its
    name, and ``ci``, each opponent's 95% CI ``[low, high]``. TensorBoard gets ``eval/OPPONENT_game_points_per_hand``
    and ``eval/OPPONENT_hand_win_rate`` at the step, and ``eval/train_seconds`` (the step's training time; the
    scalars' own wall time includes the evaluations)."""
    history.append({"step": step, "train_seconds": round(train_seconds, 3), **{k: v.mean for k, v in res.items()},
                    "ci": {k: [v.ci_low, v.ci_high] for k, v in res.items()}})
    if writer is not None:
        for k, v in res.items():
            writer.add_scalar(f"eval/{k}_game_points_per_hand", v.mean, step)
            writer.add_scalar(f"eval/{k}_hand_win_rate", v.hand_win_rate, step)
        writer.add_scalar("eval/train_seconds", train_seconds, step)
    return (f"eval at {step:,} steps, {train_seconds:,.0f} s of training: " + ", ".join(
        f"{k} {v.mean:+.3f} gp/hand (win {v.hand_win_rate:.1%})" for k, v in res.items()))


class SamplerTally:
    """The samplers' counts over one invocation of ``train.py``, summed from each batch's stats
    (:meth:`agents.training.self_play.Sampler.collect`), for the TensorBoard charts and summary.json.

    Args:
        samplers: the run's sampler count.
    """

    def __init__(self, samplers: int) -> None:
        self.per_sampler = [0] * samplers  # learner decisions each sampler played
        self.pids: set[int] = set()
        self.pending = 0  # decisions of hands still running, after the latest batch
        self.target_hands, self.target_points = 0, 0.0  # hands against --opponent, the learner's game points
        self.random_hands, self.random_points = 0, 0.0  # the same against the random player (--random-prob)
        self.search_labels, self.search_seconds = 0, 0.0  # the search teacher's labels and the samplers' seconds

    def add(self, stats: list[dict]) -> dict:
        """Add one batch's stats (one dict a sampler); returns that batch's ``decisions``, ``hands``,
        ``opponent_hands`` and ``opponent_points`` (hands against any opponent but the learner itself)."""
        for i, st in enumerate(stats):
            self.per_sampler[i] += st["decisions"]
            self.pids.add(st["pid"])
        total = lambda key: sum(st[key] for st in stats)  # noqa: E731
        self.pending = total("pending")
        self.target_hands += total("target_hands")
        self.target_points += total("target_points")
        self.random_hands += total("random_hands")
        self.random_points += total("random_points")
        self.search_labels += total("search_labels")
        self.search_seconds += total("search_seconds")
        return {k: total(k) for k in ("decisions", "hands", "opponent_hands", "opponent_points")}

    def summary(self) -> dict:
        """summary.json's sampler entries."""
        return {"sampler_decisions": self.per_sampler, "sampler_pids": sorted(self.pids),
                "decisions_pending": self.pending, "target_hands": self.target_hands,
                "target_points_per_hand": self.target_points / self.target_hands if self.target_hands else None,
                "random_hands": self.random_hands,
                "random_points_per_hand": self.random_points / self.random_hands if self.random_hands else None}


def log_update(writer, step: int, scalars: dict[str, float], losses: dict[str, list[float]], batch: dict) -> None:
    """One PPO update's TensorBoard scalars at learner decision ``step`` (nothing without a ``writer``):
    ``scalars`` by their names as given (``charts/...``), each loss piece's mean over the minibatches as
    ``losses/NAME``, and ``losses/explained_variance`` of the batch's values (``batch``: the samplers' numpy arrays,
    ``values`` and ``ret``; NaN where the returns do not vary)."""
    if writer is None:
        return
    for name, value in scalars.items():
        writer.add_scalar(name, value, step)
    for name, values in losses.items():
        writer.add_scalar(f"losses/{name}", float(np.mean(values)), step)
    var_y = np.var(batch["ret"])
    explained = float("nan") if var_y == 0 else float(1 - np.var(batch["ret"] - batch["values"]) / var_y)
    writer.add_scalar("losses/explained_variance", explained, step)


def search_teacher_report(labels: int, trained: int, seconds: float, samplers: int, train_seconds: float) -> dict:
    """What the search teacher did and cost in this invocation (``train.py --search-teacher-share``), for
    summary.json: ``labels`` (decisions labelled), ``trained`` (labelled decisions in this invocation's updates; the
    rest wait in hands still running), ``seconds`` (the samplers' seconds in the search, summed over them) and
    ``share_of_sampler_time`` (those seconds over the samplers' wall-clock, ``samplers`` x ``train_seconds``)."""
    return {"labels": labels, "trained": trained, "seconds": round(seconds, 3),
            "share_of_sampler_time": round(seconds / max(1e-9, samplers * train_seconds), 4)}


#: The folder of the ladders (``benchmarks/``; absent outside a checkout).
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
#: Per ruleset, the ladder whose pairs give a trained policy its yardstick, and the shipped policies of that ladder
#: a run is compared with (for ``schnapsen20`` the default run of an earlier release, and the strongest,
#: ``STRONGEST_POLICIES``).
LADDERS = {"schnapsen20": (BENCHMARKS / "ladder_schnapsen20.json", ("trained", STRONGEST_POLICIES["schnapsen20"])),
           "sixtysix24": (BENCHMARKS / "ladder_sixtysix24.json", ("trained-sixtysix24",))}


def rules_text(rules) -> str:
    """The ruleset's name and the knobs that differ from its preset (``schnapsen20``, ``schnapsen20
    false_claim=mirror``)."""
    preset = type(rules).make(rules.name).to_dict()
    changed = [f"{k}={v}" for k, v in rules.to_dict().items() if k != "ruleset" and preset.get(k) != v]
    return " ".join([rules.name, *changed])


def yardstick(rules, results: dict) -> list[str]:
    """Lines that compare the final table with the shipped policies' results against the same opponents (from the
    ruleset's ladder, :data:`LADDERS`; none for a ruleset without one, other knobs, or outside a checkout)."""
    ladder, refs = LADDERS.get(rules.name, (None, ()))
    if ladder is None or rules != type(rules).make(rules.name) or not ladder.is_file():  # the ladder's rules
        return []
    pairs = json.loads(ladder.read_text(encoding="utf-8"))["pairs"]
    lines = []
    for ref in refs:
        found = []
        for name in results:
            for p in pairs:
                if {p["agent_a"], p["agent_b"]} == {ref, name}:
                    mean = p["mean"] if p["agent_a"] == ref else -p["mean"]
                    found.append(f"{name} {mean:+.3f}")
        if found:
            lines.append(f"  {ref:<14} " + ", ".join(found))
    if not lines:
        return []
    return ["for comparison, the shipped policies against the same opponents (game points a hand, "
            f"{ladder.relative_to(ladder.parents[1])}):", *lines]


def next_steps(run_dir, results: dict, rules) -> str:
    """What to run next with the trained policy: the arena, terminal play, the Gymnasium env, TensorBoard."""
    policy = Path(run_dir) / "policy.pt"
    bin_dir = Path(sys.executable).parent  # the programs beside this Python (the environment's bin folder)
    try:
        bin_dir = Path(os.path.relpath(bin_dir))
    except ValueError:  # another drive (Windows)
        pass
    lines = [f"the policy: {policy} (eval_policy.pt beside it is the policy of the latest evaluation)"]
    against = yardstick(rules, results)
    if against:
        lines += against
        low = (results.get("heuristic") or {}).get("ci_low")  # the final table, as dicts (RatingResult.to_dict)
        if low is not None and low > 0:
            lines.append("it beats heuristic (the CI above zero): expert, below, is the yardstick that is left")
        else:
            lines.append("a short run beats random but rarely heuristic yet; the default run and the longer shipped "
                         "ones show what more training reaches")

    flag, kwarg = ("", "") if rules.name == "schnapsen20" else (f" --ruleset {rules.name}",
                                                                 f", ruleset=\"{rules.name}\"")
    lines += ["next:",
              f"  {bin_dir / 'schnapsen-arena'} {policy} expert{flag} --deals 200     # measure it against the yardstick",
              f"  {bin_dir / 'schnapsen-play'} --opponent {policy}{flag}              # play against it",
              f"  gymnasium.make(\"schnapsen_env/Schnapsen-v0\", opponent=\"{policy}\"{kwarg})  # train against it",
              f"  {bin_dir / 'tensorboard'} --logdir {Path(run_dir).parent}     # the learning curves"]
    return "\n".join(lines)


def evaluation_table(policy_path, results) -> str:
    """The final evaluation as a plain-text table (game points per hand for the policy; a hand is worth 1 to 3)."""
    lines = [f"evaluation of {policy_path} (greedy), duplicate deals; game points a hand are worth 1 to 3, and a "
             "95% CI that excludes 0 means a measurable difference",
             f"{'opponent':<12}{'deals':>7}{'game points/hand':>18}{'95% CI':>20}{'hand win rate':>15}"]
    for name, r in results.items():
        ci = f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}]" if r.ci_low is not None else "n/a"
        lines.append(f"{name:<12}{r.deals:>7}{r.mean:>+18.3f}{ci:>20}{r.hand_win_rate:>15.1%}")
    return "\n".join(lines)


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


def measure_nash_conv(model, rules, tree, step: int, history: list, writer):
    """The current policy's exact NashConv (``--nash-conv-every``, schnapsen10) into ``history``, TensorBoard and
    the log; returns the game tree (:class:`agents.game_theory.exact.Tree`, built here on the first call, about
    5 s) for the next call."""
    if tree is None:
        tree = exact.Tree(rules)
    was_training = model.training
    model.eval()
    try:
        res = tree.nash_conv(exact.network_policy(model))
    finally:
        model.train(was_training)
    history.append({"step": step, "nash_conv": res["nash_conv"], "exploitability": res["exploitability"]})
    tqdm.write(f"exact at {step:,} steps: NashConv {res['nash_conv']:.4f} game points "
               f"(exploitability {res['exploitability']:.4f})")
    if writer is not None:
        writer.add_scalar("exact/nash_conv", res["nash_conv"], step)
        writer.add_scalar("exact/exploitability", res["exploitability"], step)
    return tree
