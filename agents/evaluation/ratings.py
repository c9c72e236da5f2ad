"""Statistics of duplicate-deal matches: confidence intervals, win rates, and Elo ratings.

A match (:class:`MatchResult`, from agent A's side):

* **Mean game points per hand for A**, with a 95% confidence interval computed over **deals**: the sample unit
  is one deal, the sum of A's game points (+ won, - lost) over its two seatings. Its mean and normal-theory CI
  (``mean ± z_0.975 · stdev / sqrt(deals)``, :mod:`statistics`) are halved to give the per-hand figures. The two
  seatings of a deal are strongly (negatively) correlated, so the deal, not the hand, is the independent unit.
  In match episodes (``episode="match"``) the unit is A's net game points per hand over the deal's two matches
  (the carry of a ``sixtysix24`` tie included).
* **Hand win rate** of A: hands won by A over hands played, a tie (``sixtysix24``) counting one half.
* **Match win rate** of A (``episode="match"`` only): matches won over matches played.

A round robin (:class:`RoundRobinResult`) adds Elo ratings fitted by Bradley-Terry maximum likelihood over hand wins
(:func:`fit_elo`).
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from agents.evaluation.duplicate import DealResult

CONFIDENCE = 0.95
#: Virtual hand wins given to each side of every pair before the Bradley-Terry fit (keeps ratings finite when
#: one agent wins every hand; it pulls each pair's win ratio towards even by one hand in total).
ELO_PRIOR_WINS = 0.5
ELO_ITERATIONS = 1000


@dataclass
class MatchResult:
    """Outcome of :func:`agents.evaluation.arena.play_match`, from agent A's side (module docstring for the statistics).

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
        low, high = self.ci_low, self.ci_high
        if low is None:
            return None
        assert high is not None  # the bounds are set together
        return (high - low) / 2

    def table(self) -> str:
        """A readable plain-text summary."""
        ci = "n/a" if self.ci_low is None else f"[{self.ci_low:+.3f}, {self.ci_high:+.3f}]"
        knobs = "".join(f" {k}={v}" for k, v in self.knobs.items())
        lines = [
            f"{self.agent_a} vs {self.agent_b}  ({self.ruleset}{knobs}, {self.episode} episodes, seed {self.seed})",
            f"  duplicate deals       {self.deals}  ({self.hands} hands, {self.seconds:.1f} s)",
            f"  game points / hand    {self.mean:+.3f}  95% CI {ci}  (for {self.agent_a}; CI over deals)",
            f"  hand win rate         {self.hand_win_rate:.3f}  ({self.hands_won_a} won, {self.hands_won_b} lost, "
            f"{self.ties} tied)",
        ]
        if self.matches is not None:
            lines.append(f"  match win rate        {self.match_win_rate:.3f}  ({self.matches} matches)")
        lines.append(f"  verdict               {self.verdict()}")
        return "\n".join(lines)

    def verdict(self) -> str:
        """The result in words: who is ahead, by how many game points a hand (a hand is worth 1 to 3), and whether
        the 95% CI excludes zero (a measurable difference) or not (a tie at this number of deals)."""
        if self.mean == 0:
            return (f"{self.agent_a} and {self.agent_b} are level over {self.deals} deal(s)"
                    + ("" if self.ci_low is None else ": the 95% CI includes 0"))
        if self.ci_low is None or self.ci_high is None:
            return (f"{self.agent_a if self.mean >= 0 else self.agent_b} is ahead by {abs(self.mean):.3f} game points "
                    f"a hand, but {self.deals} deal gives no confidence interval: play more deals")
        if self.ci_low > 0 or self.ci_high < 0:
            better, worse = (self.agent_a, self.agent_b) if self.mean > 0 else (self.agent_b, self.agent_a)
            return (f"{better} is stronger than {worse} by {abs(self.mean):.3f} game points a hand (a hand is worth "
                    f"1 to 3); the 95% CI excludes 0")
        return (f"no measurable difference: the 95% CI includes 0 (a tie at {self.deals} deals; more deals narrow "
                "it)")

    __str__ = table


def summarise(deals: list[DealResult], label_a: str, label_b: str, ruleset: str, episode: str, seed: int,
              knobs: dict, chunk_size: int, seconds: float) -> MatchResult:
    """The :class:`MatchResult` of the played deals (module docstring for the statistics)."""
    n = len(deals)
    hands = sum(r.hands for r in deals)
    if episode == "hand":
        units = [r.points / 2 for r in deals]  # the deal's pair sum, halved: points per hand
    else:
        units = [r.points / r.hands for r in deals]
    mean = statistics.fmean(units) if units else 0.0
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    if n >= 2:
        sd = statistics.stdev(units)
        half = statistics.NormalDist().inv_cdf(0.5 + CONFIDENCE / 2) * sd / math.sqrt(n)
        ci_low, ci_high = mean - half, mean + half
    else:
        sd = ci_low = ci_high = None
    wins = sum(r.a_wins for r in deals)
    ties = sum(r.ties for r in deals)
    result = MatchResult(
        agent_a=label_a, agent_b=label_b, ruleset=ruleset, episode=episode, seed=seed, deals=n, hands=hands,
        mean=mean, ci_low=ci_low, ci_high=ci_high, stdev_deal=sd,
        hand_win_rate=(wins + 0.5 * ties) / hands if hands else 0.0, hands_won_a=wins,
        hands_won_b=hands - wins - ties, ties=ties, knobs=dict(knobs), chunk_size=chunk_size, seconds=seconds)
    if episode == "match":
        result.matches = 2 * n
        result.match_win_rate = sum(r.a_matches for r in deals) / (2 * n) if n else 0.0
    return result


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
    """Outcome of :func:`agents.evaluation.arena.round_robin`.

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


__all__ = ["CONFIDENCE", "ELO_ITERATIONS", "ELO_PRIOR_WINS", "MatchResult", "RoundRobinResult", "fit_elo", "summarise"]
