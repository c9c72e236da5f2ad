"""World inference: weigh the worlds of a decision by how likely they make the opponent's observed actions.

Plain PIMC (:mod:`agents.search.expert`, :mod:`agents.search.pimc`) treats every world consistent with the current
observation as equally likely. The opponent's actions say more: a player who did not trump a led ace in the STRICT
phase holds no trump (R10), and one who leads a small card where it could have scored probably holds no ace. Under an
*opponent model* (any :data:`agents.game_theory.exact.Policy`: observations and action masks in, action
probabilities out), Bayes' rule gives a world the weight of its prior (uniform over deals, R2) times the likelihood of
the opponent's actions in it: the product, over the opponent's decisions so far with more than one legal action, of
the model's probability of the action it took, asked of the opponent's observation *in that world*.

What the player may know (RULES.md R27) is its own observations and actions. :class:`HandHistory` keeps exactly
those, one hand at a time, and reads the opponent's actions off the differences between consecutive observations
(at most one follow, then the leader's EXCHANGE -> CLOSE -> MARRIAGE -> lead, RULES.md section 4). Nothing else is
read: ``tests/test_inference.py`` swaps hidden cards and checks that samples and weights stay the same.

A world here is a row of :func:`agents.search.worlds.draw_worlds` (the unseen cards: the opponent's hidden hand, then
the face-down stock top first). To replay the hand in it, :class:`WorldInference` completes it to a whole deal: the
cards the opponent played or showed (its *constrained* cards, each needed in hand by the time it was played) go to
its dealt hand and to its hidden draws, uniformly among the places held early enough; the world's hidden hand takes
the places left. The number of such completions is the same for every world (it depends only on the public history),
so a world weighed with one uniformly drawn completion is an unbiased estimate of its posterior weight. The deal is
replayed with the reference engine (:class:`schnapsen_env.rules.GameState`); a world in which an action of the hand
is illegal (a revoke the opponent did not make, R9-R11) or that does not reproduce every observation of the player
gets weight 0: it contradicts the history.

One history, several readings: when the opponent leads trick 1 before the player's first observation and the
turn-up is the exchange card, the observation cannot always tell an exchange from none: the old turn-up may be the
trump card led, or a trump marriage partner shown, or the exchange card may have been dealt as the turn-up. Every
reading is kept (:attr:`Replay.alternatives`) and a world's weight is the sum of its likelihoods under each (their
deals are equally many: at trick 1 every hidden place is the dealt hand, and each reading constrains as many of its
cards).

Source: Bayesian inference over determinisations, as in I. Frank and D. Basin, "Search in games with incomplete
information" (1998), and the inference of N. Sturtevant and M. Buro's Skat players (M. Buro et al., "Improving
State Evaluation, Inference, and Search in Trick-Based Card Games", IJCAI 2009).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from schnapsen_env import encoding
from schnapsen_env.encoding import layout, plane_to_bits
from schnapsen_env.rules import GameState
from schnapsen_env.ruleset import RuleSet, SpecialAction
from schnapsen_env.sampler import Determinizer

#: An opponent model: observations float32 ``(B, obs_size)`` and action masks int8 ``(B, n_actions)`` ->
#: probabilities float ``(B, n_actions)`` (as :data:`agents.game_theory.exact.Policy`).
OpponentModel = Callable[[np.ndarray, np.ndarray], np.ndarray]

ME, OPP = 0, 1


def consistent_model(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The model that weighs every legal action 1: a world's weight is then 1 if it is consistent with the
    history, else 0 (consistency only, no preference). Returns float64 ``(B, n_actions)``, the masks as floats."""
    return np.asarray(masks, dtype=np.float64)


@dataclass
class _View:
    """The parts of one observation the history reads (card sets as int bit sets)."""

    hand: int
    turn_up: int  # card id or -1
    table: int  # card id or -1
    opp_follow: int
    opp_known: int
    tricks_me: int
    closed: bool
    opp_closed: bool
    opp_marriages: int  # suit bits
    leader_me: bool
    dealer_me: bool
    stock_size: int
    trump: int
    match: tuple[int, int, int]


def _view(obs: np.ndarray, rules: RuleSet) -> _View:
    lay = layout(rules)
    bits = {name: plane_to_bits(obs[lay[name]]) for name in ("hand", "turn_up", "table", "opp_follow", "opp_known")}
    mar = obs[lay["marriages"]]
    m = obs[lay["match"]]
    target = rules.match_target
    return _View(
        hand=bits["hand"], turn_up=bits["turn_up"].bit_length() - 1, table=bits["table"].bit_length() - 1,
        opp_follow=bits["opp_follow"], opp_known=bits["opp_known"],
        tricks_me=int(round(float(obs[lay["tricks"]][0]) * rules.n_tricks)),
        closed=bool(obs[lay["closed"]][0] > 0.5), opp_closed=bool(obs[lay["closer"]][1] > 0.5),
        opp_marriages=sum(1 << k for k in range(4) if mar[4 + k] > 0.5),
        leader_me=bool(obs[lay["leader"]][0] > 0.5), dealer_me=bool(obs[lay["dealer"]][0] > 0.5),
        stock_size=int(round(float(obs[lay["stock_size"]][0]) * rules.stock0)),
        trump=int(np.argmax(obs[lay["trump"]])),
        match=(int(round(m[0] * target)), int(round(m[1] * target)), int(round(m[2] * target))))


@dataclass
class Replay:
    """A hand's history as the player knows it, ready to be completed into deals (built by :meth:`HandHistory.replay`).

    Attributes: ``events`` ``[(actor, action id)]`` in play order (actor 0 the player, 1 the opponent);
    ``checks`` ``{event index: observation index}`` (the player's observations, checked before its actions);
    ``deck`` the deal's deck order (``GameState.from_deck`` layout) with -1 at the hidden places;
    ``hidden_slots`` ``[(time, deck index)]`` of the opponent's hidden places in time order (its dealt hand at time
    -1, each hidden draw at the event index that completed its trick); ``constraints`` ``[(deadline, card)]``: cards
    the opponent must have held from a hidden place before event ``deadline``; ``stock_slots`` the deck indices of
    the face-down stock still undrawn, top first; ``dealer`` the dealing seat (the player is seat 0); ``match``
    (the player's, the opponent's game points, carry).
    """

    events: list[tuple[int, int]]
    checks: dict[int, int]
    deck: list[int]
    hidden_slots: list[tuple[int, int]]
    constraints: list[tuple[int, int]]
    stock_slots: list[int]
    dealer: int
    match: tuple[int, int, int]
    observations: list[np.ndarray] = field(repr=False)
    #: The other readings of an ambiguous trick-1 lead (module docstring).
    alternatives: list[Replay] = field(default_factory=list)


class HandHistory:
    """The player's own observations and actions in the current hand (RULES.md R27: all a player may know).

    Call :meth:`observe` with every observation the player acts on and :meth:`acted` with the action it chose
    (search agents do this in ``act``); :meth:`clear` between hands (``reset``). A new hand is also detected by
    itself: an observation that cannot follow the last one starts the history anew.

    Args:
        rules: the RuleSet played.
    """

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.observations: list[np.ndarray] = []
        self.actions: list[int] = []
        self._readings: list[int] = []

    def clear(self) -> None:
        self.observations, self.actions = [], []

    def observe(self, observation) -> None:
        """Record the observation the player is about to act on (the env's dict or the vector)."""
        if isinstance(observation, dict):
            observation = observation["observation"]
        obs = np.array(observation, dtype=np.float32)
        if self.observations and (len(self.actions) != len(self.observations)
                                  or not self._continues(self.observations[-1], obs)):
            self.clear()
        self.observations.append(obs)

    def acted(self, action: int) -> None:
        """Record the action chosen on the last observation."""
        if len(self.actions) == len(self.observations) - 1:
            self.actions.append(int(action))

    def load(self, observations, actions) -> None:
        """Replace the history by a hand's earlier observations and the actions taken on them, oldest first (each
        pair as :meth:`observe` then :meth:`acted`): what an agent's ``observe_hand`` (:class:`agents.base.ObservesHand`)
        does.

        Raises:
            ValueError: ``observations`` and ``actions`` of different lengths.
        """
        if len(observations) != len(actions):
            raise ValueError(f"the hand's history needs one action per observation, got {len(observations)} "
                             f"observations and {len(actions)} actions")
        self.clear()
        for obs, action in zip(observations, actions):
            self.observe(obs)
            self.acted(action)

    def _continues(self, prev: np.ndarray, obs: np.ndarray) -> bool:
        """Whether ``obs`` can come after ``prev`` in one hand (cards won stay won, tricks only grow, same deal)."""
        lay = layout(self.rules)
        for name in ("me_won", "opp_won", "me_lead", "me_follow", "opp_lead", "opp_follow"):
            a, b = plane_to_bits(prev[lay[name]]), plane_to_bits(obs[lay[name]])
            if a & ~b:
                return False
        for name in ("dealer", "trump", "match"):
            if not np.array_equal(prev[lay[name]], obs[lay[name]]):
                return False
        a, b = plane_to_bits(prev[lay["hand"]]), plane_to_bits(prev[lay["unseen"]])
        seen_before = a | b | plane_to_bits(prev[lay["turn_up"]])
        return plane_to_bits(obs[lay["hand"]]) & ~seen_before == 0

    # ------------------------------------------------------------------ reconstruction
    def replay(self) -> Replay | None:
        """The history as a :class:`Replay` for the last observation, or None where it cannot be read (an
        observation sequence no hand produces: the agent was not shown every one of its decisions)."""
        try:
            replay = self._replay(None)
            replay.alternatives = [self._replay(old) for old in self._readings[1:]]
            return replay
        except (_Unreadable, IndexError, ValueError):
            return None

    def _replay(self, reading: int | None) -> Replay:
        """The replay; ``reading``: the old turn-up of an ambiguous trick-1 lead (-1: no exchange; None: the first
        reading, listing them all in ``self._readings``; module docstring)."""
        self._readings = []
        rules, n = self.rules, self.rules.n_cards
        views = [_view(o, rules) for o in self.observations]
        exchange_id, close_id = n + SpecialAction.EXCHANGE, n + SpecialAction.CLOSE
        marriage_c = n + SpecialAction.MARRIAGE_C
        deck_of = rules.deck
        stock0 = rules.stock0
        events: list[tuple[int, int]] = []
        checks: dict[int, int] = {}
        constraint: dict[int, int] = {}
        public: set[int] = set()  # cards the opponent holds that reached it in the open (R27)
        hidden_draws: list[tuple[int, int]] = []  # (time, stock position)
        my_draws: dict[int, int] = {}  # stock position -> card
        rounds = 0

        def need(card: int, t: int) -> None:
            if card not in public:
                constraint[card] = min(constraint.get(card, t), t)

        def opp_plays(card: int) -> None:
            t = len(events)
            if card in public:
                public.discard(card)
            else:
                need(card, t)
            events.append((OPP, card))

        def opp_turn(v: _View, prev_turn_up: int | None, prev_closed: bool, prev_marriages: int) -> int:
            """The opponent's leading turn that ends in ``v`` (its card on the table)."""
            if v.table < 0 or v.leader_me:
                raise _Unreadable
            exchange_card = rules.exchange_card(v.trump)
            suits = v.opp_marriages & ~prev_marriages
            if suits & (suits - 1):
                raise _Unreadable
            suit = suits.bit_length() - 1
            old = -1
            if prev_turn_up is not None:
                if v.turn_up >= 0 and v.turn_up != prev_turn_up:
                    old = prev_turn_up
            elif v.turn_up == exchange_card:  # trick 1 led before the player's first observation
                shown = deck_of.pair_bits[suit] & ~(1 << v.table) if suit >= 0 else 0
                trumps = [c for c in range(n) if v.opp_known >> c & 1 and deck_of.suit[c] == v.trump
                          and not shown >> c & 1]
                if len(trumps) > 1:
                    raise _Unreadable
                old = trumps[0] if trumps else -1
                if old < 0:  # the old turn-up, if any, was led or is the shown partner
                    partner = shown.bit_length() - 1 if shown else -1
                    self._readings = [-1] + [c for c in (v.table, partner)
                                             if c >= 0 and deck_of.suit[c] == v.trump and c != exchange_card]
                    old = -1 if reading is None else reading
            if old >= 0:
                need(exchange_card, len(events))
                events.append((OPP, exchange_id))
                public.add(old)
            if v.closed and v.opp_closed and not prev_closed:
                events.append((OPP, close_id))
            if suit >= 0:
                for c in range(n):
                    if deck_of.pair_bits[suit] >> c & 1:
                        need(c, len(events))
                events.append((OPP, marriage_c + suit))
            opp_plays(v.table)
            return old

        v0 = views[0]
        deal_turn_up = v0.turn_up
        if v0.table >= 0:  # the opponent led trick 1 before the player's first decision
            old = opp_turn(v0, None, False, 0)
            if old >= 0:
                deal_turn_up = old
        if deal_turn_up < 0:
            raise _Unreadable
        for i, a in enumerate(self.actions):
            v, w = views[i], views[i + 1]
            checks[len(events)] = i
            events.append((ME, a))
            if a >= n:
                continue  # exchange, close or marriage: the player moves again, nothing else happened
            if v.table < 0:  # the player led: the opponent followed
                follow = w.opp_follow & ~v.opp_follow
                if follow.bit_count() != 1:
                    raise _Unreadable
                opp_plays(follow.bit_length() - 1)
            done = len(events) - 1  # the play that completed the trick
            if v.stock_size > 0 and not v.closed:  # R7: winner draws first, loser next
                won = w.tricks_me > v.tricks_me
                mine, theirs = (2 * rounds, 2 * rounds + 1) if won else (2 * rounds + 1, 2 * rounds)
                drawn = w.hand & ~v.hand
                if drawn.bit_count() != 1:
                    raise _Unreadable
                if mine != stock0 - 1:
                    my_draws[mine] = drawn.bit_length() - 1
                if theirs == stock0 - 1:
                    public.add(v.turn_up)  # the opponent drew the turn-up (R27)
                else:
                    hidden_draws.append((done, theirs))
                rounds += 1
            if w.table >= 0 and not w.leader_me:
                prev_turn_up = v.turn_up if (v.stock_size == 0 or v.closed or 2 * rounds < stock0) else -1
                opp_turn(w, prev_turn_up, v.closed, v.opp_marriages)
        checks[len(events)] = len(self.actions)
        # The deal: GameState.from_deck's layout (R2).
        hs, second = rules.hand_size, rules.hand_size - 3
        nd_slots = list(range(3)) + list(range(7, 7 + second))
        d_slots = list(range(3, 6)) + list(range(7 + second, 7 + 2 * second))
        mine_slots, opp_slots = (d_slots, nd_slots) if v0.dealer_me else (nd_slots, d_slots)
        first_hand = views[0].hand
        deck = [-1] * n
        cards = [c for c in range(n) if first_hand >> c & 1]
        if len(cards) != hs:
            raise _Unreadable
        for slot, c in zip(mine_slots, cards):
            deck[slot] = c
        deck[6] = deal_turn_up
        base = 7 + 2 * second
        for pos, c in my_draws.items():
            deck[base + pos] = c
        hidden_slots = [(-1, s) for s in opp_slots] + [(t, base + pos) for t, pos in hidden_draws]
        stock_slots = [base + p for p in range(2 * rounds, stock0 - 1)]
        constraints = sorted((t, c) for c, t in constraint.items())
        return Replay(events, checks, deck, hidden_slots, constraints, stock_slots, 0 if v0.dealer_me else 1,
                      v0.match, self.observations)


class _Unreadable(Exception):
    """The observations do not read as one hand."""


class WorldInference:
    """Weigh worlds by the likelihood of the opponent's actions under an opponent model (module docstring).

    Args:
        rules: the RuleSet played.
        model: an :data:`OpponentModel` (default :func:`consistent_model`: consistency with the history only).
        epsilon: the model is mixed with the uniform policy, ``(1 - epsilon) * p + epsilon / legal actions``, so
            that a world is never ruled out by a model that is wrong about the opponent (0: the model as it is).

    Raises:
        ValueError: ``epsilon`` outside [0, 1].
    """

    def __init__(self, rules: RuleSet, model: OpponentModel | None = None, epsilon: float = 0.0) -> None:
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be a number from 0 to 1, got {epsilon!r}")
        self.rules = rules
        self.model = consistent_model if model is None else model
        self.epsilon = float(epsilon)

    def deal(self, replay: Replay, world: np.ndarray, k: int, rng: np.random.Generator) -> list[int] | None:
        """A whole deal (deck order, ``GameState.from_deck`` layout, card ids) completing ``world`` (a row of
        unseen card ids: the opponent's ``k`` hidden cards, then the face-down stock top first), its constrained
        cards placed uniformly among the places early enough and the world's hidden hand uniformly over the places
        left; None if the constrained cards do not fit."""
        deck = list(replay.deck)
        free = list(replay.hidden_slots)
        for deadline, card in replay.constraints:  # earliest deadline first: each card's choices do not depend on
            early = [j for j, (t, _) in enumerate(free) if t < deadline]  # where the earlier ones went
            if not early:
                return None
            j = early[int(rng.integers(len(early)))]
            deck[free.pop(j)[1]] = card
        if len(free) != k or len(replay.stock_slots) != len(world) - k:
            return None
        for j, card in zip(rng.permutation(len(free)), world[:k]):  # which hidden card came when: uniform too
            slot = free[j][1]
            deck[slot] = int(card)
        for slot, card in zip(replay.stock_slots, world[k:]):
            deck[slot] = int(card)
        return deck

    def replay_deal(self, replay: Replay, deck: list[int]) -> tuple[list[np.ndarray], list[np.ndarray], list[int],
                                                                    GameState] | None:
        """Replay the hand on ``deck``: the opponent's ``(observations, masks, actions)`` at its decisions with more
        than one legal action and the state reached (the player to move, seat 0), or None if an action is illegal
        there or an observation of the player differs."""
        rules = self.rules
        if sorted(deck) != list(range(rules.n_cards)):
            return None
        s = GameState.from_deck(rules, [rules.deck.codes[c] for c in deck], replay.dealer)
        s.match_points = [replay.match[0], replay.match[1]]
        s.carry = replay.match[2]
        obs, masks, acts = [], [], []
        for t, (actor, action) in enumerate(replay.events):
            if s.result is not None or s.to_move != actor:
                return None
            bits = s.legal_bits()
            if not bits >> action & 1:
                return None
            if actor == OPP and bits & (bits - 1):
                obs.append(encoding.observation(s, OPP))
                masks.append(s.action_mask())
                acts.append(action)
            elif actor == ME and not np.array_equal(encoding.observation(s, ME), replay.observations[replay.checks[t]]):
                return None
            s.push(action)
        if s.result is not None or s.to_move != ME or \
                not np.array_equal(encoding.observation(s, ME), replay.observations[-1]):
            return None
        return obs, masks, acts, s

    def weights(self, replay: Replay | None, worlds: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        """The likelihood of the opponent's actions in each world (float64 ``(W,)``, 0 where the world contradicts
        the history), each world completed by one uniform draw of ``rng`` (an unbiased estimate of its posterior
        weight up to a constant). ``replay`` None (no readable history): all ones.

        Raises:
            ValueError: the model returned probabilities of the wrong shape.
        """
        n_worlds = len(worlds)
        if replay is None:
            return np.ones(n_worlds)
        out = self._weights(replay, worlds, k, rng)[0]
        for other in replay.alternatives:
            out += self._weights(other, worlds, k, rng)[0]
        return out

    def weighed_states(self, replay: Replay, worlds: np.ndarray, k: int, rng: np.random.Generator,
                       every: bool = False) -> tuple[np.ndarray, list[GameState | None]]:
        """:meth:`weights` and each world's whole state (the player seat 0, to move; None where the weight is 0);
        of an ambiguous history (:attr:`Replay.alternatives`), each world is completed in one reading, drawn in
        proportion to its weights. ``every``: the weights are exact, summed over every completion
        (:meth:`completions`) instead of one drawn."""
        out, states = self._weights(replay, worlds, k, rng, every)
        for other in replay.alternatives:
            alt, alt_states = self._weights(other, worlds, k, rng, every)
            for w in range(len(worlds)):
                if alt[w] > 0 and rng.random() * (out[w] + alt[w]) < alt[w]:
                    states[w] = alt_states[w]
            out = out + alt
        return out, states

    def _weights(self, replay: Replay, worlds: np.ndarray, k: int, rng: np.random.Generator,
                 every: bool = False) -> tuple[np.ndarray, list[GameState | None]]:
        """Per world, the likelihood of one completion drawn by ``rng`` (``every``: the sum over all completions)
        and the state reached (None where the weight is 0)."""
        n_worlds = len(worlds)
        out = np.zeros(n_worlds)
        states: list[GameState | None] = [None] * n_worlds
        rows, masks, acts, owner = [], [], [], []
        deal_world: list[int] = []  # the world of each deal replayed
        n_deals = 0
        for w in range(n_worlds):
            decks = self.completions(replay, worlds[w], k) if every else [self.deal(replay, worlds[w], k, rng)]
            for deck in decks:
                got = None if deck is None else self.replay_deal(replay, deck)
                if got is None:
                    continue
                states[w] = got[3]
                rows += got[0]
                masks += got[1]
                acts += got[2]
                owner += [n_deals] * len(got[2])
                deal_world.append(w)
                n_deals += 1
        like = np.ones(n_deals)
        if rows:
            probs = np.asarray(self.model(np.stack(rows), np.stack(masks).astype(np.int8)), dtype=np.float64)
            if probs.shape != (len(rows), self.rules.n_actions):
                raise ValueError(f"the opponent model returned shape {probs.shape}, expected "
                                 f"({len(rows)}, {self.rules.n_actions})")
            p = probs[np.arange(len(rows)), np.asarray(acts)]
            if self.epsilon > 0:
                legal = np.stack(masks).sum(axis=1)
                p = (1.0 - self.epsilon) * p + self.epsilon / legal
            np.multiply.at(like, np.asarray(owner), p)
        if n_deals:
            np.add.at(out, np.asarray(deal_world, dtype=np.int64), like)
        for w in range(n_worlds):
            if out[w] <= 0:
                states[w] = None
        return out, states

    def completions(self, replay: Replay, world: np.ndarray, k: int) -> list[list[int]]:
        """Every deal completing ``world`` (as :meth:`deal` draws one): the constrained cards and the world's hidden
        hand over the opponent's hidden places in every order that holds each constrained card early enough. Their
        number grows as a factorial: for ``schnapsen10`` (at most 5 places) and tests."""
        import itertools

        deadline = {card: t for t, card in replay.constraints}
        cards = [card for _, card in replay.constraints] + [int(c) for c in world[:k]]
        if len(cards) != len(replay.hidden_slots) or len(replay.stock_slots) != len(world) - k:
            return []
        out = []
        for order in itertools.permutations(cards):
            if all(t < deadline.get(card, 1 << 30) for (t, _), card in zip(replay.hidden_slots, order)):
                deck = list(replay.deck)
                for (_, slot), card in zip(replay.hidden_slots, order):
                    deck[slot] = card
                for slot, card in zip(replay.stock_slots, world[k:]):
                    deck[slot] = int(card)
                out.append(deck)
        return out


#: The policy of the searches (``agents.learned.data.SEARCH_POLICY``; ``tests/test_inference.py`` checks that they
#: agree): what the model spec ``"policy"`` means.
POLICY = "trained-220m"
#: The model specs :func:`opponent_model` takes besides agent specs.
MODEL_NAMES = ("consistent", "uniform", "policy")


def uniform_model(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Uniform over the legal actions, float64 ``(B, n_actions)``."""
    m = np.asarray(masks, dtype=np.float64)
    return m / m.sum(axis=1, keepdims=True)


def opponent_model(spec, rules: RuleSet) -> OpponentModel:
    """An :data:`OpponentModel` from a spec: ``"consistent"`` (:func:`consistent_model`), ``"uniform"``
    (:func:`uniform_model`), ``"policy"`` (the masked softmax of :data:`POLICY`, ``schnapsen20``), any
    agent spec (a registered name such as ``"trained"`` or ``"heuristic"``, a ``.pt`` checkpoint: a policy's masked
    softmax, any other agent's chosen action with probability 1), or a callable model, returned as it is.

    Raises:
        ValueError: an unknown spec or one that cannot play ``rules`` (the shipped policies play ``schnapsen20``).
    """
    if callable(spec) and not hasattr(spec, "act"):
        return spec
    if spec == "consistent":
        return consistent_model
    if spec == "uniform":
        return uniform_model
    from schnapsen_env.agent_specs import build, resolve_agent  # the registry: only when an agent is the model

    label, factory = resolve_agent(POLICY if spec == "policy" else spec, rules)
    agent = build(factory, label, seed=0)
    if callable(getattr(agent, "probabilities_batch", None)):
        return agent.probabilities_batch
    if callable(getattr(agent, "act_batch", None)):
        def model(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
            out = np.zeros(masks.shape)
            out[np.arange(len(obs)), np.asarray(agent.act_batch(obs, masks), dtype=np.int64)] = 1.0
            return out
        return model

    def one_by_one(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.zeros(masks.shape)
        for i in range(len(obs)):
            out[i, int(agent.act({"observation": obs[i], "action_mask": masks[i]}))] = 1.0
        return out
    return one_by_one


def world_rows(observation, rules: RuleSet) -> tuple[np.ndarray, int]:
    """``(unseen, k)``: the unseen card ids of an observation (int64 ``(u,)``) and how many the opponent hides.

    Raises:
        schnapsen_env.errors.InvalidPositionError: an observation whose card counts are inconsistent.
    """
    det = Determinizer(observation, rules)
    unseen = np.array([c for c in range(rules.n_cards) if det.unseen >> c & 1], dtype=np.int64)
    return unseen, det.opp_hidden


__all__ = ["MODEL_NAMES", "POLICY", "HandHistory", "OpponentModel", "Replay", "WorldInference", "consistent_model",
           "opponent_model", "uniform_model", "world_rows"]
