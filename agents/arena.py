"""The arena: duplicate-deal matches between agents and round robins with Elo ratings.

:func:`play_match` plays two agents on duplicate deals and :func:`round_robin` plays every pair and fits Elo
ratings. The work is split by job:

* :mod:`agents.specs`: what an agent may be given as (a name such as ``"rollout:n_samples=8,depth=2"``, a ``.pt``
  checkpoint, a factory, an agent object, a ``(label, spec)`` pair) and how it is built for the match's rules;
* :mod:`agents.duplicate`: the deals, the game loop that plays each deal with both seatings, the worker
  processes, and game records (through :class:`schnapsen_env.records.Recorder`);
* :mod:`agents.ratings`: the statistics (mean game points per hand with a 95% CI over deals, win rates) and the
  Elo fit.

The names of those modules that callers use are importable from here too (``from agents.arena import
play_match, resolve_agent, fit_elo, MatchResult``). The command line is ``schnapsen-arena``
(:mod:`agents.cli.arena`).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from agents.duplicate import EPISODES, Duel, play_deals, sample_deals
from agents.ratings import MatchResult, RoundRobinResult, fit_elo, summarise
from agents.specs import resolve_agent
from schnapsen_env.records import write_records
from schnapsen_env.ruleset import RuleSet


def play_match(agent_a: Any, agent_b: Any, n_deals: int, ruleset: str = "schnapsen20", seed: int = 0,
               workers: int | None = None, episode: str = "hand", progress: bool = True, chunk_size: int = 10,
               records_path: str | os.PathLike | None = None, **knobs: Any) -> MatchResult:
    """Play ``n_deals`` duplicate deals (``2 * n_deals`` hands or matches) between two agents.

    Args:
        agent_a, agent_b: agent specs (:mod:`agents.specs`): a registered name, a ``.pt`` path, a factory, an
            agent.
        n_deals: number of deals; each is played twice with the seats swapped.
        ruleset: ``"schnapsen20"`` or ``"sixtysix24"``.
        seed: seeds the deals and every agent (through ``(seed, chunk)``).
        workers: processes (default ``os.cpu_count()``); 1 plays in this process.
        episode: ``"hand"`` (one hand per deal and seating) or ``"match"`` (a match to ``match_target``; the deal
            fixes its first hand, the env shuffles the rest from a seed shared by both seatings).
        progress: show a tqdm progress bar.
        chunk_size: deals per task; results depend on it (agent seeds are per chunk), not on ``workers``.
        records_path: also write every hand as a game record (JSON Lines, :mod:`schnapsen_env.records`, with
            the agents' labels under ``"players"``), in deal order.
        **knobs: rule knobs (RULES.md section 5) for the env and the agents.

    Returns:
        A :class:`MatchResult` (``.table()`` text, ``.to_dict()`` for JSON; statistics in :mod:`agents.ratings`).

    Raises:
        ValueError: bad agent specs (listing the valid names), ``n_deals < 1``, a bad ``episode``.
        RulesError: an unknown ruleset or knob.
    """
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {EPISODES}, got {episode!r}")
    if not isinstance(n_deals, (int, np.integer)) or n_deals < 1:
        raise ValueError(f"n_deals must be a positive int, got {n_deals!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size!r}")
    rules = RuleSet.make(ruleset, **knobs)
    label_a, factory_a = resolve_agent(agent_a, rules)
    label_b, factory_b = resolve_agent(agent_b, rules)
    if label_a == label_b:
        label_a, label_b = label_a + " (A)", label_b + " (B)"
    factory_a(seed=0), factory_b(seed=0)  # fail fast here, not in a worker
    workers = (os.cpu_count() or 1) if workers is None else int(workers)
    deals = sample_deals(int(n_deals), rules, seed)
    duel = Duel(factory_a=factory_a, factory_b=factory_b, labels=(label_a, label_b), seed=seed, ruleset=ruleset,
                episode=episode, knobs=dict(knobs), records=records_path is not None)
    t0 = time.perf_counter()
    results = play_deals(duel, deals, chunk_size, workers, progress, f"{label_a} vs {label_b}")
    if records_path is not None:
        write_records(records_path, [hand for r in results for hand in r.records])
    return summarise(results, label_a, label_b, ruleset, episode, seed, knobs, chunk_size,
                     time.perf_counter() - t0)


def round_robin(agents: list[Any], n_deals: int, ruleset: str = "schnapsen20", seed: int = 0,
                workers: int | None = None, episode: str = "hand", progress: bool = True, chunk_size: int = 10,
                anchor: str | None = "random", **knobs: Any) -> RoundRobinResult:
    """Play every pair of ``agents`` with :func:`play_match` (same deals for every pair) and fit Elo ratings.

    Args:
        agents: two or more agent specs (labels must differ; name them with ``(label, spec)`` pairs).
        anchor: the label rated 0 (default ``"random"``; mean 0 when it is absent or None).
        Other arguments: as :func:`play_match`.

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


__all__ = ["EPISODES", "MatchResult", "RoundRobinResult", "fit_elo", "play_match", "resolve_agent", "round_robin"]
