"""Train one shared masked policy for both seats with TorchRL's PPO on the PettingZoo AEC env, then measure it.

    python examples/torchrl_pettingzoo.py --steps 20480 --eval-hands 1000

TorchRL's own ``PettingZooWrapper`` wraps ``schnapsen_v0.env()`` with ``use_mask=True`` (required for AEC envs)
and both seats in one group, ``"agents"`` (``MarlGroupMapType.ALL_IN_ONE_GROUP``), so a single network plays
both sides (self-play). Every step carries both seats' observations; ``("agents", "mask")`` marks the seat that
acts (the same seat often acts twice in a row: a marriage then its card, or the trick winner leading) and
``("agents", "action_mask")`` holds that seat's legal actions (all ones for the idle seat). The actor samples from
a ``MaskedCategorical``, so only legal actions are ever chosen, and ``ClipPPOLoss.loss_mask_key`` restricts the
loss to the acting seat. With ``gamma = lmbda = 1`` and rewards only at the end of a hand, GAE's advantage is the
hand's result minus the critic's estimate, so the idle seat's values in between cancel out.

At the end the trained policy (greedy over legal actions) plays ``--eval-hands`` hands against
``agents.scripted.random_agent.RandomAgent`` on the plain AEC env (each deal twice, once from each seat), and the script
reports the mean game points per hand and the number of illegal actions it chose (always 0).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from aec_evaluation import evaluate_vs_random
from tensordict.nn import TensorDictModule
from torchrl.collectors import Collector
from torchrl.envs import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor
from torchrl.objectives import ClipPPOLoss, ValueEstimators

from schnapsen_env import schnapsen_v0

OBS = ("agents", "observation", "observation")  # the Dict space minus "action_mask", which the wrapper moves:
LEGAL = ("agents", "action_mask")               # legal actions of the acting seat
ACTING = ("agents", "mask")                     # which seat acts at this step
ACTION, LOGP, VALUE = ("agents", "action"), ("agents", "action_log_prob"), ("agents", "state_value")


def make_env(seed: int) -> PettingZooWrapper:
    with warnings.catch_warnings():  # "tested with PettingZoo 1.24.3"; 1.27 works
        warnings.simplefilter("ignore", UserWarning)
        return PettingZooWrapper(schnapsen_v0.without_infos(schnapsen_v0.env()), use_mask=True, seed=seed,
                                 group_map=MarlGroupMapType.ALL_IN_ONE_GROUP, categorical_actions=True)


def build(obs_size: int, n_actions: int, hidden: int = 128) -> tuple[ProbabilisticActor, TensorDictModule]:
    """Actor (logits -> MaskedCategorical over legal actions) and critic, each an MLP shared by both seats."""
    logits = TensorDictModule(MLP(in_features=obs_size, out_features=n_actions, num_cells=[hidden, hidden]),
                              in_keys=[OBS], out_keys=[("agents", "logits")])
    actor = ProbabilisticActor(logits, in_keys={"logits": ("agents", "logits"), "mask": LEGAL}, out_keys=[ACTION],
                               distribution_class=MaskedCategorical, return_log_prob=True, log_prob_key=LOGP)
    critic = TensorDictModule(MLP(in_features=obs_size, out_features=1, num_cells=[hidden, hidden]),
                              in_keys=[OBS], out_keys=[VALUE])
    return actor, critic


def train(steps: int, seed: int, batch: int = 1024, epochs: int = 4, minibatch: int = 256) -> ProbabilisticActor:
    """PPO self-play for ``steps`` AEC decisions (both seats count)."""
    torch.manual_seed(seed)
    env = make_env(seed)
    obs_size = env.observation_spec[OBS].shape[-1]
    actor, critic = build(obs_size, env.full_action_spec[ACTION].space.n)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01)
    loss.set_keys(action=ACTION, sample_log_prob=LOGP, value=VALUE, reward=("agents", "reward"),
                  done=("agents", "done"), terminated=("agents", "terminated"))
    loss.loss_mask_key = ACTING  # only the acting seat's step counts
    loss.make_value_estimator(ValueEstimators.GAE, gamma=1.0, lmbda=1.0)
    optim = torch.optim.Adam(loss.parameters(), lr=3e-4)
    collector = Collector(env, actor, frames_per_batch=batch, total_frames=max(steps, batch),
                          auto_register_policy_transforms=False)
    rng = np.random.default_rng(seed)
    for data in collector:
        chosen = data[LEGAL].gather(-1, data[ACTION].unsqueeze(-1)).squeeze(-1)
        assert bool(chosen[data[ACTING]].all()), "an acting seat chose an illegal action"
        with torch.no_grad():  # writes "advantage" and "value_target", shape (batch, 2 seats, 1)
            loss.value_estimator(data, params=loss.critic_network_params,
                                 target_params=loss.target_critic_network_params)
        for _ in range(epochs):
            for idx in np.array_split(rng.permutation(batch), max(1, batch // minibatch)):
                out = loss(data[torch.as_tensor(idx)])
                total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                optim.zero_grad()
                total.backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
                optim.step()
        collector.update_policy_weights_()
    collector.shutdown()
    env.close()
    return actor


def evaluate(actor: ProbabilisticActor, hands: int, seed: int) -> tuple[float, int]:
    """Mean game points per hand of the greedy policy against ``RandomAgent`` and its illegal choices (0)."""
    net = actor.module[0].module  # the logits MLP

    def choose(observation, mask):
        with torch.no_grad():
            logits = net(torch.as_tensor(observation))
        return int(torch.where(torch.as_tensor(mask), logits, -torch.inf).argmax())

    return evaluate_vs_random(choose, hands, seed)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=20_480, help="env steps (decisions of both seats) (default 20480)")
    p.add_argument("--batch", type=int, default=1024, help="steps per PPO batch (default 1024)")
    p.add_argument("--eval-hands", type=int, default=1000, help="hands in the final evaluation (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    actor = train(args.steps, args.seed, batch=args.batch, minibatch=min(256, args.batch))
    mean, illegal = evaluate(actor, args.eval_hands, seed=10_000 + args.seed)
    seconds = time.perf_counter() - t0
    print(f"TorchRL PPO self-play after {args.steps} steps vs random: {mean:+.3f} game points per hand over "
          f"{args.eval_hands} hands; illegal actions chosen: {illegal}; {seconds:.0f} s")
    return {"mean": mean, "illegal": illegal, "seconds": seconds}


if __name__ == "__main__":
    main()
