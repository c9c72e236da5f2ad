"""Self-play samplers for ``train.py``: each plays a vector env's hands with a CPU copy of the policy and its
opponents and hands finished decision chains to the learner.

A **sampler** (:class:`Sampler`) owns ``num_envs`` hands of :class:`~schnapsen_env.vector.SchnapsenVectorEnv`, a
CPU copy of the learner's network, one opponent network (a pool snapshot) and the scripted ``HeuristicAgent``,
batched over the hands it plays, and optionally a frozen **target** policy (``train.py --opponent``). Every hand is
self-play (both seats are the learner) or, drawn when the hand starts, one seat is the heuristic
(``heuristic_prob``), a uniformly random player (``random_prob``: exploration, its moves lead the learner into
positions self-play never reaches, where the teachers label its decisions all the same), the target
(``target_prob``) or a pool snapshot (``pool_prob``); only the learner's seat is trained. With ``target_prob`` 1 every hand is against the target: the learner trains a best response to it. Each seat's learner
decisions in one hand form a **chain**; the only reward is the hand's game points at its end, so a chain's
advantages (GAE, Schulman et al. 2016) are computed when the hand ends, with no truncation and no bootstrap.
:meth:`Sampler.collect` plays until at least ``n_rows`` decisions of finished chains are ready and returns all of
them; the decisions of hands still running stay in the sampler for the next call (and in its checkpoint state).

Three ways to run them, one interface (``collect``, or ``submit`` then ``gather``; ``get_state``, ``set_state``,
``close``):

* :class:`InProcessSamplers`: in the learner's process (``--inline-samplers``; tests and debugging);
* :class:`ProcessSamplers`: local processes (``multiprocessing``, spawn), one per sampler, no cluster software;
* :class:`RaySamplers`: Ray actors, one CPU each, on a local Ray or a cluster (extra ``rllib``), spread over its
  nodes.

A sampler whose process, actor or node is lost is not replaced: the run ends with :class:`SamplerDied`, and
``train.py --resume`` continues it exactly from its last checkpoint.

Every sampler plays a batch with exactly the weights it was sent, and the learner gathers all answers before it
uses a batch. ``submit`` returns at once, so the learner can update while the samplers play the next batch with
the weights from before the update (``train.py --overlap-sampling``: one update of lag, corrected by PPO's
clipped ratio to the log-probabilities recorded here); ``collect`` is ``submit`` and ``gather`` in one call.
:class:`InProcessSamplers` runs the batch inside ``gather``, so it gives the processes' results without the
overlap.
Sampler ``i`` draws every random choice (deals, Gumbel noise for actions, opponent draws) from its own generator,
``numpy.random.default_rng(SeedSequence(seed, spawn_key=(i,)))``, so a run with a fixed sampler count is
reproducible whichever way the samplers run.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import re
import signal
import time
import traceback
from typing import Any

import numpy as np
import torch
from numba import njit

from agents.game_theory.exact import search_agent_policy
from agents.game_theory.table_policy import ObservationTable
from agents.learned.policy_net import ActorCritic, masked_log_probs
from agents.scripted.heuristic import HeuristicAgent
from agents.search.expert import ExpertAgent
from agents.search.solver_core import CoreSolver
from agents.specs import fits_hint, resolve_agent
from schnapsen_env.encoding import obs_size, state_size
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.state_layout import F
from schnapsen_env.vector import SchnapsenVectorEnv

#: Keys of one sampler's checkpoint state (:meth:`Sampler.get_state`).
SAMPLER_KEYS = ("venv", "buffer", "rng", "opp_seat", "opp_kind")
#: Answers a searching target (``target={"spec": ...}``) remembers, about 1.5 GB at most (sixtysix24); past it they are
#: forgotten (the strategy stays the same, a repeated observation costs a search again).
TARGET_MEMO = 1 << 20
#: Who plays the opponent's seat in a hand that is not self-play, by ``opp_kind`` (a sampler state's values).
OPPONENT_KINDS = ("pool", "heuristic", "target", "random")
#: Keys of the chain buffer's state (:meth:`ChainBuffer.state`); a state from before the endgame teacher lacks
#: ``"teach"``, one from before the search teacher ``"search"`` (each read as no labels), one from before the
#: endgame bootstrap ``"exact"`` (read as no exact value).
BUFFER_KEYS = ("obs", "masks", "critic", "actions", "logp", "values", "teach", "search", "exact", "chains")
#: Buffer keys that a state from an earlier version may lack.
_OPTIONAL_BUFFER_KEYS = ("teach", "search", "exact")
#: Arrays of a batch of finished decisions (:meth:`Sampler.collect`), in this order. ``teach``: int64 bits of the
#: exactly best actions where the endgame teacher labelled the decision, else 0; ``search``: int64 bits of the
#: search's best actions where the search teacher labelled it, else 0.
BATCH_KEYS = ("obs", "masks", "critic", "actions", "logp", "values", "teach", "search", "adv", "ret")
#: The nice increment of local sampler processes whose sampling overlaps the learner's update (``train.py
#: --overlap-sampling``): at equal priority the scheduler gives each of the samplers and the learner the same share
#: of the cores, so the update, which bounds the rate, ran at two thirds of a core on 2 cores while the samplers
#: finished early; at nice 10 the learner keeps its core (Linux weighs nice 0 about 9 times nice 10) and the samplers
#: take the rest. Priority changes no result, only who waits.
SAMPLER_NICE = 10
#: Decisions one hand can add to a chain buffer beyond a batch (both seats, with marriages, exchange and close).
ROWS_PER_HAND = 40


@njit(cache=True)
def _gae_segment(values, start, stop, reward, gamma, lam, adv):  # pragma: no cover (compiled)
    """GAE over ``values[start:stop]`` into ``adv[start:stop]``, the reward after the last, value 0 after it, in
    float32 as numpy computes ``r + gamma * next_v - v`` and ``delta + gamma * lam * last`` with Python floats."""
    g, gl = np.float32(gamma), np.float32(gamma * lam)
    last = np.float32(0.0)
    for t in range(stop - 1, start - 1, -1):
        if t == stop - 1:
            delta = np.float32(reward + 0.0) - values[t]
        else:
            delta = (np.float32(0.0) + g * values[t + 1]) - values[t]
        last = delta + gl * last
        adv[t] = last


@njit(cache=True)
def _chain_gae(values, exact, final_reward, gamma, lam):  # pragma: no cover (compiled)
    n = len(values)
    adv = np.empty(n, np.float32)
    k = 0
    while k < n and not np.isfinite(exact[k]):
        k += 1
    if k == 0 or k == n:
        _gae_segment(values, 0, n, final_reward, gamma, lam, adv)
    else:
        _gae_segment(values, 0, k, np.float64(exact[k]), gamma, lam, adv)
        _gae_segment(values, k, n, final_reward, gamma, lam, adv)
    return adv, adv + values


def chain_gae(values: np.ndarray, final_reward: float, gamma: float, lam: float):
    """GAE over one seat's decisions in one hand: reward only after the last decision, value 0 after it (compiled:
    the samplers compute it for every chain of every hand).

    Args:
        values: ``(T,)`` value estimates of the chain's decisions.
    Returns:
        ``(advantages, returns)``, both ``(T,)`` float32.
    """
    values = np.ascontiguousarray(values, dtype=np.float32)
    return _chain_gae(values, np.full(len(values), np.nan, np.float32), float(final_reward), float(gamma),
                      float(lam))


def bootstrapped_chain_gae(values: np.ndarray, exact: np.ndarray, final_reward: float, gamma: float, lam: float):
    """:func:`chain_gae` with the endgame bootstrap (``train.py --endgame-bootstrap``): the decisions before the
    chain's first one with an exact value (``exact`` finite: the stock exhausted, a position of perfect information
    solved to the end of the hand) end there, that value their final reward, as if the hand ended with both seats
    playing perfectly from then on; that decision and the later ones keep the hand's own reward. The same idea as
    rescoring a chess engine's training games by endgame tablebases (Leela Chess Zero's rescorer).

    Args:
        values: ``(T,)`` value estimates of the chain's decisions. exact: ``(T,)`` exact values in game points for
            the seat (NaN: none).
    Returns:
        ``(advantages, returns)``, both ``(T,)`` float32; :func:`chain_gae`'s when no value is exact.
    Raises:
        ValueError: ``exact`` of another shape than ``values`` (the compiled loop would read past its end).
    """
    values = np.ascontiguousarray(values, dtype=np.float32)
    exact = np.ascontiguousarray(exact, dtype=np.float32)
    if exact.shape != values.shape:
        raise ValueError(f"exact values {exact.shape} for a chain of {values.shape}: expected one a decision")
    return _chain_gae(values, exact, float(final_reward), float(gamma), float(lam))


def gumbel_noise(rng: np.random.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    """Standard Gumbel noise, float32 ``shape``, from ``rng`` (for the Gumbel-max trick)."""
    return torch.from_numpy(-np.log(-np.log(rng.random(shape) + 1e-20) + 1e-20).astype(np.float32))


def uniform_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One legal action per row drawn uniformly from ``rng`` (one draw a row): int64 ``(N,)`` of masks int8
    ``(N, A)`` with at least one legal action each."""
    legal = masks > 0
    k = np.floor(rng.random(len(masks)) * legal.sum(axis=1)).astype(np.int64)  # the k-th legal action, from 0
    return np.argmax(np.cumsum(legal, axis=1) > k[:, None], axis=1).astype(np.int64)


class ChainBuffer:
    """Learner decisions, grouped per (env, seat) chain until the hand ends, then ready for PPO.

    Args:
        capacity: rows; at least the batch a sampler returns plus :data:`ROWS_PER_HAND` per env.
        obs_dim, n_actions, critic_dim: row widths (``critic_dim`` >= 1; unused columns stay 0).
    """

    def __init__(self, capacity: int, obs_dim: int, n_actions: int, critic_dim: int) -> None:
        self.obs = np.zeros((capacity, obs_dim), np.float32)
        self.masks = np.zeros((capacity, n_actions), np.int8)
        self.critic = np.zeros((capacity, critic_dim), np.float32)
        self.actions = np.zeros(capacity, np.int64)
        self.logp = np.zeros(capacity, np.float32)
        self.values = np.zeros(capacity, np.float32)
        self.teach = np.zeros(capacity, np.int64)
        self.search = np.zeros(capacity, np.int64)
        self.exact = np.full(capacity, np.nan, np.float32)
        self.adv = np.zeros(capacity, np.float32)
        self.ret = np.zeros(capacity, np.float32)
        self.size = 0
        self.ready: list[int] = []
        self.chains: dict[tuple[int, int], list[int]] = {}

    def add(self, envs, seats, obs, masks, critic, actions, logp, values, teach, search=0, exact=np.nan) -> None:
        k = len(envs)
        i = self.size
        if i + k > len(self.obs):
            raise RuntimeError("chain buffer full: raise batch_size headroom")
        sl = slice(i, i + k)
        self.obs[sl], self.masks[sl], self.actions[sl] = obs, masks, actions
        self.logp[sl], self.values[sl], self.teach[sl], self.search[sl] = logp, values, teach, search
        self.exact[sl] = exact
        if critic is not None:
            self.critic[sl] = critic
        for j, (e, s) in enumerate(zip(envs.tolist(), seats.tolist())):
            self.chains.setdefault((e, s), []).append(i + j)
        self.size += k

    def end_hand(self, env: int, rewards: np.ndarray, gamma: float, lam: float) -> None:
        for seat in (0, 1):
            rows = self.chains.pop((env, seat), None)
            if rows:
                adv, ret = bootstrapped_chain_gae(self.values[rows], self.exact[rows], float(rewards[seat]), gamma,
                                                  lam)
                self.adv[rows], self.ret[rows] = adv, ret
                self.ready.extend(rows)

    def take_ready(self) -> dict[str, np.ndarray]:
        """The ready rows as a batch (copies; keys :data:`BATCH_KEYS`), then drop them and keep the unfinished
        chains' rows at the front."""
        rows = np.array(self.ready, dtype=np.int64)
        batch = {k: getattr(self, k)[rows] for k in BATCH_KEYS}
        keep = sorted(r for chain in self.chains.values() for r in chain)
        remap = {old: new for new, old in enumerate(keep)}
        for arr in (self.obs, self.masks, self.critic, self.actions, self.logp, self.values, self.teach, self.search,
                    self.exact):
            arr[:len(keep)] = arr[keep]
        self.chains = {key: [remap[r] for r in chain] for key, chain in self.chains.items()}
        self.size = len(keep)
        self.ready = []
        return batch

    def state(self) -> dict:
        n = self.size
        return {"obs": torch.from_numpy(self.obs[:n].copy()), "masks": torch.from_numpy(self.masks[:n].copy()),
                "critic": torch.from_numpy(self.critic[:n].copy()),
                "actions": torch.from_numpy(self.actions[:n].copy()),
                "logp": torch.from_numpy(self.logp[:n].copy()), "values": torch.from_numpy(self.values[:n].copy()),
                "teach": torch.from_numpy(self.teach[:n].copy()), "search": torch.from_numpy(self.search[:n].copy()),
                "exact": torch.from_numpy(self.exact[:n].copy()),
                "chains": [[e, s, rows] for (e, s), rows in self.chains.items()]}

    def load(self, st: dict) -> None:
        n = len(st["actions"])
        self.obs[:n], self.masks[:n], self.critic[:n] = st["obs"].numpy(), st["masks"].numpy(), st["critic"].numpy()
        self.actions[:n], self.logp[:n], self.values[:n] = (st["actions"].numpy(), st["logp"].numpy(),
                                                           st["values"].numpy())
        self.teach[:n] = st["teach"].numpy() if "teach" in st else 0
        self.search[:n] = st["search"].numpy() if "search" in st else 0
        self.exact[:n] = st["exact"].numpy() if "exact" in st else np.nan
        self.chains = {(int(e), int(s)): [int(r) for r in rows] for e, s, rows in st["chains"]}
        self.size, self.ready = n, []


def critic_inputs(venv: SchnapsenVectorEnv, idx: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """The privileged critic's inputs: each hand's omniscient state vector plus the seat's one-hot, float32
    ``(len(idx), state_size + 2)`` (PerfectDou, Yang et al. 2022; the policy never sees them)."""
    states = np.stack([venv.states_row(int(i)) for i in idx]) if len(idx) else np.zeros((0, 0), np.float32)
    onehot = np.eye(2, dtype=np.float32)[seats]
    return np.concatenate([states, onehot], axis=1)


def sampler_capacity(rows_per_call: int, num_envs: int) -> int:
    """Rows of a sampler's chain buffer: one call's rows plus :data:`ROWS_PER_HAND` per hand in flight."""
    return rows_per_call + num_envs * ROWS_PER_HAND


class Sampler:
    """Plays ``num_envs`` hands with the learner's policy and its opponents (module doc).

    Args:
        index: this sampler's number (0-based); with ``seed`` it names the generator (module doc).
        rules: the RuleSet, knobs included.
        num_envs: hands played in parallel.
        seed: the run's seed.
        net: the network's config (:meth:`ActorCritic.config`).
        rows_per_call: the rows one :meth:`collect` call aims for (sizes the buffer).
        pool_prob, heuristic_prob: shares of hands against a pool snapshot and against the heuristic.
        random_prob: share of hands against a uniformly random player (its actions drawn with this sampler's
            generator).
        target: the frozen target, or None: a policy ``{"net": ActorCritic config, "weights": state dict}`` (its
            own network size), which plays its masked softmax, sampled with this sampler's generator (Gumbel-max), in
            float32, or with ``"greedy": True`` its most probable legal action; or an agent ``{"spec": agent
            spec}`` that acts one observation at a time (``pimc``, ``expert``), played as the deterministic
            strategy :func:`agents.game_theory.exact.search_agent_policy` makes of it (its generator seeded from each observation: the strategy whose exact exploitability
            ``benchmarks/exploitability.py`` measures), remembering up to :data:`TARGET_MEMO` answers.
        target_prob: share of hands against ``target`` (one seat, drawn at the hand's start); 0 without a target.
        gamma, gae_lambda: GAE's discount and lambda.
        threads: torch intra-op threads of this sampler (1 in a sampler process).
        precision: ``"fp32"`` or ``"bf16"``, how the networks compute (:class:`agents.learned.policy_net.ActorCritic`), the
            learner's, so that the update's first probability ratios start at 1.
        endgame_teacher: label each learner decision with a choice once the stock is exhausted (a position of
            perfect information: the observation determines it) with its exactly best actions, by the compiled
            solver (:meth:`agents.search.solver_core.CoreSolver.best_action_bits`), for ``train.py``'s teacher loss.
        endgame_bootstrap: also give each learner decision once the stock is exhausted (forced ones included) its
            exact value, by the same solver, and end the returns of the seat's earlier decisions in that hand there
            (:func:`bootstrapped_chain_gae`; ``train.py --endgame-bootstrap``).
        search_share: the search teacher (expert iteration, Anthony, Tian & Barber 2017): the share of the learner's
            decisions with a choice while cards are hidden (the stock open or closed) that are labelled with the
            best actions of :class:`agents.search.expert.ExpertAgent` (full-depth PIMC) on the learner's
            observation (:meth:`ExpertAgent.best_action_bits`; it sees the observation only, never the hidden
            cards), each decision drawn with this probability from the sampler's generator; 0: off (no draw, no
            search, no per-decision work).
        search_nodes: the search's node budget a decision (``ExpertAgent``'s ``max_nodes``).
        search_stock: the search teacher draws only among the decisions where the open stock holds at most this
            many cards or it is closed (RULES.md R18); None: every decision while cards are hidden.
        equilibrium: a ``.npz`` file of an :class:`agents.game_theory.table_policy.ObservationTable` of this
            ruleset (``schnapsen10``'s CFR+ equilibrium by observation), or None; given, the search teacher labels
            with it instead of the expert: each drawn decision gets one action sampled from the table's
            probabilities with the sampler's generator, so that ``-log P(label)`` is in expectation the cross-entropy
            to the equilibrium's distribution (a mixed strategy, which a best-action label cannot teach).

    Attributes:
        search_labels, search_seconds: decisions the search teacher labelled and the seconds it searched, since
            the sampler was built (:meth:`collect` returns each call's share in its stats).
    """

    def __init__(self, index: int, rules: RuleSet | dict, num_envs: int, seed: int, net: dict, rows_per_call: int,
                 pool_prob: float, heuristic_prob: float, gamma: float, gae_lambda: float,
                 threads: int | None = None, precision: str = "fp32", endgame_teacher: bool = False,
                 search_share: float = 0.0, search_nodes: int = 200_000, target: dict | None = None,
                 target_prob: float = 0.0, equilibrium: str | None = None, random_prob: float = 0.0,
                 search_stock: int | None = None, endgame_bootstrap: bool = False) -> None:
        if threads is not None:
            torch.set_num_threads(threads)
        self.index = index
        self.rules = rules if isinstance(rules, RuleSet) else RuleSet.from_dict(rules)
        self.num_envs = num_envs
        self.pool_prob, self.heuristic_prob, self.random_prob = pool_prob, heuristic_prob, float(random_prob)
        if target_prob and target is None:
            raise ValueError("target_prob > 0 needs a target policy")
        self.target_prob = float(target_prob)
        self.target = self.target_strategy = None
        if target is not None and "spec" in target:
            _, factory = resolve_agent(target["spec"], self.rules)
            self.target_strategy = search_agent_policy(factory(seed=0), max_memo=TARGET_MEMO)
        elif target is not None:
            self.target = ActorCritic(**target["net"]).eval()
            self.target.load_state_dict(target["weights"])
        self.target_greedy = bool(target is not None and target.get("greedy", False))
        self.gamma, self.gae_lambda = gamma, gae_lambda
        self.rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))
        knobs = {k: v for k, v in self.rules.to_dict().items() if k != "ruleset"}
        self.venv = SchnapsenVectorEnv(num_envs, ruleset=self.rules.name, **knobs)
        self.obs, self.masks, self.to_move = self.venv.reset(seed=int(self.rng.integers(2 ** 63 - 1)))
        self.model = ActorCritic(**net).eval()
        self.opponent = ActorCritic(**net).eval()
        self.model.precision = self.opponent.precision = precision  # the learner's (train.py --precision)
        self.critic_dim = net["critic_extra"]
        if self.critic_dim and self.critic_dim != state_size(self.rules) + 2:
            raise ValueError(f"critic_extra {self.critic_dim}: the privileged critic takes the state vector plus "
                             f"the seat, {state_size(self.rules) + 2} inputs")
        self.heuristic = HeuristicAgent(rules=self.rules, seed=seed)
        self.endgame_teacher, self.endgame_bootstrap = bool(endgame_teacher), bool(endgame_bootstrap)
        self.teacher = CoreSolver(self.rules) if endgame_teacher or endgame_bootstrap else None
        self.search_share = float(search_share)
        self.search_stock = search_stock
        self.search = None
        self.table = None
        if self.search_share > 0 and equilibrium is not None:
            self.table = ObservationTable.load(equilibrium, self.rules)
        elif self.search_share > 0:
            self.search = ExpertAgent(self.rules, max_nodes=search_nodes)
            # Its worlds are drawn from this sampler's generator, whose state the checkpoint holds, so a resumed
            # run draws the same worlds (the solver keeps nothing between searches: a new table generation each).
            self.search.rng = self.rng
        self.search_labels, self.search_seconds = 0, 0.0
        self.buf = ChainBuffer(sampler_capacity(rows_per_call, num_envs), obs_size(self.rules),
                               self.rules.n_actions, max(self.critic_dim, 1))
        self.opp_seat = np.full(num_envs, -1, dtype=np.int64)  # seat played by an opponent this hand, -1: self-play
        self.opp_kind = np.zeros(num_envs, dtype=np.int64)  # OPPONENT_KINDS: 0 pool, 1 heuristic, 2 target, 3 random

    def _teach(self, idx: np.ndarray) -> tuple[np.ndarray | int, np.ndarray | float]:
        """The endgame teacher's labels and the endgame bootstrap's values of the learner's decisions in slots
        ``idx`` (class doc): ``(teach, exact)``, the bits of the exactly best actions where the stock is exhausted
        and there is a choice, else 0 (0 throughout without the teacher), and with the bootstrap the exact values
        float32 where the stock is exhausted, else NaN (NaN throughout without it)."""
        if self.teacher is None:
            return 0, np.nan
        st = self.venv.state_arrays[idx]
        exhausted = (st[:, F.stock_top] == st[:, F.stock_end]) & (st[:, F.closed_by] < 0)
        solved = exhausted if self.endgame_bootstrap else exhausted & (self.masks[idx].sum(axis=1) > 1)
        teach = np.zeros(len(idx), dtype=np.int64)
        exact = np.full(len(idx), np.nan, dtype=np.float32)
        if solved.any():
            bits, values = self.teacher.best_action_bits(self.venv.state_arrays, idx[solved], with_values=True)
            if self.endgame_teacher:
                teach[solved] = np.where(self.masks[idx[solved]].sum(axis=1) > 1, bits, 0)
            if self.endgame_bootstrap:
                exact[solved] = values
        return teach, (exact if self.endgame_bootstrap else np.nan)

    def _search_teach(self, idx: np.ndarray) -> np.ndarray | int:
        """The search teacher's labels of the learner's decisions in slots ``idx`` (``search_share`` in the class
        doc): for each decision with a choice while cards are hidden, drawn with probability ``search_share``, the
        bits of the expert's best actions on the learner's observation (``self.obs``, ``self.masks``: what the
        learner sees), or with an equilibrium table the bit of one action drawn from its row for that observation;
        else 0."""
        if self.search is None and self.table is None:
            return 0
        st = self.venv.state_arrays[idx]
        stock = st[:, F.stock_end] - st[:, F.stock_top]
        closed = st[:, F.closed_by] >= 0
        hidden = (stock > 0) | closed  # stock open or closed
        if self.search_stock is not None:
            hidden &= (stock <= self.search_stock) | closed
        candidates = np.flatnonzero(hidden & (self.masks[idx].sum(axis=1) > 1))
        labels = np.zeros(len(idx), dtype=np.int64)
        if candidates.size:
            picked = candidates[self.rng.random(candidates.size) < self.search_share]
            start = time.perf_counter()
            if self.table is not None:
                rows = idx[picked]
                found, actions = self.table.sample(self.obs[rows], self.masks[rows], self.rng)
                if not found.all():
                    raise ValueError(f"the equilibrium table lacks {int((~found).sum())} of the learner's "
                                     "hidden-card observations: a table of another game than this ruleset's")
                labels[picked] = np.left_shift(1, actions)
            else:
                for j in picked.tolist():
                    i = int(idx[j])
                    labels[j] = self.search.best_action_bits({"observation": self.obs[i],
                                                              "action_mask": self.masks[i]})
            self.search_seconds += time.perf_counter() - start
            self.search_labels += len(picked)
        return labels

    def _heuristic_actions(self, idx: np.ndarray) -> np.ndarray:
        return self.heuristic.act_batch(self.obs[idx], self.masks[idx])  # compiled, in lockstep with act

    @torch.inference_mode()
    def collect(self, weights: dict, opponent: dict | None, n_rows: int) -> tuple[dict, dict]:
        """Play with ``weights`` until at least ``n_rows`` decisions of finished chains are ready.

        Args:
            weights: the learner's state dict (CPU tensors).
            opponent: the pool snapshot to play in the hands drawn for the pool, or None (empty pool: those hands
                are self-play).
            n_rows: decisions of finished chains to gather (at least 1).

        Returns:
            ``(batch, stats)``: the batch of every finished decision (:data:`BATCH_KEYS`, numpy arrays of equal
            length >= ``n_rows``) and counts: ``decisions`` (learner decisions taken in this call, finished or
            not), ``pending`` (decisions of unfinished chains kept for the next call), ``hands`` (hands ended),
            ``opponent_hands`` and ``opponent_points`` (hands against the pool, the heuristic, the target or the
            random player, and the learner's game points in them), ``target_hands`` and ``target_points`` (those
            against the target alone), ``random_hands`` and ``random_points`` (those against the random player
            alone), ``search_labels`` and ``search_seconds`` (the search teacher's labels in this
            call and the seconds it searched), ``pid``.
        """
        self.model.load_state_dict(weights)
        if opponent is not None:
            self.opponent.load_state_dict(opponent)
        rng, venv, buf = self.rng, self.venv, self.buf
        obs, masks, to_move = self.obs, self.masks, self.to_move
        decisions = hands = opp_hands = target_hands = random_hands = 0
        opp_points = target_points = random_points = 0.0
        labels0, seconds0 = self.search_labels, self.search_seconds
        actions = np.zeros(self.num_envs, dtype=np.int64)
        while len(buf.ready) < n_rows:
            learner = self.opp_seat != to_move
            idx_l = np.flatnonzero(learner)
            idx_o = np.flatnonzero(~learner)
            if idx_l.size:
                crit = critic_inputs(venv, idx_l, to_move[idx_l]) if self.critic_dim else None
                mask_l = torch.from_numpy(masks[idx_l])
                a, logp, _, values = self.model.get_action_and_value(
                    torch.from_numpy(obs[idx_l]), mask_l, critic_input=None if crit is None else torch.from_numpy(crit),
                    gumbel=gumbel_noise(rng, mask_l.shape))
                a = a.numpy()
                actions[idx_l] = a
                teach, exact = self._teach(idx_l)
                buf.add(idx_l, to_move[idx_l], obs[idx_l], masks[idx_l], crit, a, logp.numpy(), values.numpy(),
                        teach, self._search_teach(idx_l), exact)
            idx_h = idx_o[self.opp_kind[idx_o] == 1]
            idx_p = idx_o[self.opp_kind[idx_o] == 0]
            idx_t = idx_o[self.opp_kind[idx_o] == 2]
            idx_r = idx_o[self.opp_kind[idx_o] == 3]
            if idx_p.size:
                mask_p = torch.from_numpy(masks[idx_p])
                logits = self.opponent.act_logits(torch.from_numpy(obs[idx_p]))
                actions[idx_p] = torch.argmax(masked_log_probs(logits, mask_p) + gumbel_noise(rng, mask_p.shape),
                                              dim=-1).numpy()
            if idx_h.size:
                actions[idx_h] = self._heuristic_actions(idx_h)
            if idx_t.size and self.target_strategy is not None:
                actions[idx_t] = np.argmax(self.target_strategy(obs[idx_t], masks[idx_t]), axis=1)
            elif idx_t.size:
                mask_t = torch.from_numpy(masks[idx_t])
                logp_t = masked_log_probs(self.target.act_logits(torch.from_numpy(obs[idx_t])), mask_t)
                if not self.target_greedy:
                    logp_t = logp_t + gumbel_noise(rng, mask_t.shape)
                actions[idx_t] = torch.argmax(logp_t, dim=-1).numpy()
            if idx_r.size:
                actions[idx_r] = uniform_actions(rng, masks[idx_r])
            obs, masks, to_move, rewards, dones, _ = venv.step(actions)
            decisions += int(idx_l.size)
            for i in np.flatnonzero(dones).tolist():
                buf.end_hand(i, rewards[i], self.gamma, self.gae_lambda)
                hands += 1
                if self.opp_seat[i] >= 0:
                    opp_points += float(rewards[i, 1 - self.opp_seat[i]])
                    opp_hands += 1
                    if self.opp_kind[i] == 2:
                        target_points += float(rewards[i, 1 - self.opp_seat[i]])
                        target_hands += 1
                    elif self.opp_kind[i] == 3:
                        random_points += float(rewards[i, 1 - self.opp_seat[i]])
                        random_hands += 1
                u = rng.random()
                if u < self.heuristic_prob:
                    self.opp_seat[i], self.opp_kind[i] = int(rng.integers(2)), 1
                elif u < self.heuristic_prob + self.target_prob:  # never without a target (target_prob 0)
                    self.opp_seat[i], self.opp_kind[i] = int(rng.integers(2)), 2
                elif u < self.heuristic_prob + self.target_prob + self.random_prob:
                    self.opp_seat[i], self.opp_kind[i] = int(rng.integers(2)), 3
                elif opponent is not None and u < (self.heuristic_prob + self.target_prob + self.random_prob
                                                   + self.pool_prob):
                    self.opp_seat[i], self.opp_kind[i] = int(rng.integers(2)), 0
                else:
                    self.opp_seat[i] = -1
        self.obs, self.masks, self.to_move = obs, masks, to_move
        batch = buf.take_ready()
        stats = {"decisions": decisions, "pending": buf.size, "hands": hands, "opponent_hands": opp_hands,
                 "opponent_points": opp_points, "target_hands": target_hands, "target_points": target_points,
                 "random_hands": random_hands, "random_points": random_points,
                 "search_labels": self.search_labels - labels0,
                 "search_seconds": self.search_seconds - seconds0, "pid": os.getpid()}
        return batch, stats

    def pid(self) -> int:
        """This sampler's process id (a Ray actor answers it once built)."""
        return os.getpid()

    def get_state(self) -> dict:
        """This sampler's checkpoint state (:data:`SAMPLER_KEYS`): hands, unfinished chains, generator, opponents."""
        return {"venv": self.venv.get_state(), "buffer": self.buf.state(), "rng": self.rng.bit_generator.state,
                "opp_seat": torch.from_numpy(self.opp_seat.copy()), "opp_kind": torch.from_numpy(self.opp_kind.copy())}

    def set_state(self, st: dict) -> None:
        """Restore :meth:`get_state` (checked first by :func:`sampler_state_problem`)."""
        self.obs, self.masks, self.to_move = self.venv.set_state(st["venv"])
        self.buf.load(st["buffer"])
        self.rng.bit_generator.state = st["rng"]
        self.opp_seat = st["opp_seat"].numpy().astype(np.int64)
        self.opp_kind = st["opp_kind"].numpy().astype(np.int64)


# ------------------------------------------------------------------------------------------- checks
def tensor_problem(name: str, t, shape: tuple, dtypes: tuple) -> str | None:
    """What is wrong with a checkpoint tensor (None when it is a tensor of this shape and one of these dtypes)."""
    if not isinstance(t, torch.Tensor):
        return f"{name} is a {type(t).__name__}, expected a tensor"
    if tuple(t.shape) != shape:
        return f"{name} has shape {tuple(t.shape)}, expected {shape}"
    if t.dtype not in dtypes:
        return f"{name} has dtype {t.dtype}, expected {' or '.join(map(str, dtypes))}"
    return None


def sampler_state_problem(st: Any, num_envs: int, n_obs: int, n_actions: int, capacity: int,
                          critic_cols: int) -> str | None:
    """What is wrong with one sampler's checkpoint state for this run (None when it fits): keys, opponent seats,
    the chain buffer and the generator are checked before any of it is used (the hands when they are loaded)."""
    if not isinstance(st, dict) or set(st) != set(SAMPLER_KEYS):
        return f"a sampler state must be a dict with keys {list(SAMPLER_KEYS)}"
    for k, allowed in (("opp_seat", (-1, 0, 1)), ("opp_kind", tuple(range(len(OPPONENT_KINDS))))):
        problem = tensor_problem(f"sampler {k!r}", st[k], (num_envs,), (torch.int64, torch.int32, torch.int8))
        if problem:
            return problem
        if not set(st[k].tolist()) <= set(allowed):
            return f"sampler {k!r} holds values outside {allowed}"
    b = st["buffer"]
    if not isinstance(b, dict) or not set(BUFFER_KEYS) - set(_OPTIONAL_BUFFER_KEYS) <= set(b) <= set(BUFFER_KEYS):
        return f"sampler 'buffer' must be a dict with keys {list(BUFFER_KEYS)}"
    if not isinstance(b["actions"], torch.Tensor) or b["actions"].dim() != 1:
        return "buffer 'actions' must be a 1-d tensor"
    rows = int(b["actions"].shape[0])
    if rows > capacity:
        return f"the buffer holds {rows} decisions, more than this run's {capacity}"
    for k, shape, dtypes in (("obs", (rows, n_obs), (torch.float32,)), ("masks", (rows, n_actions), (torch.int8,)),
                             ("critic", (rows, critic_cols), (torch.float32,)), ("actions", (rows,), (torch.int64,)),
                             ("logp", (rows,), (torch.float32,)), ("values", (rows,), (torch.float32,)),
                             ("teach", (rows,), (torch.int64,)), ("search", (rows,), (torch.int64,)),
                             ("exact", (rows,), (torch.float32,))):
        if k not in b:  # a state from before the endgame teacher, the search teacher or the endgame bootstrap
            continue
        problem = tensor_problem(f"buffer {k!r}", b[k], shape, dtypes)
        if problem:
            return problem
    seen: set[int] = set()
    if not isinstance(b["chains"], list):
        return "buffer 'chains' must be a list"
    for chain in b["chains"]:
        if not (isinstance(chain, (list, tuple)) and len(chain) == 3 and fits_hint(chain[0], int)
                and 0 <= chain[0] < num_envs and chain[1] in (0, 1) and fits_hint(chain[1], int)
                and isinstance(chain[2], list)
                and all(fits_hint(r, int) and 0 <= r < rows and r not in seen and not seen.add(r) for r in chain[2])):
            return (f"buffer chain {' '.join(repr(chain).split())[:80]} is not [env < {num_envs}, seat 0/1, distinct "
                    f"rows < {rows}]")
    if not isinstance(st["rng"], dict) or st["rng"].get("bit_generator") != "PCG64":
        return "sampler 'rng' is not the state of numpy's PCG64 generator"
    return None


# ------------------------------------------------------------------------------------------- runners
class SamplerError(RuntimeError):
    """A sampler failed or its process died.

    Attributes:
        reason: the failure in one line (``"ValueError: ..."``), without the traceback.
        details: the sampler's traceback (empty when none came back); ``str()`` holds both.
    """

    def __init__(self, reason: str, details: str = "") -> None:
        super().__init__(f"{reason}\n{details}".rstrip())
        self.reason, self.details = reason, details


class SamplerDied(SamplerError):
    """A sampler's process, Ray actor or Ray node is gone (killed, out of memory, a lost machine), not an error of
    its code: the run cannot go on without the hands, chains and generator it held, and ends; ``--resume`` continues
    it from its last checkpoint exactly. ``reason`` names the sampler (and its node); there are no details."""


class _Samplers:
    """What the three runners share: ``collect`` is ``submit`` then ``gather``; ``placement``, where each sampler
    runs (filled by :class:`RaySamplers` only)."""

    placement: list[dict] = []

    def describe(self) -> str | None:
        """Where the samplers run, in one line for the run's log (None: on this machine)."""
        return None

    def collect(self, weights: dict, opponent: dict | None, n_rows: int) -> list[tuple[dict, dict]]:
        """Every sampler's ``Sampler.collect(weights, opponent, n_rows)``, in sampler order."""
        self.submit(weights, opponent, n_rows)
        return self.gather()


class InProcessSamplers(_Samplers):
    """The samplers as objects in this process, called one after another (``--samplers 0`` runs one)."""

    def __init__(self, kwargs: list[dict]) -> None:
        self.samplers = [Sampler(**kw) for kw in kwargs]
        self._request = None

    def submit(self, weights: dict, opponent: dict | None, n_rows: int) -> None:
        """Start a :meth:`collect` whose results :meth:`gather` returns (here it runs in :meth:`gather`, so the
        results are those of the sampler processes, without the overlap). The weights are copied now, as a process
        sampler receives them: the learner's update changes its tensors in place."""
        self._request = ({k: v.clone() for k, v in weights.items()}, opponent, n_rows)

    def gather(self) -> list[tuple[dict, dict]]:
        request, self._request = self._request, None
        return [s.collect(*request) for s in self.samplers]

    def get_state(self) -> list[dict]:
        return [s.get_state() for s in self.samplers]

    def set_state(self, states: list[dict]) -> None:
        for s, st in zip(self.samplers, states):
            s.set_state(st)

    def close(self) -> None:
        pass


#: The bits of float32 1.0: most entries of an observation are 0 or 1 (card planes, flags).
_ONE_BITS = np.float32(1.0).view(np.uint32)


def pack_observations(obs: np.ndarray) -> dict:
    """Float32 observations ``(N, D)`` in a tenth of their bytes, for the pipe from a sampler process to the learner
    (the observations are most of what a batch weighs, and the learner reads the pipe while the samplers wait for
    the next weights): two bitmaps, uint8 ``(N, ceil(D / 8))``, of the entries that are exactly 1.0 and of the other
    non-zero entries, those entries' values in row-major order, and ``D``. :func:`unpack_observations` gives back
    the array bit for bit (an entry is zero when all its bits are: a -0.0 travels as a value)."""
    obs = np.ascontiguousarray(obs, dtype=np.float32)
    bits = obs.view(np.uint32)
    ones = bits == _ONE_BITS
    other = (bits != 0) & ~ones
    return {"ones": np.packbits(ones, axis=1), "other": np.packbits(other, axis=1), "values": obs[other],
            "width": obs.shape[1]}


def unpack_observations(packed: dict) -> np.ndarray:
    """The float32 ``(N, D)`` observations of :func:`pack_observations`, bit for bit."""
    width = int(packed["width"])
    out = np.unpackbits(packed["ones"], axis=1, count=width).astype(np.float32)
    out[np.unpackbits(packed["other"], axis=1, count=width).view(bool)] = packed["values"]
    return out


def _put(conn, message) -> None:
    """Send ``message`` over a sampler's pipe as a plain pickle (:func:`_take` reads it).

    multiprocessing's own ``send`` pickles torch tensors by handing over their memory's file descriptors through its
    resource sharer, a thread of the sending process that the receiver calls back; a sampler killed during that
    call made the learner's thread print a traceback (``ConnectionResetError``) beside the one line that names the
    dead sampler. A plain pickle carries the values themselves (the same values, bit for bit)."""
    conn.send_bytes(message if isinstance(message, bytes) else pickle.dumps(message, pickle.HIGHEST_PROTOCOL))


def _take(conn):
    """A message of :func:`_put`."""
    return pickle.loads(conn.recv_bytes())


def _serve(conn, kwargs: dict, nice: int = 0) -> None:
    """A sampler process: lower its scheduling priority by ``nice``, build the sampler, then answer the learner's
    requests until ``close``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the learner's to handle; it closes the samplers
    try:
        if nice and hasattr(os, "nice"):  # POSIX only; elsewhere the samplers run at the learner's priority
            try:
                os.nice(nice)
            except OSError:  # a confined process may not change it: the priority is only about speed
                pass
        sampler = Sampler(**kwargs, threads=1)
        _put(conn, ("ok", None))
        while True:
            cmd, *payload = _take(conn)
            if cmd == "close":
                return
            result = getattr(sampler, cmd)(*payload)
            if cmd == "collect":  # the batch's observations packed for the pipe (ProcessSamplers.gather unpacks)
                batch, stats = result
                result = ({**batch, "obs": pack_observations(batch["obs"])}, stats)
            _put(conn, ("ok", result))
    except EOFError:  # the learner is gone
        return
    except BaseException as e:  # report it to the learner, which raises it
        try:
            _put(conn, ("error", (f"{type(e).__name__}: {' '.join(str(e).split())}", traceback.format_exc())))
        except (OSError, EOFError):
            pass


class ProcessSamplers(_Samplers):
    """The samplers as local processes (spawned, one per sampler, one torch thread each), over pipes.

    Args:
        kwargs: one :class:`Sampler`'s keyword arguments per process.
        nice: how much lower than the learner's the processes' scheduling priority is (POSIX ``nice`` increment,
            0 to 19). ``train.py`` passes :data:`SAMPLER_NICE` when sampling overlaps the update, so that the
            learner's update keeps a whole core while the samplers share what is left.
    """

    def __init__(self, kwargs: list[dict], nice: int = 0) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conns, self.procs = [], []
        self.in_flight = False  # a submitted collect not gathered yet
        try:
            for kw in kwargs:
                parent, child = ctx.Pipe()
                p = ctx.Process(target=_serve, args=(child, kw, nice), daemon=True, name=f"sampler-{kw['index']}")
                p.start()
                child.close()
                self.conns.append(parent)
                self.procs.append(p)
            self._gather()
        except BaseException:
            self.close()
            raise

    def _gather(self) -> list:
        out = []
        for i, conn in enumerate(self.conns):
            try:
                status, value = _take(conn)
            except (EOFError, OSError):
                raise SamplerDied(f"sampler process {i} died (exit code {self.procs[i].exitcode})") from None
            if status == "error":
                raise SamplerError(f"sampler {i} failed: {value[0]}", value[1])
            out.append(value)
        return out

    def _send(self, messages) -> None:
        pickled: dict[int, bytes] = {}  # the same message to every sampler (a batch's request) is pickled once
        for i, (conn, message) in enumerate(zip(self.conns, messages)):
            if id(message) not in pickled:
                pickled[id(message)] = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
            try:
                _put(conn, pickled[id(message)])
            except (BrokenPipeError, EOFError, OSError):
                self.procs[i].join(timeout=1)
                raise SamplerDied(f"sampler process {i} died (exit code {self.procs[i].exitcode})") from None

    def _call(self, cmd: str, *payloads) -> list:
        if self.in_flight:  # its answer would be read as this call's
            raise RuntimeError(f"ProcessSamplers.{cmd} while a collect is in flight: gather it first")
        self._send([(cmd, *payload) for payload in (payloads if payloads else [()] * len(self.conns))])
        return self._gather()

    def submit(self, weights: dict, opponent: dict | None, n_rows: int) -> None:
        """Start a :meth:`collect` in the sampler processes and return at once; :meth:`gather` waits for it."""
        if self.in_flight:
            raise RuntimeError("ProcessSamplers.submit while a collect is in flight: gather it first")
        self.in_flight = True  # also if a send fails part-way: close() then stops the processes at once
        self._send([("collect", weights, opponent, n_rows)] * len(self.conns))

    def gather(self) -> list[tuple[dict, dict]]:
        """The results of the :meth:`submit` in flight. Raises :class:`SamplerError` as :meth:`collect`."""
        out = self._gather()
        self.in_flight = False
        return [({**batch, "obs": unpack_observations(batch["obs"])}, stats) for batch, stats in out]

    def get_state(self) -> list[dict]:
        return self._call("get_state")

    def set_state(self, states: list[dict]) -> None:
        self._call("set_state", *[(st,) for st in states])

    def close(self) -> None:
        """Stop the processes: asked to, when idle (5 s for all of them, then terminated); at once when a collect
        is in flight (after an error or Ctrl-C during an update), whose results nobody will read."""
        if not self.in_flight:
            for conn in self.conns:
                try:
                    _put(conn, ("close",))
                except (OSError, EOFError, BrokenPipeError):
                    pass
            deadline = time.monotonic() + 5
            for p in self.procs:
                p.join(timeout=max(0.0, deadline - time.monotonic()))
        for p in self.procs:
            if p.is_alive():
                p.terminate()
        for p in self.procs:
            p.join(timeout=5)
        for conn in self.conns:
            conn.close()
        self.conns, self.procs, self.in_flight = [], [], False


class RaySampler(Sampler):
    """A :class:`Sampler` in a Ray actor, which also says where it runs (:meth:`where`)."""

    def where(self) -> dict:
        """This actor's process id, Ray node id (hex) and node address."""
        import ray  # only ever called inside a Ray actor; Ray is the optional extra "rllib"

        return {"pid": os.getpid(), "node": ray.get_runtime_context().get_node_id(),
                "ip": ray.util.get_node_ip_address()}


def ray_death_cause(e: BaseException) -> str:
    """Why Ray says an actor is gone, in a few words (``"its node has died"``, ``"it was killed by `ray.kill`"``),
    from one of its errors (:class:`ray.exceptions.RayActorError` and the like), without its advice and ids."""
    text = " ".join(str(e).split())
    cause = re.search(r"The actor (?:is dead|died) because (.*?)\.(?: |$)", text)
    if cause:
        return cause.group(1)
    unavailable = re.search(r"is unavailable: (.*?)\. The task may or may not", text)
    if unavailable:
        return f"it is unreachable ({unavailable.group(1)[:160]})"
    return f"{type(e).__name__}: {text[:160]}" if text else type(e).__name__


class RaySamplers(_Samplers):
    """The samplers as Ray actors (one CPU each) on the Ray at ``address`` ("local": start one on this machine;
    "auto" or "HOST:PORT": a running cluster). Needs the extra ``rllib`` (Ray).

    The actors are spread over the cluster's nodes (Ray's ``"SPREAD"`` scheduling strategy) instead of filling one
    node first; :attr:`placement` records where each one runs (``train.py`` prints it and writes the node ids to
    ``summary.json``). Where the cluster has fewer CPUs than actors, a line says so at once and the actors wait for
    nodes to join.

    A lost actor is not restarted (Ray's ``max_restarts`` stays 0): Ray would rebuild it from its constructor, without
    the hands in play, the unfinished chains and the generator that make a run exact, so the run ends instead and
    ``--resume`` continues it from its last checkpoint. An actor whose process or node is gone raises
    :class:`SamplerDied` naming the sampler, its node and Ray's cause, as soon as the learner waits for it (not after
    the actors before it have answered); an error of its code raises :class:`SamplerError` with the actor's traceback.
    The actors' own output stays in Ray's logs on their node (``log_to_driver=False``): Ray's report of a crashed
    actor, dozens of lines of C++ stack, would otherwise bury that one line.

    Attributes:
        placement: per sampler, ``{"pid", "node", "ip"}``: its process id, its Ray node's id (hex) and address.
    """

    def __init__(self, kwargs: list[dict], address: str) -> None:
        try:
            import ray  # the optional extra "rllib"
        except ImportError:
            raise ValueError('--ray-address needs Ray: pip install -e ".[rllib]"') from None
        self.ray = ray
        self.actors: list = []
        self.placement: list[dict] = []
        self._refs: list | None = None
        self.started = not ray.is_initialized()
        if self.started:
            ray.init(address=None if address == "local" else address, include_dashboard=False,
                     log_to_driver=False)
        try:
            cpus = ray.cluster_resources().get("CPU", 0)
            if cpus < len(kwargs):
                print(f"the Ray cluster has {cpus:g} CPU(s) and the {len(kwargs)} sampler actors take one each: "
                      "waiting for nodes to join (ray status lists them; Ctrl-C stops)", flush=True)
            actor = ray.remote(num_cpus=1)(RaySampler).options(scheduling_strategy="SPREAD")
            self.actors = [actor.remote(**kw, threads=1) for kw in kwargs]
            # built (as the processes are) before the first batch, and where they run
            self.placement = self._get([a.where.remote() for a in self.actors])
        except BaseException:
            self.close()
            raise

    def _named(self, i: int) -> str:
        """``sampler actor I`` with its node, address and process id once they are known."""
        if i >= len(self.placement):
            return f"sampler actor {i}"
        p = self.placement[i]
        return f"sampler actor {i} on node {p['node'][:12]} ({p['ip']}, pid {p['pid']})"

    def _get(self, refs: list) -> list:
        """The actors' answers to ``refs`` (one per actor, in actor order). The first actor to fail or die is named
        as soon as it does, whichever actors are still playing."""
        ray = self.ray
        out: list = [None] * len(refs)
        index = {ref: i for i, ref in enumerate(refs)}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                i = index[ref]
                try:
                    out[i] = ray.get(ref)
                except ray.exceptions.RayTaskError as e:  # the sampler's code raised: its traceback comes along
                    cause = e.as_instanceof_cause()
                    raise SamplerError(f"{self._named(i)} failed: {type(cause).__name__}: "
                                       f"{' '.join(str(cause).split())[:500]}", str(e)) from None
                except ray.exceptions.RayActorError as e:
                    if e.actor_init_failed:  # its constructor raised
                        raise SamplerError(f"{self._named(i)} failed while starting", str(e)) from None
                    raise SamplerDied(f"{self._named(i)} died: {ray_death_cause(e)}") from None
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                        ray.exceptions.ObjectLostError, ray.exceptions.LocalRayletDiedError,
                        ray.exceptions.RaySystemError) as e:  # its process, its node or this machine's Ray is gone
                    raise SamplerDied(f"{self._named(i)} died: {ray_death_cause(e)}") from None
                except ray.exceptions.RayError as e:
                    raise SamplerError(f"{self._named(i)} failed: {type(e).__name__}", str(e)) from None
        return out

    def submit(self, weights: dict, opponent: dict | None, n_rows: int) -> None:
        """Start a :meth:`collect` on the actors and return at once; :meth:`gather` waits for it."""
        w, o = self.ray.put(weights), self.ray.put(opponent)
        self._refs = [a.collect.remote(w, o, n_rows) for a in self.actors]

    def gather(self) -> list[tuple[dict, dict]]:
        refs, self._refs = self._refs, None
        return self._get(refs)

    def get_state(self) -> list[dict]:
        return self._get([a.get_state.remote() for a in self.actors])

    def set_state(self, states: list[dict]) -> None:
        self._get([a.set_state.remote(st) for a, st in zip(self.actors, states)])

    def describe(self) -> str:
        """Where the actors run, in one line."""
        return "sampler actors: " + ", ".join(self._named(i).removeprefix("sampler actor ")
                                              for i in range(len(self.actors)))

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)  # a dead actor's kill is a no-op
        self.actors = []
        if self.started:
            self.ray.shutdown()


# ------------------------------------------------------------------------------------------- the learner's side
def sampler_kwargs(args, rules: RuleSet, net: dict, index: int, target: dict | None = None,
                   equilibrium: str | None = None) -> dict:
    """The keyword arguments of the run's sampler ``index`` (:class:`Sampler`), for ``train.py``'s ``args`` as
    its ``main`` resolves them (``samplers`` set, ``precision`` "fp32" or "bf16"), with the target policy of
    ``--opponent`` (or None) and the equilibrium table file of ``--search-teacher cfr`` (or None)."""
    return dict(index=index, rules=rules.to_dict(), num_envs=args.num_envs, seed=args.seed, net=net,
                rows_per_call=-(-args.batch_size // args.samplers), pool_prob=args.pool_prob,
                heuristic_prob=args.heuristic_prob, gamma=args.gamma, gae_lambda=args.gae_lambda,
                precision=args.precision, endgame_teacher=args.endgame_teacher_coef > 0,
                endgame_bootstrap=args.endgame_bootstrap,
                search_share=args.search_teacher_share if args.search_teacher_coef > 0 else 0.0,
                search_nodes=args.search_teacher_nodes, search_stock=args.search_teacher_stock, target=target,
                target_prob=args.opponent_prob, equilibrium=equilibrium, random_prob=args.random_prob)


def start_samplers(args, rules: RuleSet, net: dict, target: dict | None = None,
                   equilibrium: str | None = None) -> _Samplers:
    """The run's samplers: in this process (``--inline-samplers``), local processes, or Ray actors
    (``--ray-address``); ``target`` is the frozen target policy of ``--opponent``
    (:func:`agents.training.trainer_flags.load_target`) or None; ``equilibrium`` the table file of
    ``--search-teacher cfr`` (:func:`equilibrium_table`) or None."""
    kwargs = [sampler_kwargs(args, rules, net, i, target, equilibrium) for i in range(args.samplers)]
    if args.ray_address is not None:
        return RaySamplers(kwargs, args.ray_address)
    if args.inline_samplers:
        return InProcessSamplers(kwargs)
    return ProcessSamplers(kwargs, nice=args.sampler_nice if args.overlap_sampling else 0)


def equilibrium_table(rules: RuleSet, iterations: int, path) -> str:
    """The file of ``schnapsen10``'s CFR+ equilibrium by observation (:meth:`agents.game_theory.exact.Tree.cfr`
    for ``iterations``, then :meth:`~agents.game_theory.exact.Tree.observation_policy`), the
    ``--search-teacher cfr`` labels: solved and written to ``path`` unless a table of these rules is there already
    (a resumed run's: CFR+ is deterministic, so solving again would give the same table). Returns the path."""
    from agents.game_theory import exact  # numba walks of the whole tree: only for this teacher

    source = f"cfr+ {iterations} iterations"
    if os.path.exists(path):
        try:
            table = ObservationTable.load(path, rules)
        except ValueError as e:  # names the file: cut short, not a table, or another game's
            raise ValueError(f"{e}: remove it to solve again") from None
        if table.source != source:
            raise ValueError(f"{os.fspath(path)} holds a table of {table.source or 'unknown origin'}, expected "
                             f"{source} (--cfr-iterations): remove it to solve again")
        return str(path)
    print(f"solving {rules.name} by CFR+ ({iterations} iterations) for the equilibrium teacher", flush=True)
    tree = exact.Tree(rules)
    table = tree.observation_policy(tree.cfr(iterations)["average"], source)
    table.save(path)
    return str(path)


def batch_tensors(batch: dict, device: torch.device, precision: str, n_actions: int, critic: bool) -> dict:
    """The samplers' joined batch (numpy arrays, :data:`BATCH_KEYS`) as the update's tensors on ``device``:
    ``obs`` (rows, obs_size) float32, or bfloat16 when ``precision`` is ``"bf16"`` (autocast would round it in every
    minibatch's forward; rounding once per batch gives the same products, tested), ``masks`` bool,
    ``critic`` (None without a privileged critic), ``actions`` int64, ``logp``, ``values``, ``adv``, ``ret``
    float32 (rows,), and the endgame teacher's labels: ``teach`` (rows, n_actions) bool, the exactly best actions
    (all False: no label), and ``taught`` (rows,) bool, the labelled rows; the search teacher's likewise:
    ``search`` (rows, n_actions) bool and ``searched`` (rows,) bool."""
    out = {k: torch.from_numpy(batch[k]).to(device)
           for k in ("obs", "masks", "critic", "actions", "logp", "values", "adv", "ret")}
    out["teach"] = torch.from_numpy((batch["teach"][:, None] >> np.arange(n_actions)) & 1 == 1).to(device)
    out["taught"] = out["teach"].any(dim=1)
    if batch["search"].any():
        out["search"] = torch.from_numpy((batch["search"][:, None] >> np.arange(n_actions)) & 1 == 1).to(device)
    else:  # the search teacher off, or no label in this batch: no unpacking
        out["search"] = torch.zeros(out["teach"].shape, dtype=torch.bool, device=device)
    out["searched"] = out["search"].any(dim=1)
    out["critic"] = out["critic"] if critic else None
    out["masks"] = out["masks"].bool()  # once per batch, not in every minibatch's masked_fill
    if precision == "bf16":
        out["obs"] = out["obs"].to(torch.bfloat16)
    return out
