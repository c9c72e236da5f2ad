"""Train sb3-contrib's MaskablePPO on the Gymnasium env against a fixed opponent, then measure it.

    python examples/sb3_maskable_ppo.py --timesteps 200000 --opponent heuristic

The Gymnasium env's ``action_masks()`` is what MaskablePPO reads, so no wrapper is needed. The learner
alternates seats every hand; its observation is the dict ``{"observation", "action_mask"}``, hence
``MultiInputPolicy``. At the end the trained model plays ``--eval-hands`` hands against the opponent and the
script reports the mean game points per hand and checks that every action it chose was legal.
"""

from __future__ import annotations

import argparse

import gymnasium
from sb3_contrib import MaskablePPO

import schnapsen_env  # noqa: F401  (registers "schnapsen_env/Schnapsen-v0")


def evaluate(model, opponent: str, hands: int, seed: int) -> tuple[float, int]:
    """Mean game points per hand of ``model`` against ``opponent`` and the number of illegal choices (0)."""
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=opponent, illegal_action="raise")
    total, illegal = 0.0, 0
    for hand in range(hands):
        obs, _ = env.reset(seed=seed + hand)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            action, _ = model.predict(obs, action_masks=mask, deterministic=True)
            illegal += int(not mask[int(action)])
            obs, reward, done, _, _ = env.step(int(action))
            total += reward
    return total / hands, illegal


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--timesteps", type=int, default=200_000, help="learner steps (default: %(default)s)")
    p.add_argument("--opponent", default="random", help="agent name for the other seat (default random)")
    p.add_argument("--eval-hands", type=int, default=200, help="hands in the final evaluation (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    env = gymnasium.make("schnapsen_env/Schnapsen-v0", opponent=args.opponent)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=512, batch_size=128, seed=args.seed, verbose=0)
    model.learn(total_timesteps=args.timesteps)
    mean, illegal = evaluate(model, args.opponent, args.eval_hands, seed=10_000 + args.seed)
    print(f"MaskablePPO after {args.timesteps} steps vs {args.opponent}: {mean:+.3f} game points per hand over "
          f"{args.eval_hands} hands; illegal actions chosen: {illegal}")
    return {"mean": mean, "illegal": illegal}


if __name__ == "__main__":
    main()
