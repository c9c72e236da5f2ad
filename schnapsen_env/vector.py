"""Vectorised self-play env: N hands stepped together, numpy arrays in and out, auto-reset.

Each of the N slots is one hand episode (``episode="hand"``) whose player to move acts; both seats
are driven by the caller (self-play). Slot ``i`` seeded with ``seeds[i]`` plays exactly the hands,
observations and results of ``schnapsen_v0.raw_env`` reset with ``seed=seeds[i]`` and then reset
without a seed after every hand (a test checks this).

Arrays (N = ``num_envs``, D = ``obs_size``, A = ``n_actions``):

* ``obs``: float32 ``(N, D)``, the observation of the player to move (layout: :mod:`schnapsen_env.encoding`);
* ``masks``: int8 ``(N, A)``, that player's legal actions;
* ``to_move``: int8 ``(N,)``, seat 0/1 of that player;
* ``rewards``: float32 ``(N, 2)``, game points won (+) or lost (-) by seats 0 and 1 in hands that ended
  at this step (zero-sum);
* ``dones``: bool ``(N,)``, the hand in that slot ended at this step (the slot already holds the next
  hand, so ``obs``/``masks``/``to_move`` are the new hand's).

The N hands live in one :class:`~schnapsen_env.batch.BatchState` (numpy arrays, stepped with array
operations over the batch, exactly as the reference engine :class:`~schnapsen_env.rules.GameState`:
``tests/test_vector_exact.py`` checks it in lockstep for every rule knob). ``games`` and
:meth:`SchnapsenVectorEnv.game` give ``GameState`` copies of slots.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from schnapsen_env import encoding
from schnapsen_env.batch import BatchState, bits_to_array
from schnapsen_env.errors import IllegalActionError, InvalidPositionError
from schnapsen_env.rules import PLAYERS, GameState, Result
from schnapsen_env.ruleset import RuleSet


class SchnapsenVectorEnv:
    """N Schnapsen hands for batched self-play.

    Args:
        num_envs: N >= 1.
        ruleset: ``"schnapsen20"`` (default) or ``"sixtysix24"``.
        **knobs: rule knobs of RULES.md section 5.

    Raises:
        RulesError: bad ruleset or knob. ValueError: ``num_envs < 1``.
    """

    def __init__(self, num_envs: int, ruleset: str = "schnapsen20", **knobs: Any) -> None:
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.rules = RuleSet.make(ruleset, **knobs)
        self.obs_size = encoding.obs_size(self.rules)
        self.n_actions = self.rules.n_actions
        self.action_names = list(self.rules.action_names)
        #: The N hands as numpy arrays (:class:`~schnapsen_env.batch.BatchState`).
        self.batch = BatchState(self.rules, self.num_envs)
        self._rngs: list[np.random.Generator] = []
        self._legal = np.zeros(self.num_envs, dtype=np.int64)  # legal actions per slot, int bits
        self.obs = np.zeros((self.num_envs, self.obs_size), dtype=np.float32)
        self.masks = np.zeros((self.num_envs, self.n_actions), dtype=np.int8)
        self.to_move = np.zeros(self.num_envs, dtype=np.int8)
        #: Per slot, the result of the hand that ended at the last step (None where none ended).
        self.last_results: list[Result | None] = [None] * self.num_envs

    @property
    def games(self) -> list[GameState]:
        """The N hands as :class:`GameState` **copies** (changing them does not change the env)."""
        return [self.batch.to_game_state(i) for i in range(self.num_envs)]

    def game(self, i: int) -> GameState:
        """Slot ``i`` as a :class:`GameState` copy."""
        return self.batch.to_game_state(i)

    def reset(self, seed: int | Sequence[int] | None = None):
        """Deal a new hand in every slot.

        Args:
            seed: an int (slot ``i`` gets ``seed + i``), a sequence of N ints, or None (unseeded).

        Returns:
            ``(obs, masks, to_move)`` (see the module docstring).
        """
        n = self.num_envs
        if isinstance(seed, np.ndarray) and seed.ndim == 0:
            seed = seed.item()
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(n)]
        elif isinstance(seed, (list, tuple, np.ndarray)) and all(
                isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in seed):
            seeds = [int(x) for x in seed]
            if len(seeds) != n:
                raise ValueError(f"seed must be an int or {n} ints, got {len(seeds)}")
        else:
            raise ValueError(f"seed must be None, an int or a sequence of {n} ints, got {seed!r}")
        self._rngs = [np.random.default_rng(s) for s in seeds]
        self.batch.new_hands(np.arange(n), self._rngs)
        self.last_results = [None] * n
        self._refresh()
        return self.obs, self.masks, self.to_move

    def _refresh(self) -> None:
        """Recompute ``obs``, ``masks``, ``to_move`` (and the cached legal bits) of every slot."""
        b = self.batch
        self._legal = b.legal_masks()
        bits_to_array(self._legal, self.n_actions, self.masks)
        self.to_move[:] = b.to_move
        b.observations_into(self.obs)

    def _illegal(self, i: int, a: Any) -> IllegalActionError:
        names = self.action_names
        name = names[a] if isinstance(a, int) and 0 <= a < self.n_actions else a
        legal = [names[k] for k in range(self.n_actions) if int(self._legal[i]) >> k & 1]
        return IllegalActionError(f"slot {i}: illegal action {name!r} for {PLAYERS[int(self.batch.to_move[i])]}: "
                                  f"legal are {legal}")

    def step(self, actions: np.ndarray):
        """Apply one action per slot for its player to move.

        Args:
            actions: int array of shape ``(N,)``, action ids.

        Returns:
            ``(obs, masks, to_move, rewards, dones, infos)``; ``infos["results"]`` is
            :attr:`last_results` (a list of N ``Result`` or None).

        Raises:
            IllegalActionError: an action is not legal in its slot (the message names the first such
                slot). All actions are checked before any is applied, so the env is unchanged.
        """
        actions = np.asarray(actions)
        n = self.num_envs
        if actions.shape != (n,):
            raise ValueError(f"actions must have shape ({n},), got {actions.shape}")
        if actions.dtype.kind in "bc":
            raise IllegalActionError(f"actions must be integer action ids, got dtype {actions.dtype}")
        if actions.dtype.kind == "u" and actions.size and actions.max() >= self.n_actions:
            i = int(np.flatnonzero(actions >= self.n_actions)[0])
            raise self._illegal(i, int(actions[i]))
        if actions.dtype.kind in "iu":
            a = actions.astype(np.int64)
        else:
            try:
                a = actions.astype(np.int64)
            except (TypeError, ValueError, OverflowError):
                a = None
            if a is None or not np.array_equal(a, actions):
                bad = 0 if a is None else int(np.flatnonzero(a != actions)[0])
                raise self._illegal(bad, actions[bad])
        in_range = (a >= 0) & (a < self.n_actions)
        ok = in_range & (((self._legal >> np.where(in_range, a, 0)) & 1) == 1)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise self._illegal(i, int(a[i]))
        b = self.batch
        b.step(a)
        rewards = np.zeros((n, 2), dtype=np.float32)
        done_rows = np.flatnonzero(b.over)
        dones = np.zeros(n, dtype=bool)
        dones[done_rows] = True
        results: list[Result | None] = [None] * n
        if len(done_rows):
            winners = b.res_winner[done_rows]
            points = b.res_points[done_rows].astype(np.float32)
            won = winners >= 0
            wr, ww, wp = done_rows[won], winners[won], points[won]
            rewards[wr, ww] = wp
            rewards[wr, 1 - ww] = -wp
            for i, r in zip(done_rows.tolist(), b.results(done_rows)):
                results[i] = r
            rngs = self._rngs
            b.new_hands(done_rows, [rngs[i] for i in done_rows.tolist()])
        self.last_results = results
        self._refresh()
        return self.obs, self.masks, self.to_move, rewards, dones, {"results": results}

    def get_state(self) -> dict:
        """JSON-compatible snapshot of every slot (position dicts and generator states), for checkpoints."""
        return {"positions": [self.batch.to_game_state(i).position() for i in range(self.num_envs)],
                "rng_states": [rng.bit_generator.state for rng in self._rngs]}

    def set_state(self, state: dict):
        """Restore :meth:`get_state` output; returns ``(obs, masks, to_move)``.

        Raises:
            ValueError: the snapshot has another number of slots. InvalidPositionError: a bad position.
        """
        if not isinstance(state, dict) or set(state) != {"positions", "rng_states"}:
            raise ValueError("state must be the dict get_state() returns, with keys 'positions' and 'rng_states'")
        positions, rng_states = state["positions"], state["rng_states"]
        if len(positions) != self.num_envs or len(rng_states) != self.num_envs:
            raise ValueError(f"snapshot has {len(positions)} slots, this env has {self.num_envs}")
        games = [GameState.from_position(self.rules, p) for p in positions]
        for i, g in enumerate(games):
            if g.result is not None:
                raise InvalidPositionError(f"slot {i} holds a finished hand: nothing to play (slots hold hands in "
                                           "progress; the next hand is dealt when one ends)")
        rngs = []
        for st in rng_states:
            rng = np.random.default_rng()
            rng.bit_generator.state = st
            rngs.append(rng)
        batch = BatchState(self.rules, self.num_envs)
        for i, g in enumerate(games):
            batch.set_row(i, g)
        self.batch = batch
        self._rngs = rngs
        self.last_results = [None] * self.num_envs
        self._refresh()
        return self.obs, self.masks, self.to_move

    def states_row(self, i: int) -> np.ndarray:
        """Omniscient state vector of slot ``i``: float32 ``(state_size,)``."""
        return encoding.state_vector(self.batch.to_game_state(i))

    def states(self) -> np.ndarray:
        """Omniscient state vectors of all slots: float32 ``(N, state_size)`` (centralised critics)."""
        return self.batch.state_vectors()
