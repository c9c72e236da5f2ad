"""PettingZoo AEC environment for Schnapsen / Sixty-Six.

Public module: :mod:`schnapsen_env.schnapsen_v0` (``env()``, ``raw_env()``).

=====================  =============================================================================
Agents                 ``player_0``, ``player_1`` (seats; the dealer and leader change per hand)
Action space           ``Discrete(27)`` (``schnapsen20``) / ``Discrete(31)`` (``sixtysix24``) /
                       ``Discrete(17)`` (``schnapsen10``); the id is the index in ``env.unwrapped.action_names``:
                       ``play XX`` by card (suits C D H S, ranks A T K Q J 9), ``marriage C/D/H/S``,
                       ``exchange``, ``close``, ``claim``
Observation space      ``Dict(observation=Box(0, high, (obs_size,), float32),
                       action_mask=Box(0, 1, (n_actions,), int8))``; ``obs_size`` 255 / 299; layout in
                       :mod:`schnapsen_env.encoding` and the README
State space            ``Box(0, high, (state_size,), float32)``, omniscient (``state()``)
Rewards                ``episode="hand"``: ± game points of the hand at its end (zero-sum; 0 for a tie).
                       ``episode="match"``: ``reward="match"`` ±1 when the match ends;
                       ``reward="game_points"`` ± game points at the end of every hand (carry included)
Episode end            ``terminations`` all True at the end of the hand (or match); the game never
                       sets ``truncations``
Illegal actions        ``raw_env`` raises :class:`~schnapsen_env.errors.IllegalActionError` and changes
                       nothing; ``env()`` adds PettingZoo's ``TerminateIllegalWrapper``
                       (``illegal_reward=-3``), ``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``
Masks                  The mask of the agent to move equals the engine's legal actions; every other
                       agent's mask, and every mask after the end, is all zeros (API.md)
=====================  =============================================================================

**One engine where it pays.** A hand is played on the compiled state array (:mod:`schnapsen_env.rules_core`:
``apply``, ``legal_bits``, ``counted``, ``observe_masked``, ``result_of``, ``state_vector``) while nobody asks for its
:class:`~schnapsen_env.rules.GameState`, as in an RL loop; the deal still comes from ``GameState.new_hand`` (the
same seeded hands) and the actions played are recorded beside it. The first use of :attr:`raw_env.game`
(``position()``, ``render()``, records, a match scoring its hand, any caller of ``env.game``) replays them into the
``GameState``, which stays the live hand to its end: the env pushes every action into it and the array follows it
(:class:`~schnapsen_env.mirror.CoreMirror`), so a caller that moves it by hand is followed. An illegal action is
explained by the reference (``GameState.step`` on a copy of the hand: the same message) and changes nothing. Measured
with ``benchmarks/aec_engine.py`` (random legal play through PettingZoo's AEC loop, medians of 7 interleaved rounds
of 0.7 s, one process; 2 shared cores of an Intel Xeon at load 5): ``raw_env()`` 43,900 decisions/s on one engine
against 34,600 with its ``GameState`` asked for at every deal (two engines, as before), 1.27x (per round
1.02-1.33x); ``env()`` 27,900 against 22,700, 1.23x (per round 1.17-1.25x). Against the commit before, run
alternately in separate processes (7 rounds of 1 s), ``raw_env()`` was 1.10x and ``env()`` 1.19x, and the
Gymnasium env's step 1.2x (5 rounds). PettingZoo's classic peers were not installed on that machine (no
``pygame``); ``benchmarks/env.py`` and ``benchmarks/aec_engine.py`` print the ratios to them where they are.

Version history: v0 (initial).
"""

from __future__ import annotations

import warnings
from operator import attrgetter
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from schnapsen_env import encoding, rules_core
from schnapsen_env.errors import InvalidPositionError
from schnapsen_env.match import Match
from schnapsen_env.mirror import CoreMirror
from schnapsen_env.render import render_text
from schnapsen_env.rules import PLAYERS, GameState, seat_of
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.state_layout import F

ILLEGAL_REWARD = -3  # API.md: the largest single-hand loss
EPISODES = ("hand", "match")
REWARDS = ("match", "game_points")


# PettingZoo's wrappers forward every attribute through ``BaseWrapper.__getattr__``, one level per wrapper:
# about 40 such look-ups per decision cost as much as the whole game step. These subclasses behave exactly
# like PettingZoo's wrappers (same code, same checks, ``isinstance`` holds) but read the AEC bookkeeping
# attributes straight from the unwrapped env.
_HOT = ("agent_selection", "agents", "rewards", "terminations", "truncations", "infos", "_cumulative_rewards")
_GUARDED = {"rewards", "terminations", "truncations", "infos", "agent_selection", "agents"}


def _forward(name: str, guarded: bool) -> property:
    if not guarded:
        return property(attrgetter("_raw." + name))  # a C-level getter: no Python frame per look-up

    def get(self):
        if not self._has_reset:  # OrderEnforcingWrapper's check, same message
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    return property(get)


class _TerminateIllegal(wrappers.TerminateIllegalWrapper):
    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        super().__init__(env, illegal_reward=illegal_reward)
        self._raw = env.unwrapped


class _AssertOutOfBounds(wrappers.AssertOutOfBoundsWrapper):
    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped


for _name in _HOT:
    setattr(_TerminateIllegal, _name, _forward(_name, False))
    setattr(_AssertOutOfBounds, _name, _forward(_name, False))
    setattr(_OrderEnforcing, _name, _forward(_name, _name in _GUARDED))


class _Discrete(spaces.Discrete):
    """``gymnasium.spaces.Discrete`` with a fast path in ``contains`` for plain Python ints (the
    ``AssertOutOfBoundsWrapper`` checks every action; the generic check costs several microseconds)."""

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return int(self.start) <= x < int(self.start) + int(self.n)
        return super().contains(x)


def env(**kwargs: Any) -> AECEnv:
    """``raw_env`` wrapped as PettingZoo's classic envs are (API.md): an illegal action ends the episode
    with reward -3 for the offender (``TerminateIllegalWrapper``), out-of-range actions assert
    (``AssertOutOfBoundsWrapper``), and the AEC call order is enforced (``OrderEnforcingWrapper``).
    The wrappers are subclasses of PettingZoo's that only read the hot attributes faster."""
    e = raw_env(**kwargs)
    e = _TerminateIllegal(e, illegal_reward=ILLEGAL_REWARD)
    e = _AssertOutOfBounds(e)
    e = _OrderEnforcing(e)
    return e


class WithoutInfos(wrappers.BaseWrapper):
    """Hides ``infos`` (every agent's info is ``{}``); everything else passes through.

    For libraries that turn each info entry into a tensor or a replay-buffer column: TorchRL's
    ``PettingZooWrapper`` cannot convert this env's nested info dicts (``RuntimeError: Could not infer dtype of
    dict``), and Tianshou's collector reads the ``result`` entry, present only at the end of a hand, as
    missing values (``MalformedBufferError``). The rewards still carry the outcome.
    """

    @property
    def infos(self) -> dict[str, dict]:
        return {agent: {} for agent in self.env.agents}


def without_infos(env: AECEnv) -> AECEnv:
    """``env`` with empty ``infos`` (:class:`WithoutInfos`), e.g. ``without_infos(schnapsen_v0.env())``.

    Raises:
        TypeError: ``env`` is not a PettingZoo AEC env.
    """
    if not isinstance(env, AECEnv):
        raise TypeError(f"without_infos expects a PettingZoo AEC env such as schnapsen_v0.env(), got {type(env).__name__}")
    return WithoutInfos(env)


class raw_env(AECEnv, EzPickle):
    """The Schnapsen AEC env without wrappers (see the module docstring for the spec).

    Args:
        ruleset: ``"schnapsen20"`` (default) or ``"sixtysix24"``.
        episode: ``"hand"`` (default) or ``"match"`` (hands until ``match_target`` game points, R25).
        reward: match episodes only: ``"match"`` (default, ±1 at the end) or ``"game_points"``.
        render_mode: ``None``, ``"ansi"`` (``render()`` returns the text) or ``"human"`` (prints it).
        render_reveal: show the opponent's hidden cards in renders (default False).
        **knobs: any rule knob of RULES.md section 5, e.g. ``false_claim="mirror"``.

    Raises:
        RulesError: unknown ruleset, rule key or value.
        ValueError: a bad ``episode``, ``reward`` or ``render_mode``.
    """

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"], "name": "schnapsen_v0",
                                 "is_parallelizable": False, "render_fps": 1}

    def __init__(self, ruleset: str = "schnapsen20", episode: str = "hand", reward: str = "match",
                 render_mode: str | None = None, render_reveal: bool = False, **knobs: Any) -> None:
        EzPickle.__init__(self, ruleset=ruleset, episode=episode, reward=reward, render_mode=render_mode,
                          render_reveal=render_reveal, **knobs)
        super().__init__()
        self.rules = RuleSet.make(ruleset, **knobs)
        if episode not in EPISODES:
            raise ValueError(f"episode must be one of {EPISODES}, got {episode!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got "
                             f"{render_mode!r}")
        self.episode = episode
        self.reward_kind = reward
        self.render_mode = render_mode
        self.render_reveal = render_reveal
        self.possible_agents = list(PLAYERS)
        self.agents = list(PLAYERS)
        self.action_names = list(self.rules.action_names)
        n_actions = self.rules.n_actions
        low, high = encoding.obs_bounds(self.rules)
        obs_space = spaces.Dict({
            "observation": spaces.Box(low=low, high=high, dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(n_actions,), dtype=np.int8),
        })
        self.observation_spaces = {a: obs_space for a in PLAYERS}
        self.action_spaces = {a: _Discrete(n_actions) for a in PLAYERS}
        s_high = np.concatenate([np.ones(4 * self.rules.n_cards, dtype=np.float32), high])
        self.state_space = spaces.Box(low=np.zeros_like(s_high), high=s_high, dtype=np.float32)
        self._rng = np.random.default_rng()
        # The hand is played on the compiled state array (self._st, the mirror's), see _set_hand.
        self._mirror = CoreMirror(self.rules)
        self._st = self._mirror.state
        self._table = self._mirror.table
        self._obs_size = self._mirror.obs_size
        self._n_actions = n_actions
        self._start: GameState | None = None  # the hand as dealt (or loaded), never moved while self._game is None
        self._actions: list[int] = []  # the actions played since, while self._game is None
        self._game: GameState | None = None  # the live GameState, once built (see the game property)
        self.match: Match | None = None
        self._legal = 0

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a hand (or a match).

        Args:
            seed: seeds the env's ``numpy.random.Generator`` (shuffles and the dealer, R1).
            options: ``None``, ``{"deck": [codes], "dealer": "player_0"|"player_1"}`` (R2; in match
                episodes the first hand only) or ``{"position": {...}}`` (the engine's position dict).

        Unknown option keys give a ``UserWarning`` and are ignored (PettingZoo's ``api_test`` passes one).

        Raises:
            ValueError: ``deck`` without ``dealer`` (or the reverse), or ``position`` together with them.
            InvalidPositionError: a malformed deck or position.
        """
        if options is None:
            options = {}
        if not isinstance(options, dict):
            raise ValueError(f"options must be a dict or None, got {type(options).__name__}")
        unknown = sorted(set(options) - {"deck", "dealer", "position"})
        if unknown:
            # PettingZoo's api_test calls reset(options={"options": 1}) to check the signature, so unknown
            # keys warn (naming them) instead of raising; malformed known keys raise below.
            warnings.warn(f"reset() ignores unknown option key(s) {unknown}: expected {{'deck': [...], "
                          "'dealer': ...} or {'position': {...}}", stacklevel=2)
        if "position" in options and ("deck" in options or "dealer" in options):
            raise ValueError("options take either 'position' or 'deck' with 'dealer', not both")
        if ("deck" in options) != ("dealer" in options):
            raise ValueError("options['deck'] needs options['dealer'] ('player_0' or 'player_1') and vice versa")
        if "position" in options:
            game = GameState.from_position(self.rules, options["position"])
            if game.result is not None:
                raise InvalidPositionError("options['position'] is a finished hand (result is set): nothing to play")
        elif "deck" in options:
            game = GameState.from_deck(self.rules, options["deck"], seat_of(options["dealer"], "dealer"))
        else:
            game = None
        # Reseed only once the options are known to be good: a failed reset changes nothing.
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if game is None:
            game = GameState.new_hand(self.rules, self._rng)
        self.match = Match.from_state(self.rules, self._rng, game) if self.episode == "match" else None
        self._set_hand(game)
        self.agents = list(PLAYERS)
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: self._public_info() for a in self.agents}
        self.agent_selection = PLAYERS[game.to_move]
        self._legal = game.legal_bits()  # legal actions of the agent to move, as int bits

    def _set_hand(self, game: GameState) -> None:
        """Play the fresh hand ``game`` on the compiled state array from now on.

        One engine where it pays: while nobody asked for the ``GameState`` (an RL loop asks only for observations,
        rewards and infos) a step is :func:`schnapsen_env.rules_core.apply` on the array and the legal actions
        :func:`~schnapsen_env.rules_core.legal_bits` of it, in compiled code, and ``game`` stays as dealt with the
        actions recorded beside it. The first use of :attr:`game` (``position()``, ``render()``, records, a match's
        scoring, any caller of ``env.game``) replays them into ``game``, which from
        then on is the live hand: the env pushes every action into it too and the array follows it
        (:class:`~schnapsen_env.mirror.CoreMirror`), so a caller that moves it by hand is followed as before."""
        self._start = game
        self._actions = []
        self._game = None
        rules_core.from_game_state(game, self._st)

    @property
    def has_hand(self) -> bool:
        """Whether :meth:`reset` dealt a hand (``game`` is not None), without building the ``GameState``."""
        return self._start is not None

    @property
    def game(self) -> GameState | None:
        """The current hand as a :class:`~schnapsen_env.rules.GameState` (None before :meth:`reset`): the same object
        for the rest of the hand once asked for, kept in step by the env (see :meth:`_set_hand`)."""
        game = self._game
        if game is None and self._start is not None:
            game = self._start
            for a in self._actions:
                game.push(a)
            self._actions = []
            self._mirror.adopt(game)  # the array equals it already
            self._game = game
        return game

    # ------------------------------------------------------------------ step
    def step(self, action: int) -> None:
        """Apply ``action`` for ``agent_selection``.

        Raises:
            RuntimeError: called before :meth:`reset`: "call reset() before step()".
            IllegalActionError: the action is not legal (the state is unchanged).
        """
        if self._start is None:
            raise RuntimeError("call reset() before step(): there is no hand to play yet")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self._game
        legal = self._legal
        if type(action) is int and 0 <= action < 64 and legal >> action & 1:  # the common case, checked cheaply
            pass
        elif isinstance(action, (int, np.integer)) and not isinstance(action, bool) and 0 <= action < 64 \
                and legal >> int(action) & 1:
            action = int(action)
        else:  # raises IllegalActionError (naming action and legal ones), changes nothing; or an action name
            action = self._action_id(action)
        st = self._st
        if game is None:  # the compiled state alone (see _set_hand)
            rules_core.apply(st, self._table, action)
            self._actions.append(action)
            over = st[F.over]
        else:
            game.push(action)
            over = game.result is not None
        self._cumulative_rewards[agent] = 0
        self._clear_rewards()
        if over:
            self._end_hand()
        else:
            self.agent_selection = PLAYERS[st[F.to_move] if game is None else game.to_move]
            info = self._public_info()
            self.infos = {PLAYERS[0]: info, PLAYERS[1]: dict(info)}
        game = self._game  # a match's next hand, or the hand built to score a match
        self._legal = rules_core.legal_bits(st, self._table) if game is None else game.legal_bits()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _action_id(self, action: Any) -> int:
        """The id of ``action`` (an id or an action name) if it is legal, else :class:`IllegalActionError` from
        ``GameState.step``, the reference's message; the hand is unchanged (a copy of it is asked)."""
        game = self._game
        if game is None:
            assert self._start is not None  # step() checked that reset() dealt a hand
            game = self._start.copy()
            for a in self._actions:
                game.push(a)
        else:
            game = game.copy()
        game.step(action)
        return game.actions[-1]

    def _end_hand(self) -> None:
        result = self._result()
        if self.match is None:
            if result.winner is not None:
                self.rewards[PLAYERS[result.winner]] = result.game_points
                self.rewards[PLAYERS[1 - result.winner]] = -result.game_points
            self._finish({"result": self._result_info()})
            return
        self.game  # noqa: B018  (the match scores the hand's GameState: build it, see the game property)
        gained = self.match.finish_hand()
        if self.reward_kind == "game_points":
            for p in (0, 1):
                self.rewards[PLAYERS[p]] = gained[p] - gained[1 - p]
        if self.match.over:
            w = self.match.winner
            assert w is not None  # a match that is over has its winner
            if self.reward_kind == "match":
                self.rewards[PLAYERS[w]] = 1
                self.rewards[PLAYERS[1 - w]] = -1
            self._finish({"result": self._result_info(), "match_winner": PLAYERS[w]})
            return
        last = self._result_info()
        game = self.match.next_hand()
        self._set_hand(game)
        self.agent_selection = PLAYERS[game.to_move]
        self.infos = {a: {**self._public_info(), "last_hand": last} for a in self.agents}

    def _finish(self, extra: dict) -> None:
        self.terminations = {a: True for a in self.agents}
        self.infos = {a: {**self._public_info(), **extra} for a in self.agents}

    def _result(self):
        """The hand's :class:`~schnapsen_env.rules.Result` (None while it runs)."""
        game = self._game
        return rules_core.result_of(self._st) if game is None else game.result

    def _result_info(self) -> dict:
        r = self._result()
        return {"winner": None if r.winner is None else PLAYERS[r.winner], "game_points": r.game_points,
                "reason": str(r.reason)}

    def _public_info(self) -> dict:
        g = self._game
        p0, p1 = PLAYERS  # written out, not comprehensions: this runs at every step
        if g is None:
            st = self._st
            info: dict[str, Any] = {"points": {p0: int(rules_core.counted(st, 0)), p1: int(rules_core.counted(st, 1))},
                                    "tricks": {p0: int(st[F.tricks]), p1: int(st[F.tricks + 1])}}
        else:
            info = {"points": {p0: g.counted(0), p1: g.counted(1)}, "tricks": {p0: g.tricks[0], p1: g.tricks[1]}}
        if self.match is not None:
            info["match_points"] = {PLAYERS[p]: self.match.points[p] for p in (0, 1)}
            info["carry"] = self.match.carry
        return info

    # ------------------------------------------------------------------ observe
    def _check_reset(self) -> None:
        if self._start is None:
            raise RuntimeError("call reset() before observe(), last(), state(), position() or render()")

    def _require_reset(self) -> GameState:
        self._check_reset()
        game = self.game
        assert game is not None  # reset() dealt a hand (checked above), so the game property builds it
        return game

    def last(self, observe: bool = True):
        """PettingZoo's ``last()``: the observation, cumulative reward, termination, truncation and info of the agent
        to act.

        Raises:
            RuntimeError: called before :meth:`reset`.
        """
        self._check_reset()
        return super().last(observe)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 (obs_size,), "action_mask": int8 (n_actions,)}`` for ``agent``: new arrays at
        every call (a caller may keep them), the values of :func:`schnapsen_env.encoding.observation`."""
        seat = seat_of(agent, "agent")
        self._check_reset()
        game = self._game
        # The array, brought equal to the live game first if there is one (a caller may have moved it by hand).
        st = self._st if game is None else self._mirror.sync(game)
        # An agent PettingZoo's loop has removed (its None step) is out of terminations: it is done, nothing is legal.
        legal = self._legal if not st[F.over] and st[F.to_move] == seat and not self.terminations.get(agent, True) \
            else 0
        # Equal to encoding.observation(game, seat) and bits_to_array(legal), in new arrays (never shared with
        # an earlier or later observation, as PettingZoo's classic envs), from the compiled core.
        obs = np.empty(self._obs_size, dtype=np.float32)
        mask = np.empty(self._n_actions, dtype=np.int8)
        rules_core.observe_masked(st, self._table, seat, legal, obs, mask)
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        """Omniscient state vector, float32 ``(state_size,)`` (see :mod:`schnapsen_env.encoding`): the values of
        :func:`schnapsen_env.encoding.state_vector`, from the compiled state."""
        self._check_reset()
        game = self._game
        st = self._st if game is None else self._mirror.sync(game)
        out = np.empty(self.state_space.shape[0], dtype=np.float32)
        rules_core.state_vector(st, self._table, out)
        return out

    def position(self) -> dict[str, Any]:
        """The engine's position dict of the current hand (with ``points``, ``tricks``, ``result``)."""
        return self._require_reset().position()

    # ------------------------------------------------------------------ render
    def render(self) -> str | None:
        """Text table seen by the agent to move (``render_reveal`` shows hidden cards)."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        game = self._require_reset()
        viewer = seat_of(self.agent_selection, "agent")
        text = render_text(game, viewer, reveal=self.render_reveal)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass
