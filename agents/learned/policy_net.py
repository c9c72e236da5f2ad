"""The policy network and its checkpoint format: the one place to change either.

:class:`ActorCritic` is shared by ``train.py`` (learner and samplers), ``train_rllib.py`` (through
:mod:`agents.training.rllib_module`) and :class:`agents.learned.policy.PolicyAgent`. A plain MLP trunk over the observation vector
(layout: :mod:`schnapsen_env.encoding`), a policy head with one logit per action and a value head in game points.
Illegal actions get logit ``-inf`` (masked logits, not penalties; Huang & Ontañón, "A Closer Look at Invalid Action
Masking in Policy Gradient Algorithms", 2022), and the entropy ignores them.

**Checkpoint format** (one writer, :func:`policy_checkpoint` / :func:`save_policy`; one reader,
:func:`load_policy`): a dict of tensors and JSON-like values, no pickled classes, written with its SHA-256 by
:mod:`agents.learned.checkpoint` and read with ``torch.load(weights_only=True)``. Keys: ``"model"`` (state dict), ``"net"``
(the architecture: :meth:`ActorCritic.config`, the constructor's keyword arguments), ``"rules"``
(``RuleSet.to_dict()``), ``"layout"`` (:func:`schnapsen_env.encoding.layout_signature`), ``"args"`` (the training
arguments), ``"versions"`` (package versions); a trainer checkpoint adds ``"trainer"``. To swap the network, change
:class:`ActorCritic` (and its ``config``): every writer and reader follows.
"""

from __future__ import annotations

import dataclasses
import os
import platform
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.learned.checkpoint import CheckpointError, load_checkpoint, save_atomic
from schnapsen_env.encoding import PLANES, layout, layout_signature, obs_size, suit_relabelling, trump_relabelling
from schnapsen_env.ruleset import RULESETS, RuleSet


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with illegal actions set to ``-inf``.

    Args:
        logits: float ``(B, A)``.
        mask: ``(B, A)`` bool or 0/1, at least one legal action per row.
    """
    return logits.masked_fill(~(mask if mask.dtype == torch.bool else mask.bool()), float("-inf"))


def masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of the masked distribution: ``(B, A)``, ``-inf`` on illegal actions."""
    return torch.log_softmax(masked_logits(logits, mask), dim=-1)


def masked_entropy(log_probs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy per row ``(B,)`` of a masked distribution (illegal actions contribute 0, not NaN)."""
    lp = log_probs.masked_fill(~(mask if mask.dtype == torch.bool else mask.bool()), 0.0)
    return -(lp.exp() * lp).sum(-1)


def sparse_rows(obs: torch.Tensor, rows: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The non-zero entries of each observation, padded to the row with the most: ``(columns (B, K) int64, values
    (B, K) float)`` with ``K`` the largest count of non-zeros in a row (at least 1), a row's unused slots column 0
    and value 0. The first layer's input as :class:`SparseFirstLayer` reads it (an observation is mostly zeros).

    Args:
        rows: find the entries ``rows`` observations at a time into the one output (the same tensors bit for bit),
            so that the temporaries (a mask, and four int64 indices a non-zero entry: about twice the observations'
            bytes) are a chunk's, not a whole batch's; None: all at once.
    """
    n = len(obs)
    step = n if rows is None or rows >= n else max(1, rows)
    starts = range(0, n, step) if n else range(0)
    counts = torch.cat([(obs[s:s + step] != 0).sum(dim=1) for s in starts]) if n else torch.zeros(0, dtype=torch.int64)
    width = max(1, int(counts.max())) if n else 1
    columns = torch.zeros((n, width), dtype=torch.int64, device=obs.device)
    values = torch.zeros((n, width), dtype=obs.dtype, device=obs.device)
    for s in starts:
        chunk, count = obs[s:s + step], counts[s:s + step]
        r, c = (chunk != 0).nonzero(as_tuple=True)
        slot = torch.arange(len(r), device=obs.device) - (torch.cumsum(count, 0) - count)[r]
        columns[s:s + step][r, slot] = c
        values[s:s + step][r, slot] = chunk[r, c]
    return columns, values


class SparseFirstLayer(torch.autograd.Function):
    """``obs @ weight.T`` (no bias) from the observations' non-zero entries (:func:`sparse_rows`): the forward pass
    sums the weight columns they pick (``embedding_bag``, a fraction of the dense product's work on observations this
    sparse), the weight's gradient is the dense product ``grad.T @ obs``; no gradient flows to the observations. The
    same values as the dense product up to float rounding (the sums run in another order)."""

    @staticmethod
    def forward(ctx, columns: torch.Tensor, values: torch.Tensor, obs: torch.Tensor,  # type: ignore[override]
                weight: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(obs)
        return nn.functional.embedding_bag(columns, weight.t().contiguous(), mode="sum", per_sample_weights=values)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        (obs,) = ctx.saved_tensors
        return None, None, None, grad.t() @ obs


PRECISIONS = ("fp32", "bf16")


def native_bf16(device: str | torch.device = "cpu") -> bool:
    """Whether ``device`` multiplies bfloat16 matrices in hardware: a CPU with AVX512-BF16 or AMX, or a CUDA device
    with bfloat16 support. Elsewhere bfloat16 is emulated and slower than float32."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    if device.type != "cpu":
        return False
    try:  # torch's own CPU feature checks (private names, hence the guard)
        return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    except AttributeError:
        return False


def resolve_precision(precision: str, device: str | torch.device = "cpu") -> str:
    """``"auto"`` → ``"bf16"`` where :func:`native_bf16`, else ``"fp32"``; ``"fp32"``/``"bf16"`` as given.

    Raises:
        ValueError: another value.
    """
    if precision == "auto":
        return "bf16" if native_bf16(device) else "fp32"
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be 'auto', 'fp32' or 'bf16', got {precision!r}")
    return precision


class ActorCritic(nn.Module):
    """MLP actor-critic.

    The trunk may run in bfloat16 (:attr:`precision` ``"bf16"``: matrix products under ``torch.autocast``, weights,
    gradients and the optimiser in float32, the heads in float32 on the trunk's output cast back), which halves
    the cost of the update where the hardware multiplies bfloat16 (:func:`native_bf16`). The precision is how the
    network computes, not what it is: checkpoints do not store it and a policy plays in float32 by default.

    Args:
        obs_size: observation length (255 / 299).
        n_actions: action count (27 / 31).
        hidden: width of each hidden layer.
        layers: number of hidden layers in the shared trunk.
        critic_extra: extra inputs of the value head only (the privileged critic's state vector plus
            the seat one-hot; 0 for a plain critic).
        canonical_trump: see every hand as one of clubs trumps: the observation's suits are relabelled so that
            trump is clubs before the trunk, and the policy head's logits mapped back to the hand's own actions
            (:func:`schnapsen_env.encoding.trump_relabelling`; no weights, a gather at each end). The game is the
            same under any relabelling of the suits, so what the network learns from one trump's hands holds for
            all four. The value needs no mapping. The privileged critic's extra inputs are not relabelled.
        canonical_suits: as ``canonical_trump``, and the other suits put in a canonical order too: by what the
            observation shows of each (its cards in every card plane, then its marriages and announcement, compared
            in that order), so that hands which differ only in the names of their suits look the same to the trunk
            (suits the observation cannot tell apart may go in either order: the observation is the same).

    Raises:
        ValueError: ``canonical_trump`` with an ``obs_size`` that is no ruleset's observation length.
    """

    def __init__(self, obs_size: int, n_actions: int, hidden: int = 256, layers: int = 2,
                 critic_extra: int = 0, canonical_trump: bool = False, canonical_suits: bool = False) -> None:
        super().__init__()
        self.obs_size, self.n_actions, self.hidden, self.layers = obs_size, n_actions, hidden, layers
        self.critic_extra = critic_extra
        self.canonical_suits = bool(canonical_suits)
        self.canonical_trump = bool(canonical_trump) or self.canonical_suits
        if self.canonical_trump:
            rules = _ruleset_of(obs_size, n_actions)
            lay = layout(rules)
            self._trump = lay["trump"]
            if self.canonical_suits:
                obs_index, action_index, key_weights, codes = _suit_orders(rules)
                self.n_suits = rules.deck.n_suits
                self.register_buffer("key_weights", torch.from_numpy(key_weights), persistent=False)
                self.register_buffer("order_ids", torch.from_numpy(codes), persistent=False)
                self.register_buffer("order_code", torch.from_numpy(
                    self.n_suits ** np.arange(self.n_suits - 1, -1, -1, dtype=np.int64)), persistent=False)
            else:
                obs_index, action_index = trump_relabelling(rules)
            # not in the state dict: they follow from the layout, and the weights stay those of a plain network
            self.register_buffer("obs_index", torch.from_numpy(obs_index), persistent=False)
            self.register_buffer("action_index", torch.from_numpy(action_index), persistent=False)
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
        #: ``"fp32"`` or ``"bf16"`` (the trunk under bfloat16 autocast; see the class docstring).
        self.precision = "fp32"

    def relabel(self, obs: torch.Tensor, rows: int | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(observations as the trunk sees them (B, obs_size), the relabelling of each row (B,) int64 or None)``:
        relabelled to clubs trumps with ``canonical_trump``, and the other suits in their canonical order with
        ``canonical_suits``; else as given (no copy). It depends on the observations only, not on the weights: the
        PPO update relabels a batch once for all its epochs and passes each minibatch's rows as ``relabelled``.

        Args:
            rows: relabel ``rows`` observations at a time into one copy (the same tensors bit for bit: it works row
                by row), so that the temporaries (float64 sort keys, int64 gather indices, about 3 times the
                observations' bytes) are a chunk's, not a whole batch's; None: all at once.
        """
        if not self.canonical_trump:
            return obs, None
        if rows is None or len(obs) <= rows:
            return self._relabel_rows(obs)
        out, table = torch.empty_like(obs), torch.empty(len(obs), dtype=torch.int64, device=obs.device)
        for start in range(0, len(obs), rows):
            out[start:start + rows], table[start:start + rows] = self._relabel_rows(obs[start:start + rows])
        return out, table

    def _relabel_rows(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`relabel` of ``obs`` in one pass (``canonical_trump`` or ``canonical_suits``)."""
        if not self.canonical_suits:
            table = obs[:, self._trump].argmax(dim=1)
        else:  # a stable sort per key chunk, the least significant first: the suits by their whole key
            keys = (obs.double() @ self.key_weights).view(len(obs), -1, self.n_suits)  # exact: 0/1 bits, 52 a chunk
            order = torch.arange(self.n_suits, device=obs.device).expand(len(obs), self.n_suits)
            for chunk in reversed(range(keys.shape[1])):
                order = order.gather(1, torch.sort(keys[:, chunk].gather(1, order), dim=1, descending=True,
                                                   stable=True)[1])
            table = self.order_ids[(order * self.order_code).sum(-1)]
        return obs.gather(1, self.obs_index[table]), table

    def _logits(self, h: torch.Tensor, table: torch.Tensor | None) -> torch.Tensor:
        """The policy head on the trunk's output, as logits of the hand's own actions."""
        logits = self.policy(h)
        return logits if table is None else logits.gather(1, self.action_index[table])

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        """The trunk's output, float32 ``(B, hidden)``, computed in :attr:`precision` (on the observations
        relabelled by ``canonical_trump`` or ``canonical_suits``)."""
        obs, _ = self.relabel(obs)
        return self._trunk(obs)

    def _trunk(self, obs: torch.Tensor, sparse: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        if self.precision == "bf16":
            with torch.autocast(device_type=obs.device.type, dtype=torch.bfloat16):
                h = self.trunk(obs)
            return h.float()
        if sparse is None:
            return self.trunk(obs)
        first = self.trunk[0]
        h = SparseFirstLayer.apply(sparse[0], sparse[1], obs, first.weight) + first.bias
        for module in list(self.trunk)[1:]:
            h = module(h)
        return h

    def forward(self, obs: torch.Tensor, critic_input: torch.Tensor | None = None,
                relabelled: torch.Tensor | None | bool = False, sparse: tuple[torch.Tensor, torch.Tensor] | None = None):
        """``(logits (B, A), value (B,))`` for observations ``(B, obs_size)``; ``relabelled``: False relabels
        ``obs`` here, else ``obs`` are relabelled already and this is their relabelling (:meth:`relabel`'s second
        output, None included); ``sparse``: :func:`sparse_rows` of the observations the trunk sees (relabelled),
        for a first layer that reads only their non-zero entries in float32 (:class:`SparseFirstLayer`; the same
        values up to float rounding), or None."""
        obs, trump = self.relabel(obs) if relabelled is False else (obs, relabelled)
        h = self._trunk(obs, sparse)
        if self.critic_extra:
            if critic_input is None:
                raise ValueError("this network has a privileged critic: pass critic_input")
            v = self.critic_net(torch.cat([h, critic_input], dim=-1))
        else:
            v = self.critic_net(h)
        return self._logits(h, trump), v.squeeze(-1)

    def act_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """Policy logits only (what a playing agent needs)."""
        obs, trump = self.relabel(obs)
        return self._logits(self._trunk(obs), trump)

    def get_action_and_value(self, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None,
                             critic_input: torch.Tensor | None = None, gumbel: torch.Tensor | None = None,
                             return_log_probs: bool = False, relabelled: torch.Tensor | None | bool = False,
                             sparse: tuple[torch.Tensor, torch.Tensor] | None = None):
        """Act and evaluate in one pass, in the manner of CleanRL's ``Agent.get_action_and_value``.

        Args:
            obs: float32 ``(B, obs_size)``.
            mask: ``(B, n_actions)`` bool or 0/1, at least one legal action per row.
            action: int64 ``(B,)`` actions to evaluate (PPO's update); None samples new ones.
            critic_input: the privileged critic's extra inputs ``(B, critic_extra)`` (only for such a network).
            gumbel: float32 ``(B, n_actions)`` standard Gumbel noise for sampling by the Gumbel-max trick, drawn by
                the caller from its seeded ``numpy.random.Generator`` (no global torch RNG is touched); None with
                ``action=None`` takes the most probable legal action.
            return_log_probs: also return every action's log-probability (the update's teacher loss needs them).
            relabelled: False (default): relabel ``obs`` here (``canonical_trump``, ``canonical_suits``); else
                ``obs`` are :meth:`relabel`'s first output and this is its second (a ``(B,)`` int64 tensor or None),
                the same results without relabelling again.
            sparse: :func:`sparse_rows` of the observations as the trunk sees them (see :meth:`forward`), or None.

        Returns:
            ``(action (B,) int64, log_prob (B,), entropy (B,), value (B,))``, and ``log_probs (B, n_actions)``
            (``-inf`` on illegal actions) with ``return_log_probs``; illegal actions are never chosen.
        """
        logits, value = self(obs, critic_input, relabelled, sparse)
        logp = masked_log_probs(logits, mask)
        if action is None:
            action = torch.argmax(logp if gumbel is None else logp + gumbel, dim=-1)
        out = (action, logp.gather(1, action[:, None]).squeeze(1), masked_entropy(logp, mask), value)
        return out + (logp,) if return_log_probs else out

    def config(self) -> dict:
        """The architecture: the constructor's keyword arguments (``ActorCritic(**config)`` rebuilds it)."""
        config = {"obs_size": self.obs_size, "n_actions": self.n_actions, "hidden": self.hidden,
                  "layers": self.layers, "critic_extra": self.critic_extra}
        if self.canonical_trump:  # a plain network's config stays as it was, for the policies written before
            config["canonical_trump"] = True
        if self.canonical_suits:
            config["canonical_suits"] = True
        return config


#: Bits of one key chunk of :func:`_suit_orders`: a float64 holds the sum of their powers of two exactly.
_KEY_BITS = 52


def _suit_orders(rules: RuleSet):
    """The tables of ``canonical_suits``: every order of the deck's suits as a relabelling
    (:func:`schnapsen_env.encoding.suit_relabelling`, rows ``(P, obs_size)`` and ``(P, n_actions)``), the weights
    that make each suit's sort key of an observation, float64 ``(obs_size, chunks * n_suits)`` (chunk by chunk, the
    suits within a chunk; a key holds the suit's trump bit first, so that trump sorts first, then its cards in each
    card plane, its marriages and its announcement, each 0/1 entry a power of two, :data:`_KEY_BITS` a chunk, the
    first the highest), and the row of each order by its code ``sum(order[k] * n_suits ** (n_suits - 1 - k))``."""
    from itertools import permutations

    deck, lay = rules.deck, layout(rules)
    n_suits = deck.n_suits
    orders = list(permutations(range(n_suits)))
    tables = [suit_relabelling(rules, order) for order in orders]
    codes = np.zeros(n_suits ** n_suits, dtype=np.int64)
    for i, order in enumerate(orders):
        codes[sum(s * n_suits ** (n_suits - 1 - k) for k, s in enumerate(order))] = i
    columns = []
    for s in range(n_suits):
        cols = [lay["trump"].start + s]
        for name in PLANES:
            cols += [lay[name].start + deck.card(s, r) for r in range(deck.ranks_per_suit)]
        cols += [lay["marriages"].start + s, lay["marriages"].start + 4 + s, lay["announced"].start + s]
        columns.append(cols)
    chunks = -(-len(columns[0]) // _KEY_BITS)
    weights = np.zeros((obs_size(rules), chunks * n_suits), dtype=np.float64)
    for s, cols in enumerate(columns):
        for j, col in enumerate(cols):
            chunk, place = divmod(j, _KEY_BITS)
            weights[col, chunk * n_suits + s] = 2.0 ** (_KEY_BITS - 1 - place)
    return np.stack([o for o, _ in tables]), np.stack([a for _, a in tables]), weights, codes


def _ruleset_of(size: int, n_actions: int) -> RuleSet:
    """The ruleset whose observations are ``size`` long and whose actions number ``n_actions`` (the layout does
    not depend on the knobs)."""
    for name in RULESETS:
        rules = RuleSet.make(name)
        if obs_size(rules) == size and rules.n_actions == n_actions:
            return rules
    raise ValueError(f"canonical_trump needs a ruleset's observation and action sizes, got {size} and {n_actions}: "
                     f"expected one of {[(obs_size(RuleSet.make(n)), RuleSet.make(n).n_actions) for n in RULESETS]}")


# ------------------------------------------------------------------------------------------- checkpoints
def versions() -> dict:
    """Package versions stored in every checkpoint (named in refusals to resume or load)."""
    import gymnasium
    import pettingzoo

    import schnapsen_env

    return {"schnapsen_env": schnapsen_env.__version__, "torch": str(torch.__version__), "numpy": np.__version__,
            "gymnasium": gymnasium.__version__, "pettingzoo": pettingzoo.__version__,
            "python": platform.python_version()}


def policy_checkpoint(model: ActorCritic, rules: RuleSet, args: Any) -> dict:
    """The checkpoint dict of a policy (module doc): weights on the CPU, architecture, rules, layout, the training
    arguments (a dataclass or a dict) and versions."""
    arguments = dataclasses.asdict(args) if dataclasses.is_dataclass(args) else dict(args)
    weights = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    return {"model": weights, "net": model.config(), "rules": rules.to_dict(), "layout": layout_signature(rules),
            "args": arguments, "versions": versions()}


def save_policy(path: str | os.PathLike, model: ActorCritic, rules: RuleSet, args: Any,
                extra: dict | None = None) -> None:
    """Write :func:`policy_checkpoint` (plus ``extra`` keys, e.g. ``"trainer"``) atomically with its checksum.

    Raises:
        WriteError: the file could not be written (a full disk, a read-only folder); an existing file is kept.
    """
    ck = policy_checkpoint(model, rules, args)
    ck.update(extra or {})
    save_atomic(ck, path)


def build_network(net: Any, weights: Any, name: str) -> ActorCritic:
    """An :class:`ActorCritic` from a checkpoint's ``"net"`` config and ``"model"`` weights.

    Raises:
        CheckpointError: a config the constructor does not take, weights of other shapes, NaN or inf weights.
    """
    try:
        with torch.device("meta"):  # the shapes the config implies, allocating nothing
            shapes = {k: tuple(v.shape) for k, v in ActorCritic(**net).state_dict().items()}
        found = {k: tuple(getattr(v, "shape", ())) for k, v in weights.items()} if isinstance(weights, dict) else {}
        if found != shapes:
            raise ValueError(f"expected tensors {shapes}")
        model = ActorCritic(**net)
        model.load_state_dict(weights)
    except (TypeError, RuntimeError, AttributeError, ValueError) as e:
        raise CheckpointError(f"{name}: weights do not fit the network config {net}: "
                              f"{' '.join(str(e).split())}") from None
    broken = [k for k, v in model.state_dict().items() if not bool(torch.isfinite(v).all())]
    if broken:
        raise CheckpointError(f"{name}: weights {broken} hold NaN or inf: expected finite weights (the training "
                              "diverged, or the file was edited)")
    return model


def load_policy(path: str | os.PathLike, rules: RuleSet | str | None = None) -> tuple[ActorCritic, RuleSet, dict]:
    """Read a policy checkpoint: ``(network in eval mode, the rules it was trained under, the checkpoint dict)``.

    Args:
        path: a ``policy.pt`` or ``checkpoint.pt`` written by ``train.py`` / ``train_rllib.py``.
        rules: the rules to be played (a RuleSet or a ruleset name): the checkpoint must have been trained under
            this ruleset name. None: no check.

    Raises:
        CheckpointError: unreadable, corrupt (its checksum differs) or incomplete file, another ruleset than
            ``rules``, an observation layout other than this version's, weights that do not fit the network
            config or hold NaN or inf.
    """
    ckpt = load_checkpoint(path)
    name = f"checkpoint {str(path)!r}"
    try:
        ck_rules = RuleSet.from_dict(ckpt["rules"])
    except (TypeError, ValueError, AttributeError) as e:
        raise CheckpointError(f"{name} has no valid 'rules' entry ({ckpt['rules']!r}): {e}") from None
    if rules is not None:
        want = rules if isinstance(rules, str) else rules.name
        if want != ck_rules.name:
            raise CheckpointError(f"{name} was trained for {ck_rules.name}, not {want}")
    sig = layout_signature(ck_rules)
    layout = ckpt["layout"]
    if layout != sig:
        version = layout.get("version") if isinstance(layout, dict) else layout
        size = layout.get("obs_size") if isinstance(layout, dict) else None
        raise CheckpointError(
            f"{name} uses observation layout version {version!r} (obs_size {size!r}); this version of "
            f"schnapsen_env expects version {sig['version']} (obs_size {sig['obs_size']}): retrain or use a "
            "matching version")
    net = ckpt["net"]
    if not isinstance(net, dict) or net.get("obs_size") != sig["obs_size"] or \
            net.get("n_actions") != ck_rules.n_actions:
        raise CheckpointError(f"{name}: network config {net!r} does not fit {ck_rules.name} "
                              f"(obs_size {sig['obs_size']}, n_actions {ck_rules.n_actions})")
    return build_network(net, ckpt["model"], name).eval(), ck_rules, ckpt
