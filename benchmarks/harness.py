"""What the benchmark scripts share: a peer commit's files checked out from git, measurements in a fresh process
with a chosen tree first on the path, interleaved rounds, medians with their range, ratios of medians with the
range of the per-round ratios, random legal play through PettingZoo's AEC loop, the machine's description and a
JSON record of a run.

Run on its own, it prints the description of this machine and checkout that the scripts record:

    python benchmarks/harness.py

The scripts import it as ``harness`` (their own folder is first on ``sys.path`` when run as scripts; a script
loaded another way puts it there first). It is not a benchmark itself.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterable
from io import BytesIO
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BLOCK = 4096  # uniforms drawn per rng.random call


class PeerError(Exception):
    """A peer commit that cannot be checked out; the message is one line naming what was wrong."""


def peer_tree(commit: str, paths: Iterable[str], into: Path) -> Path:
    """Write ``paths`` (files and folders of the repository) as they are at ``commit`` into ``into``, with ``git
    archive`` from this clone (which needs its history). Raises :class:`PeerError` when git is missing, when
    ``commit`` names no commit of this clone, or when the commit lacks one of ``paths``."""
    paths = list(paths)
    try:
        found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "--end-of-options", f"{commit}^{{commit}}"],
                               cwd=ROOT, capture_output=True, text=True, check=False)
    except OSError as e:  # no git on PATH
        raise PeerError(f"cannot run git ({e.strerror or e}): the peer is read from this clone's history, expected "
                        "git on PATH") from None
    if found.returncode:
        raise PeerError(f"--peer {commit!r} names no commit of this clone: expected a commit of its history (a clone "
                        f"with history, not an export of the files; {ROOT})")
    try:
        data = subprocess.run(["git", "archive", found.stdout.strip(), *paths], cwd=ROOT, check=True,
                              capture_output=True).stdout
    except subprocess.CalledProcessError as e:
        raise PeerError(f"cannot read commit {commit!r} from git ({e.stderr.decode().strip()}): expected a commit "
                        f"that has {', '.join(paths[:-1]) + ' and ' + paths[-1] if len(paths) > 1 else paths[0]}"
                        ) from None
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def on_path(tree: Path) -> dict[str, str]:
    """The environment of a subprocess that imports from ``tree`` first."""
    return dict(os.environ, PYTHONPATH=str(tree) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def run_worker(script: str, tree: Path, args: Iterable[object], what: str) -> dict:
    """Run ``script --worker ARGS`` in a fresh interpreter with ``tree`` first on ``PYTHONPATH`` and return the JSON
    object its last line prints. The object's ``"package"`` (the ``__file__`` of the package it imported) must lie
    in ``tree``, so that the peer's row measures the peer's code. Exits with the worker's error otherwise; ``what``
    names the measurement in that message."""
    name = f"benchmarks/{Path(script).name}"
    out = subprocess.run([sys.executable, script, "--worker", *map(str, args)], env=on_path(tree),
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{name}: a measurement failed ({tree}, {what}):\n{out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not result["package"].startswith(str(tree)):
        raise SystemExit(f"{name}: expected the package from {tree}, got {result['package']}")
    return result


def peer_options(parser: argparse.ArgumentParser, peer: str) -> None:
    """The options of a script that measures this checkout against a peer commit in worker processes: ``--peer``
    (default ``peer``), ``--seconds`` per measurement, ``--rounds``, ``--seed`` and the hidden ``--worker A B C``
    (the three arguments of one measurement, for :func:`run_worker`)."""
    parser.add_argument("--peer", default=peer, help=f"git commit of the peer (default {peer})")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)


def against_peer(parser: argparse.ArgumentParser, commit: str, paths: Iterable[str], rows: dict[str, object],
                 measure: Callable[[Path, object], object], rounds: int) -> dict[str, list]:
    """Check out ``paths`` of the peer ``commit`` (:func:`peer_tree`; a bad commit is a ``parser.error``) and
    measure every row twice a round, ``"ours KEY"`` with this checkout and ``"peer KEY"`` with the peer's tree, by
    ``measure(tree, rows[KEY])``, the rounds interleaved (:func:`interleaved`)."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            peer = peer_tree(commit, paths, Path(tmp))
        except PeerError as e:
            parser.error(str(e))
        return interleaved({f"{who} {key}": lambda tree=tree, arg=arg: measure(tree, arg)
                            for key, arg in rows.items() for who, tree in (("ours", ROOT), ("peer", peer))}, rounds)


def timing_parser(description: str, seconds: float = 0.7, rounds: int = 7) -> argparse.ArgumentParser:
    """A parser with the flags every timing script shares: ``--seconds`` per measurement, ``--rounds`` (interleaved,
    the median kept) and ``--seed``; check them with :func:`check_timing`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seconds", type=float, default=seconds,
                        help=f"wall time per measurement (default {seconds:g})")
    parser.add_argument("--rounds", type=int, default=rounds,
                        help=f"interleaved rounds per row, median kept (default {rounds})")
    parser.add_argument("--seed", type=int, default=0, help="seed for every generator (default 0)")
    return parser


def check_timing(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse ``--rounds`` below 1 or ``--seconds`` not above 0 (one line, exit status 2)."""
    if args.rounds < 1 or args.seconds <= 0:
        parser.error("--rounds must be >= 1 and --seconds > 0")


def aec_random_play(env, seed: int, seconds: float) -> tuple[int, int, float, float]:
    """Uniformly random legal play of whole episodes through PettingZoo's AEC loop on ``env`` for ``seconds`` (the
    episode under way is finished), the uniforms drawn from ``numpy.random.default_rng(seed)`` in blocks of
    :data:`BLOCK` so that numpy's per-call cost is not charged to the env; returns (episodes, decisions, elapsed
    wall s, process CPU s)."""
    rng = np.random.default_rng(seed)
    flatnonzero = np.flatnonzero
    buf: list[float] = []
    k = 0
    n_ep = n_dec = 0
    clock = time.perf_counter
    cpu0 = time.process_time()
    t0 = clock()
    deadline = t0 + seconds
    env.reset(seed=seed)
    while True:
        for _agent in env.agent_iter():
            obs, _rew, term, trunc, _info = env.last()
            if term or trunc:
                action = None
            else:
                legal = flatnonzero(obs["action_mask"])
                if k == len(buf):
                    buf = rng.random(BLOCK).tolist()
                    k = 0
                action = int(legal[int(buf[k] * len(legal))])
                k += 1
                n_dec += 1
            env.step(action)
        n_ep += 1
        if clock() >= deadline:
            break
        env.reset()
    elapsed = clock() - t0
    cpu = time.process_time() - cpu0
    return n_ep, n_dec, elapsed, cpu


def round_done(r: int, rounds: int) -> None:
    """The default progress line of :func:`interleaved`, on stderr."""
    print(f"round {r + 1}/{rounds} done", file=sys.stderr)


def interleaved(rows: dict[str, Callable[[], object]], rounds: int,
                progress: Callable[[int, int], None] | None = round_done) -> dict[str, list]:
    """Call every row's measurement once a round, the rounds interleaved (round 1 of every row, then round 2, ...),
    so that a change in the machine's load falls on all rows alike; every row's results in round order. After each
    round ``progress(r, rounds)`` (``None``: nothing)."""
    results: dict[str, list] = {label: [] for label in rows}
    for r in range(rounds):
        for label, measure in rows.items():
            results[label].append(measure())
        if progress is not None:
            progress(r, rounds)
    return results


def spread(values: list[float]) -> tuple[float, float, float]:
    """``(median, min, max)`` of a row's rounds."""
    return float(np.median(values)), min(values), max(values)


def ratio(ours: list[float], peer: list[float]) -> tuple[float, float, float]:
    """``(ratio of the medians, lowest, highest per-round ratio)`` of two rows measured in the same rounds."""
    per_round = [a / b for a, b in zip(ours, peer)]
    return float(np.median(ours) / np.median(peer)), min(per_round), max(per_round)


def ratio_text(ours: list[float], peer: list[float]) -> str:
    """``"2.50x (per round 2.40x..2.61x)"``: :func:`ratio` as the scripts print it."""
    r, low, high = ratio(ours, peer)
    return f"{r:.2f}x (per round {low:.2f}x..{high:.2f}x)"


def verdict(value: float, goal: float) -> str:
    """``"goal >= 3x holds"`` or ``"... MISSED"``."""
    return f"goal >= {goal:g}x {'holds' if value >= goal else 'MISSED'}"


def machine() -> str:
    """The CPU this runs on and its cores: the rates depend on both."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), model)
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def versions() -> str:
    """``"Python 3.12.1, numpy 2.1.0"``: the interpreter and numpy the rows ran on."""
    return f"Python {sys.version.split()[0]}, numpy {np.__version__}"


def commit() -> str | None:
    """The commit of this checkout (``None`` outside a git clone), with ``+changes`` when its files differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=False)
    except OSError:
        return None
    if head.returncode:
        return None
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def load() -> list[float] | None:
    """The machine's load average over 1, 5 and 15 minutes (``None`` where the system has none): above the core
    count, other programs shared the cores with the measurement, which slows absolute rates more than ratios
    measured in the same rounds."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


LOAD_AT_START = load()  # when the script imported this module, before its measurements
COMMIT_AT_START = commit()  # the code that ran: a long measurement may end after the checkout moved on


def record(figures: dict, machine_text: str | None = None) -> dict:
    """``figures`` with what makes them reproducible: the command (quoted as a shell takes it), this checkout's
    commit when the script started (its code is what ran), the machine and its load average when the script started
    and when it wrote the record."""
    return {**figures, "command": shlex.join(["python", *sys.argv]), "commit": COMMIT_AT_START,
            "machine": machine_text or machine(), "load_average": {"start": LOAD_AT_START, "end": load()}}


def rows_figures(results: dict[str, list[float]]) -> dict[str, dict]:
    """Every row's rounds as a record holds them: ``{label: {"median", "min", "max", "rounds"}}``."""
    out = {}
    for label, values in results.items():
        med, low, high = spread(values)
        out[label] = {"median": med, "min": low, "max": high, "rounds": list(values)}
    return out


def ratio_figures(ours: list[float], peer: list[float], goal: float | None = None) -> dict:
    """:func:`ratio` as a record holds it: ``{"ratio", "low", "high", "goal"}`` (``goal`` ``None``: none set)."""
    r, low, high = ratio(ours, peer)
    return {"ratio": r, "low": low, "high": high, "goal": goal}


def arena_parser(description: str, seed: int, deals: int = 200) -> argparse.ArgumentParser:
    """The options of a benchmark that plays one agent against another on duplicate deals: ``--deals``, ``--seed``,
    ``--ruleset``, ``--workers`` and ``--json``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--deals", type=int, default=deals, help=f"duplicate deals (default {deals})")
    parser.add_argument("--seed", type=int, default=seed, help=f"seed of the deals and agents (default {seed})")
    parser.add_argument("--ruleset", default="schnapsen20", choices=("schnapsen20", "sixtysix24", "schnapsen10"),
                        help="ruleset (default schnapsen20)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    json_option(parser)
    return parser


def arena_pair(a: str, b: str, args: argparse.Namespace, extra: dict | None = None) -> int:
    """Play ``a`` against ``b`` on ``args.deals`` duplicate deals (:func:`agents.evaluation.arena.play_match`),
    print the arena's table and the seconds, and with ``args.json`` write the result, the seconds and ``extra``
    with the command, commit and machine. Returns 0, or 2 after one line on standard error for a bad agent,
    ruleset or deal count."""
    from agents.evaluation.arena import play_match  # the agents package: only where a pair is played

    start = time.perf_counter()
    try:
        result = play_match(a, b, n_deals=args.deals, ruleset=args.ruleset, seed=args.seed, workers=args.workers,
                            progress=False)
    except ValueError as e:  # RulesError is a ValueError too
        print(f"{Path(sys.argv[0]).name}: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    print(result.table())
    print(f"{seconds:.0f} s")
    if args.json:
        write_json(args.json, {"result": result.to_dict(), "seconds": seconds, **(extra or {})})
    return 0


def old_rows(path: str | Path, key, named: str = "its target") -> list[dict]:
    """The rows already in the record at ``path`` that :func:`write_rows` keeps, each with the command and commit
    that wrote it (none where there is no file, an empty one, or a pipe or a device such as ``/dev/null``; one
    where the record is itself a row, as older scripts wrote it: ``benchmarks/learned_best_response_schnapsen20.json``).

    Raises:
        ValueError: one line naming the file and what it holds instead of a record of rows: not JSON, not an
            object, no ``"rows"`` list, a row that is not an object or lacks its key (``key(row)``: ``named``).
    """
    p = Path(path)
    expected = (f"expected a record of rows (a JSON object whose \"rows\" is a list of objects, each naming "
                f"{named}) or a path that does not exist yet")
    try:
        if not p.is_file():  # no file yet, or a pipe or a device (/dev/null): nothing to keep
            return []
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"--json {str(path)!r} cannot be read ({type(e).__name__}: {e}): {expected}") from None
    if not text.strip():
        return []
    try:
        before = json.loads(text)
    except ValueError as e:
        raise ValueError(f"--json {str(path)!r} is not JSON ({e}): {expected}") from None
    if isinstance(before, dict) and "rows" not in before:  # a record of one row, as older scripts wrote it
        try:
            hash(key(before))
            return [{k: v for k, v in before.items() if k not in ("machine", "load_average")}]
        except (KeyError, TypeError, AttributeError, IndexError):
            pass
    if not isinstance(before, dict) or not isinstance(before.get("rows"), list):
        holds = (f"an object without a \"rows\" list (keys {sorted(map(str, before))[:8]})"
                 if isinstance(before, dict) else f"a JSON {type(before).__name__}")
        raise ValueError(f"--json {str(path)!r} holds {holds}: {expected}")
    for i, r in enumerate(before["rows"]):
        try:
            hash(key(r))
        except (KeyError, TypeError, AttributeError, IndexError):
            shown = json.dumps(r)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            raise ValueError(f"--json {str(path)!r}: row {i} {shown} does not name {named}: {expected}") from None
    return [{"command": before.get("command"), "commit": before.get("commit"), **r} for r in before["rows"]]


def write_rows(path: str | Path, rows: list[dict], key, figures: dict | None = None, named: str = "its target") -> None:
    """Write ``rows`` into the record at ``path``, keeping the rows already there whose ``key(row)`` none of
    ``rows`` has, each with the command and commit that wrote it (a file of rows measured by several invocations:
    each row reproducible by its own command); ``figures`` are further top-level entries.

    Raises:
        ValueError: the file holds something other than a record of rows (:func:`old_rows`); it is left as it is.
            :func:`check_json` with the same ``key`` refuses such a file before any work.
    """
    now = record({})
    old = old_rows(path, key, named)
    keys = {key(r) for r in rows}
    merged = [r for r in old if key(r) not in keys] + \
        [{**r, "command": now["command"], "commit": now["commit"]} for r in rows]
    write_json(path, {**(figures or {}), "rows": merged})


def json_option(parser: argparse.ArgumentParser) -> None:
    """The ``--json PATH`` option: also write the figures, with :func:`record`'s command, commit, machine and load,
    to PATH (the documentation renders its figures from these files under ``benchmarks/``)."""
    parser.add_argument("--json", metavar="PATH",
                        help="also write the figures, the command, commit, machine and load average to this file")


def check_json(parser: argparse.ArgumentParser, args: argparse.Namespace, key=None, named: str = "its target") -> None:
    """Refuse, before any work, a ``--json`` path that cannot be written (a missing or read-only folder, a folder
    itself) or, for a script that adds its rows to the file's (:func:`write_rows`, given its ``key``), a file that
    holds no record of rows: one line through ``parser.error`` rather than a traceback after the minutes of
    measuring."""
    problem = json_problem(args.json, key, named)
    if problem is not None:
        parser.error(problem)


def json_problem(path: str | None, key=None, named: str = "its target") -> str | None:
    """What :func:`check_json` refuses in a ``--json`` path, in one line (None: nothing, or no ``--json``)."""
    from schnapsen_env.files import check_output_file

    if path is None:
        return None
    try:
        check_output_file(path, f"--json {path!r}")
        if key is not None:
            old_rows(path, key, named)
    except ValueError as e:
        return str(e)
    return None


def write_json(path: str | Path, figures: dict, machine_text: str | None = None) -> None:
    """Write :func:`record` of ``figures`` to ``path``, indented, one object."""
    Path(path).write_text(json.dumps(record(figures, machine_text), indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    print(f"machine: {machine()}; {versions()}; commit {commit()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
