"""The arena: duplicate-deal matches between agents and round robins with Elo ratings.

:func:`play_match` plays two agents on duplicate deals and :func:`round_robin` plays every pair and fits Elo
ratings. The work is split by job:

* :mod:`agents.specs`: what an agent may be given as (a name such as ``"rollout:n_samples=8,depth=2"``, a ``.pt``
  checkpoint, a factory, an agent object, a ``(label, spec)`` pair) and how it is built for the match's rules;
* :mod:`agents.evaluation.duplicate`: the deals, the game loop that plays each deal with both seatings, the worker
  processes, and game records (through :class:`schnapsen_env.records.Recorder`);
* :mod:`agents.evaluation.ratings`: the statistics (mean game points per hand with a 95% CI over deals, win rates) and the
  Elo fit.

The names of those modules that callers use are importable from here too (``from agents.evaluation.arena import
play_match, resolve_agent, fit_elo, MatchResult``). The command line is ``schnapsen-arena``
(:mod:`agents.cli.arena`).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from agents.evaluation.duplicate import EPISODES, DealResult, Duel, play_deals, sample_deals
from agents.evaluation.ratings import MatchResult, RoundRobinResult, fit_elo, summarise
from agents.specs import resolve_agent
from schnapsen_env.errors import short_repr
from schnapsen_env.files import WriteError
from schnapsen_env.records import RecordWriter
from schnapsen_env.ruleset import RuleSet

#: Most deals one match plays (the deals are held in memory; split a larger experiment over seeds).
MAX_DEALS = 1_000_000
#: Most worker processes.
MAX_WORKERS = 256
#: Largest seed (numpy takes seeds >= 0; torch up to 2**63 - 1).
MAX_SEED = 2 ** 63 - 1


class RecordsWriteError(WriteError):
    """Writing the game records failed (a full disk, ...), but the match was played to its end: :attr:`result` holds
    its :class:`MatchResult`, and the records file keeps every complete record written before the failure (the
    message says how many)."""

    def __init__(self, errno_: int | None, message: str, result: MatchResult) -> None:
        super().__init__(errno_, message)
        self.result = result


def _check_int(name: str, value: Any, low: int, high: int | None) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < low or \
            (high is not None and value > high):
        want = f"an int from {low:,} to {high:,}" if high is not None else f"an int >= {low}"
        raise ValueError(f"{name} must be {want}, got {value!r}")


def play_match(agent_a: Any, agent_b: Any, n_deals: int, ruleset: str = "schnapsen20", seed: int = 0,
               workers: int | None = None, episode: str = "hand", progress: bool = True, chunk_size: int = 10,
               records_path: str | os.PathLike | None = None, **knobs: Any) -> MatchResult:
    """Play ``n_deals`` duplicate deals (``2 * n_deals`` hands or matches) between two agents.

    Args:
        agent_a: an agent spec (:mod:`agents.specs`): a registered name, a ``.pt`` path, a factory, an agent.
        agent_b: the other agent's spec.
        n_deals: number of deals; each is played twice with the seats swapped.
        ruleset: ``"schnapsen20"``, ``"sixtysix24"`` or ``"schnapsen10"``.
        seed: seeds the deals and every agent (through ``(seed, chunk)``).
        workers: processes (default ``os.cpu_count()``); 1 plays in this process.
        episode: ``"hand"`` (one hand per deal and seating) or ``"match"`` (a match to ``match_target``; the deal
            fixes its first hand, the env shuffles the rest from a seed shared by both seatings).
        progress: show a tqdm progress bar.
        chunk_size: deals per task; results depend on it (agent seeds are per chunk), not on ``workers``.
        records_path: also write every hand as a game record (JSON Lines, :mod:`schnapsen_env.records`, with
            the agents' labels under ``"players"``), in deal order, each record as soon as its deal's chunk (and
            every chunk before it) is played.
        **knobs: rule knobs (RULES.md section 5) for the env and the agents.

    Returns:
        A :class:`MatchResult` (``.table()`` text, ``.to_dict()`` for JSON; statistics in :mod:`agents.evaluation.ratings`).

    Raises:
        ValueError: bad agent specs (listing the valid names), ``n_deals`` not in 1..:data:`MAX_DEALS`, ``workers``
            not in 1..:data:`MAX_WORKERS`, ``chunk_size < 1``, ``seed`` not in 0..:data:`MAX_SEED`, a bad
            ``episode``.
        RulesError: an unknown ruleset or knob.
        WriteError: the records file cannot be created (before any deal is played).
        RecordsWriteError: a record could not be written (a full disk): the match was still played to its end and
            the exception's ``result`` holds it; the file keeps the complete records before the failure.
    """
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {EPISODES}, got {episode!r}")
    _check_int("n_deals", n_deals, 1, MAX_DEALS)
    _check_int("chunk_size", chunk_size, 1, None)
    if workers is not None:
        _check_int("workers", workers, 1, MAX_WORKERS)
    _check_int("seed", seed, 0, MAX_SEED)
    rules = RuleSet.make(ruleset, **knobs)
    label_a, factory_a = resolve_agent(agent_a, rules)
    label_b, factory_b = resolve_agent(agent_b, rules)
    if label_a == label_b:
        label_a, label_b = label_a + " (A)", label_b + " (B)"
    for label, factory in ((label_a, factory_a), (label_b, factory_b)):  # fail fast here, not in a worker
        try:
            factory(seed=0)
        except (ValueError, TypeError) as e:
            raise _with_context(e, f"agent {short_repr(label)} cannot be built: {e}") from e
    workers = (os.cpu_count() or 1) if workers is None else int(workers)
    deals = sample_deals(int(n_deals), rules, seed)
    duel = Duel(factory_a=factory_a, factory_b=factory_b, labels=(label_a, label_b), seed=seed, ruleset=ruleset,
                episode=episode, knobs=dict(knobs), records=records_path is not None)
    t0 = time.perf_counter()
    writer = RecordWriter(records_path) if records_path is not None else None
    try:
        on_chunk = None if writer is None else _InOrder(writer)
        results = play_deals(duel, deals, chunk_size, workers, progress, f"{label_a} vs {label_b}", on_chunk)
    finally:
        if writer is not None:
            writer.close()
    result = summarise(results, label_a, label_b, ruleset, episode, seed, knobs, chunk_size,
                       time.perf_counter() - t0)
    if writer is not None and writer.error is not None:
        raise RecordsWriteError(writer.error.errno, f"{writer.error} (the match was played to its end)", result)
    return result


def _with_context(e: Exception, message: str) -> ValueError:
    """``e``'s class (when it is a ValueError taking a message) with ``message``, else a ValueError."""
    if isinstance(e, ValueError):
        try:
            return type(e)(message)
        except Exception:
            pass
    return ValueError(message)


class _InOrder:
    """Writes the records of played chunks in deal order as soon as every earlier deal is played; after a failed
    write it only drops records (the match goes on)."""

    def __init__(self, writer: RecordWriter) -> None:
        self.writer = writer
        self.next = 0
        self.pending: dict[int, DealResult] = {}

    def __call__(self, done: list[DealResult]) -> None:
        for r in done:
            self.pending[r.deal] = r
        while self.next in self.pending:
            r = self.pending.pop(self.next)
            self.next += 1
            if self.writer.error is None:
                assert r.records is not None  # a match with a records file plays its deals with records=True
                try:
                    for hand in r.records:
                        self.writer.write(hand)
                except WriteError:
                    pass  # kept in writer.error, raised when the match ends
            r.records = None  # written: the match result does not need them


def round_robin(agents: list[Any], n_deals: int, ruleset: str = "schnapsen20", seed: int = 0,
                workers: int | None = None, episode: str = "hand", progress: bool = True, chunk_size: int = 10,
                anchor: str | None = "random", **knobs: Any) -> RoundRobinResult:
    """Play every pair of ``agents`` with :func:`play_match` (same deals for every pair) and fit Elo ratings.

    Args:
        agents: two or more agent specs (labels must differ; name them with ``(label, spec)`` pairs).
        anchor: the label rated 0 (default ``"random"``; mean 0 when it is absent or None).
        n_deals: as :func:`play_match`, and so are the other arguments.

    Raises:
        ValueError: fewer than two agents, duplicate labels, or a bad spec (as :func:`play_match`).
    """
    rules = RuleSet.make(ruleset, **knobs)
    resolved = [resolve_agent(a, rules) for a in agents]
    labels = [label for label, _ in resolved]
    if len(labels) < 2:
        raise ValueError(f"a round robin needs at least two agents, got {labels}")
    if len(set(labels)) != len(labels):
        raise ValueError(f"agent labels must differ, got {labels}: name them with (label, spec) pairs")
    pairs = []
    wins: dict[tuple[str, str], float] = {}
    for i in range(len(resolved)):
        for j in range(i + 1, len(resolved)):
            r = play_match(resolved[i], resolved[j], n_deals, ruleset=ruleset, seed=seed, workers=workers,
                           episode=episode, progress=progress, chunk_size=chunk_size, **knobs)
            pairs.append(r)
            wins[labels[i], labels[j]] = r.hands_won_a + 0.5 * r.ties
            wins[labels[j], labels[i]] = r.hands_won_b + 0.5 * r.ties
    anchor_used = anchor if anchor in labels else None
    elo = fit_elo(labels, wins, anchor=anchor_used)
    return RoundRobinResult(agents=labels, elo=elo, pairs=pairs, anchor=anchor_used)


__all__ = ["EPISODES", "MAX_DEALS", "MAX_SEED", "MAX_WORKERS", "MatchResult", "RecordsWriteError", "RoundRobinResult",
           "fit_elo", "play_match", "resolve_agent", "round_robin"]
