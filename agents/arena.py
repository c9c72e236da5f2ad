"""The arena: duplicate-deal matches between agents, confidence intervals, and round robins with Elo ratings.

Every game is played through the PettingZoo env (:func:`schnapsen_env.schnapsen_v0.raw_env`), so agents see only
their observation dicts. **Duplicate deals**: deal ``i`` (a deck order and a dealer drawn from
``numpy.random.default_rng(seed)``) is played twice, once with agent A as ``player_0`` and once with the seats
swapped, so both agents get both hands of every deal and the luck of the cards largely cancels.

Statistics (:class:`MatchResult`):

* **Mean game points per hand for A**, with a 95% confidence interval computed over **deals**: the sample unit
  is one deal, the sum of A's game points (+ won, - lost) over its two seatings. Its mean and normal-theory CI
  (``mean ± z_0.975 · stdev / sqrt(deals)``, :mod:`statistics`) are halved to give the per-hand figures. The two
  seatings of a deal are strongly (negatively) correlated, so the deal, not the hand, is the independent unit.
  In match episodes (``episode="match"``) the unit is A's net game points per hand over the deal's two matches
  (the carry of a ``sixtysix24`` tie included).
* **Hand win rate** of A: hands won by A over hands played, a tie (``sixtysix24``) counting one half.
* **Match win rate** of A (``episode="match"`` only): matches won over matches played.

Play is spread over processes (:class:`concurrent.futures.ProcessPoolExecutor`, ``os.cpu_count()`` workers by
default) in chunks of ``chunk_size`` deals; each chunk builds its own agents with seeds derived from
``(seed, chunk index)``, so a result depends on ``seed`` and ``chunk_size`` but not on the number of workers.

Agents are given as *specs*, each built for the match's rules (the ruleset with its knobs, :mod:`agents.base`):

* a registry name (:func:`agents.agent_names`), optionally with keyword arguments: ``"rollout:n_samples=8,depth=2"``;
  it is built with ``make_agent(name, rules, seed=...)``;
* a checkpoint path ending in ``.pt``, loaded with ``agents.learned.PolicyAgent.load(path, rules=rules)``;
* a factory: any callable taking ``seed=`` (and ``rules=``, which it is then given) and returning an agent (an
  object with ``act(observation) -> int``) or a plain callable ``observation -> int``, e.g. an agent class or
  ``functools.partial(RolloutAgent, n_samples=4)``;
* an agent object (has ``act``): used as it is in every chunk (it is not reseeded);
* a pair ``(label, spec)`` to name any of the above in tables.

:func:`round_robin` plays every pair and fits Elo ratings by Bradley-Terry maximum likelihood over hand wins.
"""

from __future__ import annotations

import ast
import inspect
import json
import math
import multiprocessing
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np
from tqdm.auto import tqdm

from schnapsen_env import schnapsen_v0
from schnapsen_env.errors import IllegalActionError
from schnapsen_env.rules import PLAYERS
from schnapsen_env.ruleset import RuleSet

EPISODES = ("hand", "match")
CONFIDENCE = 0.95
#: Virtual hand wins given to each side of every pair before the Bradley-Terry fit (keeps ratings finite when
#: one agent wins every hand; it pulls each pair's win ratio towards even by one hand in total).
ELO_PRIOR_WINS = 0.5
ELO_ITERATIONS = 1000


# ---------------------------------------------------------------------------------------------------- specs
def _parse_value(text: str) -> Any:
    """``"8"`` -> 8, ``"0.5"`` -> 0.5, ``"True"``/``"None"`` -> True/None, anything else stays a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _accepts(factory: Callable, name: str) -> bool:
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class _NameFactory:
    """Builds a registry agent; picklable (a module-level class holding plain data)."""

    def __init__(self, name: str, kwargs: dict, rules: RuleSet) -> None:
        self.name, self.kwargs, self.rules = name, kwargs, rules

    def __call__(self, seed: int | None = None):
        from agents import make_agent

        return make_agent(self.name, self.rules, seed=seed, **self.kwargs)


class _CallableFactory:
    """A user's factory; given ``rules=`` (the match's rules) when it takes that keyword. Picklable when the
    factory is."""

    def __init__(self, factory: Callable[..., Any], rules: RuleSet) -> None:
        self.factory, self.rules = factory, rules
        self.takes_rules = _accepts(factory, "rules")

    def __call__(self, seed: int | None = None):
        if self.takes_rules:
            return self.factory(rules=self.rules, seed=seed)
        return self.factory(seed=seed)


class _CheckpointFactory:
    """Loads a checkpoint with ``agents.learned.PolicyAgent.load`` for the match's rules (passing ``seed=`` when it
    accepts one)."""

    def __init__(self, path: str, rules: RuleSet) -> None:
        self.path, self.rules = path, rules

    def __call__(self, seed: int | None = None):
        try:
            from agents.learned import PolicyAgent
        except ModuleNotFoundError as e:
            if e.name not in ("agents.learned",):
                raise
            raise ValueError(f"agent {self.path!r} is a checkpoint path, but agents.learned (PolicyAgent) is not "
                             "available in this installation") from None
        if _accepts(PolicyAgent.load, "seed"):
            return PolicyAgent.load(self.path, rules=self.rules, seed=seed)
        return PolicyAgent.load(self.path, rules=self.rules)


class _Fixed:
    """Returns one given agent object every time (no reseeding)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def __call__(self, seed: int | None = None):
        return self.agent


def resolve_agent(spec: Any, rules: RuleSet | str) -> tuple[str, Callable[..., Any]]:
    """Turn an agent spec (module docstring) into ``(label, factory)``; ``factory(seed=...)`` builds the agent for
    ``rules``.

    Args:
        spec: an agent spec (module docstring).
        rules: the rules the agent plays (a RuleSet with its knobs, or a ruleset name for its default knobs).

    Raises:
        ValueError: an unknown agent name (the message lists the valid names), a missing checkpoint file, a
            checkpoint when ``agents.learned`` is missing, a malformed ``name:key=value`` list, or a spec of an
            unsupported type.
        TypeError: ``rules`` is missing or not a RuleSet / ruleset name.
    """
    from agents import _REGISTRY, agent_names
    from agents.base import as_rules

    rules = as_rules(rules)
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        _, factory = resolve_agent(spec[1], rules)
        return spec[0], factory
    if isinstance(spec, str):
        if spec.endswith(".pt"):
            if not os.path.isfile(spec):
                raise ValueError(f"no checkpoint file {spec!r}: an agent is a name in {agent_names()} or a path "
                                 "to a .pt checkpoint")
            return os.path.basename(spec), _CheckpointFactory(spec, rules)
        name, _, arg_text = spec.partition(":")
        if name not in _REGISTRY:
            raise ValueError(f"unknown agent {name!r}: expected one of {agent_names()} or a path to a .pt "
                             "checkpoint")
        kwargs = {}
        for item in filter(None, (t.strip() for t in arg_text.split(","))):
            key, eq, value = item.partition("=")
            if not eq or not key.strip().isidentifier():
                raise ValueError(f"bad agent argument {item!r} in {spec!r}: expected name:key=value,key=value")
            kwargs[key.strip()] = _parse_value(value.strip())
        for own in ("seed", "rules"):
            if own in kwargs:
                raise ValueError(f"agent {spec!r}: the arena gives every agent its {own} itself; drop {own}=")
        params = inspect.signature(_REGISTRY[name]).parameters
        unknown = sorted(k for k in kwargs if k not in params)
        if unknown:
            valid = sorted(k for k in params if k not in ("seed", "rules", "self"))
            raise ValueError(f"agent {name!r} takes no argument(s) {unknown}: expected some of {valid}")
        return spec, _NameFactory(name, kwargs, rules)
    if hasattr(spec, "act") and not isinstance(spec, type):  # an agent object; a class is a factory
        return getattr(spec, "name", type(spec).__name__), _Fixed(spec)
    if isinstance(spec, (_NameFactory, _CallableFactory, _CheckpointFactory)):  # already built for some rules
        if spec.rules != rules:
            raise ValueError(f"agent factory {spec!r} was built for other rules ({spec.rules}) than {rules}")
        return getattr(spec, "name", None) or getattr(spec, "path", None) or type(spec).__name__, spec
    if callable(spec):
        label = getattr(spec, "name", None) or getattr(spec, "__name__", None)
        if label is None and hasattr(spec, "func"):  # functools.partial
            label = getattr(spec.func, "name", None) or getattr(spec.func, "__name__", None)
        return str(label or type(spec).__name__), _CallableFactory(spec, rules)
    raise ValueError(f"cannot use {spec!r} as an agent: expected a name in {agent_names()}, a .pt path, a factory "
                     "taking seed= (and rules=), or an object with act()")


def _act_fn(agent: Any) -> Callable[[dict], int]:
    if hasattr(agent, "act"):
        return agent.act
    if callable(agent):
        return agent
    raise ValueError(f"the factory returned {agent!r}, which has no act() and is not callable")


# ---------------------------------------------------------------------------------------------------- deals
def draw_deals(n_deals: int, ruleset: RuleSet, seed: int) -> list[tuple[list[str], str]]:
    """``n_deals`` deals ``(deck codes, dealer)`` from ``numpy.random.default_rng(seed)``; deal ``i`` does not
    depend on ``n_deals``."""
    rng = np.random.default_rng(seed)
    codes = ruleset.deck.codes
    out = []
    for _ in range(n_deals):
        order = rng.permutation(len(codes))
        dealer = PLAYERS[int(rng.integers(2))]
        out.append(([codes[i] for i in order], dealer))
    return out


def _derived_seed(*entropy: int) -> int:
    return int(np.random.SeedSequence(list(entropy)).generate_state(1)[0])


# ---------------------------------------------------------------------------------------------------- play
_WORKER: dict[str, Any] = {}


def _init_worker(config: dict) -> None:
    _WORKER.clear()
    _WORKER.update(config)
    if "torch" in sys.modules:  # one thread per worker process
        sys.modules["torch"].set_num_threads(1)


def _new_record(env, labels: list[str]) -> dict:
    """A game record (``schnapsen_env.records``) for the hand just dealt in ``env``."""
    from schnapsen_env.records import deck_of

    game = env.game
    return {"rules": env.rules.to_dict(), "deck": deck_of(game), "dealer": PLAYERS[game.dealer], "actions": [],
            "result": None, "players": {PLAYERS[0]: labels[0], PLAYERS[1]: labels[1]}}


def _play_episode(env, acts: list[Callable], agents: list[Any], labels: list[str], options: dict,
                  env_seed: int | None, records: list | None = None) -> tuple[list[tuple[int | None, int]], int | None]:
    """One episode. Returns ``([(hand winner seat or None, seat-0 net game points), ...], match winner seat)``;
    with ``records`` (a list) each finished hand is appended to it as a game record dict."""
    env.reset(seed=env_seed, options=options)
    for ag in agents:
        if hasattr(ag, "reset"):
            ag.reset()
    hands: list[tuple[int | None, int]] = []
    current = _new_record(env, labels) if records is not None else None
    while True:
        agent = env.agent_selection
        if env.terminations[agent]:
            break
        seat = PLAYERS.index(agent)
        obs = env.observe(agent)
        action = acts[seat](obs)
        try:
            env.step(int(action))
        except IllegalActionError as e:
            raise IllegalActionError(f"agent {labels[seat]!r} as {agent} returned an illegal action: {e}") from None
        if current is not None:
            current["actions"].append(env.action_names[int(action)])
        info = env.infos["player_0"]
        if env.terminations[agent] or "last_hand" in info:
            res = info["result"] if env.terminations[agent] else info["last_hand"]
            winner = None if res["winner"] is None else PLAYERS.index(res["winner"])
            hands.append((winner, int(env.rewards["player_0"])))
            if current is not None:
                current["result"] = res
                records.append(current)
                if not env.terminations[agent]:
                    current = _new_record(env, labels)
            if not env.terminations[agent]:
                for ag in agents:
                    if hasattr(ag, "reset"):
                        ag.reset()
    match_winner = env.infos["player_0"].get("match_winner")
    return hands, None if match_winner is None else PLAYERS.index(match_winner)


def _play_chunk(chunk: int, first: int, deals: list) -> list[dict]:
    """Play deals ``first .. first + len(deals) - 1`` (both seatings each) with fresh agents for this chunk."""
    cfg = _WORKER
    seed = cfg["seed"]
    agent_a = cfg["factory_a"](seed=_derived_seed(seed, chunk, 0))
    agent_b = cfg["factory_b"](seed=_derived_seed(seed, chunk, 1))
    act_a, act_b = _act_fn(agent_a), _act_fn(agent_b)
    label_a, label_b = cfg["labels"]
    episode = cfg["episode"]
    env = schnapsen_v0.raw_env(ruleset=cfg["ruleset"], episode=episode, reward="game_points", **cfg["knobs"])
    out = []
    for k, (deck, dealer) in enumerate(deals):
        i = first + k
        env_seed = _derived_seed(seed, i, 2) if episode == "match" else None
        rec = {"deal": i, "points": 0, "hands": 0, "a_wins": 0, "ties": 0, "a_matches": 0,
               "records": [] if cfg.get("records") else None}
        for a_seat in (0, 1):
            if a_seat == 0:
                acts, agents, labels = [act_a, act_b], [agent_a, agent_b], [label_a, label_b]
            else:
                acts, agents, labels = [act_b, act_a], [agent_b, agent_a], [label_b, label_a]
            hands, match_winner = _play_episode(env, acts, agents, labels, {"deck": deck, "dealer": dealer},
                                                env_seed, rec["records"])
            sign = 1 if a_seat == 0 else -1
            for winner, p0 in hands:
                rec["points"] += sign * p0
                rec["hands"] += 1
                if winner is None:
                    rec["ties"] += 1
                elif winner == a_seat:
                    rec["a_wins"] += 1
            if match_winner == a_seat:
                rec["a_matches"] += 1
        out.append(rec)
    return out


def _run_chunks(config: dict, deals: list, chunk_size: int, workers: int, progress: bool, desc: str) -> list[dict]:
    chunks = [(c, start, deals[start:start + chunk_size]) for c, start in enumerate(range(0, len(deals), chunk_size))]
    records: list[dict] = []
    bar = tqdm(total=len(deals), unit="deal", desc=desc, disable=not progress, leave=True)
    try:
        if workers <= 1 or len(chunks) <= 1:
            _init_worker(config)
            for c, start, part in chunks:
                records.extend(_play_chunk(c, start, part))
                bar.update(len(part))
        else:
            methods = multiprocessing.get_all_start_methods()
            # fork passes the config (factories may be lambdas) to the workers without pickling it
            ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
            with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=ctx,
                                     initializer=_init_worker, initargs=(config,)) as pool:
                futures = {pool.submit(_play_chunk, c, start, part): len(part) for c, start, part in chunks}
                for fut in as_completed(futures):
                    records.extend(fut.result())
                    bar.update(futures[fut])
    finally:
        bar.close()
    records.sort(key=lambda r: r["deal"])
    return records


# ---------------------------------------------------------------------------------------------------- results
@dataclass
class MatchResult:
    """Outcome of :func:`play_match`, from agent A's side (module docstring for the statistics).

    Attributes:
        agent_a, agent_b: labels of the agents.
        ruleset, knobs, episode, seed, chunk_size: how it was played.
        deals: duplicate deals played; hands: hands played in all (``2 * deals`` in hand episodes).
        mean: mean game points per hand for A (negative: B is stronger).
        ci_low, ci_high: 95% confidence interval of ``mean``, over deals (None with fewer than 2 deals).
        stdev_deal: standard deviation of the per-deal sample unit (game points).
        hand_win_rate: A's hands won / hands, a tie counting 1/2.
        hands_won_a, hands_won_b, ties: hand counts.
        matches, match_win_rate: matches played and A's share won (``episode="match"`` only, else None).
        seconds: wall-clock time.
    """

    agent_a: str
    agent_b: str
    ruleset: str
    episode: str
    seed: int
    deals: int
    hands: int
    mean: float
    ci_low: float | None
    ci_high: float | None
    stdev_deal: float | None
    hand_win_rate: float
    hands_won_a: int
    hands_won_b: int
    ties: int
    matches: int | None = None
    match_win_rate: float | None = None
    knobs: dict = field(default_factory=dict)
    chunk_size: int = 10
    seconds: float = 0.0

    def to_dict(self) -> dict:
        """JSON-compatible dict of all fields."""
        return asdict(self)

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @property
    def ci_half_width(self) -> float | None:
        return None if self.ci_low is None else (self.ci_high - self.ci_low) / 2

    def table(self) -> str:
        """A readable plain-text summary."""
        ci = "n/a" if self.ci_low is None else f"[{self.ci_low:+.3f}, {self.ci_high:+.3f}]"
        knobs = "".join(f" {k}={v}" for k, v in self.knobs.items())
        lines = [
            f"{self.agent_a} vs {self.agent_b}  ({self.ruleset}{knobs}, {self.episode} episodes, seed {self.seed})",
            f"  duplicate deals       {self.deals}  ({self.hands} hands, {self.seconds:.1f} s)",
            f"  game points / hand    {self.mean:+.3f}  95% CI {ci}  (for {self.agent_a}; unit: deal)",
            f"  hand win rate         {self.hand_win_rate:.3f}  ({self.hands_won_a} won, {self.hands_won_b} lost, "
            f"{self.ties} tied)",
        ]
        if self.matches is not None:
            lines.append(f"  match win rate        {self.match_win_rate:.3f}  ({self.matches} matches)")
        return "\n".join(lines)

    __str__ = table


def _summarise(records: list[dict], label_a: str, label_b: str, ruleset: str, episode: str, seed: int,
               knobs: dict, chunk_size: int, seconds: float) -> MatchResult:
    n = len(records)
    hands = sum(r["hands"] for r in records)
    if episode == "hand":
        units = [r["points"] / 2 for r in records]  # the deal's pair sum, halved: points per hand
    else:
        units = [r["points"] / r["hands"] for r in records]
    mean = statistics.fmean(units) if units else 0.0
    if n >= 2:
        sd = statistics.stdev(units)
        half = statistics.NormalDist().inv_cdf(0.5 + CONFIDENCE / 2) * sd / math.sqrt(n)
        ci_low, ci_high = mean - half, mean + half
    else:
        sd = ci_low = ci_high = None
    wins = sum(r["a_wins"] for r in records)
    ties = sum(r["ties"] for r in records)
    result = MatchResult(
        agent_a=label_a, agent_b=label_b, ruleset=ruleset, episode=episode, seed=seed, deals=n, hands=hands,
        mean=mean, ci_low=ci_low, ci_high=ci_high, stdev_deal=sd,
        hand_win_rate=(wins + 0.5 * ties) / hands if hands else 0.0, hands_won_a=wins,
        hands_won_b=hands - wins - ties, ties=ties, knobs=dict(knobs), chunk_size=chunk_size, seconds=seconds)
    if episode == "match":
        result.matches = 2 * n
        result.match_win_rate = sum(r["a_matches"] for r in records) / (2 * n) if n else 0.0
    return result


def play_match(agent_a: Any, agent_b: Any, n_deals: int, ruleset: str = "schnapsen20", seed: int = 0,
               workers: int | None = None, episode: str = "hand", progress: bool = True, chunk_size: int = 10,
               records_path: str | os.PathLike | None = None, **knobs: Any) -> MatchResult:
    """Play ``n_deals`` duplicate deals (``2 * n_deals`` hands or matches) between two agents.

    Args:
        agent_a, agent_b: agent specs (module docstring): a registry name, a ``.pt`` path, a factory, an agent.
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
        A :class:`MatchResult` (``.table()`` text, ``.to_dict()`` for JSON).

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
    deals = draw_deals(int(n_deals), rules, seed)
    config = {"factory_a": factory_a, "factory_b": factory_b, "labels": (label_a, label_b), "seed": seed,
              "ruleset": ruleset, "episode": episode, "knobs": dict(knobs), "records": records_path is not None}
    t0 = time.perf_counter()
    records = _run_chunks(config, deals, chunk_size, workers, progress, f"{label_a} vs {label_b}")
    if records_path is not None:
        from schnapsen_env.records import HandRecord, write_records

        hands = [HandRecord.from_dict(h) for r in sorted(records, key=lambda r: r["deal"]) for h in r["records"]]
        write_records(records_path, hands)
    return _summarise(records, label_a, label_b, ruleset, episode, seed, knobs, chunk_size,
                      time.perf_counter() - t0)


# ---------------------------------------------------------------------------------------------------- Elo
def fit_elo(names: list[str], wins: dict[tuple[str, str], float], anchor: str | None = "random",
            prior: float = ELO_PRIOR_WINS, iterations: int = ELO_ITERATIONS) -> dict[str, float]:
    """Elo ratings by Bradley-Terry maximum likelihood over hand wins.

    ``P(i beats j) = g_i / (g_i + g_j)``, fitted with Hunter's MM iteration
    ``g_i <- W_i / sum_j n_ij / (g_i + g_j)`` (Hunter 2004, "MM algorithms for generalized Bradley-Terry
    models"), ``iterations`` times at most, after adding ``prior`` virtual wins to each side of every pair that
    played. Elo is ``400 * log10(g_i)``, shifted so that ``anchor`` has 0 when it is in ``names``, else so that
    the mean is 0.

    Args:
        names: the agents.
        wins: ``(i, j) -> hands i won against j`` (ties counted 1/2 to each).
        anchor: the agent rated 0 (default ``"random"``).
        prior: virtual wins per side and pair.
        iterations: maximum MM iterations (stops early at a relative change below 1e-12).
    """
    k = len(names)
    idx = {n: i for i, n in enumerate(names)}
    w = np.zeros((k, k))
    for (a, b), v in wins.items():
        w[idx[a], idx[b]] += v
    played = (w + w.T) > 0
    w = w + prior * played
    n = w + w.T
    total = w.sum(axis=1)
    g = np.ones(k)
    for _ in range(iterations):
        denom = (n / (g[:, None] + g[None, :])).sum(axis=1)
        new = np.where(denom > 0, total / np.where(denom > 0, denom, 1), 1.0)
        new /= math.exp(np.log(new).mean())
        change = np.max(np.abs(new - g) / g)
        g = new
        if change < 1e-12:
            break
    elo = 400 * np.log10(g)
    shift = elo[idx[anchor]] if anchor in idx else elo.mean()
    return {name: float(elo[idx[name]] - shift) for name in names}


@dataclass
class RoundRobinResult:
    """Outcome of :func:`round_robin`.

    Attributes:
        agents: labels in the order given.
        elo: label -> Elo rating (Bradley-Terry over hand wins; ``random`` = 0 when present, else mean 0).
        pairs: one :class:`MatchResult` per pair (i < j in the given order, i as A).
    """

    agents: list[str]
    elo: dict[str, float]
    pairs: list[MatchResult]
    anchor: str | None = None

    def to_dict(self) -> dict:
        return {"agents": self.agents, "elo": self.elo, "anchor": self.anchor,
                "pairs": [p.to_dict() for p in self.pairs]}

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def table(self) -> str:
        """Agents by Elo, with the mean game points per hand (± 95% CI half-width) of the row agent against
        each column agent."""
        order = sorted(self.agents, key=lambda a: -self.elo[a])
        cell: dict[tuple[str, str], str] = {}
        for p in self.pairs:
            hw = p.ci_half_width
            for a, b, m in ((p.agent_a, p.agent_b, p.mean), (p.agent_b, p.agent_a, -p.mean)):
                cell[a, b] = f"{m:+.2f}" + ("" if hw is None else f" ±{hw:.2f}")
        first = self.pairs[0] if self.pairs else None
        head = ""
        if first is not None:
            knobs = "".join(f" {k}={v}" for k, v in first.knobs.items())
            head = (f"Round robin: {first.ruleset}{knobs}, {first.deals} duplicate deals per pair ({first.hands} "
                    f"{first.episode}s), seed {first.seed}\n"
                    "Cells: mean game points per hand of the row agent against the column agent, ± 95% CI "
                    "half-width over deals.\n"
                    f"Elo: Bradley-Terry fit over hand wins, {self.anchor + ' = 0' if self.anchor else 'mean 0'}.\n")
        w0 = max([len("agent")] + [len(a) for a in order])
        cols = ["Elo"] + [f"vs {a}" for a in order]
        widths = [7] + [max(len(c), 13) for c in cols[1:]]
        lines = ["  ".join([f"{'agent':<{w0}}"] + [f"{c:>{w}}" for c, w in zip(cols, widths)])]
        for a in order:
            row = [f"{a:<{w0}}", f"{self.elo[a]:>{widths[0]}.0f}"]
            for b, w in zip(order, widths[1:]):
                row.append(f"{'—' if a == b else cell.get((a, b), ''):>{w}}")
            lines.append("  ".join(row))
        return head + "\n".join(lines)

    __str__ = table


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


__all__ = ["MatchResult", "RoundRobinResult", "draw_deals", "fit_elo", "play_match", "resolve_agent",
           "round_robin"]
