"""Train a masked DQN with Tianshou 2.x on the PettingZoo AEC env against a random opponent, then measure it.

    python examples/tianshou_pettingzoo.py --steps 30000 --eval-hands 1000

``tianshou.env.PettingZooEnv`` wraps ``schnapsen_v0.env()``: each observation becomes ``{"agent_id", "obs",
"mask"}`` for the player to move, and the reward is the vector of both seats' rewards. In Tianshou 2.x the
multi-agent "policy manager" is an algorithm: ``MultiAgentOffPolicyAlgorithm`` dispatches every transition by
``obs.agent_id`` to a ``DQN`` (``player_0``, the learner) or to ``MARLRandomDiscreteMaskedOffPolicyAlgorithm``
(``player_1``, uniform over the legal actions). Tianshou's discrete Q policy reads ``obs.mask`` both for its
greedy action and for epsilon-greedy exploration, so only legal actions are chosen.

The replay buffer holds both seats' transitions in play order, and the seat to move does not simply alternate
(the trick winner leads; a marriage or an exchange is followed by the same seat's next action), so the learner's
next transition is not one step later and the final reward often lands on the opponent's transition. Hence
``gamma = 1`` and an n-step horizon longer than any hand: every target is the learner's game points at the end
of the hand (a Monte Carlo return, read from the learner's column of the reward vector), and the Q network never
bootstraps from the opponent's observation.

At the end the greedy policy plays ``--eval-hands`` hands against ``agents.scripted.random_agent.RandomAgent`` on the plain
AEC env (each deal twice, once from each seat), and the script reports the mean game points per hand and the
number of illegal actions it chose (always 0).
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np
import torch
from aec_evaluation import evaluate_vs_random
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from schnapsen_env import schnapsen_v0

#: More AEC steps than any schnapsen20 hand has (10 tricks = 20 cards, plus at most 4 marriages, an exchange,
#: a close and a claim), so every n-step return reaches the end of the hand.
HAND_HORIZON = 32


def make_env() -> PettingZooEnv:
    return PettingZooEnv(schnapsen_v0.without_infos(schnapsen_v0.env()))


def build(env: PettingZooEnv, lr: float = 1e-3) -> tuple[MultiAgentOffPolicyAlgorithm, DiscreteQLearningPolicy]:
    obs_size = env.observation_space["observation"].shape[0]
    net = Net(state_shape=obs_size, action_shape=env.action_space.n, hidden_sizes=[128, 128])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.3, eps_inference=0.0)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=lr), gamma=1.0,
                  n_step_return_horizon=HAND_HORIZON, target_update_freq=0)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    # one algorithm per agent, in the order of env.agents: ["player_0", "player_1"]
    return MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env), policy


def train(steps: int, seed: int, n_envs: int = 4) -> DiscreteQLearningPolicy:
    """``steps`` env steps (decisions of both seats) of DQN for ``player_0`` against the random ``player_1``."""
    # the collector summarises the (episodes, 2) return vectors and warns that it flattens them, every step
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    np.random.seed(seed)  # Tianshou's epsilon-greedy and the random opponent use numpy's global generator
    torch.manual_seed(seed)
    envs = DummyVectorEnv([make_env for _ in range(n_envs)])  # in this process, stepped one after another
    envs.seed(seed)  # env i: reset(seed=seed + i)
    algorithm, policy = build(make_env())
    collector = Collector[CollectStats](algorithm, envs, VectorReplayBuffer(20_000, n_envs), exploration_noise=True)
    collector.reset()

    def decay_eps(epoch: int, env_step: int) -> None:  # 0.3 -> 0.05 over the first half of training
        policy.set_eps_training(0.3 - 0.25 * min(1.0, env_step / max(1, steps // 2)))

    algorithm.run_training(OffPolicyTrainerParams(
        training_collector=collector, max_epochs=1, epoch_num_steps=steps, collection_step_num_env_steps=64,
        batch_size=128, update_step_num_gradient_steps_per_sample=0.25, training_fn=decay_eps,
        multi_agent_return_reduction=lambda returns: returns[:, 0], verbose=False, show_progress=False))
    stored = collector.buffer[collector.buffer.sample_indices(0)]  # every transition still in the buffer
    mine = stored.obs.agent_id == "player_0"
    assert mine.any() and stored.obs.mask[mine, stored.act[mine]].all(), "the learner chose an illegal action"
    envs.close()
    return policy


def evaluate(policy: DiscreteQLearningPolicy, hands: int, seed: int) -> tuple[float, int]:
    """Mean game points per hand of the greedy policy against ``RandomAgent`` and its illegal choices (0)."""
    policy.eval()

    def choose(observation, mask):
        batch = Batch(obs=Batch(obs=observation[None], mask=mask[None]), info=Batch())
        with torch.no_grad():
            return int(policy(batch).act[0])

    return evaluate_vs_random(choose, hands, seed)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=30_000, help="env steps (decisions of both seats) (default 30000)")
    p.add_argument("--eval-hands", type=int, default=1000, help="hands in the final evaluation (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    policy = train(args.steps, args.seed)
    mean, illegal = evaluate(policy, args.eval_hands, seed=10_000 + args.seed)
    seconds = time.perf_counter() - t0
    print(f"Tianshou DQN after {args.steps} steps vs random: {mean:+.3f} game points per hand over "
          f"{args.eval_hands} hands; illegal actions chosen: {illegal}; {seconds:.0f} s")
    return {"mean": mean, "illegal": illegal, "seconds": seconds}


if __name__ == "__main__":
    main()
