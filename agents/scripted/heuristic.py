"""``HeuristicAgent``: the rules of thumb of a club player, read off the observation only."""

from __future__ import annotations

import numpy as np

from agents.base import as_rules, legal_ids
from agents.scripted import heuristic_core
from schnapsen_env.cards import Deck, iter_bits
from schnapsen_env.encoding import PENDING_SCALE, POINTS_SCALE, layout, obs_bounds, obs_size, plane_to_bits
from schnapsen_env.ruleset import RuleSet

#: Card points credited for the opponent's card in every trick counted as a sure win by the close rule (a jack).
CLOSE_OPP_CARD_POINTS = 2


_bits = plane_to_bits


def _batch(a, what: str, width: int, width_name: str, rules: RuleSet) -> np.ndarray:
    """``a`` as a 2-D numeric array of ``width`` columns (``act_batch``'s arguments); ValueError naming ``what``
    and the expected shape otherwise."""
    expect = f"({width_name} = {width} for {rules.name})"
    try:
        arr = np.asarray(a)
    except (TypeError, ValueError) as e:  # e.g. a ragged nested list
        raise ValueError(f"{what} must be an array of shape (B, {width}) {expect}: {e}") from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{what} must be an array of numbers of shape (B, {width}) {expect}, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != width:
        raise ValueError(f"{what} must have shape (B, {width}) {expect}, got {arr.shape} (was the agent built with "
                         f"the env's rules?)")
    return arr


class _View:
    """The parts of one observation the heuristic reads (cards as bit sets, points in card points)."""

    __slots__ = ("deck", "hand", "table", "unseen", "gone", "trump", "strict", "me_points", "me_pending")

    def __init__(self, obs: np.ndarray, deck: Deck, lay: dict[str, slice], size: int, high: np.ndarray) -> None:
        if obs.shape != (size,):
            raise ValueError(f"cannot read an observation of shape {obs.shape}: the agent's rules need "
                             f"({size},) entries (was the agent built with the env's rules?)")
        for name in ("points", "pending"):  # the two entries read as integers: a NaN or inf has no integer value
            x = float(obs[lay[name]][0])
            top = float(high[lay[name]][0])
            if not 0.0 <= x <= top:
                raise ValueError(f"cannot read an observation whose {name!r} entry (index {lay[name].start}) is "
                                 f"{x!r}: expected a number from 0 to {top:g} (the observation space's bounds)")
        self.deck: Deck = deck
        self.hand = _bits(obs[lay["hand"]])
        table = _bits(obs[lay["table"]])
        self.table = table.bit_length() - 1 if table else -1
        self.unseen = _bits(obs[lay["unseen"]])
        self.gone = _bits(obs[lay["me_won"]]) | _bits(obs[lay["opp_won"]])
        self.trump = int(np.argmax(obs[lay["trump"]]))
        # STRICT phase (R10, R11): closed, or no card left in the stock (stock_size is frozen at closing)
        self.strict = bool(obs[lay["closed"]][0] > 0.5) or float(obs[lay["stock_size"]][0]) < 1e-6
        self.me_points = int(round(float(obs[lay["points"]][0]) * POINTS_SCALE))
        self.me_pending = int(round(float(obs[lay["pending"]][0]) * PENDING_SCALE))  # 0 once I have a trick (R14)


class HeuristicAgent:
    """Plays the rules of thumb of a club player, in this order of priority.

    1. **Claim** as soon as the claim action is legal and my counted points reach the claim target (66; 33 in
       ``schnapsen10``) (under the default ``false_claim="reject"`` the action is only offered when the claim is
       correct; under other knobs the agent checks its counted points itself, which the observation holds exactly).
    2. **Exchange** the trump jack (nine in ``sixtysix24``) for the turn-up whenever it is allowed (R15–R17).
    3. **Close** (R18) when the stock is open, closing is legal and closing makes 66 likely: my counted points,
       plus the marriage points I can announce now, plus my pending marriage points (they count once I take a
       trick), plus, for each *sure winner* in my hand, its card points and 2 more (a jack, a cheap guess for the
       opponent's card) reach 66. A sure winner is a trump such that every higher trump is in my hand or already
       played, or a non-trump card such that every higher card of its suit is in my hand or played (after the
       close the opponent must follow suit, R10, so it loses such a trick only by trumping when void).
    4. **Announce a marriage** whenever one is legal, the trump marriage (40) before the others (20). After
       announcing, lead the queen while the stock is open (the cheaper card to lose) and the king in the STRICT
       phase (the likelier winner).
    5. **Lead** (stock open): the lowest non-trump card, not breaking a K–Q pair and not a ten whose ace is still
       out; keep trumps. With only trumps, the lowest trump. **Lead** (STRICT phase): a sure winner (trumps
       first, to draw the opponent's trumps; the most points first), else the lowest card.
    6. **Follow** (stock open, R9, any card allowed): if taking the trick brings me to 66, take it as cheaply as
       possible. If a ten or an ace is led, take it with a higher card of its suit, or else (when it is not a
       trump) with my lowest trump. Otherwise discard my lowest non-trump (not breaking a K–Q pair when I can
       avoid it); with only trumps, the lowest trump.
    7. **Follow** (STRICT phase, R10/R11: the mask already enforces following suit, heading and trumping):
       win with the cheapest winning card, else throw the lowest card.

    Ties between cards of equal points go to the lower card id. Only the observation is read (decoded with the
    layout of :mod:`schnapsen_env.encoding`); the agent is deterministic, the seed is kept for the protocol.

    :meth:`act` is the readable reference of these rules; :meth:`act_batch` plays the same rules on a batch of rows
    with the compiled kernel of :mod:`agents.scripted.heuristic_core` (identical actions, ``tests/test_heuristic_batch.py``),
    for trainers that play the heuristic on many envs at once.

    Args:
        rules: the env's RuleSet or a ruleset name (required, :mod:`agents.base`); it gives the deck and the
            observation layout. The rules of thumb above do not depend on the other knobs.
        seed: seed of the agent's ``numpy.random.Generator`` (unused: the rules above decide every move).
    """

    name = "heuristic"

    def __init__(self, rules: RuleSet | str, seed: int | None = None) -> None:
        self.rules = as_rules(rules)
        self.rng = np.random.default_rng(seed)
        self._layout = layout(self.rules)
        self._obs_size = obs_size(self.rules)
        self._high = obs_bounds(self.rules)[1]
        self._tables = heuristic_core.tables(self.rules, CLOSE_OPP_CARD_POINTS)

    def reset(self) -> None:
        pass

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _cheapest(d: Deck, cards: int) -> int:
        """Card of a non-empty set with the fewest points (lowest id on ties)."""
        return min(iter_bits(cards), key=lambda c: (d.points[c], c))

    @staticmethod
    def _beats(d: Deck, trump: int, lead: int, follow: int) -> bool:
        """Does ``follow`` win the trick led by ``lead`` (R6)?"""
        if d.suit[lead] == d.suit[follow]:
            return d.rank[follow] < d.rank[lead]
        return d.suit[follow] == trump

    @staticmethod
    def _pairs(d: Deck, hand: int) -> int:
        """Kings and queens of my hand that form a marriage pair."""
        out = 0
        for s in range(4):
            kq = d.pair_bits[s]
            if hand & kq == kq:
                out |= kq
        return out

    @staticmethod
    def _sure_winners(v: _View) -> int:
        """Cards of my hand that win when led in the STRICT phase (see rule 3 of the class docstring)."""
        d = v.deck
        out = 0
        mine_or_gone = v.hand | v.gone
        for c in iter_bits(v.hand):
            if d.higher[c] & ~mine_or_gone == 0:
                out |= 1 << c
        return out

    # ------------------------------------------------------------------ act
    def act(self, observation: dict) -> int:
        """A legal action id chosen by the rules of the class docstring.

        Raises:
            ValueError: the mask has no legal action; or, with more than one legal action, an observation of
                another shape than the agent's rules give, a ``points`` or ``pending`` entry that is not a number
                within the observation space, or a card on the table with no card legal to follow with.
        """
        legal = legal_ids(observation)
        if legal.size == 1:
            return int(legal[0])
        v = _View(np.asarray(observation["observation"], dtype=np.float32), self.rules.deck, self._layout,
                  self._obs_size, self._high)
        d = v.deck
        bits = 0
        for a in legal.tolist():
            bits |= 1 << a
        rules = self.rules
        marriage, exchange = rules.marriage_action(0), rules.exchange_action
        close, claim = rules.close_action, rules.claim_action
        cards = bits & d.full
        # 1. claim
        if bits >> claim & 1 and v.me_points >= self.rules.claim_target:
            return claim
        if v.table >= 0:
            return self._follow(v, cards)
        # 2. exchange
        if bits >> exchange & 1:
            return exchange
        marriages = [s for s in range(4) if bits >> (marriage + s) & 1]
        # 3. close
        if bits >> close & 1:
            best_marriage = max(self.rules.marriage_points(1 << s, v.trump) for s in marriages) if marriages else 0
            sure = self._sure_winners(v)
            n_sure = sure.bit_count()
            estimate = (v.me_points + best_marriage + v.me_pending
                        + d.points_of(sure) + CLOSE_OPP_CARD_POINTS * n_sure)
            if n_sure and estimate >= self.rules.claim_target:
                return close
        # 4. marriages
        if marriages:
            s = v.trump if v.trump in marriages else marriages[0]
            return marriage + s
        if not cards:
            return int(legal[0])
        if cards & (cards - 1) == 0:  # a single card to lead
            return cards.bit_length() - 1
        return self._lead(v, cards)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The action of :meth:`act` for every row of a batch, computed by the compiled kernel.

        ``act_batch(obs, masks)[i] == act({"observation": obs[i], "action_mask": masks[i]})`` for every row (a
        test plays the two in lockstep under every rule knob); a row that :meth:`act` refuses is refused here.

        Args:
            observations: ``(B, obs_size)`` observations of the players to move (float32, as the envs give them;
                other real dtypes are converted as :meth:`act` converts them).
            masks: ``(B, n_actions)`` their action masks (int8, bool or any 0/1 numbers; nonzero = legal).

        Returns:
            int64 ``(B,)`` action ids, each legal in its row.

        Raises:
            ValueError: an argument that is not a 2-D array of numbers of the shapes above (for this agent's
                rules), or a row with no legal action, an out-of-range points entry or a table card with no card
                to follow with (the message names the first such row).
        """
        rules = self.rules
        obs = _batch(observations, "observations", self._obs_size, "obs_size", rules)
        legal = _batch(masks, "masks", rules.n_actions, "n_actions", rules)
        if legal.shape[0] != obs.shape[0]:
            raise ValueError(f"masks must have one row per observation: got {legal.shape[0]} rows of masks for "
                             f"{obs.shape[0]} observations")
        obs = np.ascontiguousarray(obs, dtype=np.float32)
        if legal.dtype in (np.bool_, np.int8, np.uint8):
            legal = np.ascontiguousarray(legal).view(np.uint8)
        else:
            legal = (legal != 0).view(np.uint8)
        out = np.empty(obs.shape[0], dtype=np.int64)
        t = self._tables
        heuristic_core.act_rows(obs, legal, t.ints, t.floats, t.cards, t.suits, out)
        bad = np.flatnonzero(out < 0)
        if bad.size:
            row = int(bad[0])
            raise ValueError(f"row {row} of the batch: {self._refusal(int(out[row]), obs[row])}")
        return out

    def _refusal(self, code: int, obs: np.ndarray) -> str:
        """What was wrong with a row the kernel marked with ``code`` (:mod:`agents.scripted.heuristic_core`)."""
        if code == heuristic_core.NO_LEGAL_ACTION:
            return "the action mask has no legal action: expected the rows of players to move"
        if code == heuristic_core.NO_CARD_TO_FOLLOW:
            return ("the observation shows a card on the table but the mask offers no card to follow with (and "
                    "more than one action): expected the mask of the player to follow")
        name = "points" if code == heuristic_core.BAD_POINTS else "pending"
        i = self._layout[name].start
        return (f"its {name!r} entry (index {i}) is {float(obs[i])!r}: expected a number from 0 to "
                f"{float(self._high[i]):g} (the observation space's bounds)")

    def _lead(self, v: _View, cards: int) -> int:
        d = v.deck
        trumps = cards & d.suit_bits[v.trump]
        kq = cards & self._pairs(d, cards)
        if kq == cards and kq.bit_count() == 2:  # after announcing: only the K and Q of that suit
            q = [c for c in iter_bits(cards) if d.rank[c] == 3]
            k = [c for c in iter_bits(cards) if d.rank[c] == 2]
            if q and k:
                return k[0] if v.strict else q[0]
        if v.strict:
            sure = self._sure_winners(v) & cards
            if sure:
                pick = sure & trumps or sure
                return max(iter_bits(pick), key=lambda c: (d.points[c], -c))
            return self._cheapest(d, cards)
        plain = cards & ~trumps
        if plain:
            keep = self._pairs(d, v.hand)
            # a ten whose ace is still unseen is a present for the opponent's ace
            exposed = 0
            for c in iter_bits(plain):
                if d.rank[c] == 1 and v.unseen >> d.card(d.suit[c], 0) & 1:
                    exposed |= 1 << c
            for pool in (plain & ~keep & ~exposed, plain & ~keep, plain):
                if pool:
                    return self._cheapest(d, pool)
        return self._cheapest(d, cards)

    def _follow(self, v: _View, cards: int) -> int:
        if not cards:
            raise ValueError("the observation shows a card on the table but the mask offers no card to follow with "
                             "(and more than one action): expected the mask of the player to follow")
        d = v.deck
        lead = v.table
        trump = v.trump
        winners = 0
        for c in iter_bits(cards):
            if self._beats(d, trump, lead, c):
                winners |= 1 << c
        if v.strict:
            if winners:
                return self._cheapest(d, winners)
            return self._cheapest(d, cards)
        # OPEN phase: any card is legal (R9)
        if winners:
            need = self.rules.claim_target - v.me_points - v.me_pending
            cheap = self._cheapest(d, winners)
            if d.points[lead] + d.points[cheap] >= need:
                return cheap
            if d.rank[lead] <= 1:  # a led ace or ten
                same = winners & d.suit_bits[d.suit[lead]]
                if same:
                    return self._cheapest(d, same)
                if d.suit[lead] != trump:
                    low_trump = winners & d.suit_bits[trump]
                    if low_trump:
                        return self._cheapest(d, low_trump)
        plain = cards & ~d.suit_bits[trump]
        if plain:
            keep = self._pairs(d, v.hand)
            pool = plain & ~keep or plain
            return self._cheapest(d, pool)
        return self._cheapest(d, cards)
