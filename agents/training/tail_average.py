"""Tail weight averaging of a training run (``train.py --average-last``; SWA, Izmailov et al., "Averaging Weights
Leads to Wider Optima and Better Generalization", 2018): the policy a run writes is the uniform mean of the weights
after each of its last updates, while training goes on with the last weights.
"""

from __future__ import annotations

from torch import nn
from torch.optim.swa_utils import AveragedModel


class TailAverage:
    """The running mean of the weights after each update of a run's window.

    The window is the updates after the first ``(1 - share)`` of the ``planned`` updates, and the run's last
    update always: a batch ends with whole env steps, so it holds a few more decisions than ``--batch-size`` and a
    run makes a few fewer updates than planned (a small share would otherwise average none).

    Args:
        share: ``--average-last``, from 0 (off: the policy is the last weights) to 1.
        planned: the run's planned updates, ``--total-steps // --batch-size`` (at least 1).
        total_steps: the run's ``--total-steps`` (its last update is the one that reaches it).
        saved: a checkpoint's ``"average"`` entry (:meth:`state`; checked by
            :func:`agents.training.resume.trainer_state_problem`) or None.
        model: the trained network, which a restored average copies.
        update, step: the run's updates and learner decisions so far; a run extended by ``--resume`` before its
            new window drops the average it had begun.
    """

    def __init__(self, share: float, planned: int, total_steps: int, saved: dict | None = None,
                 model: nn.Module | None = None, update: int = 0, step: int = 0) -> None:
        self.after = planned - max(1, round(share * planned)) if share else None
        self.total_steps = total_steps
        self.average: AveragedModel | None = None
        if saved is not None and self.holds(update, step):
            self.average = AveragedModel(model)
            self.average.module.load_state_dict(saved["weights"])
            self.average.n_averaged.fill_(saved["count"])

    def holds(self, update: int, step: int) -> bool:
        """Whether the update numbered ``update`` (1-based), which brought the run to ``step`` decisions, is in the
        window."""
        return self.after is not None and (update > self.after or step >= self.total_steps)

    def add(self, model: nn.Module, update: int, step: int) -> None:
        """Average ``model``'s weights in after the update ``update`` if it is in the window."""
        if self.holds(update, step):
            if self.average is None:
                self.average = AveragedModel(model)
            self.average.update_parameters(model)

    def policy(self, model: nn.Module) -> nn.Module:
        """The network the run writes as its policy: the average, or ``model`` where none has begun."""
        return model if self.average is None else self.average.module

    @property
    def count(self) -> int:
        """Updates averaged so far (0 before the window)."""
        return 0 if self.average is None else int(self.average.n_averaged)

    def state(self) -> dict | None:
        """A checkpoint's ``"average"`` entry: the average's weights and :attr:`count` (None before the window or
        without averaging)."""
        if self.average is None:
            return None
        return {"weights": {k: v.detach().cpu().clone() for k, v in self.average.module.state_dict().items()},
                "count": self.count}
