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
from typing import Any, Callable

import gymnasium
import numpy as np

from schnapsen_env.aec import ILLEGAL_REWARD, raw_env
from schnapsen_env.errors import IllegalActionError
from schnapsen_env.rules import PLAYERS, seat_of

SEATS = ("alternate", "random", "player_0", "player_1")


def resolve_opponent(opponent: Any, seed: int | None) -> Callable[[dict], int]:
    """An agent name (see ``agents.agent_names()``), an object with ``act(obs)``, or a callable.

    Raises:
        ValueError: an unknown agent name (the message lists the valid ones) or an unusable object.
    """
    if isinstance(opponent, str):
        from agents import make_agent  # the agents package; imported lazily

        return make_agent(opponent, seed=seed).act
    if hasattr(opponent, "act") and callable(opponent.act):
        return opponent.act
    if callable(opponent):
        return opponent
    raise ValueError(f"opponent must be an agent name, an object with act(observation) or a callable, "
                     f"got {opponent!r}")


class SchnapsenGymEnv(gymnasium.Env):
    """Single-agent Schnapsen against a fixed opponent.

    Args:
        opponent: agent name (default ``"random"``), an agent with ``act(obs_dict) -> int``, or a callable.
            A named opponent is rebuilt with a seed drawn from the env's generator at every seeded reset.
        seat: ``"alternate"`` (default: player_0 first, then switching every episode; a seeded reset
            starts again with player_0), ``"random"``,
            ``"player_0"`` or ``"player_1"``.
        illegal_action: ``"terminate"`` (default; the episode ends with reward -3 and
            ``info["illegal_action"] = True``, as PettingZoo's ``TerminateIllegalWrapper``) or ``"raise"``
            (:class:`IllegalActionError`, state unchanged).
        ruleset, episode, reward, render_mode, **knobs: as :class:`schnapsen_env.aec.raw_env`.
    """

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}

    def __init__(self, opponent: Any = "random", seat: str = "alternate", illegal_action: str = "terminate",
                 ruleset: str = "schnapsen20", episode: str = "hand", reward: str = "match",
                 render_mode: str | None = None, **knobs: Any) -> None:
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
        self._opponent = resolve_opponent(opponent, None)
        self._episodes = 0
        self.learner = PLAYERS[0]
        self._done = True

    @property
    def action_names(self) -> list[str]:
        return self.aec.action_names

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode; returns ``(observation_dict, info)``. ``options`` as the AEC env's reset."""
        super().reset(seed=seed)
        if seed is not None:
            self._episodes = 0  # a seeded reset replays the same seats, so seeded runs repeat exactly
        aec_seed = int(self.np_random.integers(2**63)) if seed is not None else None
        if seed is not None and isinstance(self._opponent_spec, str):
            self._opponent = resolve_opponent(self._opponent_spec, int(self.np_random.integers(2**31)))
        if self.seat_mode == "alternate":
            self.learner = PLAYERS[self._episodes % 2]
        elif self.seat_mode == "random":
            self.learner = PLAYERS[int(self.np_random.integers(2))]
        else:
            self.learner = self.seat_mode
        self._episodes += 1
        if aec_seed is None and not hasattr(self, "_seeded_once"):
            aec_seed = int(self.np_random.integers(2**63))
        self._seeded_once = True
        self.aec.reset(seed=aec_seed, options=options)
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
            aec.step(int(self._opponent(aec.observe(opp))))
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
        try:
            aec.step(int(action))
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._done = True
            info = self._info()
            info["illegal_action"] = True
            return aec.observe(self.learner), float(ILLEGAL_REWARD), True, False, info
        reward = float(aec.rewards[self.learner])
        reward += self._play_opponent()
        terminated = bool(aec.terminations[self.learner])
        self._done = terminated
        if self.render_mode == "human":
            self.render()
        return aec.observe(self.learner), reward, terminated, False, self._info()

    def _info(self, **extra: Any) -> dict:
        info = copy.deepcopy(self.aec.infos[self.learner])  # callers keep infos: never share objects
        info["learner"] = self.learner
        info.update(extra)
        return info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner as a bool array of shape ``(n_actions,)`` (sb3-contrib)."""
        return self.aec.observe(self.learner)["action_mask"].astype(bool)

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        from schnapsen_env.render import render_text

        text = render_text(self.aec.game, seat_of(self.learner, "learner"),
                           reveal=self.aec.render_reveal)
        if self.render_mode == "human":
            print(text)
            return None
        return text
