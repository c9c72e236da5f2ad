"""Ray RLlib pieces for ``train_rllib.py`` (optional extra ``rllib``).

* :class:`MaskedActorCriticModule`: an RLlib ``TorchRLModule`` (new API stack) around the project's
  :class:`agents.learned.policy_net.ActorCritic`, so that the weights RLlib learns are the very network that
  :class:`agents.learned.policy.PolicyAgent` loads. Illegal actions get the logit ``FLOAT_MIN``
  (about ``-3.4e38``, RLlib's ``-inf`` stand-in that keeps its KL and entropy terms finite), so their
  probability is exactly 0 whenever at least one action is legal (masked logits, not penalties).
* :func:`make_env`: the PettingZoo AEC env ``schnapsen_v0`` seen through RLlib's own
  ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``; observations keep the PettingZoo keys
  ``{"observation": float32 (obs_size,), "action_mask": int8 (n_actions,)}``. The env refuses an illegal
  action with :class:`schnapsen_env.IllegalActionError` instead of ending the hand, so a masking bug
  fails training loudly.
* :func:`make_policy_mapping_fn`: one shared module ``"main"`` for both seats, and in a share of the hands one
  seat played by a frozen earlier snapshot (``"opponent_<k>"``) or the scripted heuristic (``"heuristic"``).
* :func:`load_rllib_policy`: a thin adapter from an RLlib checkpoint folder to :class:`PolicyAgent`
  (``train_rllib.py`` also writes ``policy.pt``, the project's format, which ``PolicyAgent.load`` reads).

Importing this module imports Ray; the core package never does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN

from agents.learned.checkpoint import CheckpointError
from agents.learned.policy import PolicyAgent
from agents.learned.policy_net import ActorCritic
from agents.scripted.heuristic import HeuristicAgent
from schnapsen_env import IllegalActionError, RuleSet, schnapsen_v0
from schnapsen_env.encoding import layout_signature

MAIN = "main"
"""Module id of the trained policy."""
HEURISTIC = "heuristic"
"""Module id of the scripted heuristic opponent."""


def opponent_id(k: int) -> str:
    """Module id of opponent-pool slot ``k`` (frozen snapshots of ``"main"``)."""
    return f"opponent_{k}"


class MaskedActorCriticModule(TorchRLModule, ValueFunctionAPI):
    """PPO RLModule over dict observations ``{"observation", "action_mask"}``.

    ``model_config`` keys: ``hidden`` (int, default 256), ``layers`` (int, default 2). The observation and
    action sizes come from the spaces (255 / 27 for schnapsen20, 299 / 31 for sixtysix24).

    Outputs: ``action_dist_inputs`` float32 ``(B, n_actions)`` with ``FLOAT_MIN`` on illegal actions;
    :meth:`compute_values` float32 ``(B,)`` in game points.
    """

    def setup(self) -> None:
        cfg = dict(self.model_config or {})
        obs_size = int(self.observation_space["observation"].shape[0])
        self.net = ActorCritic(obs_size, int(self.action_space.n), hidden=int(cfg.get("hidden", 256)),
                               layers=int(cfg.get("layers", 2)))

    @staticmethod
    def _split(batch: dict[str, Any]):
        obs = batch[Columns.OBS]
        return obs["observation"].float(), obs["action_mask"]

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        x, mask = self._split(batch)
        h = self.net.trunk(x)
        logits = self.net.policy(h).masked_fill(mask == 0, FLOAT_MIN)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: h}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            x, _ = self._split(batch)
            embeddings = self.net.trunk(x)
        return self.net.critic_net(embeddings).squeeze(-1)


class HeuristicModule(RLModule):
    """The scripted :class:`agents.scripted.heuristic.HeuristicAgent` as a frozen RLlib module (an opponent).

    It has no weights and is not a torch module, so the PPO learner leaves it alone; it returns actions
    directly (int64 ``(B,)``), each legal by construction. ``model_config``: ``rules`` (required: the env's
    ``RuleSet.to_dict()``, or a ruleset name; the agent contract of :mod:`agents.base`) and ``seed`` (int, default 0)
    for the heuristic's tie breaks.
    """

    def setup(self) -> None:
        cfg = dict(self.model_config or {})
        rules = cfg.get("rules")
        if isinstance(rules, dict):
            rules = RuleSet.from_dict(rules)
        self.agent = HeuristicAgent(rules=rules, seed=int(cfg.get("seed", 0)))

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        xs, ms = (np.asarray(obs[k].detach().cpu().numpy() if hasattr(obs[k], "detach") else obs[k])
                  for k in ("observation", "action_mask"))
        return {Columns.ACTIONS: self.agent.act_batch(xs, ms)}

    def _forward_train(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        raise RuntimeError("HeuristicModule is not trainable: keep it out of policies_to_train")


class _StrictSchnapsenEnv(PettingZooEnv):
    """RLlib's PettingZoo wrapper, refusing illegal actions instead of ending the hand with a penalty."""

    def step(self, action):
        if not self.env.agents:
            raise ValueError("the hand is over: call reset() before step()")
        agent = self.env.agent_selection
        if not isinstance(action, dict) or agent not in action:
            got = sorted(action) if isinstance(action, dict) else repr(action)
            raise ValueError(f"expected a dict with an action for {agent!r}, the agent to act; got {got}")
        a = action[agent]
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
            raise ValueError(f"the action for {agent!r} must be an int, got {a!r}")
        a = int(a)
        mask = self.env.observe(agent)["action_mask"]
        if not (0 <= a < len(mask)) or not mask[a]:
            raise IllegalActionError(f"RLlib chose illegal action {a} for {agent}; legal: "
                                     f"{[i for i in range(len(mask)) if mask[i]]}")
        return super().step(action)


ENV_CONFIG_KEYS = ("ruleset", "episode", "rules")


def make_env(config: dict | None = None) -> PettingZooEnv:
    """Env creator for ``tune.register_env``: ``config`` keys ``ruleset`` (default "schnapsen20"), ``rules`` (a
    ``RuleSet.to_dict()``, knobs included; instead of ``ruleset``) and ``episode`` ("hand", default, or "match").
    RLlib's own keys in an ``EnvContext`` (worker and vector indices) are ignored.

    Raises:
        ValueError: an unknown key in ``config``, both ``ruleset`` and ``rules``; RulesError: an unknown ruleset
            or knob.
    """
    config = dict(config or {})
    unknown = sorted(set(config) - set(ENV_CONFIG_KEYS))
    if unknown:
        raise ValueError(f"unknown env_config key(s) {unknown}: expected some of {list(ENV_CONFIG_KEYS)}")
    if "rules" in config and "ruleset" in config:
        raise ValueError("env_config has both 'ruleset' and 'rules': expected one of them")
    rules = RuleSet.from_dict(config["rules"]) if "rules" in config else RuleSet.make(config.get("ruleset",
                                                                                                "schnapsen20"))
    knobs = {k: v for k, v in rules.to_dict().items() if k != "ruleset"}
    raw = schnapsen_v0.raw_env(ruleset=rules.name, episode=config.get("episode", "hand"), **knobs)
    return _StrictSchnapsenEnv(raw)


def make_policy_mapping_fn(pool_size: int, pool_prob: float, heuristic_prob: float = 0.0, seed: int = 0):
    """``policy_mapping_fn(agent_id, episode)`` for one shared policy plus an opponent pool.

    Per hand: with probability ``pool_prob`` one seat is played by opponent slot ``k`` (uniform), with
    probability ``heuristic_prob`` by the scripted heuristic (:data:`HEURISTIC`), otherwise both seats are
    ``"main"`` (self-play). The opponent's seat is uniform. The draws come from a ``numpy.random.Generator``
    seeded with ``seed``, one triple per new episode in the order the env runner starts them (RLlib's episode
    ids are random UUIDs, so they cannot be the source), and are remembered per episode id so that both
    seats of a hand see the same draw.
    """
    rng = np.random.default_rng(seed)
    draws: dict[str, tuple[float, float, float]] = {}

    def policy_mapping_fn(agent_id, episode, **kwargs):
        eid = str(getattr(episode, "id_", episode))
        draw = draws.get(eid)
        if draw is None:
            draw = draws[eid] = tuple(float(x) for x in rng.random(3))
            if len(draws) > 100_000:  # episodes are mapped when they start; old ones are not asked again
                draws.pop(next(iter(draws)))
        u_kind, u_slot, u_seat = draw
        if u_kind < pool_prob and pool_size > 0:
            opp = opponent_id(min(pool_size - 1, int(u_slot * pool_size)))
        elif pool_prob <= u_kind < pool_prob + heuristic_prob:
            opp = HEURISTIC
        else:
            return MAIN
        opp_seat = "player_0" if u_seat < 0.5 else "player_1"
        return opp if agent_id == opp_seat else MAIN

    return policy_mapping_fn


def load_rllib_policy(checkpoint_dir: str | os.PathLike, ruleset: str = "schnapsen20", module_id: str = MAIN,
                      greedy: bool = True, seed: int | None = None) -> PolicyAgent:
    """A :class:`PolicyAgent` from an RLlib algorithm checkpoint folder (``algo.save_to_path``).

    RLlib checkpoints are pickles (not ``weights_only``): load only checkpoints you trust. For sharing, use the
    ``policy.pt`` that ``train_rllib.py`` writes beside it.

    Raises:
        CheckpointError: the folder has no RLModule ``module_id``, it cannot be read, or it is not a
            :class:`MaskedActorCriticModule` for ``ruleset``.
        RulesError: an unknown ``ruleset``.
    """
    rules = RuleSet.make(ruleset)
    if not (isinstance(module_id, str) and module_id.replace("_", "").isalnum()):
        raise CheckpointError(f"module_id must be a module name such as 'main' or 'opponent_0', got {module_id!r}")
    sub = Path(checkpoint_dir).resolve() / "learner_group" / "learner" / "rl_module" / module_id
    if not sub.is_dir():
        raise CheckpointError(f"{str(checkpoint_dir)!r} is not an RLlib checkpoint with module {module_id!r} "
                              f"(expected the folder {str(sub)!r})")
    try:
        module = RLModule.from_checkpoint(str(sub))
    except Exception as e:  # RLlib raises whatever its unpickling and file reading raise
        raise CheckpointError(f"cannot load RLlib module {module_id!r} from {str(checkpoint_dir)!r}: "
                              f"{type(e).__name__}: {e}") from None
    if not isinstance(module, MaskedActorCriticModule):
        raise CheckpointError(f"module {module_id!r} in {str(checkpoint_dir)!r} is a {type(module).__name__}, "
                              "expected a MaskedActorCriticModule")
    net = module.net
    sig = layout_signature(rules)
    if net.obs_size != sig["obs_size"] or net.n_actions != rules.n_actions:
        raise CheckpointError(f"module {module_id!r} has obs_size {net.obs_size} / n_actions {net.n_actions}; "
                              f"{ruleset} needs {sig['obs_size']} / {rules.n_actions}")
    model = ActorCritic(**net.config())
    model.load_state_dict(net.state_dict())
    model.eval()
    return PolicyAgent(model, rules, greedy=greedy, seed=seed)
