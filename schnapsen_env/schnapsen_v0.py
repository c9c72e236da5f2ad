"""Public PettingZoo module ``schnapsen_v0`` (API.md): ``env()`` and ``raw_env()``.

Usage, PettingZoo's usual loop::

    from schnapsen_env import schnapsen_v0
    env = schnapsen_v0.env(ruleset="schnapsen20")
    env.reset(seed=42)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        if termination or truncation:
            action = None
        else:
            mask = observation["action_mask"]
            action = env.action_space(agent).sample(mask)
        env.step(action)

For TorchRL's and Tianshou's PettingZoo wrappers, which cannot store this env's nested info dicts, use
``without_infos(env())``.

See :mod:`schnapsen_env.aec` for the full spec table.
"""

from schnapsen_env.aec import ILLEGAL_REWARD, env, raw_env, without_infos

__all__ = ["ILLEGAL_REWARD", "env", "raw_env", "without_infos"]
