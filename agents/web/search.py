"""The opponents' decisions and the analyses of ``schnapsen-web``, run in worker processes with deadlines.

The searches (``pimc``, ``expert``) run compiled numba code that holds Python's GIL for a whole call (up to about a
second for the expert at its default budget, longer with its options): in a thread of the server it would stop the
server answering anyone. So every decision and every analysis runs in a :class:`SearchPool` of worker processes
(``spawn``ed: each imports the agents once, loads its compiled code before its first task and keeps it), and the
server's event loop only waits for the answer.

**Lanes.** Three lanes, each with its own workers and its own queue, keep one kind of work from waiting for
another: ``quick`` (the moves of :data:`QUICK_NAMES` and the policies, the policies' analyses and the fallback
moves: milliseconds), ``play`` (the searching opponents' moves: ``pimc``, ``expert``, ``rollout``, ...) and
``analysis`` (the searches' analyses).

**Fairness.** Every task names its *owner* (a game's or a replay's id). A free worker takes the oldest task of an
owner with nothing running in its lane; a second task of an owner that already has one running starts only if
another worker of the lane would still be free for someone else. So one player's searches cannot take every
worker of a lane, and a player waits at most for the searches already running, each bounded by its deadline. A
lane queues at most :data:`QUEUE_LIMIT` tasks, an owner at most :data:`OWNER_QUEUE_LIMIT` per lane; beyond them a
task is refused at once (:class:`SearchBusy`).

**Deadlines and cancelling.** Each task has a deadline in seconds, counted from the moment a worker starts it (a
worker counts as free only once its start-up and warm-up are over). A search cannot be interrupted inside compiled
code that holds the GIL, so stopping one means killing its worker process (SIGKILL): the worker's thread in the
server then starts a fresh process, which warms up (a few seconds; a minute or two on a fresh machine that compiles
the code first) before it takes the next task of its lane while the lane's other workers go on. A task stops so

* at its deadline: :class:`SearchTimeout` (the app then moves with the ``heuristic`` instead, or answers an
  analysis with a JSON error);
* when the coroutine awaiting it is cancelled (the app cancels a request whose client went away): the task is
  dropped from its queue, or its worker killed;
* by :meth:`SearchPool.cancel_owner` (a game deleted or expired): :class:`SearchCancelled`;
* when the pool closes (the server stops): :class:`SearchError`.

**Workers die with the server.** A worker asks the kernel to kill it when the server's thread that started it
ends (Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)``; those threads live as long as the pool), so a server killed
outright (SIGKILL, the out-of-memory killer) takes its workers with it at once, even in the middle of a search. A
watcher thread in each worker is the fallback elsewhere (it ends a worker whose server is gone, between searches).
Workers talk to the server through pipes only (no queue, lock or semaphore of :mod:`multiprocessing`), so a
stop leaves nothing behind for the resource tracker to clean up.

A task carries only what the agent contract gives an agent (:mod:`agents.base`): the rules (as a dict), the
player's observation vector and action mask, a seed, and the player's :data:`History` of the hand (its own earlier
observations and actions, RULES.md R27). Agents are built afresh for each task from that seed and, where they read
it (:class:`agents.base.ObservesHand`: the world inference of ``expert+``, ``expert:inference=...``), given the
history before they act, so that they decide as the same agent kept through the hand would; a task's answer depends
on nothing but its arguments (reproducible, and the same in any worker); the shipped and ``--policy`` policies,
which play greedily, use no randomness and read no history, are loaded once per worker and kept.

An agent is named by an :data:`AgentSpec`: ``("name", "pimc")`` for a registered agent with its default options, or
``("file", "/path/policy.pt")`` for the ``--policy`` checkpoint the server was started with (never a path sent by
the browser: :mod:`agents.web.sessions` decides which specs exist).
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents import make_agent
from agents.base import observe_hand
from agents.learned.shipped import SHIPPED_POLICIES
from agents.web.limits import MAX_ANALYSIS_SECONDS, MAX_MOVE_SECONDS
from schnapsen_env.encoding import observation
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet

log = logging.getLogger("schnapsen-web")
AgentSpec = tuple[str, str]
#: A player's history of the hand, sent with its tasks: its earlier observations float32 ``(T, obs_size)`` and the
#: action ids it took on them int64 ``(T,)``, oldest first (T is at most the hand's decisions of one player, about
#: 15 in ``sixtysix24``: a few KB); None or T = 0 for none (:func:`agents.web.sessions.seat_history`).
History = tuple[np.ndarray, np.ndarray]
#: Registered agents that are learned policies (the shipped policies of every ruleset, declared in
#: :mod:`agents.learned.data`).
POLICY_NAMES = tuple(SHIPPED_POLICIES)
#: Registered agents whose ``action_values`` are game points for every legal action, offered as analysers.
VALUE_ANALYSERS = ("pimc", "expert")
#: Registered agents that decide in milliseconds (no search): with the policies, they move in the quick executor.
QUICK_NAMES = ("random", "heuristic")

#: Policies a worker keeps loaded, by (spec, rules): the least recently used beyond these are dropped (the records of
#: an upload may each hold other knobs, and each knob set is a key of its own).
MAX_POLICIES = 8
_POLICIES: OrderedDict[tuple[AgentSpec, RuleSet], Any] = OrderedDict()  # loaded policies of this worker process


#: The lanes of a :class:`SearchPool` (module docstring).
LANES = ("quick", "play", "analysis")
#: Default deadlines in seconds: an opponent's move (past it, the ``heuristic`` moves instead) and an analysis
#: (past it, the analysis is answered with an error); :mod:`agents.web.limits` says why these.
MOVE_SECONDS, ANALYSIS_SECONDS = MAX_MOVE_SECONDS[0], MAX_ANALYSIS_SECONDS[0]
#: Tasks a lane queues, and tasks one owner (a game, a replay) queues in a lane, before refusing more.
QUEUE_LIMIT, OWNER_QUEUE_LIMIT = 64, 8
#: The quick agent that moves for a searching opponent whose search reached its deadline.
FALLBACK = ("name", "heuristic")


class SearchError(RuntimeError):
    """A task that gave no answer: its worker process died (killed, out of memory; a fresh one replaces it) or the
    server is shutting down."""


class SearchTimeout(SearchError):
    """A task reached its deadline (``seconds``) and its worker was stopped."""

    def __init__(self, message: str, seconds: float) -> None:
        super().__init__(message)
        self.seconds = seconds


class SearchCancelled(SearchError):
    """A task cancelled before its end (its owner was deleted or expired; its client went away)."""


class SearchBusy(SearchError):
    """A task refused because its lane, or its owner, has too many tasks waiting already."""


def is_policy(spec: AgentSpec) -> bool:
    """Whether an agent spec names a learned policy (a ``--policy`` file or a shipped policy)."""
    return spec[0] == "file" or spec[1] in POLICY_NAMES


def is_quick(spec: AgentSpec) -> bool:
    """Whether an agent decides without a search (a policy, :data:`QUICK_NAMES`): its moves never wait for one."""
    return is_policy(spec) or (spec[0] == "name" and spec[1] in QUICK_NAMES)


def build_agent(spec: AgentSpec, rules: RuleSet, seed: int | None):
    """The agent of ``spec`` for ``rules``: a registered agent built with ``seed``, or a policy (loaded once per
    process and kept: it plays greedily, without randomness).

    Args:
        spec: ``("name", registered name)`` or ``("file", checkpoint path)``.
        rules: the rules it plays.
        seed: the seed of its generator.

    Returns:
        An agent (:mod:`agents.base`); a policy stays loaded for the next task (at most :data:`MAX_POLICIES`).

    Raises:
        ValueError: an unknown name, an agent that cannot play ``rules``, a checkpoint that does not load.
    """
    kind, what = spec
    if kind not in ("name", "file"):
        raise ValueError(f"agent spec {spec!r}: expected ('name', NAME) or ('file', PATH)")
    if is_policy(spec):
        key = (spec, rules)
        if key not in _POLICIES:
            if kind == "file":
                from agents.learned.policy import PolicyAgent  # torch: imported only where a policy plays

                _POLICIES[key] = PolicyAgent.load(what, rules=rules)
            else:
                _POLICIES[key] = make_agent(what, rules)
            while len(_POLICIES) > MAX_POLICIES:
                _POLICIES.popitem(last=False)
        _POLICIES.move_to_end(key)
        return _POLICIES[key]
    return make_agent(what, rules, seed=seed)


def _agent_for(spec: AgentSpec, rules: dict, seed: int, history: History | None):
    """The agent of a task, built with ``seed`` and given ``history`` where it reads one."""
    agent = build_agent(spec, RuleSet.from_dict(rules), seed)
    if history is not None:
        observe_hand(agent, *history)
    return agent


def choose_action(spec: AgentSpec, rules: dict, obs: np.ndarray, mask: np.ndarray, seed: int,
                  history: History | None = None) -> int:
    """An agent's decision (runs in a worker): the action id it plays in the player's observation.

    Args:
        spec: the agent (:data:`AgentSpec`).
        rules: the rules as :meth:`RuleSet.to_dict` gives them.
        obs, mask: the player's observation vector and action mask.
        seed: the seed of the agent built for this decision.
        history: the player's earlier observations and actions of the hand (:data:`History`), given to an agent
            that reads them (:func:`agents.base.observe_hand`) before it acts; None: none.

    Returns:
        The chosen action id (the caller checks that it is legal).

    Raises:
        ValueError: a history whose observations and actions differ in number (and as :func:`build_agent`).
    """
    agent = _agent_for(spec, rules, seed, history)
    return int(agent.act({"observation": obs, "action_mask": mask}))


def analyse(spec: AgentSpec, rules: dict, obs: np.ndarray, mask: np.ndarray, seed: int,
            history: History | None = None) -> dict[str, Any]:
    """One analyser's opinion of every legal action in the player's observation (runs in a worker).

    Args:
        spec: the analyser: a value analyser (:data:`VALUE_ANALYSERS`) or a policy.
        rules, obs, mask, seed, history: as for :func:`choose_action`.

    Returns:
        ``{"kind": "values" | "probabilities", "values": {action id: float}, "seconds": float}``: mean game points
        for the player (a search) or the policy's probability (a policy) of each legal action.

    Raises:
        ValueError: an analyser that is neither a value analyser nor a policy.
    """
    start = time.perf_counter()
    agent = _agent_for(spec, rules, seed, history)
    observation = {"observation": obs, "action_mask": mask}
    legal = [int(a) for a in np.flatnonzero(mask)]
    if is_policy(spec):
        probs = agent.probabilities(observation)
        kind, values = "probabilities", {a: float(probs[a]) for a in legal}
    elif spec[1] in VALUE_ANALYSERS:
        kind, values = "values", {int(a): float(v) for a, v in agent.action_values(observation).items()}
    else:
        raise ValueError(f"agent {spec[1]!r} gives no values per action: analysers are {list(VALUE_ANALYSERS)} and "
                         "the policies")
    return {"kind": kind, "values": values, "seconds": time.perf_counter() - start}


def warm_up(compiled: bool = True, policies: tuple[tuple[AgentSpec, dict], ...] = (), searches: bool = True) -> float:
    """Make a worker ready: load the policies and, with ``compiled``, the compiled code of the rules core and the
    heuristic (and with ``searches`` the solver's) by one small decision each (numba's caches; on a fresh machine
    numba compiles them first).

    Args:
        compiled: run the small decisions.
        policies: ``(spec, rules dict)`` of each policy to load and keep (:func:`build_agent`).
        searches: with ``compiled``, also the searches (:data:`VALUE_ANALYSERS`), not only the heuristic.

    Returns:
        The seconds it took.
    """
    start = time.perf_counter()
    for spec, rules in policies:
        build_agent(spec, RuleSet.from_dict(rules), None)
    if compiled:
        rules = RuleSet.make("schnapsen20")
        state = GameState.new_hand(rules, np.random.default_rng(0))
        while len(state.stock) > 2:  # a position late in the hand: every compiled function runs, each search is short
            state.push(state.legal_actions()[0])
        obs, mask = observation(state, state.to_move), state.action_mask()
        for name in ("heuristic", *(VALUE_ANALYSERS if searches else ())):
            choose_action(("name", name), rules.to_dict(), obs, mask, 0)
    return time.perf_counter() - start


# ------------------------------------------------------------------------------------------------- worker processes
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_server(server: int) -> None:
    """Make this worker end with its server process ``server`` (module docstring): the kernel's parent-death signal
    where there is one (Linux), and a watcher thread as the fallback."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no prctl in this libc: the watcher alone
            pass
    if os.getppid() != server:  # the server died before the signal was asked for
        os._exit(1)
    threading.Thread(target=_watch_server, args=(server,), name="schnapsen-web-watch", daemon=True).start()


def _watch_server(server: int, period: float = 0.5) -> None:
    """End this process once its parent is no longer ``server`` (it was adopted: the server died). It runs only
    between searches: a compiled search holds the GIL (the parent-death signal needs no GIL)."""
    while os.getppid() == server:
        time.sleep(period)
    os._exit(1)


def _worker_main(conn, server: int, lane: str, policies: tuple[tuple[AgentSpec, dict], ...]) -> None:
    """A worker process: warm up for ``lane``, say ``("ready", problem or None)``, then answer each ``(fn, args)``
    received on ``conn`` with ``("ok", result)`` or ``("error", exception)``, one at a time, until the pipe closes.
    Ctrl-C, which the terminal sends to the whole process group, is ignored: the server stops its workers."""
    _die_with_server(server)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    problem = None
    try:
        warm_up(True, policies if lane != "play" else (), searches=lane != "quick")
    except Exception as e:  # reported by the server; the tasks that need what failed fail with it too
        problem = f"{type(e).__name__}: {e}"
    conn.send(("ready", problem))
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):  # the server closed the pipe: stop
            return
        try:
            answer: tuple[str, Any] = ("ok", fn(*args))
        except Exception as e:
            answer = ("error", e)
        try:
            conn.send(answer)
        except (pickle.PicklingError, TypeError, AttributeError, ValueError):  # an answer that does not pickle
            what = answer[1] if answer[0] == "error" else "its result"
            conn.send(("error", RuntimeError(f"{type(what).__name__}: {what}"[:2000])))
        except OSError:
            return


@dataclass(eq=False)
class _Task:
    lane: str
    owner: str
    fn: Callable[..., Any]
    args: tuple
    seconds: float
    future: Future = field(default_factory=Future)
    slot: _Slot | None = None
    started: float | None = None
    killed: str | None = None  # why its worker was killed (None: it was not)
    retried: bool = False  # handed back to the queue once, its worker found dead before it started
    finished: bool = False  # its worker is done with it (answered, died, or stopped): nothing more to kill


@dataclass(eq=False)
class _Slot:
    lane: str
    index: int
    proc: Any = None
    conn: Any = None
    thread: threading.Thread | None = None
    task: _Task | None = None
    ready: bool = False  # its process has warmed up and is alive


def _default_workers() -> int:
    return 3 if (os.cpu_count() or 1) <= 4 else 4


class SearchPool:
    """Worker processes for the opponents' moves and for analyses, in lanes, with deadlines and cancelling (module
    docstring).

    Args:
        workers: processes for the searches, split between the ``play`` lane (half, at least one) and the
            ``analysis`` lane (the rest, at least one); the ``quick`` lane has one more process. 0 runs the tasks
            in threads of this process instead (for tests of fast agents: no process start-up, but a search then
            holds up the whole server, and a task past its deadline or cancelled is abandoned, not stopped). None:
            3 on up to 4 cores, else 4.
        move_seconds: the deadline of a move (:meth:`choose`), in seconds.
        analysis_seconds: the deadline of an analysis (:meth:`analyse`), in seconds.
        policies: ``(spec, rules)`` of the policies the ``quick`` and ``analysis`` workers load while they warm up.

    Raises:
        ValueError: a negative or non-int ``workers``, a deadline that is not a positive number of seconds.
    """

    LANES = LANES
    #: Seconds before the first retry of a worker that could not start (doubled at each failure, at most 30 s).
    RETRY_SECONDS = 0.5
    #: Seconds between the checks that an idle worker is still alive (one that died is replaced).
    IDLE_CHECK_SECONDS = 1.0

    def __init__(self, workers: int | None = None, move_seconds: float = MOVE_SECONDS,
                 analysis_seconds: float = ANALYSIS_SECONDS,
                 policies: tuple[tuple[AgentSpec, RuleSet], ...] = ()) -> None:
        workers = _default_workers() if workers is None else workers
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 0:
            raise ValueError(f"workers must be an int >= 0, got {workers!r}")
        for name, value in (("move_seconds", move_seconds), ("analysis_seconds", analysis_seconds)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e6:
                raise ValueError(f"{name} must be a number of seconds above 0 and below 1e6, got {value!r}")
        self.workers = workers
        self.move_seconds, self.analysis_seconds = float(move_seconds), float(analysis_seconds)
        self._policies = tuple((spec, rules.to_dict()) for spec, rules in policies)
        self._cond = threading.Condition()
        self._queues: dict[str, deque[_Task]] = {lane: deque() for lane in LANES}
        self._running: dict[str, Counter[str]] = {lane: Counter() for lane in LANES}
        self._idle = dict.fromkeys(LANES, 0)
        self._slots: dict[str, list[_Slot]] = {lane: [] for lane in LANES}
        self._threads: dict[str, ThreadPoolExecutor] = {}
        self._closed = False
        #: Tasks by outcome since the start: ``done``, ``failed`` (the agent raised), ``timed_out``, ``cancelled``,
        #: ``refused`` (busy), ``died`` (a worker that died by itself), and ``restarts`` of worker processes.
        self.counts: Counter[str] = Counter()

    def sizes(self) -> dict[str, int]:
        """Workers of each lane (threads when :attr:`workers` is 0)."""
        if self.workers == 0:
            return {"quick": 1, "play": 1, "analysis": 2}
        play = max(1, self.workers // 2)
        return {"quick": 1, "play": play, "analysis": max(1, self.workers - play)}

    # ----------------------------------------------------------------- the public face
    async def run(self, lane: str, fn: Callable[..., Any], *args: Any, owner: str = "",
                  seconds: float | None = None) -> Any:
        """Run ``fn(*args)`` in a worker of ``lane`` (one of :data:`LANES`) within ``seconds`` of its start (None:
        :attr:`analysis_seconds` in the ``analysis`` lane, else :attr:`move_seconds`), and await its result; tasks
        of the same ``owner`` (a game's or replay's id) share the lane fairly with the others (module docstring).
        Cancelling the awaiting coroutine cancels the task.

        Raises:
            SearchTimeout: it ran ``seconds`` without an answer (its worker was stopped).
            SearchCancelled: :meth:`cancel_owner` cancelled it.
            SearchBusy: too many tasks wait in the lane, or of ``owner``.
            SearchError: its worker died, or the pool is closed or closing.
            Exception: whatever ``fn`` raised.
        """
        if lane not in LANES:
            raise ValueError(f"lane must be one of {list(LANES)}, got {lane!r}")
        if seconds is None:
            seconds = self.analysis_seconds if lane == "analysis" else self.move_seconds
        if self.workers == 0:
            return await self._run_in_thread(lane, fn, args, seconds)
        task = self._submit(lane, owner, fn, args, seconds)
        try:
            return await asyncio.wrap_future(task.future)
        except asyncio.CancelledError:
            self._cancel(task, SearchCancelled("the request was cancelled"))
            raise

    async def choose(self, spec: AgentSpec, rules: RuleSet, obs: np.ndarray, mask: np.ndarray, seed: int,
                     history: History | None = None, owner: str = "") -> int:
        """:func:`choose_action` in the ``quick`` lane (:func:`is_quick`) or the ``play`` lane, within
        :attr:`move_seconds` (raises as :meth:`run`)."""
        lane = "quick" if is_quick(spec) else "play"
        return await self.run(lane, choose_action, spec, rules.to_dict(), obs, mask, seed, history, owner=owner,
                              seconds=self.move_seconds)

    async def analyse(self, spec: AgentSpec, rules: RuleSet, obs: np.ndarray, mask: np.ndarray, seed: int,
                      history: History | None = None, owner: str = "") -> dict[str, Any]:
        """:func:`analyse` in the ``analysis`` lane (a policy's in the ``quick`` lane: milliseconds), within
        :attr:`analysis_seconds` (raises as :meth:`run`)."""
        lane = "quick" if is_policy(spec) else "analysis"
        return await self.run(lane, analyse, spec, rules.to_dict(), obs, mask, seed, history, owner=owner,
                              seconds=self.analysis_seconds)

    def cancel_owner(self, owner: str, reason: str) -> int:
        """Cancel every task of ``owner``, queued or running (their workers are stopped): each raises
        :class:`SearchCancelled` with ``reason``. Returns how many there were."""
        with self._cond:
            tasks = [t for q in self._queues.values() for t in q if t.owner == owner]
            tasks += [s.task for slots in self._slots.values() for s in slots
                      if s.task is not None and s.task.owner == owner]
        for t in tasks:
            self._cancel(t, SearchCancelled(reason))
        return len(tasks)

    def start(self) -> None:
        """Start every lane's workers now (each warms up in the background: nothing waits for it)."""
        if self.workers:
            for lane in LANES:
                self._start_lane(lane)

    def start_warm_up(self, policies: tuple[tuple[AgentSpec, RuleSet], ...] = ()) -> None:
        """:meth:`start`, with ``policies`` added to those the workers load while they warm up."""
        self._policies += tuple((spec, rules.to_dict()) for spec, rules in policies)
        self.start()

    def stats(self) -> dict[str, Any]:
        """Each lane's ``workers``, ``ready`` (warmed up and alive), ``running`` and ``queued`` tasks, and
        :attr:`counts`: what a soak test or a status page reads."""
        with self._cond:
            lanes = {}
            for lane in LANES:
                slots = self._slots[lane]
                lanes[lane] = {"workers": self.sizes()[lane], "ready": sum(1 for s in slots if s.ready),
                               "running": sum(1 for s in slots if s.task is not None),
                               "queued": len(self._queues[lane])}
            return {"lanes": lanes, "counts": dict(self.counts), "move_seconds": self.move_seconds,
                    "analysis_seconds": self.analysis_seconds}

    def worker_pids(self) -> list[int]:
        """The process ids of the live workers (for tests and status pages)."""
        with self._cond:
            return [s.proc.pid for slots in self._slots.values() for s in slots
                    if s.proc is not None and s.proc.is_alive()]

    def close(self) -> None:
        """Stop the workers: the queued and running tasks raise :class:`SearchError` (shutting down), the worker
        processes are killed and reaped."""
        with self._cond:
            self._closed = True
            queued = [t for q in self._queues.values() for t in q]
            for q in self._queues.values():
                q.clear()
            running = [s.task for slots in self._slots.values() for s in slots if s.task is not None]
            for t in running:
                t.killed = "closed"
            procs = [s.proc for slots in self._slots.values() for s in slots if s.proc is not None]
            threads = [s.thread for slots in self._slots.values() for s in slots if s.thread is not None]
            self._cond.notify_all()
        stopping = SearchError("the server is shutting down")
        for t in queued + running:
            _settle(t, error=stopping)
        for p in procs:
            _kill(p)
        for th in threads:
            if th is not threading.current_thread():
                th.join(5)
        for ex in self._threads.values():
            ex.shutdown(wait=False, cancel_futures=True)

    # ----------------------------------------------------------------- threads (workers=0)
    async def _run_in_thread(self, lane: str, fn, args, seconds: float) -> Any:
        with self._cond:
            if self._closed:
                raise SearchError("the server is shutting down")
            ex = self._threads.get(lane)
            if ex is None:
                ex = self._threads[lane] = ThreadPoolExecutor(self.sizes()[lane],
                                                              thread_name_prefix=f"schnapsen-web-{lane}")
        try:
            return await asyncio.wait_for(asyncio.wrap_future(ex.submit(fn, *args)), seconds)
        except asyncio.TimeoutError:  # not the builtin TimeoutError before Python 3.11
            self.counts["timed_out"] += 1
            raise SearchTimeout(_deadline_message(seconds), seconds) from None
        except RuntimeError as e:  # the executor was shut down
            if self._closed:
                raise SearchError("the server is shutting down") from None
            raise e

    # ----------------------------------------------------------------- queues
    def _submit(self, lane: str, owner: str, fn, args, seconds: float) -> _Task:
        task = _Task(lane, owner, fn, args, float(seconds))
        with self._cond:
            if self._closed:
                raise SearchError("the server is shutting down")
            queue = self._queues[lane]
            if len(queue) >= QUEUE_LIMIT:
                self.counts["refused"] += 1
                raise SearchBusy(f"the server is busy: {len(queue)} searches wait already; try again in a moment")
            mine = sum(1 for t in queue if t.owner == owner)
            if owner and mine >= OWNER_QUEUE_LIMIT:
                self.counts["refused"] += 1
                raise SearchBusy(f"{mine} searches of this game or replay wait already: expected at most "
                                 f"{OWNER_QUEUE_LIMIT} at a time; wait for their answers")
            queue.append(task)
            self._cond.notify_all()
        self._start_lane(lane)
        return task

    def _pick(self, lane: str) -> _Task | None:
        """The task a free worker of ``lane`` takes now, if any (module docstring, "Fairness"); under the lock."""
        queue, running = self._queues[lane], self._running[lane]
        for t in queue:
            if running[t.owner] == 0:
                return t
        return queue[0] if queue and self._idle[lane] >= 2 else None

    def _cancel(self, task: _Task, error: SearchError) -> None:
        with self._cond:  # the lock orders this against the worker's thread finishing the task
            if task in self._queues[task.lane]:
                self._queues[task.lane].remove(task)
                self._cond.notify_all()
            elif task.slot is not None and not task.finished and task.killed is None:
                task.killed = "cancelled"
                _kill(task.slot.proc)
            else:  # finished, or never submitted
                return
            self.counts["cancelled"] += 1
        _settle(task, error=error)

    # ----------------------------------------------------------------- the workers' threads
    def _start_lane(self, lane: str) -> None:
        with self._cond:
            if self._closed or self._slots[lane]:
                return
            for k in range(self.sizes()[lane]):
                slot = _Slot(lane, k)
                # The thread that starts a worker is its parent for the kernel's parent-death signal: it lives as
                # long as the pool, and starts the worker's replacements too.
                slot.thread = threading.Thread(target=self._serve_slot, args=(slot,), daemon=True,
                                               name=f"schnapsen-web-{lane}-{k}")
                self._slots[lane].append(slot)
                slot.thread.start()

    def _serve_slot(self, slot: _Slot) -> None:
        """A worker's thread: start its process, hand it tasks one at a time, start a fresh one when it dies or
        is stopped, until the pool closes."""
        failures = 0
        while not self._closed:
            try:
                started = self._spawn(slot)
            except Exception as e:  # the pipe or the process could not be made (EMFILE, ENOMEM, ...)
                log.warning("a search worker (%s) could not start: %s: %s", slot.lane, type(e).__name__, e)
                started = False
            if not started:
                failures += 1
                self._fail_stranded(slot.lane)
                with self._cond:  # a worker that cannot start: do not spin; retry later (the closing wakes it)
                    if not self._closed:
                        self._cond.wait(min(30.0, self.RETRY_SECONDS * 2 ** (failures - 1)))
                continue
            failures = 0
            self._serve(slot)
            with self._cond:
                slot.ready = False
            _kill(slot.proc)
            slot.proc.join(5)
            if not self._closed:
                self.counts["restarts"] += 1

    def _fail_stranded(self, lane: str) -> None:
        """A worker of ``lane`` could not start: the tasks queued there fail, unless another worker of the lane
        is ready to take them (they would otherwise wait for a start that may never come)."""
        with self._cond:
            if self._closed or any(s.ready for s in self._slots[lane]):
                return
            stranded = list(self._queues[lane])
            self._queues[lane].clear()
        for t in stranded:
            _settle(t, error=SearchError("no search process could start (the server's log says why): try again "
                                         "later"))

    def _spawn(self, slot: _Slot) -> bool:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        try:
            proc = ctx.Process(target=_worker_main, args=(child, os.getpid(), slot.lane, self._policies),
                               name=f"schnapsen-web-{slot.lane}", daemon=True)
            with self._cond:
                if self._closed:
                    parent.close()
                    return False
                proc.start()
                slot.proc, slot.conn = proc, parent
        except BaseException:
            parent.close()
            raise
        finally:
            child.close()  # the worker holds the other end: its death reads as the end of the pipe
        try:
            kind, problem = parent.recv()
        except (EOFError, OSError):
            proc.join(5)
            if not self._closed:  # not the pool's own closing
                log.warning("a search worker (%s) stopped while it started (exit status %s)", slot.lane,
                            proc.exitcode)
            return False
        if problem is not None:
            log.warning("a search worker (%s) failed to warm up: %s", slot.lane, problem)
        with self._cond:
            slot.ready = True
        return True

    def _serve(self, slot: _Slot) -> None:
        lane = slot.lane
        while True:
            with self._cond:
                self._idle[lane] += 1
                self._cond.notify_all()
                task = None
                alive = True
                while not self._closed and (task := self._pick(lane)) is None:
                    self._cond.wait(self.IDLE_CHECK_SECONDS)
                    if not self._closed and _gone(slot.proc):  # it died idle (killed, out of memory):
                        alive = False  # replace it now (a worker the closing killed is not replaced)
                        break
                self._idle[lane] -= 1
                if self._closed or task is None or not alive:
                    if not alive and not self._closed:
                        slot.ready = False
                        self.counts["died"] += 1
                        log.warning("an idle search worker (%s) died (exit status %s): starting a fresh one",
                                    lane, slot.proc.exitcode)
                    return
                self._queues[lane].remove(task)
                self._running[lane][task.owner] += 1
                task.slot, task.started, slot.task = slot, time.monotonic(), task
            try:
                alive = self._run_task(slot, task)
            finally:
                with self._cond:
                    self._running[lane][task.owner] -= 1
                    if not self._running[lane][task.owner]:
                        del self._running[lane][task.owner]
                    slot.task = None
                    self._cond.notify_all()
            if not alive:
                return

    def _run_task(self, slot: _Slot, task: _Task) -> bool:
        """Hand ``task`` to the worker, wait for its answer until its deadline and settle it; False when the worker
        is gone (died, killed at the deadline or by a cancel) and must be replaced. A worker found dead before it
        got the task (it died idle) hands the task back to the front of the queue, for its fresh replacement."""
        if _gone(slot.proc):
            return self._requeue(slot, task)
        try:
            slot.conn.send((task.fn, task.args))
        except (pickle.PicklingError, TypeError, AttributeError) as e:  # the task does not pickle: the worker is fine
            with self._cond:
                task.finished = True
            _settle(task, error=e)
            return True
        except OSError:  # the worker's end is closed: it died before it could read the task
            return self._requeue(slot, task)
        remaining = task.started + task.seconds - time.monotonic()
        try:
            answer = slot.conn.recv() if remaining > 0 and slot.conn.poll(remaining) else None
        except (EOFError, OSError):
            return self._lost(task)
        with self._cond:
            killed = task.killed
            if killed is None and answer is None:
                task.killed = "deadline"
            task.finished = True
        if answer is None:  # the deadline: stop the search
            _kill(slot.proc)
            if killed is None:
                self.counts["timed_out"] += 1
                _settle(task, error=SearchTimeout(_deadline_message(task.seconds), task.seconds))
            return False
        status, payload = answer
        self.counts["done" if status == "ok" else "failed"] += 1
        if status == "ok":
            _settle(task, result=payload)
        else:
            _settle(task, error=payload)
        return killed is None  # a worker a cancel killed meanwhile is replaced

    def _requeue(self, slot: _Slot, task: _Task) -> bool:
        """``slot``'s worker died before it got ``task`` (it never ran): put the task back at the front of its
        queue, once, for the worker that replaces it; a second time it fails as :meth:`_lost`. Returns False."""
        with self._cond:
            again = not task.retried and task.killed is None and not self._closed
            if again:
                task.retried, task.slot, task.started = True, None, None
                slot.ready = False
                self.counts["died"] += 1
                self._queues[task.lane].appendleft(task)
                self._cond.notify_all()
        if again:
            log.warning("a search worker (%s) died while idle (exit status %s): its next task waits for a fresh "
                        "one", slot.lane, slot.proc.exitcode)
            return False
        return self._lost(task)

    def _lost(self, task: _Task) -> bool:
        """The worker's pipe ended during ``task``: it was killed (by a cancel, the closing) or died by itself."""
        with self._cond:
            killed = task.killed
            task.finished = True
        if killed is None:  # it died by itself (the out-of-memory killer, a crash in compiled code)
            self.counts["died"] += 1
            _settle(task, error=SearchError("a search process stopped in the middle of its task (killed or out "
                                            "of memory); a fresh one replaces it: try again"))
        elif killed == "closed":
            _settle(task, error=SearchError("the server is shutting down"))
        return False


def _deadline_message(seconds: float) -> str:
    return f"the search was stopped at its limit of {seconds:g} s"


def _settle(task: _Task, result: Any = None, error: BaseException | None = None) -> None:
    """Give ``task``'s future its result or error, unless it has one already (cancelled, timed out, closed)."""
    try:
        if error is not None:
            task.future.set_exception(error)
        else:
            task.future.set_result(result)
    except Exception:  # InvalidStateError: settled before (a cancel that raced the answer)
        pass


def _gone(proc) -> bool:
    """Whether a worker process has ended: its sentinel is ready (the kernel closes it with the process's other files
    at exit, a moment before ``is_alive`` can see the exit) or it is no longer alive."""
    return bool(multiprocessing.connection.wait([proc.sentinel], 0)) or not proc.is_alive()


def _kill(proc) -> None:
    """SIGKILL a worker process (a compiled search ignores nothing else while it holds the GIL: SIGTERM's default
    action would do too, but a worker's Python handlers never run mid-search)."""
    if proc is not None and proc.is_alive():
        try:
            proc.kill()
        except (OSError, ValueError):  # already gone, or already closed
            pass


__all__ = ["ANALYSIS_SECONDS", "FALLBACK", "LANES", "MAX_POLICIES", "MOVE_SECONDS", "OWNER_QUEUE_LIMIT",
           "POLICY_NAMES", "QUEUE_LIMIT", "QUICK_NAMES", "VALUE_ANALYSERS", "AgentSpec", "History", "SearchBusy",
           "SearchCancelled", "SearchError", "SearchPool", "SearchTimeout", "analyse", "build_agent",
           "choose_action", "is_policy", "is_quick", "warm_up"]
