"""Shared by the PettingZoo examples: a greedy policy against ``RandomAgent`` on the plain AEC env.

Every deal is played twice (same cards and dealer), once from each seat; the policy's chosen actions are
checked against the action mask.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents.scripted.random_agent import RandomAgent
from schnapsen_env import schnapsen_v0


def evaluate_vs_random(choose: Callable[[np.ndarray, np.ndarray], int], hands: int,
                       seed: int) -> tuple[float, int]:
    """Mean game points per hand of ``choose`` and the number of illegal actions it chose (0 for a masked policy).

    Args:
        choose: ``(observation float32 (obs_size,), mask bool (n_actions,)) -> action``.
        hands: hands to play (``hands // 2`` deals, each from both seats).
        seed: seeds the deals and the opponent.
    """
    env = schnapsen_v0.env()
    opponent = RandomAgent(rules=env.unwrapped.rules, seed=seed)
    total, illegal = 0.0, 0
    for hand in range(hands):
        env.reset(seed=seed + hand // 2)  # every deal twice (same cards and dealer), once from each seat
        learner = env.possible_agents[hand % 2]
        for agent in env.agent_iter():
            obs, reward, termination, truncation, _ = env.last()
            if agent == learner:
                total += reward  # hand episodes pay only at the end, through this last() of the learner
            if termination or truncation:
                action = None
            elif agent == learner:
                mask = obs["action_mask"].astype(bool)
                action = int(choose(obs["observation"], mask))
                illegal += int(not mask[action])
            else:
                action = opponent.act(obs)
            env.step(action)
    return total / hands, illegal
