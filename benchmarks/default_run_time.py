"""The wall-clock time of the README's main command (``python train.py``, the default run with its evaluations), timed
from start to the end of its final table on this machine, and recorded as one row of a JSON file by machine kind.

    python benchmarks/default_run_time.py --json benchmarks/default_run_time.json
    python benchmarks/default_run_time.py --emulate-avx2 --json benchmarks/default_run_time.json

``--emulate-avx2`` runs it as a machine with AVX2 only would, on a machine with more: torch's kernels limited to
AVX2 (``ATEN_CPU_CAPABILITY=avx2``, oneDNN's ``ONEDNN_MAX_CPU_ISA=AVX2``), numba compiling for an AVX2 CPU
(``NUMBA_CPU_NAME=haswell``) and the network in float32 (``--precision fp32``, what ``--precision auto`` picks
without bfloat16 in hardware). The clock rate and caches stay this machine's, so it estimates such a machine and
does not replace timing one. A row (``kind``: ``"avx2"`` timed on a CPU with AVX2 and no AVX-512, ``"native"`` on
one with more, or ``"avx2-emulated"``; this machine's description, the minutes, the recipe's ``--total-steps`` and
``--update-epochs`` and ``--hidden`` as the run's checkpoint gives them, the learner decisions/s, the commit and the command)
replaces the file's row of the same kind, machine and recipe; the other rows are kept. ``--train-flags`` adds
train.py flags (a short try: ``--train-flags
"--total-steps 200000"``); the row records them.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(Path(__file__).resolve().parent))  # the shared harness
import harness  # noqa: E402

sys.path.insert(0, str(ROOT))  # this checkout's packages, not an installed copy
from agents.learned.checkpoint import load_checkpoint  # noqa: E402
from agents.learned.policy_net import resolve_precision  # noqa: E402

AVX2_ENV = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "NUMBA_CPU_NAME": "haswell"}


def native_kind() -> str:
    """``"avx2"`` on a CPU whose flags (``/proc/cpuinfo``) have AVX2 and no AVX-512 (the slower kind of machine the
    project runs on), else ``"native"``."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), [])
    except OSError:
        return "native"
    return "avx2" if "avx2" in flags and "avx512f" not in flags else "native"


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--emulate-avx2", action="store_true", help="run as a machine with AVX2 only (module doc)")
    p.add_argument("--train-flags", default="", help="more train.py flags, one shell-quoted string")
    p.add_argument("--keep", metavar="DIR", help="keep the run's folder (its policy, checkpoint and logs) as DIR, "
                   "a folder that does not exist yet (default: a temporary folder, removed)")
    harness.json_option(p)
    args = p.parse_args(argv)
    harness.check_json(p, args)
    if args.keep:  # checked before the run, which a folder that cannot be written would otherwise lose at its end
        if Path(args.keep).exists():
            p.error(f"--keep {args.keep!r} exists: expected a new folder, so that no earlier run is overwritten")
        parent = Path(args.keep).absolute().parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            p.error(f"--keep {args.keep!r}: cannot make its folder {str(parent)!r} ({e.strerror}): expected a new "
                    "folder in a writable one")
        if not os.access(parent, os.W_OK):
            p.error(f"--keep {args.keep!r}: {str(parent)!r} is not writable: expected a new folder in a writable one")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    try:
        extra = shlex.split(args.train_flags)
    except ValueError as e:
        print(f"default_run_time.py: --train-flags {args.train_flags!r}: {e}: expected train.py flags as one "
              "shell-quoted string", file=sys.stderr)
        return 2
    if args.json and Path(args.json).exists():
        try:
            old = json.loads(Path(args.json).read_text())
            rows = list(old["runs"])
        except (ValueError, KeyError, TypeError) as e:
            print(f"default_run_time.py: --json {args.json!r} is not a record of this script ({e}): expected a JSON "
                  "object with a 'runs' list, or a new file", file=sys.stderr)
            return 2
    else:
        rows = []
    env = dict(os.environ) | (AVX2_ENV if args.emulate_avx2 else {})
    flags = (["--precision", "fp32"] if args.emulate_avx2 else []) + extra
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, str(ROOT / "train.py"), "--run-dir", tmp, "--run-name", "default", "--no-progress",
               *flags]
        print(" ".join(cmd), flush=True)
        t0 = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, env=env)
        minutes = (time.perf_counter() - t0) / 60
        if done.returncode:
            print(f"default_run_time.py: train.py failed (exit status {done.returncode})", file=sys.stderr)
            return 1
        summary = json.loads((Path(tmp) / "default" / "summary.json").read_text())
        ran = load_checkpoint(Path(tmp) / "default" / "checkpoint.pt")["args"]  # the recipe the run trained with
        status = 0
        if args.keep:
            try:
                shutil.copytree(Path(tmp) / "default", args.keep)
                print(f"kept the run as {args.keep}", flush=True)
            except OSError as e:  # a full disk: the timing is still recorded below
                print(f"default_run_time.py: --keep {args.keep!r}: the run could not be copied there ({e}); its "
                      "timing is recorded all the same", file=sys.stderr)
                status = 1
    kind = "avx2-emulated" if args.emulate_avx2 else native_kind()
    precision = "fp32" if args.emulate_avx2 else resolve_precision("auto")  # what train.py's default picked
    row = {"kind": kind, "machine": harness.machine(), "precision": precision,
           "minutes": minutes, "total_steps": ran["total_steps"], "update_epochs": ran["update_epochs"],
           "hidden": ran["hidden"], "decisions": summary["steps"], "decisions_per_second": summary["steps_per_second"],
           "train_seconds": summary.get("train_seconds"), "train_flags": " ".join(flags), "commit": harness.commit(),
           "how": "timed by benchmarks/default_run_time.py" + (" with AVX2 emulated" if args.emulate_avx2 else ""),
           "load_average": {"start": harness.LOAD_AT_START, "end": harness.load()}}
    print(f"default run ({kind}): {minutes:.1f} minutes, {row['decisions']:,} learner decisions at "
          f"{row['decisions_per_second']:,.0f}/s", flush=True)
    if args.json:
        same = ("kind", "machine", "total_steps", "update_epochs", "hidden")  # a row per machine and recipe
        rows = [r for r in rows if any(r.get(k) != row[k] for k in same)] + [row]
        title = ("wall-clock time of the default training run (python train.py, with its periodic evaluations and "
                 "final table), by machine and recipe (each row's total_steps, update_epochs and hidden)")
        Path(args.json).write_text(json.dumps({"title": title, "command": "python benchmarks/default_run_time.py "
                                               "[--emulate-avx2] --json PATH", "runs": rows}, indent=2) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
