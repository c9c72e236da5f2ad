"""Whole hands and episodes played for the tests that need some play rather than a chosen position: seeded random
records, the observation of the player to move, positions of random play (observations and masks), random play of an AEC episode with its rewards added up, and an agent playing hands with legal actions
only."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from schnapsen_env import RuleSet, encoding, schnapsen_v0
from schnapsen_env.records import Recorder


def obs_of(g) -> dict:
    """The env's observation dict of the player to move in the ``GameState`` ``g``."""
    return {"observation": encoding.observation(g, g.to_move), "action_mask": g.action_mask()}


def random_positions(rules: RuleSet, n: int, rng: np.random.Generator):
    """``n`` positions of random play (0 to 8 random actions into a new hand, hands that ended skipped): the
    observations of the player to move, float32 ``(n, obs_size)``, and their action masks, bool ``(n, n_actions)``,
    as torch tensors."""
    import torch

    from schnapsen_env import GameState

    obs, masks = [], []
    while len(obs) < n:
        hand = GameState.new_hand(rules, rng)
        for _ in range(int(rng.integers(0, 9))):
            if hand.result is None:
                hand.step(int(rng.choice(np.flatnonzero(hand.action_mask()))))
        if hand.result is None:
            obs.append(encoding.observation(hand, hand.to_move))
            masks.append(hand.action_mask())
    return torch.from_numpy(np.stack(obs)), torch.from_numpy(np.stack(masks)).bool()


def random_records(n: int, seed: int = 0) -> list:
    """``n`` finished ``schnapsen20`` hands of uniformly random legal play, as records (seeded)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        rec = Recorder.deal(RuleSet.make(), rng)
        while rec.state.result is None:
            legal = rec.state.legal_actions()
            rec.step(legal[int(rng.integers(len(legal)))])
        out.append(rec.record())
    return out


def random_episode(env, rng: np.random.Generator, after_step: Callable[[object], None] | None = None) -> dict:
    """Play the reset AEC ``env`` to the end of its episode with uniformly random legal actions; each agent's
    rewards added up. ``after_step(env)`` runs after every step."""
    total = dict.fromkeys(env.possible_agents, 0)
    while not all(env.terminations.values()):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        for a in total:
            total[a] += env.rewards[a]
        if after_step is not None:
            after_step(env)
    return total


def assert_legal_hands(agent, hands: int, env=None) -> None:
    """``agent`` plays both seats of ``hands`` hands (seeds 0, 1, ...) of ``env`` (default: ``raw_env()``), every
    action it picks legal."""
    env = schnapsen_v0.raw_env() if env is None else env
    for hand in range(hands):
        env.reset(seed=hand)
        while not all(env.terminations.values()):
            obs = env.observe(env.agent_selection)
            a = agent.act(obs)
            assert obs["action_mask"][a] == 1
            env.step(a)


def redeal(g, order: list[int]):
    """The hand ``g`` dealt from the card ids ``order`` (``g.deal``'s layout, same dealer) with ``g``'s actions
    replayed, or None where one of them is not legal there (for tests that swap cards a player never saw)."""
    from schnapsen_env.rules import GameState

    other = GameState.from_deck(g.rules, [g.rules.deck.codes[c] for c in order], g.deal[1])
    for a in g.actions:
        if not other.is_legal(a):
            return None
        other.push(a)
    return other
