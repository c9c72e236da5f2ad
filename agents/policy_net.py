"""The actor-critic network shared by ``train.py`` and :class:`agents.learned.PolicyAgent`.

A plain MLP trunk over the observation vector (layout: :mod:`schnapsen_env.encoding`), a policy
head with one logit per action and a value head in game points. Illegal actions get logit
``-inf`` (masked logits, not penalties; Huang & Ontañón, "A Closer Look at Invalid Action Masking
in Policy Gradient Algorithms", 2022), and the entropy ignores them.
"""

from __future__ import annotations

import torch
from torch import nn


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with illegal actions set to ``-inf``.

    Args:
        logits: float ``(B, A)``.
        mask: ``(B, A)`` bool or 0/1, at least one legal action per row.
    """
    return logits.masked_fill(~mask.bool(), float("-inf"))


def masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of the masked distribution: ``(B, A)``, ``-inf`` on illegal actions."""
    return torch.log_softmax(masked_logits(logits, mask), dim=-1)


def masked_entropy(log_probs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy per row ``(B,)`` of a masked distribution (illegal actions contribute 0, not NaN)."""
    lp = log_probs.masked_fill(~mask.bool(), 0.0)
    return -(lp.exp() * lp).sum(-1)


class ActorCritic(nn.Module):
    """MLP actor-critic.

    Args:
        obs_size: observation length (255 / 299).
        n_actions: action count (27 / 31).
        hidden: width of each hidden layer.
        layers: number of hidden layers in the shared trunk.
        critic_extra: extra inputs of the value head only (the privileged critic's state vector plus
            the seat one-hot; 0 for a plain critic).
    """

    def __init__(self, obs_size: int, n_actions: int, hidden: int = 256, layers: int = 2,
                 critic_extra: int = 0) -> None:
        super().__init__()
        self.obs_size, self.n_actions, self.hidden, self.layers = obs_size, n_actions, hidden, layers
        self.critic_extra = critic_extra
        mods: list[nn.Module] = []
        width = obs_size
        for _ in range(layers):
            mods += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        self.trunk = nn.Sequential(*mods)
        self.policy = nn.Linear(hidden, n_actions)
        if critic_extra:
            self.critic_net = nn.Sequential(nn.Linear(hidden + critic_extra, hidden), nn.ReLU(),
                                            nn.Linear(hidden, 1))
        else:
            self.critic_net = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.zeros_(self.policy.bias)

    def forward(self, obs: torch.Tensor, critic_input: torch.Tensor | None = None):
        """``(logits (B, A), value (B,))`` for observations ``(B, obs_size)``."""
        h = self.trunk(obs)
        if self.critic_extra:
            if critic_input is None:
                raise ValueError("this network has a privileged critic: pass critic_input")
            v = self.critic_net(torch.cat([h, critic_input], dim=-1))
        else:
            v = self.critic_net(h)
        return self.policy(h), v.squeeze(-1)

    def act_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """Policy logits only (what a playing agent needs)."""
        return self.policy(self.trunk(obs))

    def config(self) -> dict:
        return {"obs_size": self.obs_size, "n_actions": self.n_actions, "hidden": self.hidden,
                "layers": self.layers, "critic_extra": self.critic_extra}
