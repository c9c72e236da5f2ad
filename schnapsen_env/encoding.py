"""The observer: observation vectors, the omniscient ``state()`` vector, and their decoder.

An observation is what one player may know under RULES.md R27 and nothing more,
seen from that player's side ("me" / "opp"). It is a flat ``float32`` vector of
``obs_size(rules) = 11 * n + 35`` entries (``n`` = 20 cards, 255 entries, in
``schnapsen20``; ``n`` = 24, 299 entries, in ``sixtysix24``). Card planes have one
entry per card id (suits ``C D H S``, ranks ``A T K Q J 9``).

=====================  ======  ==========================================================  =======
slice (name)           size    meaning                                                     range
=====================  ======  ==========================================================  =======
``hand``               n       my hand                                                     0/1
``turn_up``            n       the turn-up lying under the stock now (also face down        0/1
                               after closing; all 0 once drawn)
``me_lead``            n       cards I led in completed tricks                              0/1
``me_follow``          n       cards I played as follower in completed tricks               0/1
``opp_lead``           n       cards the opponent led in completed tricks                   0/1
``opp_follow``         n       cards the opponent played as follower                        0/1
``table``              n       the card led in the unfinished trick                         0/1
``opp_known``          n       opponent hand cards made public (shown marriage partner,     0/1
                               old turn-up taken by an exchange, turn-up drawn at trick 5)
``unseen``             n       cards I have not seen: in the opponent's hand or face down   0/1
                               in the stock
``me_won``             n       cards in my tricks                                           0/1
``opp_won``            n       cards in the opponent's tricks                               0/1
``trump``              4       trump suit, one-hot                                          0/1
``stock_size``         1       S / (n - 2 * hand size); frozen at closing (R19)             0..1
``closed``             1       stock closed                                                 0/1
``closer``             2       closed by [me, opp]                                          0/1
``snapshot``           2       closing snapshot of the non-closer: [points / 66,            0..4, 0..1
                               tricks / n_tricks] (R19); 0 when not closed
``points``             2       counted points [me, opp] / 66 (R14, R66-7)                   0..4
``tricks``             2       tricks won [me, opp] / n_tricks                              0..1
``pending``            2       pending marriage points [me, opp] / 40 (R14)                 0..3
``marriages``          8       suits announced, [me C D H S, opp C D H S]                   0/1
``exchanged``          1       I exchanged earlier this turn (R17)                          0/1
``announced``          4       suit I announced this turn, card not yet led (R4)            0/1
``leader``             1       I lead this trick                                            0/1
``dealer``             1       I dealt this hand                                            0/1
``trick``              1       tricks completed / n_tricks                                  0..1
``match``              3       match game points [me, opp] / match_target, carry /          0..2
                               match_target (0 in hand episodes)               0..3
=====================  ======  ==========================================================  =======

The ``state()`` vector (for centralised critics) is ``state_size(rules) = 4 * n + obs_size``:
``hand_0``, ``hand_1``, ``stock`` (cards face down in the stock, turn-up included),
``stock_order`` ((k + 1) / S for the k-th stock card from the top), then the observation of
``player_0``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schnapsen_env.cards import BIT_TABLE, SUIT_LETTERS
from schnapsen_env.rules import PLAYERS, GameState
from schnapsen_env.ruleset import RuleSet
from schnapsen_env.scoring import CLAIM_TARGET, TRUMP_MARRIAGE_POINTS

#: Points are observed as a fraction of the claim target 66 (R20), pending marriage points as a fraction of the
#: trump marriage's 40 (R12, R14).
POINTS_SCALE, PENDING_SCALE = float(CLAIM_TARGET), float(TRUMP_MARRIAGE_POINTS)

PLANES = ("hand", "turn_up", "me_lead", "me_follow", "opp_lead", "opp_follow", "table", "opp_known", "unseen",
          "me_won", "opp_won")
SCALARS = (("trump", 4), ("stock_size", 1), ("closed", 1), ("closer", 2), ("snapshot", 2), ("points", 2),
           ("tricks", 2), ("pending", 2), ("marriages", 8), ("exchanged", 1), ("announced", 4), ("leader", 1),
           ("dealer", 1), ("trick", 1), ("match", 3))
_N_SCALARS = sum(k for _, k in SCALARS)
_BIT_TABLE_F32 = BIT_TABLE.astype(np.float32)  # byte -> its 8 bits (little-endian) as float32
#: Bumped whenever the observation layout changes; checkpoints store it and refuse a mismatch.
LAYOUT_VERSION = 1


def plane_to_bits(plane: np.ndarray) -> int:
    """A 0/1 card plane of an observation (``(n,)``) as an int bit set (bit i set = card id i)."""
    return int.from_bytes(np.packbits(np.asarray(plane) > 0.5, bitorder="little").tobytes(), "little")


def obs_size(rules: RuleSet) -> int:
    """Length of an observation vector: ``11 * n_cards + 35``."""
    return len(PLANES) * rules.n_cards + _N_SCALARS


def obs_nonzero_bound(rules: RuleSet) -> int:
    """At most this many entries of an observation are non-zero: ``2 * n_cards + 35``. A card is set in at most
    two card planes (where it lies now; a played card in its trick-history plane and the won-trick plane of whoever
    took the trick), every scalar counted as set (a property test plays random hands to the end)."""
    return 2 * rules.n_cards + _N_SCALARS


def state_size(rules: RuleSet) -> int:
    """Length of the omniscient state vector: ``4 * n_cards + obs_size``."""
    return 4 * rules.n_cards + obs_size(rules)


def layout(rules: RuleSet) -> dict[str, slice]:
    """Name -> slice of the observation vector (see the module docstring)."""
    out = {}
    i = 0
    n = rules.n_cards
    for name in PLANES:
        out[name] = slice(i, i + n)
        i += n
    for name, k in SCALARS:
        out[name] = slice(i, i + k)
        i += k
    return out


def layout_signature(rules: RuleSet) -> dict:
    """JSON-compatible description of the layout, stored in checkpoints to refuse a mismatch."""
    return {"version": LAYOUT_VERSION, "ruleset": rules.name, "obs_size": obs_size(rules),
            "slices": [[name, sl.start, sl.stop] for name, sl in layout(rules).items()]}


def obs_bounds(rules: RuleSet) -> tuple[np.ndarray, np.ndarray]:
    """Per-entry ``(low, high)`` float32 arrays of the observation space."""
    low = np.zeros(obs_size(rules), dtype=np.float32)
    high = np.ones(obs_size(rules), dtype=np.float32)
    lay = layout(rules)
    high[lay["snapshot"].start] = 4.0
    high[lay["points"]] = 4.0
    high[lay["pending"]] = 3.0
    high[lay["match"]] = 3.0
    return low, high


def suit_relabelling(rules: RuleSet, perm) -> tuple[np.ndarray, np.ndarray]:
    """Index tables that relabel the suits of an observation and of the actions: the relabelled hand's suit ``k``
    is the hand's suit ``perm[k]``. No rule names a suit (trump is whichever suit the turn-up shows), so a hand and
    its relabelling are the same game: ``obs[obs_index]`` is the relabelled hand's observation,
    ``mask[action_index]`` the hand's action mask, and ``relabelled_logits[action_index]`` a policy's logits of
    the relabelled hand as logits of the hand's own actions (``train.py --canonical-trump``).

    Args:
        perm: a permutation of the deck's suits (``range(rules.deck.n_suits)``).
    Returns:
        ``(obs_index, action_index)``: int64 ``(obs_size(rules),)`` and ``(rules.n_actions,)``.
    """
    deck, lay, n = rules.deck, layout(rules), rules.n_cards
    perm = np.asarray(perm, dtype=np.int64)
    if sorted(perm.tolist()) != list(range(deck.n_suits)):
        raise ValueError(f"perm must be a permutation of the {deck.n_suits} suits, got {perm.tolist()}")
    perm = np.concatenate([perm, np.arange(deck.n_suits, 4)])  # suits the deck lacks stay where they are
    inverse = np.argsort(perm)
    obs_index = np.arange(obs_size(rules))
    action_index = np.arange(rules.n_actions)
    into = np.array([deck.card(perm[deck.suit[c]], deck.rank[c]) for c in range(n)])  # relabelled card c <- into[c]
    back = np.array([deck.card(inverse[deck.suit[c]], deck.rank[c]) for c in range(n)])
    for name in PLANES:
        obs_index[lay[name]] = lay[name].start + into
    for name in ("trump", "announced"):
        obs_index[lay[name]] = lay[name].start + perm
    obs_index[lay["marriages"]] = lay["marriages"].start + np.concatenate([perm, 4 + perm])
    action_index[:n] = back
    action_index[n:n + 4] = n + inverse  # the marriage actions, MARRIAGE_C + suit
    return obs_index, action_index


def trump_relabelling(rules: RuleSet) -> tuple[np.ndarray, np.ndarray]:
    """:func:`suit_relabelling`'s tables that make trump clubs: for each trump suit ``t``, the swap of ``t`` and
    clubs (its own inverse; the identity for clubs).

    Returns:
        ``(obs_index, action_index)``: int64 ``(4, obs_size(rules))`` and ``(4, rules.n_actions)``; rows of suits
        the deck lacks (``schnapsen10`` has clubs and diamonds) are the identity.
    """
    tables = []
    for t in range(4):
        swap = np.arange(rules.deck.n_suits)
        if t < rules.deck.n_suits:
            swap[[0, t]] = [t, 0]
        tables.append(suit_relabelling(rules, swap))
    return np.stack([o for o, _ in tables]), np.stack([a for _, a in tables])


def _planes_int(s: GameState, me: int) -> int:
    """The 11 card planes packed into one int (plane k occupies bits k*n .. k*n+n-1)."""
    n = s.deck.size
    opp = 1 - me
    lead = [0, 0]
    follow = [0, 0]
    for t in s.history:
        lead[t.leader] |= 1 << t.lead
        follow[1 - t.leader] |= 1 << t.follow
    turn_up = (1 << s.stock[-1]) if s.stock else 0
    table = (1 << s.table) if s.table >= 0 else 0
    opp_known = s.known[opp]
    hand = s.hands[me]
    unseen = s.deck.full & ~(hand | turn_up | s.won[0] | s.won[1] | table | opp_known)
    planes = (hand, turn_up, lead[me], follow[me], lead[opp], follow[opp], table, opp_known, unseen,
              s.won[me], s.won[opp])
    out = 0
    for k, m in enumerate(planes):
        out |= m << (k * n)
    return out


def _scalars(s: GameState, me: int) -> list[float]:
    """The 35 scalar entries (module docstring, ``trump`` .. ``match``) as a list."""
    rules = s.rules
    n_tricks = rules.n_tricks
    opp = 1 - me
    trump = [0.0, 0.0, 0.0, 0.0]
    trump[s.trump] = 1.0
    if s.closed_by >= 0:
        mine = s.closed_by == me
        snapshot = s.closing_snapshot
        assert snapshot is not None  # a closed hand holds its closing snapshot (R19)
        closing = [1.0, float(mine), float(not mine), snapshot[0] / POINTS_SCALE, snapshot[1] / n_tricks]
    else:
        closing = [0.0, 0.0, 0.0, 0.0, 0.0]
    ms_me, ms_opp = s.marriage_suits[me], s.marriage_suits[opp]
    announced = [0.0, 0.0, 0.0, 0.0]
    exchanged = 0.0
    if s.leader == me:
        exchanged = float(s.exchanged)
        if s.announced >= 0:
            announced[s.announced] = 1.0
    target = rules.match_target
    return (trump + [len(s.stock) / rules.stock0] + closing + [
        s.counted(me) / POINTS_SCALE, s.counted(opp) / POINTS_SCALE, s.tricks[me] / n_tricks, s.tricks[opp] / n_tricks,
        s.pending_marriage_points(me) / PENDING_SCALE, s.pending_marriage_points(opp) / PENDING_SCALE,
        float(ms_me & 1), float(ms_me >> 1 & 1), float(ms_me >> 2 & 1), float(ms_me >> 3 & 1),
        float(ms_opp & 1), float(ms_opp >> 1 & 1), float(ms_opp >> 2 & 1), float(ms_opp >> 3 & 1),
        exchanged] + announced + [
        float(s.leader == me), float(s.dealer == me), (s.tricks[0] + s.tricks[1]) / n_tricks,
        s.match_points[me] / target, s.match_points[opp] / target, s.carry / target])


def observation(s: GameState, seat: int) -> np.ndarray:
    """Observation vector of ``seat`` (module docstring layout): ``np.ndarray`` float32, shape ``(obs_size,)``.

    Holds exactly what the seat may know under RULES.md R27: the hidden stock order and the
    opponent's unseen cards never change it.
    """
    n_planes = len(PLANES) * s.deck.size
    nbytes = (n_planes + 7) // 8
    bits = _BIT_TABLE_F32[np.frombuffer(_planes_int(s, seat).to_bytes(nbytes, "little"), dtype=np.uint8)]
    out = np.empty(n_planes + _N_SCALARS, dtype=np.float32)
    out[:n_planes] = bits.reshape(-1)[:n_planes]
    out[n_planes:] = _scalars(s, seat)
    return out


def observations_into(states: list[GameState], seats: np.ndarray, out: np.ndarray) -> None:
    """Write ``observation(states[i], seats[i])`` into ``out[i]`` for all i (batched unpacking).

    Args:
        states: N game states.
        seats: shape ``(N,)`` ints, the observing seat per state.
        out: float32 array of shape ``(N, obs_size)``, overwritten.
    """
    if not states:
        return
    n_planes = len(PLANES) * states[0].deck.size
    nbytes = (n_planes + 7) // 8
    raw = b"".join(_planes_int(s, int(p)).to_bytes(nbytes, "little") for s, p in zip(states, seats))
    bits = BIT_TABLE[np.frombuffer(raw, dtype=np.uint8)].reshape(len(states), nbytes * 8)
    out[:, :n_planes] = bits[:, :n_planes]
    out[:, n_planes:] = [_scalars(s, int(p)) for s, p in zip(states, seats)]


def state_vector(s: GameState) -> np.ndarray:
    """Omniscient state vector (module docstring): ``np.ndarray`` float32, shape ``(state_size,)``."""
    n = s.deck.size
    out = np.zeros(state_size(s.rules), dtype=np.float32)
    for k, m in enumerate((s.hands[0], s.hands[1])):
        for c in range(n):
            if m >> c & 1:
                out[k * n + c] = 1.0
    size = len(s.stock)
    for k, c in enumerate(s.stock):
        out[2 * n + c] = 1.0
        out[3 * n + c] = (k + 1) / size
    out[4 * n:] = observation(s, 0)
    return out


def decode_observation(obs: np.ndarray, rules: RuleSet) -> dict[str, Any]:
    """Turn an observation vector back into a readable dict.

    Card planes become lists of card codes; scalars are rescaled to their units (card points,
    tricks, game points, stock size S).

    Raises:
        ValueError: ``obs`` does not have shape ``(obs_size(rules),)``.
    """
    obs = np.asarray(obs)
    if obs.shape != (obs_size(rules),):
        raise ValueError(f"observation must have shape ({obs_size(rules)},) for {rules.name}, got {obs.shape}")
    lay = layout(rules)
    codes = rules.deck.codes
    out: dict[str, Any] = {}
    for name in PLANES:
        out[name] = [codes[i] for i in np.flatnonzero(obs[lay[name]] > 0.5)]
    out["turn_up"] = out["turn_up"][0] if out["turn_up"] else None
    out["table"] = out["table"][0] if out["table"] else None
    out["trump"] = SUIT_LETTERS[int(np.argmax(obs[lay["trump"]]))]
    out["stock_size"] = int(round(float(obs[lay["stock_size"]][0]) * rules.stock0))
    out["closed"] = bool(obs[lay["closed"]][0] > 0.5)
    closer = obs[lay["closer"]]
    out["closer"] = "me" if closer[0] > 0.5 else ("opp" if closer[1] > 0.5 else None)
    snap = obs[lay["snapshot"]]
    out["snapshot"] = ({"points": int(round(snap[0] * POINTS_SCALE)), "tricks": int(round(snap[1] * rules.n_tricks))}
                       if out["closed"] else None)
    pts, tr, pend = obs[lay["points"]], obs[lay["tricks"]], obs[lay["pending"]]
    out["points"] = {"me": int(round(pts[0] * POINTS_SCALE)), "opp": int(round(pts[1] * POINTS_SCALE))}
    out["tricks"] = {"me": int(round(tr[0] * rules.n_tricks)), "opp": int(round(tr[1] * rules.n_tricks))}
    out["pending"] = {"me": int(round(pend[0] * PENDING_SCALE)), "opp": int(round(pend[1] * PENDING_SCALE))}
    mar = obs[lay["marriages"]]
    out["marriages"] = {"me": [SUIT_LETTERS[k] for k in range(4) if mar[k] > 0.5],
                        "opp": [SUIT_LETTERS[k] for k in range(4) if mar[4 + k] > 0.5]}
    out["exchanged"] = bool(obs[lay["exchanged"]][0] > 0.5)
    ann = obs[lay["announced"]]
    out["announced"] = SUIT_LETTERS[int(np.argmax(ann))] if ann.max() > 0.5 else None
    out["leader"] = bool(obs[lay["leader"]][0] > 0.5)
    out["dealer"] = bool(obs[lay["dealer"]][0] > 0.5)
    out["trick"] = int(round(float(obs[lay["trick"]][0]) * rules.n_tricks)) + 1
    m = obs[lay["match"]]
    target = rules.match_target
    out["match"] = {"me": int(round(m[0] * target)), "opp": int(round(m[1] * target)),
                    "carry": int(round(m[2] * target))}
    return out


__all__ = ["PLANES", "SCALARS", "decode_observation", "layout", "obs_bounds", "obs_nonzero_bound", "obs_size",
           "observation", "plane_to_bits",
           "observations_into", "state_size", "state_vector", "PLAYERS"]
