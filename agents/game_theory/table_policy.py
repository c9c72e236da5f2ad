"""A policy given as a table from observations to action probabilities: the CFR+ equilibrium of ``schnapsen10``
written down by observation (:meth:`agents.game_theory.exact.Tree.observation_policy`), for the trainer's
equilibrium teacher (``train.py --search-teacher cfr``) and for measuring what an observation-based policy loses
against the information-set strategy it came from.

A row is keyed by the 64-bit FNV-1a hash of its observation (float32) and action mask (int8)
(:func:`row_hash`); building the table checks that rows sharing a hash are equal, so a
lookup that finds a hash finds that row's probabilities. The file is a NumPy ``.npz`` (no pickled objects) holding
the hashes, the probabilities, the ruleset with its knobs and what the table was made from.
"""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np
from numba import njit

from schnapsen_env.encoding import obs_size
from schnapsen_env.ruleset import RuleSet


@njit(cache=True)
def row_hash(obs, masks):
    """A 64-bit FNV-1a hash of each row of float32 observations ``(B, obs_size)`` and int8 masks ``(B, n_actions)``:
    uint64 ``(B,)``, equal rows giving equal hashes (the callers check that rows sharing a hash are equal where
    they group by it: :meth:`agents.game_theory.exact.Tree.observation_policy`, ``exact._evaluate``).
    ValueError: ``obs`` and ``masks`` of different row counts."""
    n = obs.shape[0]
    if masks.shape[0] != n:  # the loop below would read past the masks
        raise ValueError("row_hash: obs and masks must have the same number of rows")
    out = np.empty(n, dtype=np.uint64)
    o = obs.view(np.uint32)
    prime = np.uint64(1099511628211)
    for i in range(n):
        h = np.uint64(14695981039346656037)
        for j in range(o.shape[1]):
            h = (h ^ np.uint64(o[i, j])) * prime
        for j in range(masks.shape[1]):
            h = (h ^ np.uint64(masks[i, j])) * prime
        out[i] = h
    return out


class ObservationTable:
    """An observation-based policy as a table.

    Args:
        rules: the RuleSet (knobs included) whose observations the table answers.
        hashes: uint64 ``(n,)``, strictly increasing, each row's :func:`row_hash`.
        probs: float32 ``(n, rules.n_actions)``, each row a distribution over its legal actions.
        source: what the table was made from, in words (e.g. ``"cfr+ 100 iterations"``), kept in its file.

    Raises:
        ValueError: arrays of the wrong dtype or shape, hashes not strictly increasing, probabilities negative,
            not finite or not summing to 1 (within 1e-4).
    """

    def __init__(self, rules: RuleSet, hashes: np.ndarray, probs: np.ndarray, source: str = "") -> None:
        hashes, probs = np.asarray(hashes), np.asarray(probs)
        if hashes.dtype != np.uint64 or hashes.ndim != 1:
            raise ValueError(f"hashes must be uint64 (n,), got {hashes.dtype} {hashes.shape}")
        if probs.shape != (len(hashes), rules.n_actions) or probs.dtype.kind != "f":
            raise ValueError(f"probs must be float ({len(hashes)}, {rules.n_actions}), got {probs.dtype} "
                             f"{probs.shape}")
        if len(hashes) > 1 and not (hashes[1:] > hashes[:-1]).all():
            raise ValueError("hashes must be strictly increasing (one row per observation)")
        if not np.isfinite(probs).all() or (probs < 0).any() or not np.allclose(probs.sum(axis=1), 1.0, atol=1e-4):
            raise ValueError("probs must be distributions: finite, >= 0, each row summing to 1")
        self.rules = rules
        self.source = str(source)
        self.hashes = hashes
        self.probs = probs.astype(np.float32, copy=False)

    def __len__(self) -> int:
        return len(self.hashes)

    def lookup(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The table's rows for a batch.

        Args:
            obs: float32 ``(B, obs_size)`` observations; masks: ``(B, n_actions)`` action masks (any integer or bool
                dtype, 0/1).

        Returns:
            ``(found, probs)``: bool ``(B,)``, whether the table holds the row, and float64 ``(B, n_actions)``, its
            probabilities (0 where not found).

        Raises:
            ValueError: ``obs`` not ``(B, obs_size)`` or ``masks`` not ``(B, n_actions)`` of the table's rules.
        """
        obs, masks = np.asarray(obs), np.asarray(masks)
        want = (obs_size(self.rules), self.rules.n_actions)
        if obs.ndim != 2 or masks.ndim != 2 or len(obs) != len(masks) or (obs.shape[1], masks.shape[1]) != want:
            raise ValueError(f"expected obs (B, {want[0]}) and masks (B, {want[1]}) of {self.rules.name}, got "
                             f"{obs.shape} and {masks.shape}")
        h = row_hash(np.ascontiguousarray(obs, dtype=np.float32), np.ascontiguousarray(masks, dtype=np.int8))
        at = np.searchsorted(self.hashes, h)
        at_c = np.minimum(at, max(len(self.hashes) - 1, 0))
        found = (at < len(self.hashes)) & (self.hashes[at_c] == h) if len(self.hashes) else np.zeros(len(h), bool)
        out = np.zeros((len(h), self.rules.n_actions))
        out[found] = self.probs[at_c[found]]
        return found, out

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The table as a :data:`agents.game_theory.exact.Policy`, renormalised in float64.

        Raises:
            ValueError: a row the table does not hold, or probability on an illegal action.
        """
        found, p = self.lookup(obs, masks)
        if not found.all():
            raise ValueError(f"{int((~found).sum())} of {len(found)} observations are not in the table (another "
                             f"ruleset, other knobs, or positions outside the table's part of the game)")
        if (p[np.asarray(masks) == 0] > 0).any():
            raise ValueError("the table puts probability on an illegal action of these rows")
        return p / p.sum(axis=1, keepdims=True)

    def sample(self, obs: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """One action per row drawn from the table's probabilities with ``rng`` (one uniform draw a row, in row
        order, whether or not the row is found).

        Returns:
            ``(found, actions)``: bool ``(B,)`` and int64 ``(B,)`` (-1 where not found).
        """
        found, p = self.lookup(obs, masks)
        u = rng.random(len(found))
        c = np.cumsum(p, axis=1)
        actions = np.argmax(c > (u * c[:, -1])[:, None], axis=1).astype(np.int64)
        actions[~found] = -1
        return found, actions

    # ------------------------------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike) -> None:
        """Write the table to ``path`` (``.npz``), atomically (a temporary file renamed into place).

        Raises:
            ValueError: the file could not be written (a full disk, a read-only folder), naming it; nothing is left
                at ``path`` but what was there before.
        """
        tmp = f"{os.fspath(path)}.tmp.npz"
        try:
            np.savez(tmp, hashes=self.hashes, probs=self.probs, rules=np.array(json.dumps(self.rules.to_dict())),
                     source=np.array(self.source))
            os.replace(tmp, path)
        except OSError as e:
            try:
                os.remove(tmp)
            except OSError:
                pass
            raise ValueError(f"cannot write the observation table to {os.fspath(path)}: {e.strerror or e}") from None

    @classmethod
    def load(cls, path: str | os.PathLike, rules: RuleSet | None = None) -> ObservationTable:
        """Read a table written by :meth:`save`.

        Args:
            rules: when given, the table's ruleset and knobs must be these.

        Raises:
            ValueError: naming the file: an unreadable or malformed file, arrays that are not a table (the
                constructor's checks), or a table of other rules than ``rules``.
        """
        try:
            with np.load(path, allow_pickle=False) as z:
                hashes, probs, saved, source = z["hashes"], z["probs"], json.loads(str(z["rules"])), str(z["source"])
            table_rules = RuleSet.from_dict(saved)
        except (OSError, EOFError, KeyError, ValueError, TypeError, zipfile.BadZipFile) as e:
            # np.load takes a file that is neither .npz nor .npy for a pickle and says so (allow_pickle=False): no
            # pickle was written here, so name what the file is not instead of suggesting to unpickle it.
            why = "not a .npz file" if "pickle" in str(e) else " ".join(str(e).split())
            raise ValueError(f"{os.fspath(path)}: not an observation table (.npz with hashes, probs and rules): "
                             f"{why}") from None
        if rules is not None and table_rules.to_dict() != rules.to_dict():
            raise ValueError(f"{os.fspath(path)}: a table of {table_rules.to_dict()}, expected {rules.to_dict()}")
        try:
            return cls(table_rules, hashes, probs, source)
        except ValueError as e:  # readable arrays that are not a table: name the file
            raise ValueError(f"{os.fspath(path)}: not an observation table: {e}") from None


__all__ = ["ObservationTable", "row_hash"]
