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

The N hands are the rows of one ``(N, STATE_SIZE)`` int64 array of the compiled rules core
(:mod:`schnapsen_env.rules_core`), stepped, masked and observed by compiled loops over the rows, exactly as the
reference engine :class:`~schnapsen_env.rules.GameState` (``tests/test_vector_exact.py`` checks it in lockstep
for every rule knob). ``games`` and :meth:`SchnapsenVectorEnv.game` give ``GameState`` copies of slots.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from schnapsen_env import encoding, jit, rules_core
from schnapsen_env.errors import IllegalActionError, InvalidPositionError
from schnapsen_env.rules import PLAYERS, RESULT_REASONS, GameState, Reason, Result
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.state_layout import F

_COMPILED_DRAWS: list[bool] = []


def _compiled_draws_ok() -> bool:
    """Whether :func:`schnapsen_env.jit.draw_deal` draws exactly what ``GameState.new_hand``'s
    ``rng.permutation(n)`` and ``rng.integers(2)`` draw with the installed numpy (same values, same generator
    state afterwards, several deals in a row); checked once per process."""
    if not _COMPILED_DRAWS:
        ok = True
        for seed in range(8):
            a, b = np.random.default_rng(seed), np.random.default_rng(seed)
            fn, state = jit.bitgen_addresses(b)
            for n in (20, 24, 20, 24, 20):
                p, d = a.permutation(n), int(a.integers(2))
                q = np.empty(n, dtype=np.int64)
                ok &= d == int(jit.draw_deal(fn, state, q)) and bool(np.array_equal(p, q))
            ok &= a.bit_generator.state == b.bit_generator.state
        _COMPILED_DRAWS.append(ok)
    return _COMPILED_DRAWS[0]


class SchnapsenVectorEnv:
    """N Schnapsen hands for batched self-play.

    Args:
        num_envs: N >= 1.
        ruleset: ``"schnapsen20"`` (default), ``"sixtysix24"`` or ``"schnapsen10"``.
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
        self._R = rules_core.rule_table(self.rules)
        #: The N hands: int64 ``(N, rules_core.STATE_SIZE)`` state arrays of :mod:`schnapsen_env.rules_core`.
        self.state_arrays = np.zeros((self.num_envs, rules_core.STATE_SIZE), dtype=np.int64)
        self._rngs: list[np.random.Generator] = []
        self._legal = np.zeros(self.num_envs, dtype=np.int64)  # legal actions per slot, int bits
        # Per slot, the addresses of its generator's next_uint32 and state (jit.bitgen_addresses), so that the
        # compiled step deals new hands; empty when the compiled draws do not match numpy (then Python deals).
        self._fns = np.zeros(0, dtype=np.int64)
        self._bitgens = np.zeros(0, dtype=np.int64)
        self._results = np.zeros((self.num_envs, 3), dtype=np.int64)  # (winner, game points, reason) per slot
        self._result_of_code: dict[tuple[int, int, int], Result] = {}
        self.obs = np.zeros((self.num_envs, self.obs_size), dtype=np.float32)
        self.masks = np.zeros((self.num_envs, self.n_actions), dtype=np.int8)
        self.to_move = np.zeros(self.num_envs, dtype=np.int8)
        #: Per slot, the result of the hand that ended at the last step (None where none ended).
        self.last_results: list[Result | None] = [None] * self.num_envs
        self._has_reset = False  # set by reset() and set_state(); the slots hold no hands before

    def _require_reset(self, method: str) -> None:
        if not self._has_reset:
            raise RuntimeError(f"SchnapsenVectorEnv.{method}() before reset(): the slots hold no hands yet; call "
                               "reset() first (or set_state())")

    @property
    def games(self) -> list[GameState]:
        """The N hands as :class:`GameState` **copies** (changing them does not change the env).

        Raises:
            RuntimeError: before :meth:`reset`.
        """
        self._require_reset("games")
        return [rules_core.to_game_state(st, self.rules) for st in self.state_arrays]

    def game(self, i: int) -> GameState:
        """Slot ``i`` as a :class:`GameState` copy.

        Raises:
            RuntimeError: before :meth:`reset`.
        """
        self._require_reset("game")
        return rules_core.to_game_state(self.state_arrays[i], self.rules)

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
        self._set_rngs([np.random.default_rng(s) for s in seeds])
        self._new_hands(np.arange(n))
        self.last_results = [None] * n
        self._refresh()
        self._has_reset = True
        return self.obs, self.masks, self.to_move

    def __setstate__(self, state: dict) -> None:
        """After ``copy.deepcopy`` or unpickling: the slots' generators are new objects, so their addresses for the
        compiled deals are taken anew (the copied ones would point at the original env's generators)."""
        self.__dict__.update(state)
        self._set_rngs(self._rngs)

    def _set_rngs(self, rngs: list[np.random.Generator]) -> None:
        """Use ``rngs`` (one per slot) for new deals, in the compiled step where its draws match numpy's."""
        self._rngs = rngs
        if _compiled_draws_ok():
            addresses = np.array([jit.bitgen_addresses(r) for r in rngs], dtype=np.int64).reshape(len(rngs), 2)
            self._fns, self._bitgens = addresses[:, 0].copy(), addresses[:, 1].copy()
        else:
            self._fns = self._bitgens = np.zeros(0, dtype=np.int64)

    def _new_hands(self, rows: np.ndarray) -> None:
        """Deal a new hand into each of ``rows`` with its slot's generator, drawing exactly as
        ``GameState.new_hand(rules, rng)``: ``rng.permutation(n)`` then ``rng.integers(2)`` for the dealer.

        The compiled :func:`schnapsen_env.jit.draw_deal` makes those draws from the generator's bit generator
        (same values, same generator state afterwards; checked once against the installed numpy by
        :func:`_compiled_draws_ok`, and by a test); if it ever differs, the plain calls are made here.
        """
        if len(rows) == 0:
            return
        n = self.rules.n_cards
        orders = np.empty((len(rows), n), dtype=np.int64)
        dealers = np.empty(len(rows), dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        if self._fns.shape[0]:
            for k, i in enumerate(rows.tolist()):
                dealers[k] = jit.draw_deal(int(self._fns[i]), int(self._bitgens[i]), orders[k])
        else:  # a numpy whose streams differ from the compiled draws
            for k, i in enumerate(rows.tolist()):
                orders[k] = self._rngs[i].permutation(n)
                dealers[k] = self._rngs[i].integers(2)
        rules_core.deal_rows(self.state_arrays, self._R, rows, orders, dealers)

    def _refresh(self) -> None:
        """Recompute ``obs``, ``masks``, ``to_move`` (and the cached legal bits) of every slot."""
        rules_core.legal_bits_rows(self.state_arrays, self._R, self._legal)
        rules_core.masks_into(self._legal, self.n_actions, self.masks)
        self.to_move[:] = self.state_arrays[:, F.to_move]
        rules_core.observe_all(self.state_arrays, self._R, self.state_arrays[:, F.to_move], self.obs)

    def _illegal(self, i: int, a: Any) -> IllegalActionError:
        names = self.action_names
        name = names[a] if isinstance(a, int) and 0 <= a < self.n_actions else a
        legal = [names[k] for k in range(self.n_actions) if int(self._legal[i]) >> k & 1]
        return IllegalActionError(f"slot {i}: illegal action {name!r} for {PLAYERS[int(self.state_arrays[i, F.to_move])]}: "
                                  f"legal are {legal}")

    def step(self, actions: np.ndarray):
        """Apply one action per slot for its player to move.

        Args:
            actions: int array of shape ``(N,)``, action ids.

        Returns:
            ``(obs, masks, to_move, rewards, dones, infos)``; ``infos["results"]`` is
            :attr:`last_results` (a list of N ``Result`` or None).

        Raises:
            RuntimeError: called before :meth:`reset` (or :meth:`set_state`): "call reset() first".
            ValueError: ``actions`` does not have shape ``(N,)``.
            IllegalActionError: an entry is not an action id (``None``, a string, a non-integral number; the
                message names its slot and what is expected), or an action is not legal in its slot (the message
                names the first such slot and the legal actions). All actions are checked before any is applied,
                so the env is unchanged.
        """
        self._require_reset("step")
        try:
            actions = np.asarray(actions)
        except (TypeError, ValueError) as e:  # e.g. a ragged nested list
            raise ValueError(f"actions must be an array of shape ({self.num_envs},) of action ids: {e}") from None
        n = self.num_envs
        if actions.shape != (n,):
            raise ValueError(f"actions must have shape ({n},), got {actions.shape}")
        if actions.dtype.kind in "bc":
            raise IllegalActionError(f"actions must be integer action ids, got dtype {actions.dtype}")
        if actions.dtype.kind == "u" and actions.size and actions.max() >= self.n_actions:
            i = int(np.flatnonzero(actions >= self.n_actions)[0])
            raise self._illegal(i, int(actions[i]))
        out_of_range: dict[int, int] = {}
        if actions.dtype.kind in "iu":
            a = np.ascontiguousarray(actions, dtype=np.int64)
        else:  # floats, objects, strings: every entry must be an integral number
            a = np.empty(n, dtype=np.int64)
            for i, x in enumerate(actions.tolist()):
                if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)) \
                        or (isinstance(x, (float, np.floating)) and not float(x).is_integer()):
                    raise IllegalActionError(f"slot {i}: {x!r} is not an action id: expected an int from 0 to "
                                             f"{self.n_actions - 1} (a legal action of that slot)")
                xi = int(x)
                if 0 <= xi < self.n_actions:
                    a[i] = xi
                else:
                    a[i], out_of_range[i] = -1, xi
        rewards = np.empty((n, 2), dtype=np.float32)
        dones = np.empty(n, dtype=np.bool_)
        bad = rules_core.step_rows(self.state_arrays, self._R, a, self._legal, self._fns, self._bitgens, self._results,
                             rewards, dones, self.masks, self.to_move, self.obs)
        if bad >= 0:
            raise self._illegal(bad, out_of_range.get(bad, int(a[bad])))
        results: list[Result | None] = [None] * n
        done_rows = np.flatnonzero(dones)
        if len(done_rows):
            memo = self._result_of_code
            for i, code in zip(done_rows.tolist(), map(tuple, self._results[done_rows].tolist())):
                r = memo.get(code)
                if r is None:
                    w, points, reason = code
                    r = memo[code] = Result(None if w < 0 else w, points, Reason(RESULT_REASONS[reason]))
                results[i] = r
            if not self._fns.shape[0]:  # Python deals (see _new_hands)
                self._new_hands(done_rows)
                self._refresh()
        self.last_results = results
        return self.obs, self.masks, self.to_move, rewards, dones, {"results": results}

    def get_state(self) -> dict:
        """JSON-compatible snapshot of every slot (position dicts and generator states), for checkpoints.

        Raises:
            RuntimeError: called before :meth:`reset` (or :meth:`set_state`).
        """
        self._require_reset("get_state")
        return {"positions": [g.position() for g in self.games],
                "rng_states": [rng.bit_generator.state for rng in self._rngs]}

    def set_state(self, state: dict):
        """Restore :meth:`get_state` output; returns ``(obs, masks, to_move)``.

        Raises:
            ValueError: not such a snapshot, another number of slots, or a bad generator state.
            InvalidPositionError: a bad or finished position.
        """
        if not isinstance(state, dict) or set(state) != {"positions", "rng_states"}:
            raise ValueError("state must be the dict get_state() returns, with keys 'positions' and 'rng_states'")
        positions, rng_states = state["positions"], state["rng_states"]
        if not isinstance(positions, (list, tuple)) or not isinstance(rng_states, (list, tuple)):
            raise ValueError("state['positions'] and state['rng_states'] must be lists, one entry per slot")
        if len(positions) != self.num_envs or len(rng_states) != self.num_envs:
            raise ValueError(f"snapshot has {len(positions)} slots, this env has {self.num_envs}")
        games = [GameState.from_position(self.rules, p) for p in positions]
        for i, g in enumerate(games):
            if g.result is not None:
                raise InvalidPositionError(f"slot {i} holds a finished hand: nothing to play (slots hold hands in "
                                           "progress; the next hand is dealt when one ends)")
        rngs = []
        for i, st in enumerate(rng_states):
            rng = np.random.default_rng()
            try:
                rng.bit_generator.state = st
            except (TypeError, ValueError, KeyError) as e:
                raise ValueError(f"rng_states[{i}] is not the state of numpy's {type(rng.bit_generator).__name__} "
                                 f"generator: {e}") from None
            rngs.append(rng)
        arrays = np.zeros_like(self.state_arrays)
        for i, g in enumerate(games):
            rules_core.from_game_state(g, arrays[i])
        self.state_arrays = arrays
        self._set_rngs(rngs)
        self.last_results = [None] * self.num_envs
        self._refresh()
        self._has_reset = True
        return self.obs, self.masks, self.to_move

    def states_row(self, i: int) -> np.ndarray:
        """Omniscient state vector of slot ``i``: float32 ``(state_size,)``. RuntimeError before :meth:`reset`."""
        self._require_reset("states_row")
        out = np.empty(encoding.state_size(self.rules), dtype=np.float32)
        rules_core.state_vector(self.state_arrays[i], self._R, out)
        return out

    def states(self) -> np.ndarray:
        """Omniscient state vectors of all slots: float32 ``(N, state_size)`` (centralised critics). RuntimeError
        before :meth:`reset`."""
        self._require_reset("states")
        out = np.empty((self.num_envs, encoding.state_size(self.rules)), dtype=np.float32)
        rules_core.state_vectors(self.state_arrays, self._R, out)
        return out
