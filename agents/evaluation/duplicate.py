"""Playing duplicate deals between two agents, spread over worker processes.

**Duplicate deals.** Deal ``i`` (a deck order and a dealer drawn from ``numpy.random.default_rng(seed)``,
:func:`sample_deals`) is played twice, once with agent A as ``player_0`` and once with the seats swapped, so both
agents get both hands of every deal and the luck of the cards largely cancels. Every game is played through the
PettingZoo env (:func:`schnapsen_env.schnapsen_v0.raw_env`), so agents see only their observation dicts. In match
episodes (``episode="match"``) the deal fixes the first hand and the env shuffles the rest from a seed shared by
both seatings.

**Workers.** The deals are cut into chunks of ``chunk_size``; each chunk builds its own agents with seeds derived
from ``(seed, chunk index)``, so a result depends on ``seed`` and ``chunk_size`` but not on the number of worker
processes. Workers are forked where the platform can (:class:`concurrent.futures.ProcessPoolExecutor`): fork hands
them the :class:`Duel` (whose factories may be lambdas) without pickling it; the pool's initializer stores it in
the worker's module global :data:`_DUEL`, which :func:`_play_chunk` reads. The workers ignore Ctrl-C (SIGINT,
which a terminal sends to the whole process group): the main process stops them when it is interrupted, or when
a chunk fails, instead of waiting for the queued chunks. On Linux a worker also ends when the main process is
killed.

**Records.** With ``Duel.records`` each finished hand is also recorded through
:class:`schnapsen_env.records.Recorder` (the one game-record builder), with the agents' labels under
``players``.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm import tqdm  # the text bar: in a notebook too, without ipywidgets (tqdm.auto warns there)

from agents.specs import act_fn
from schnapsen_env import schnapsen_v0
from schnapsen_env.errors import IllegalActionError
from schnapsen_env.records import HandRecord, Recorder, deck_of
from schnapsen_env.rules import PLAYERS
from schnapsen_env.ruleset import RuleSet

EPISODES = ("hand", "match")


def sample_deals(n_deals: int, rules: RuleSet, seed: int) -> list[tuple[list[str], str]]:
    """``n_deals`` deals ``(deck codes, dealer)`` from ``numpy.random.default_rng(seed)``; deal ``i`` does not
    depend on ``n_deals``."""
    rng = np.random.default_rng(seed)
    codes = rules.deck.codes
    out = []
    for _ in range(n_deals):
        order = rng.permutation(len(codes))
        dealer = PLAYERS[int(rng.integers(2))]
        out.append(([codes[i] for i in order], dealer))
    return out


def derived_seed(*entropy: int) -> int:
    """A 32-bit seed from ``entropy`` (:class:`numpy.random.SeedSequence`): per chunk for agents, per deal for
    match episodes."""
    return int(np.random.SeedSequence(list(entropy)).generate_state(1)[0])


@dataclass
class Duel:
    """How two agents play their deals: what every worker needs.

    Attributes:
        factory_a, factory_b: ``factory(seed=...)`` builds agent A or B (:func:`agents.specs.resolve_agent`).
        labels: the two agents' labels (A, B).
        seed: seeds the agents (with the chunk index) and the match episodes' later hands (with the deal index).
        ruleset, knobs: the rules of the env.
        episode: ``"hand"`` or ``"match"``.
        records: also record every hand (:attr:`DealResult.records`).
    """

    factory_a: Callable[..., Any]
    factory_b: Callable[..., Any]
    labels: tuple[str, str]
    seed: int
    ruleset: str
    episode: str = "hand"
    knobs: dict = field(default_factory=dict)
    records: bool = False


@dataclass
class DealResult:
    """One duplicate deal, both seatings, from agent A's side.

    Attributes:
        deal: the deal's index.
        points: A's net game points over both seatings (+ won, - lost).
        hands: hands played (2 in hand episodes).
        a_wins, ties: hands A won, hands tied (``sixtysix24``).
        a_matches: matches A won (match episodes).
        records: the hands as game records, in play order (None unless :attr:`Duel.records`).
    """

    deal: int
    points: int = 0
    hands: int = 0
    a_wins: int = 0
    ties: int = 0
    a_matches: int = 0
    records: list[HandRecord] | None = None


def _reset_agents(agents: list[Any]) -> None:
    for ag in agents:
        if hasattr(ag, "reset"):
            ag.reset()


def _recorder(env, labels: list[str]) -> tuple[Recorder, dict[str, str]]:
    """A recorder of the hand just dealt in ``env``, and the labels of its players by seat."""
    game = env.game
    return Recorder(env.rules, deck_of(game), PLAYERS[game.dealer]), {PLAYERS[0]: labels[0], PLAYERS[1]: labels[1]}


def play_episode(env, acts: list[Callable], agents: list[Any], labels: list[str], options: dict,
                 env_seed: int | None, records: list | None = None) -> tuple[list[tuple[int | None, int]], int | None]:
    """One episode in ``env`` (a ``raw_env`` with ``reward="game_points"``), seats ``player_0``, ``player_1`` played
    by ``acts``.

    Returns:
        ``([(hand winner seat or None, seat-0 net game points), ...], match winner seat or None)``; with
        ``records`` (a list) each finished hand is appended to it as a :class:`HandRecord`.

    Raises:
        IllegalActionError: an agent's action is illegal (naming the agent and its seat).
    """
    env.reset(seed=env_seed, options=options)
    _reset_agents(agents)
    hands: list[tuple[int | None, int]] = []
    recorder, players = _recorder(env, labels) if records is not None else (None, None)
    while True:
        agent = env.agent_selection
        if env.terminations[agent]:
            break
        seat = PLAYERS.index(agent)
        action = acts[seat](env.observe(agent))
        try:
            env.step(int(action))
        except IllegalActionError as e:
            raise IllegalActionError(f"agent {labels[seat]!r} as {agent} returned an illegal action: {e}") from None
        if recorder is not None:
            recorder.step(int(action))
        info = env.infos["player_0"]
        over = env.terminations[agent]
        if over or "last_hand" in info:
            res = info["result"] if over else info["last_hand"]
            winner = None if res["winner"] is None else PLAYERS.index(res["winner"])
            hands.append((winner, int(env.rewards["player_0"])))
            if recorder is not None:
                record = recorder.record()
                record.players = players
                records.append(record)
                if not over:
                    recorder, players = _recorder(env, labels)
            if not over:
                _reset_agents(agents)
    match_winner = env.infos["player_0"].get("match_winner")
    return hands, None if match_winner is None else PLAYERS.index(match_winner)


#: The duel of this worker process, set by the pool's initializer (:func:`_init_worker`).
_DUEL: Duel | None = None


def _init_worker(duel: Duel) -> None:
    global _DUEL
    _DUEL = duel
    if "torch" in sys.modules:  # one thread per worker process
        sys.modules["torch"].set_num_threads(1)


def _init_pool_worker(duel: Duel, parent: int) -> None:
    """A pool worker's initializer: Ctrl-C is the main process's to handle (it stops the workers), so that a
    worker does not print a traceback of its own; and the worker ends with the main process (``parent``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with(parent)
    _init_worker(duel)


def _die_with(parent: int) -> None:
    """On Linux, have the kernel end this worker (SIGTERM) when the main process dies, however it dies (``kill``,
    SIGKILL): an orphaned worker would otherwise wait for work forever. Elsewhere nothing is done."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the main process died before prctl: nobody will send the signal
        os._exit(1)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued chunks and end the worker processes now (the chunks they play are dropped)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # the executor's own list (Python >= 3.2)
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        if p.is_alive():
            p.terminate()
    for p in processes:
        p.join(5)
        if p.is_alive():
            p.kill()
            p.join()


def _play_chunk(chunk: int, first: int, deals: list) -> list[DealResult]:
    """Play deals ``first .. first + len(deals) - 1`` (both seatings each) with fresh agents for this chunk."""
    duel = _DUEL
    seed = duel.seed
    agent_a = duel.factory_a(seed=derived_seed(seed, chunk, 0))
    agent_b = duel.factory_b(seed=derived_seed(seed, chunk, 1))
    act_a, act_b = act_fn(agent_a), act_fn(agent_b)
    label_a, label_b = duel.labels
    env = schnapsen_v0.raw_env(ruleset=duel.ruleset, episode=duel.episode, reward="game_points", **duel.knobs)
    out = []
    for k, (deck, dealer) in enumerate(deals):
        i = first + k
        env_seed = derived_seed(seed, i, 2) if duel.episode == "match" else None
        result = DealResult(deal=i, records=[] if duel.records else None)
        for a_seat in (0, 1):
            if a_seat == 0:
                acts, agents, labels = [act_a, act_b], [agent_a, agent_b], [label_a, label_b]
            else:
                acts, agents, labels = [act_b, act_a], [agent_b, agent_a], [label_b, label_a]
            hands, match_winner = play_episode(env, acts, agents, labels, {"deck": deck, "dealer": dealer},
                                               env_seed, result.records)
            sign = 1 if a_seat == 0 else -1
            for winner, p0 in hands:
                result.points += sign * p0
                result.hands += 1
                if winner is None:
                    result.ties += 1
                elif winner == a_seat:
                    result.a_wins += 1
            if match_winner == a_seat:
                result.a_matches += 1
        out.append(result)
    return out


class _ProgressOutput:
    """Where the progress bar writes (standard error): a write that fails (the reader of ``2>&1 | head`` went away,
    a full disk) turns the bar off instead of ending the match."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.failed = False

    def write(self, text: str) -> None:
        if not self.failed:
            try:
                self.stream.write(text)
            except (OSError, ValueError):  # ValueError: the stream was closed
                self.failed = True

    def flush(self) -> None:
        if not self.failed:
            try:
                self.stream.flush()
            except (OSError, ValueError):
                self.failed = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def play_deals(duel: Duel, deals: list, chunk_size: int, workers: int, progress: bool = False,
               desc: str = "", on_chunk: Callable[[list[DealResult]], None] | None = None) -> list[DealResult]:
    """Play every deal both ways, in chunks of ``chunk_size`` over ``workers`` processes (1: in this process).

    Args:
        on_chunk: called in this process with each chunk's results as soon as the chunk is played (chunks finish
            in any order with several workers), e.g. to write their records while the rest is played.

    Returns:
        One :class:`DealResult` per deal, in deal order.
    """
    chunks = [(c, start, deals[start:start + chunk_size]) for c, start in enumerate(range(0, len(deals), chunk_size))]
    results: list[DealResult] = []
    bar = tqdm(total=len(deals), unit="deal", desc=desc, leave=True, file=_ProgressOutput(sys.stderr),
               disable=not progress or sys.stderr is None)  # None: started with standard error closed (2>&-)
    try:
        if workers <= 1 or len(chunks) <= 1:
            _init_worker(duel)
            for c, start, part in chunks:
                done = _play_chunk(c, start, part)
                results.extend(done)
                if on_chunk is not None:
                    on_chunk(done)
                bar.update(len(part))
        else:
            methods = multiprocessing.get_all_start_methods()
            # fork passes the duel (factories may be lambdas) to the workers without pickling it
            ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
            pool = ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=ctx,
                                       initializer=_init_pool_worker, initargs=(duel, os.getpid()))
            try:
                futures = {pool.submit(_play_chunk, c, start, part): len(part) for c, start, part in chunks}
                for fut in as_completed(futures):
                    done = fut.result()
                    results.extend(done)
                    if on_chunk is not None:
                        on_chunk(done)
                    bar.update(futures[fut])
            except BaseException:  # Ctrl-C, a failed chunk: stop now, not after every queued chunk is played
                _stop_workers(pool)
                raise
            pool.shutdown()
    finally:
        bar.close()
    results.sort(key=lambda r: r.deal)
    return results


__all__ = ["EPISODES", "DealResult", "Duel", "derived_seed", "play_deals", "play_episode", "sample_deals"]
