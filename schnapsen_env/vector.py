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
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from schnapsen_env import encoding
from schnapsen_env.errors import IllegalActionError
from schnapsen_env.rules import PLAYERS, GameState, Result, mask_to_array
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
        self.games: list[GameState] = []
        self._rngs: list[np.random.Generator] = []
        self.obs = np.zeros((self.num_envs, self.obs_size), dtype=np.float32)
        self.masks = np.zeros((self.num_envs, self.n_actions), dtype=np.int8)
        self.to_move = np.zeros(self.num_envs, dtype=np.int8)
        #: Per slot, the result of the hand that ended at the last step (None where none ended).
        self.last_results: list[Result | None] = [None] * self.num_envs

    def reset(self, seed: int | Sequence[int] | None = None):
        """Deal a new hand in every slot.

        Args:
            seed: an int (slot ``i`` gets ``seed + i``), a sequence of N ints, or None (unseeded).

        Returns:
            ``(obs, masks, to_move)`` (see the module docstring).
        """
        n = self.num_envs
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = [int(x) for x in seed]
            if len(seeds) != n:
                raise ValueError(f"seed must be an int or {n} ints, got {len(seeds)}")
        self._rngs = [np.random.default_rng(s) for s in seeds]
        self.games = [GameState.new_hand(self.rules, rng) for rng in self._rngs]
        self.last_results = [None] * n
        self._refresh(range(n))
        return self.obs, self.masks, self.to_move

    def _refresh(self, idx) -> None:
        games = self.games
        idx = list(idx)
        if not idx:
            return
        seats = np.fromiter((games[i].to_move for i in idx), dtype=np.int8, count=len(idx))
        self.to_move[idx] = seats
        if len(idx) == self.num_envs:
            encoding.observations_into(games, seats, self.obs)
        else:
            block = np.empty((len(idx), self.obs_size), dtype=np.float32)
            encoding.observations_into([games[i] for i in idx], seats, block)
            self.obs[idx] = block
        n_actions = self.n_actions
        for i in idx:
            self.masks[i] = mask_to_array(games[i].legal_mask(), n_actions)

    def step(self, actions: np.ndarray):
        """Apply one action per slot for its player to move.

        Args:
            actions: int array of shape ``(N,)``, action ids.

        Returns:
            ``(obs, masks, to_move, rewards, dones, infos)``; ``infos["results"]`` is
            :attr:`last_results` (a list of N ``Result`` or None).

        Raises:
            IllegalActionError: an action is not legal in its slot (the message names the slot);
                slots before it have been stepped already, so reset after catching it.
        """
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {actions.shape}")
        rewards = np.zeros((self.num_envs, 2), dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        results: list[Result | None] = [None] * self.num_envs
        games = self.games
        for i, a in enumerate(actions.tolist()):
            g = games[i]
            if not (0 <= a < self.n_actions and g.legal_mask() >> a & 1):
                name = self.action_names[a] if 0 <= a < self.n_actions else a
                raise IllegalActionError(f"slot {i}: illegal action {name!r} for {PLAYERS[g.to_move]}: legal are "
                                         f"{g.legal_action_names()}")
            g.push(a)
            r = g.result
            if r is not None:
                dones[i] = True
                results[i] = r
                if r.winner is not None:
                    rewards[i, r.winner] = r.game_points
                    rewards[i, 1 - r.winner] = -r.game_points
                games[i] = GameState.new_hand(self.rules, self._rngs[i])
        self.last_results = results
        self._refresh(range(self.num_envs))
        return self.obs, self.masks, self.to_move, rewards, dones, {"results": results}

    def get_state(self) -> dict:
        """JSON-compatible snapshot of every slot (position dicts and generator states), for checkpoints."""
        return {"positions": [g.position() for g in self.games],
                "rng_states": [rng.bit_generator.state for rng in self._rngs]}

    def set_state(self, state: dict):
        """Restore :meth:`get_state` output; returns ``(obs, masks, to_move)``.

        Raises:
            ValueError: the snapshot has another number of slots. InvalidPositionError: a bad position.
        """
        positions, rng_states = state["positions"], state["rng_states"]
        if len(positions) != self.num_envs or len(rng_states) != self.num_envs:
            raise ValueError(f"snapshot has {len(positions)} slots, this env has {self.num_envs}")
        self.games = [GameState.from_position(self.rules, p) for p in positions]
        self._rngs = []
        for st in rng_states:
            rng = np.random.default_rng()
            rng.bit_generator.state = st
            self._rngs.append(rng)
        self.last_results = [None] * self.num_envs
        self._refresh(range(self.num_envs))
        return self.obs, self.masks, self.to_move

    def states_row(self, i: int) -> np.ndarray:
        """Omniscient state vector of slot ``i``: float32 ``(state_size,)``."""
        return encoding.state_vector(self.games[i])

    def states(self) -> np.ndarray:
        """Omniscient state vectors of all slots: float32 ``(N, state_size)`` (centralised critics)."""
        return np.stack([encoding.state_vector(g) for g in self.games])
