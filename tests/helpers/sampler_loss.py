"""``train.py`` losing a sampler at a chosen point, for the tests of a dead sampler: right after the learner hands the
samplers the batch of update ``N`` (``--kill-at N``; they are playing it), a process is SIGKILLed, so the run's last
checkpoint is the one of update ``N - 1`` whatever the timing (with ``--checkpoint-every 1``).

    python tests/helpers/sampler_loss.py --kill-at N --sampler I -- TRAIN.PY FLAGS   # sampler I's process
    python tests/helpers/sampler_loss.py --kill-at N --pid P -- TRAIN.PY FLAGS       # any process: a Ray node's raylet

Sampler ``I``'s process is a local sampler process or the worker process of Ray actor ``I``. The script exits with
``train.py``'s status. In a test's own process, :func:`lose_a_sampler` does the same with pytest's ``monkeypatch``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path


def _kill(pid: int) -> None:
    """SIGKILL ``pid`` and wait until it is gone (or a zombie: dead, not reaped yet)."""
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        time.sleep(0.02)
    raise TimeoutError(f"process {pid} still runs 30 s after SIGKILL")


def lose_a_sampler(train, kill_at: int, sampler: int | None = None, pid: int | None = None, setattr_=setattr) -> None:
    """Make ``train.start_samplers`` return samplers whose ``kill_at``-th ``submit`` is followed by the SIGKILL of
    sampler ``sampler``'s process or of process ``pid``."""
    real_start = train.start_samplers

    def start_samplers(*args, **kwargs):
        samplers = real_start(*args, **kwargs)
        real_submit, count = samplers.submit, [0]
        # Ray actors' processes, asked while the actors are idle
        pids = samplers.ray.get([a.pid.remote() for a in samplers.actors]) if hasattr(samplers, "actors") else []

        def submit(*a, **kw):
            real_submit(*a, **kw)
            count[0] += 1
            if count[0] == kill_at:
                if pid is not None:
                    _kill(pid)
                elif hasattr(samplers, "procs"):  # a local sampler process: killed and reaped
                    samplers.procs[sampler].kill()
                    samplers.procs[sampler].join(timeout=30)
                else:  # a Ray actor's process
                    _kill(pids[sampler])

        samplers.submit = submit
        return samplers

    setattr_(train, "start_samplers", start_samplers)


def main(argv: list[str]) -> int:
    tests = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(tests))
    from helpers.scripts import ROOT, load_script

    split = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--kill-at", type=int, required=True)
    parser.add_argument("--sampler", type=int)
    parser.add_argument("--pid", type=int)
    opts = parser.parse_args(argv[:split])
    sys.path.insert(0, str(ROOT))
    train = load_script("train.py")
    lose_a_sampler(train, opts.kill_at, sampler=opts.sampler, pid=opts.pid)
    return train.cli(argv[split + 1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
