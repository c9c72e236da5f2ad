"""``PolicyAgent``: plays a policy trained by ``train.py``.

Loads a checkpoint (weights plus the network config, rules and observation layout) with
``torch.load(weights_only=True)`` and acts greedily (default) or by sampling from the masked
distribution. A checkpoint made under another ruleset or observation layout is refused.
"""

from __future__ import annotations

import os

import numpy as np
import torch

from agents.base import as_rules, legal_ids
from agents.learned.data import DATA_DIR, SHIPPED_POLICIES
from agents.learned.policy_net import ActorCritic, load_policy, masked_logits
from schnapsen_env.encoding import obs_size
from schnapsen_env.ruleset import RuleSet

#: The default of :meth:`PolicyAgent.load`: the first policy shipped with the package (``make_agent("trained")``).
DEFAULT_POLICY = DATA_DIR / SHIPPED_POLICIES["trained"]


class PolicyAgent:
    """A learned policy behind the agent protocol.

    Args:
        model: an :class:`ActorCritic`.
        rules: the rule set it plays: the one it was trained for, or the same ruleset with other knobs (the
            observation layout depends only on the ruleset; observations of another length are refused).
        greedy: pick the most probable legal action; False samples from the masked distribution.
        seed: seed of the sampling generator.
    """

    name = "policy"

    def __init__(self, model: ActorCritic, rules: RuleSet, greedy: bool = True, seed: int | None = None) -> None:
        self.model = model.eval()
        self.rules = as_rules(rules)
        if obs_size(self.rules) != model.obs_size:
            raise ValueError(f"this policy reads observations of length {model.obs_size}, but {self.rules.name} "
                             f"observations have {obs_size(self.rules)} entries: it cannot play {self.rules.name}")
        self.greedy = greedy
        self.rng = np.random.default_rng(seed)
        self.obs_size = model.obs_size

    @classmethod
    def load(cls, path: str | os.PathLike = DEFAULT_POLICY, rules: RuleSet | str | None = None,
             greedy: bool = True, seed: int | None = None) -> PolicyAgent:
        """Build the agent from a checkpoint file.

        Args:
            path: checkpoint written by ``train.py`` (default: the shipped policy).
            rules: the rules to play (a RuleSet, knobs included, or a ruleset name): the checkpoint must have been
                trained under this ruleset name, and a RuleSet becomes the agent's ``rules``. None: the rules stored
                in the checkpoint.

        Raises:
            CheckpointError: unreadable, corrupt (its checksum differs) or incomplete file, another ruleset than
                ``rules``, an observation layout other than this version's, weights that do not fit the network
                config or hold NaN or inf.
        """
        model, ck_rules, _ = load_policy(path, rules)
        play_rules = rules if isinstance(rules, RuleSet) else ck_rules
        return cls(model, play_rules, greedy=greedy, seed=seed)

    def probabilities(self, observation: dict) -> np.ndarray:
        """Masked action probabilities, float32 ``(n_actions,)``; 0 on illegal actions."""
        obs = np.asarray(observation["observation"], dtype=np.float32)
        if obs.shape != (self.obs_size,):
            raise ValueError(f"observation has shape {obs.shape}, but this policy was trained on "
                             f"{self.rules.name} observations of shape ({self.obs_size},)")
        mask = torch.as_tensor(np.asarray(observation["action_mask"]), dtype=torch.bool)[None]
        with torch.no_grad():
            logits = self.model.act_logits(torch.from_numpy(obs)[None])
            probs = torch.softmax(masked_logits(logits, mask), dim=-1)[0]
        return probs.numpy()

    def probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Masked action probabilities of many observations: float32 ``(B, obs_size)`` and masks ``(B, n_actions)``
        in, float64 ``(B, n_actions)`` out (0 on illegal actions; an opponent model of
        :mod:`agents.search.inference`)."""
        obs = np.asarray(observations, dtype=np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.obs_size:
            raise ValueError(f"observations have shape {obs.shape}, expected (B, {self.obs_size})")
        with torch.no_grad():
            logits = self.model.act_logits(torch.from_numpy(np.ascontiguousarray(obs)))
            m = torch.as_tensor(np.asarray(masks), dtype=torch.bool)
            probs = torch.softmax(masked_logits(logits.float(), m).double(), dim=-1)
        return probs.numpy()

    def act(self, observation: dict) -> int:
        """A legal action id: the argmax (greedy) or a sample of the masked distribution."""
        legal = legal_ids(observation)
        if legal.size == 1:
            return int(legal[0])
        probs = self.probabilities(observation)
        p = probs[legal].astype(np.float64)
        if not np.all(np.isfinite(p)) or p.sum() <= 0:
            raise ValueError(f"the policy's probabilities over the legal actions are not finite ({p}): the "
                             "checkpoint's weights are broken (NaN or inf)")
        if self.greedy:
            return int(legal[np.argmax(p)])  # argmax over legal actions only
        return int(legal[self.rng.choice(legal.size, p=p / p.sum())])

    def reset(self) -> None:
        pass
