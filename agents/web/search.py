"""The opponents' decisions and the analyses of ``schnapsen-web``, run in worker processes.

The searches (``pimc``, ``expert``) run compiled numba code that holds Python's GIL for a whole call: the expert's
search of a ``sixtysix24`` opening (README, "Playing in the browser", for how long) in a thread of the server would
stop the server answering anyone for that long. So every decision and every analysis runs here, in a :class:`SearchPool` of worker processes (``spawn``ed:
each imports the agents once and keeps its compiled code loaded), and the server's event loop only waits for the
answer. Three executors keep a long search from delaying what need not wait for it: one for the quick opponents'
moves (:data:`QUICK_NAMES` and the policies: milliseconds), one for the searching opponents' moves (``pimc``,
``expert``, ``rollout``, ...), one for analyses. A quick opponent thus never waits behind another game's search.

A task carries only what the agent contract gives an agent (:mod:`agents.base`): the rules (as a dict), the
player's observation vector and action mask, and a seed. Agents are built afresh for each task from that seed, so
a task's answer depends on nothing but its arguments (reproducible, and the same in any worker); the shipped and
``--policy`` policies, which play greedily and use no randomness, are loaded once per worker and kept.

An agent is named by an :data:`AgentSpec`: ``("name", "pimc")`` for a registered agent with its default options, or
``("file", "/path/policy.pt")`` for the ``--policy`` checkpoint the server was started with (never a path sent by
the browser: :mod:`agents.web.sessions` decides which specs exist).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import numpy as np

from agents import make_agent
from agents.learned.shipped import SHIPPED_POLICIES
from schnapsen_env.encoding import observation
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet

AgentSpec = tuple[str, str]
#: Registered agents that are learned policies (the shipped ``schnapsen20`` policies, declared in ``agents``).
POLICY_NAMES = tuple(SHIPPED_POLICIES)
#: Registered agents whose ``action_values`` are game points for every legal action, offered as analysers.
VALUE_ANALYSERS = ("pimc", "expert")
#: Registered agents that decide in milliseconds (no search): with the policies, they move in the quick executor.
QUICK_NAMES = ("random", "heuristic")

#: Policies a worker keeps loaded, by (spec, rules): the least recently used beyond these are dropped (the records of
#: an upload may each hold other knobs, and each knob set is a key of its own).
MAX_POLICIES = 8
_POLICIES: OrderedDict[tuple[AgentSpec, RuleSet], Any] = OrderedDict()  # loaded policies of this worker process


class SearchError(RuntimeError):
    """A worker process stopped in the middle of a task (killed, out of memory); the pool has been restarted."""


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


def choose_action(spec: AgentSpec, rules: dict, obs: np.ndarray, mask: np.ndarray, seed: int) -> int:
    """An agent's decision (runs in a worker): the action id it plays in the player's observation.

    Args:
        spec: the agent (:data:`AgentSpec`).
        rules: the rules as :meth:`RuleSet.to_dict` gives them.
        obs, mask: the player's observation vector and action mask.
        seed: the seed of the agent built for this decision.

    Returns:
        The chosen action id (the caller checks that it is legal).
    """
    agent = build_agent(spec, RuleSet.from_dict(rules), seed)
    return int(agent.act({"observation": obs, "action_mask": mask}))


def analyse(spec: AgentSpec, rules: dict, obs: np.ndarray, mask: np.ndarray, seed: int) -> dict[str, Any]:
    """One analyser's opinion of every legal action in the player's observation (runs in a worker).

    Args:
        spec: the analyser: a value analyser (:data:`VALUE_ANALYSERS`) or a policy.
        rules, obs, mask, seed: as for :func:`choose_action`.

    Returns:
        ``{"kind": "values" | "probabilities", "values": {action id: float}, "seconds": float}``: mean game points
        for the player (a search) or the policy's probability (a policy) of each legal action.

    Raises:
        ValueError: an analyser that is neither a value analyser nor a policy.
    """
    start = time.perf_counter()
    agent = build_agent(spec, RuleSet.from_dict(rules), seed)
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


def warm_up(compiled: bool = True, policies: tuple[tuple[AgentSpec, dict], ...] = ()) -> float:
    """Make a worker ready: load the policies and, with ``compiled``, the compiled code of the rules core, the solver
    and the heuristic (numba's caches; on a fresh machine numba compiles them first) by one small search.

    Args:
        compiled: run the small search.
        policies: ``(spec, rules dict)`` of each policy to load and keep (:func:`build_agent`).

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
        for name in ("heuristic", *VALUE_ANALYSERS):
            choose_action(("name", name), rules.to_dict(), obs, mask, 0)
    return time.perf_counter() - start


def _report_warm_up(fut, pool: SearchPool | None = None) -> None:
    """Log a warm-up that failed (the first real task then fails with the same problem, in its answer); not one
    that ``pool``'s closing ended (a server stopped during its warm-up)."""
    if pool is not None and pool._closed:
        return
    if not fut.cancelled() and fut.exception() is not None:
        logging.getLogger("schnapsen-web").warning("a search worker failed to warm up: %s: %s",
                                                   type(fut.exception()).__name__, fut.exception())


def _worker_init(server: int | None = None) -> None:
    """A worker ignores Ctrl-C (the terminal sends it to the whole process group): the server stops its workers.
    It ends by itself once its server process ``server`` is gone without stopping it (killed outright: SIGKILL,
    the out-of-memory killer), where it would otherwise wait on its task queue forever (a search in progress ends
    first: the compiled code holds the GIL)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if server is not None:
        threading.Thread(target=_watch_server, args=(server,), name="schnapsen-web-watch", daemon=True).start()


def _watch_server(server: int, period: float = 0.5) -> None:
    """End this process once its parent is no longer ``server`` (it was adopted: the server died)."""
    while os.getppid() == server:
        time.sleep(period)
    os._exit(1)


def _default_workers() -> int:
    return 2 if (os.cpu_count() or 1) <= 4 else 4


class SearchPool:
    """Worker processes for the opponents' moves and for analyses (module docstring).

    Args:
        workers: processes for the searches, split between the searching opponents' executor (half, at least one)
            and the analyses' (the rest, at least one); the quick opponents' executor has one more process. 0 runs
            them all in threads of this process instead (no process start-up, but a search then holds up the whole
            server: for tests of fast agents). None: 2 on up to 4 cores, else 4.

    Raises:
        ValueError: a negative or non-int ``workers``.
    """

    KINDS = ("quick", "play", "analysis")

    def __init__(self, workers: int | None = None) -> None:
        workers = _default_workers() if workers is None else workers
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 0:
            raise ValueError(f"workers must be an int >= 0, got {workers!r}")
        self.workers = workers
        self._executors: dict[str, Executor | None] = dict.fromkeys(self.KINDS)
        self._lock = threading.Lock()
        self._closed = False

    def sizes(self) -> dict[str, int]:
        """Workers of each executor (threads when :attr:`workers` is 0)."""
        if self.workers == 0:
            return {"quick": 1, "play": 1, "analysis": 2}
        play = max(1, self.workers // 2)
        return {"quick": 1, "play": play, "analysis": max(1, self.workers - play)}

    def _executor(self, kind: str) -> Executor:
        with self._lock:
            if self._closed:
                raise SearchError("the server is shutting down")
            ex = self._executors[kind]
            if ex is None:
                n = self.sizes()[kind]
                if self.workers == 0:
                    ex = ThreadPoolExecutor(n, thread_name_prefix=f"schnapsen-web-{kind}")
                else:
                    ex = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_worker_init, initargs=(os.getpid(),))
                self._executors[kind] = ex
            return ex

    async def run(self, kind: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` in the executor ``kind`` (one of :attr:`KINDS`) and await its result.

        Raises:
            SearchError: the worker process died (the executor is replaced for the next task).
            Exception: whatever ``fn`` raised.
        """
        ex = self._executor(kind)
        try:
            return await asyncio.get_running_loop().run_in_executor(ex, fn, *args)
        except BrokenProcessPool:
            with self._lock:
                if self._executors[kind] is ex:
                    self._executors[kind] = None
            _stop(ex)
            raise SearchError("a search process stopped in the middle of its task (killed or out of memory); it "
                              "has been restarted: try again") from None

    async def choose(self, spec: AgentSpec, rules: RuleSet, obs: np.ndarray, mask: np.ndarray, seed: int) -> int:
        """:func:`choose_action` in the quick opponents' executor (:func:`is_quick`) or the searching ones'."""
        kind = "quick" if is_quick(spec) else "play"
        return await self.run(kind, choose_action, spec, rules.to_dict(), obs, mask, seed)

    async def analyse(self, spec: AgentSpec, rules: RuleSet, obs: np.ndarray, mask: np.ndarray,
                      seed: int) -> dict[str, Any]:
        """:func:`analyse` in the analyses' executor."""
        return await self.run("analysis", analyse, spec, rules.to_dict(), obs, mask, seed)

    def start_warm_up(self, policies: tuple[tuple[AgentSpec, RuleSet], ...] = ()) -> None:
        """Start every worker and make it ready in the background (:func:`warm_up`; nothing waits for it): the
        quick opponents' worker loads the policies, the searching opponents' workers the compiled searches, the
        analyses' workers both.

        Args:
            policies: ``(spec, rules)`` of the policies on offer.
        """
        specs = tuple((spec, rules.to_dict()) for spec, rules in policies)
        for kind, n in self.sizes().items():
            ex = self._executor(kind)
            for _ in range(n):
                ex.submit(warm_up, kind != "quick", () if kind == "play" else specs).add_done_callback(
                    lambda fut: _report_warm_up(fut, self))

    def close(self) -> None:
        """Stop the workers, cancelling queued tasks and ending running searches."""
        with self._lock:
            self._closed = True
            executors = [ex for ex in self._executors.values() if ex is not None]
            self._executors = dict.fromkeys(self.KINDS)
        for ex in executors:
            _stop(ex)


def _stop(ex: Executor) -> None:
    """Shut an executor down without waiting; a process pool's workers are terminated (a search can run for many
    seconds and would otherwise hold up the server's exit)."""
    procs = list((getattr(ex, "_processes", None) or {}).values())  # ProcessPoolExecutor's workers (pid -> process)
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()


__all__ = ["MAX_POLICIES", "POLICY_NAMES", "QUICK_NAMES", "VALUE_ANALYSERS", "AgentSpec", "SearchError", "SearchPool",
           "analyse", "build_agent", "choose_action", "is_policy", "is_quick", "warm_up"]
