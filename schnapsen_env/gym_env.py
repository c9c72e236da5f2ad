"""Gymnasium single-agent env: the learner plays one seat, an opponent agent plays the other.

Registered as ``"schnapsen_env/Schnapsen-v0"``::

    import gymnasium, schnapsen_env
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent="random")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(int(obs["action_mask"].argmax()))

Observation and action spaces are those of the AEC env (:mod:`schnapsen_env.aec`).
``action_masks()`` returns the legal actions as a bool array, so sb3-contrib's
``MaskablePPO`` (``MultiInputPolicy``) trains on it unchanged.

Rewards: the learner's rewards of the AEC env, summed over the learner's step and the opponent's
replies (± game points at the end of a hand; see ``episode``/``reward``).
"""

from __future__ import annotations

import copy
from enum import Enum
from typing import Any

import gymnasium
import numpy as np

from schnapsen_env.aec import ILLEGAL_REWARD, raw_env
from schnapsen_env.agent_specs import Fixed, NameFactory, act_fn, build, check_options, resolve_agent
from schnapsen_env.errors import IllegalActionError
from schnapsen_env.render import render_text
from schnapsen_env.rules import PLAYERS, seat_of
from schnapsen_env.ruleset import RuleSet

SEATS = ("alternate", "random", "player_0", "player_1")


def resolve_opponent(opponent: Any, seed: int | None, rules: RuleSet,
                     options: dict | None = None) -> Any:
    """The opponent agent, from any agent spec (:mod:`schnapsen_env.agent_specs`, the forms the arena takes): a
    registered name or ``"name:key=value,..."``, a path to a ``.pt`` checkpoint, a factory, an object with
    ``act(obs)``, or a policy function ``obs -> action``; built for ``rules`` with ``seed`` (the agent contract of
    ``agents/base.py``). ``options`` (``opponent_kwargs``) add to a named agent's options.

    Raises:
        ValueError: a bad spec (the message lists the forms and the registered names), an agent that cannot play
            ``rules`` (or an agent object whose ``rules`` are another ruleset), ``options`` with an opponent that is
            not a name, or the same option given twice.
    """
    label, factory = resolve_agent(opponent, rules)
    if options:
        if not isinstance(factory, NameFactory):
            raise ValueError(f"opponent_kwargs {options!r} need an opponent given by name, got {opponent!r}")
        twice = sorted(set(options) & set(factory.kwargs))
        if twice:
            raise ValueError(f"opponent {opponent!r} and opponent_kwargs both give {twice}: expected each option once")
        check_options(factory.name, dict(options), f"{label} with opponent_kwargs {options!r}")
        factory = NameFactory(factory.name, {**factory.kwargs, **options}, rules)
    agent = build(factory, label, seed)
    own = getattr(agent, "rules", None)
    if isinstance(own, RuleSet) and own.name != rules.name:
        raise ValueError(f"the opponent agent plays {own.name}, but this env is {rules.name}: build it with the "
                         "env's rules")
    return agent


#: Values that ``copy.deepcopy`` returns as they are (immutable): :func:`_fresh_copy` keeps them too.
_ATOMIC = (str, int, float, bool, type(None), Enum)


_PLAIN = frozenset((str, int, float, bool, type(None)))


def _fresh_copy(value: Any) -> Any:
    """``copy.deepcopy(value)`` for the env's infos (dicts and lists of immutable values), several times faster:
    every dict and list is new, immutable values are kept; anything else goes through ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        out = {}
        for k, v in value.items():
            out[k] = v if type(v) in _PLAIN else _fresh_copy(v)
        return out
    if kind is list:
        return [_fresh_copy(v) for v in value]
    if isinstance(value, _ATOMIC):
        return value
    return copy.deepcopy(value)


class SchnapsenGymEnv(gymnasium.Env):
    """Single-agent Schnapsen against a fixed opponent.

    Args:
        opponent: an agent spec, as the arena takes it (:mod:`schnapsen_env.agent_specs`): a registered name
            (default ``"random"``; :mod:`schnapsen_env.agent_registry`, which this project's ``agents`` package
            fills) or ``"name:key=value,..."``, a path to a ``.pt`` checkpoint trained by ``train.py``, a factory
            (a class, or a callable taking ``seed=``), an agent with ``act(obs_dict) -> int``, or a policy
            function ``obs_dict -> int``. An opponent given as a string is built for this env's rules
            (``self.rules``: the ruleset with its knobs) and rebuilt with a seed drawn from the env's generator
            at every seeded reset. The agent (or function) is ``self.opponent``; an agent's ``reset()``, if it
            has one, is called at every reset.
        opponent_kwargs: options of a named opponent, e.g. ``{"n_samples": 4}`` for ``"pimc"``.
        seat: ``"alternate"`` (default: player_0 first, then switching every episode; a seeded reset
            starts again with player_0), ``"random"``,
            ``"player_0"`` or ``"player_1"``.
        illegal_action: ``"terminate"`` (default; the episode ends with reward -3 and
            ``info["illegal_action"] = True``, as PettingZoo's ``TerminateIllegalWrapper``) or ``"raise"``
            (:class:`IllegalActionError`, state unchanged).
        ruleset: as :class:`schnapsen_env.aec.raw_env`.
        episode: as :class:`schnapsen_env.aec.raw_env`.
        reward: as :class:`schnapsen_env.aec.raw_env`.
        render_mode: as :class:`schnapsen_env.aec.raw_env`.
        **knobs: rule knobs, as :class:`schnapsen_env.aec.raw_env`.
    """

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}

    def __init__(self, opponent: Any = "random", seat: str = "alternate", illegal_action: str = "terminate",
                 ruleset: str = "schnapsen20", episode: str = "hand", reward: str = "match",
                 render_mode: str | None = None, opponent_kwargs: dict | None = None, **knobs: Any) -> None:
        if seat not in SEATS:
            raise ValueError(f"seat must be one of {SEATS}, got {seat!r}")
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action must be 'terminate' or 'raise', got {illegal_action!r}")
        self.aec = raw_env(ruleset=ruleset, episode=episode, reward=reward, render_mode=None, **knobs)
        self.rules = self.aec.rules
        self.render_mode = render_mode
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}")
        self.observation_space = self.aec.observation_space(PLAYERS[0])
        self.action_space = self.aec.action_space(PLAYERS[0])
        self.seat_mode = seat
        self.illegal_action = illegal_action
        self._opponent_spec = opponent
        self._opponent_kwargs = dict(opponent_kwargs or {})
        self.opponent = resolve_opponent(opponent, None, self.rules, self._opponent_kwargs)
        self._reseed = not isinstance(resolve_agent(opponent, self.rules)[1], Fixed)  # an object is used as it is
        self._opponent = act_fn(self.opponent)
        self._episodes = 0
        self.learner = PLAYERS[0]
        self._done = True

    @property
    def action_names(self) -> list[str]:
        return self.aec.action_names

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode; returns ``(observation_dict, info)``. ``options`` as the AEC env's reset."""
        # A failed reset (bad options) must leave the env as it was: keep the old generator and counters.
        saved = (self._np_random, self._np_random_seed, self._episodes, self.learner)
        try:
            super().reset(seed=seed)
            episodes = 0 if seed is not None else self._episodes  # a seeded reset replays the same seats
            aec_seed = int(self.np_random.integers(2**63)) if seed is not None else None
            opponent = self.opponent
            if seed is not None and self._reseed:  # a name, a checkpoint or a factory: rebuilt with a drawn seed
                opponent = resolve_opponent(self._opponent_spec, int(self.np_random.integers(2**31)), self.rules,
                                            self._opponent_kwargs)
            if self.seat_mode == "alternate":
                learner = PLAYERS[episodes % 2]
            elif self.seat_mode == "random":
                learner = PLAYERS[int(self.np_random.integers(2))]
            else:
                learner = self.seat_mode
            if aec_seed is None and not self.aec.has_hand:
                aec_seed = int(self.np_random.integers(2**63))
            self.aec.reset(seed=aec_seed, options=options)
        except BaseException:
            self._np_random, self._np_random_seed, self._episodes, self.learner = saved
            raise
        self.opponent, self._opponent = opponent, act_fn(opponent)
        if callable(getattr(opponent, "reset", None)):
            opponent.reset()
        self.learner = learner
        self._episodes = episodes + 1
        self._done = False
        reward = self._play_opponent()
        obs = self.aec.observe(self.learner)
        return obs, self._info(reward_before_first_move=reward)

    def _play_opponent(self) -> float:
        """Let the opponent move until the learner is to move or the episode ends; learner's reward."""
        aec = self.aec
        reward = 0.0
        while not aec.terminations[self.learner] and aec.agent_selection != self.learner:
            opp = aec.agent_selection
            obs = aec.observe(opp)
            try:
                action = self._opponent(obs)
            except BaseException:
                self._done = True  # the learner's move is already played: this episode cannot go on
                raise
            if not (isinstance(action, (int, np.integer)) and not isinstance(action, bool)
                    and 0 <= action < len(obs["action_mask"]) and obs["action_mask"][action]):
                self._done = True  # the learner's move is already played: this episode cannot go on
                raise IllegalActionError(
                    f"the opponent returned {action!r}, not a legal action id for {opp} (legal: "
                    f"{[self.action_names[i] for i in np.flatnonzero(obs['action_mask'])]}); the episode is "
                    "aborted, call reset()")
            aec.step(int(action))
            reward += aec.rewards[self.learner]
        return reward

    def step(self, action: int):
        """Apply the learner's action, then the opponent's replies.

        Returns:
            ``(observation_dict, reward, terminated, truncated, info)``; ``info`` carries the public
            scores and, at the end, ``result``.

        Raises:
            RuntimeError: called after the episode ended without reset.
            IllegalActionError: an illegal action under ``illegal_action="raise"``.
        """
        if self._done:
            raise RuntimeError("episode is over: call reset()")
        aec = self.aec
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and action.dtype.kind in "iu":
            action = int(action.reshape(-1)[0])  # what model.predict returns
        if not isinstance(action, (int, np.integer)) or isinstance(action, (bool, np.bool_)):
            raise IllegalActionError(f"action must be an int action id, got {action!r} ({type(action).__name__})")
        try:
            aec.step(int(action))
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._done = True
            info = self._info()
            info["illegal_action"] = True
            obs = aec.observe(self.learner)
            obs["action_mask"][:] = 0  # the episode is over: nothing is legal
            return obs, float(ILLEGAL_REWARD), True, False, info
        reward = float(aec.rewards[self.learner])
        reward += self._play_opponent()
        terminated = bool(aec.terminations[self.learner])
        self._done = terminated
        if self.render_mode == "human":
            self.render()
        return aec.observe(self.learner), reward, terminated, False, self._info()

    def _info(self, **extra: Any) -> dict:
        info = _fresh_copy(self.aec.infos[self.learner])  # callers keep infos: never share objects
        info["learner"] = self.learner
        info.update(extra)
        return info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner as a bool array of shape ``(n_actions,)`` (sb3-contrib); all False once the
        episode is over (also when an illegal action ended it, leaving the hand unfinished)."""
        mask = self.aec.observe(self.learner)["action_mask"].astype(bool)
        if self._done:
            mask[:] = False
        return mask

    # gymnasium types Env.render() -> RenderFrame | list[RenderFrame] | None with a TypeVar bound to no argument,
    # which no concrete return type overrides for mypy; this env renders text (render_mode "ansi")
    def render(self) -> str | None:  # type: ignore[override]
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        game = self.aec.game
        if game is None:
            raise RuntimeError("call reset() before render()")
        text = render_text(game, seat_of(self.learner, "learner"), reveal=self.aec.render_reveal)
        if self.render_mode == "human":
            print(text)
            return None
        return text
