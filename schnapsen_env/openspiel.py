"""Schnapsen / Sixty-Six as an OpenSpiel game (``pyspiel.load_game("python_schnapsen")``), on this project's engine.

Importing this module registers the game ``python_schnapsen`` with ``pyspiel`` (the optional extra ``openspiel``:
``bash scripts/bootstrap.sh --extras openspiel``). The rules are :class:`~schnapsen_env.rules.GameState`'s (RULES.md);
this module only maps OpenSpiel's API onto them::

    >>> import pyspiel
    >>> from schnapsen_env import openspiel  # registers "python_schnapsen"
    >>> game = pyspiel.load_game("python_schnapsen(ruleset=sixtysix24,false_claim=mirror)")
    >>> game.num_distinct_actions()
    31

One episode is one hand (RULES.md R1-R24, R66-1-R66-10):

* **Chance.** The first chance node picks the dealer (seat 0 or 1, probability 1/2 each, R1); then the deck is
  dealt card by card, ``n_cards`` chance nodes each uniform over the cards not dealt yet (chance action = card
  id). Position ``k`` of the deal order is the ``k``-th card of :meth:`GameState.from_deck`'s deck order (R2): the
  non-dealer's and the dealer's hands, the turn-up, then the stock top first.
* **Moves.** Sequential; action ids are the env's (RULES.md section 4): ``play XX`` by card id, ``marriage C D H
  S``, ``exchange``, ``close``, ``claim``; ``num_distinct_actions`` 27 (``schnapsen20``) or 31 (``sixtysix24``).
* **Returns.** Zero-sum game points of the hand, ``[+g, -g]`` for a win of seat 0 by ``g`` in 1..3, ``[0, 0]`` for
  a ``sixtysix24`` tie (R24, R66-10); 0 until the hand ends.

**Parameters.** ``ruleset`` (``"schnapsen20"`` default, or ``"sixtysix24"``) and every rule knob of RULES.md
section 5 under its own key. OpenSpiel parameters are typed and a missing one gets the declared default, so a
knob's default is a sentinel meaning "the ruleset's value": ``""`` for the string knobs, ``-1`` for the int knobs,
and ``-1`` for the three yes/no knobs, which take ``0``/``1`` (``must_head=0``) so that ``-1`` can mean "the
ruleset's default" (``must_head`` is true in ``schnapsen20`` and false in ``sixtysix24``); ``exchange_rank`` is
``"J"`` or ``"nine"`` (a game string reads ``9`` as an int; ``"9"`` is accepted in a dict). A bad value raises
:class:`~schnapsen_env.errors.RulesError` (a ``ValueError``) naming the key and the allowed values; an unknown
key or a value of the wrong type is refused by OpenSpiel itself (``pyspiel.SpielError`` naming the key).

**Observations** (:meth:`SchnapsenGame.make_py_observer`):

* ``observation_tensor``: the env's observation, :func:`schnapsen_env.encoding.observation` (float32,
  ``obs_size`` = 255 / 299 entries, the layout of :mod:`schnapsen_env.encoding`, exposed by name in the
  observer's ``dict``). During the deal only ``hand`` (my cards dealt so far), ``turn_up``, ``trump`` and
  ``dealer`` are set.
* ``information_state_tensor``: the observation, then ``history``, shape ``(max_events, 2 + n_actions + n_cards)``:
  one row per event the player perceived since the deal, in order: column 0/1 the actor (me / the opponent),
  then the action id one-hot, or the card drawn one-hot (my draws, and the turn-up when the opponent draws it,
  R27). The observation alone forgets the order of the tricks and of my draws; with the history the information
  state has perfect recall.
* ``information_state_string``: the same information as text: my seat, the dealer, my dealt hand and the turn-up,
  then the events (``me:play AC opp:play TC me:draw KH ...``); a state from :meth:`SchnapsenGame.new_state_from`
  starts with the non-zero entries of my observation of the position it was loaded from instead of the deal. ``observation_string``: the decoded observation
  (:func:`schnapsen_env.encoding.decode_observation`).

Neither holds anything a player may not know (RULES.md R27): the opponent's hidden cards and the stock order never
change them (``tests/test_openspiel.py``, the swap test).

**Search support.** :meth:`SchnapsenGame.new_state_from` starts a state from any :class:`GameState` (for example a
determinisation of an observation, :mod:`schnapsen_env.sampler`), without chance nodes; and
:meth:`SchnapsenState.resample_from_infostate` deals the cards a player has not seen anew, uniformly among the
worlds consistent with every public action (what OpenSpiel's information-set MCTS asks for).

Clone and serialisation are OpenSpiel's for Python games (the Python attributes are deep-copied / pickled; the
engine state inside is copied with :meth:`GameState.copy`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from schnapsen_env import encoding
from schnapsen_env.errors import IllegalActionError, RulesError
from schnapsen_env.rules import PLAYERS, GameState
from schnapsen_env.ruleset import RULESETS, RuleSet

GAME_NAME = "python_schnapsen"
#: The largest single-hand result in game points (R22, R23).
MAX_GAME_POINTS = 3
#: Non-play actions a hand can hold besides one play per card: 4 marriages, 1 exchange, 1 close, 1 claim.
_EXTRA_ACTIONS = 7


def _knob_types() -> dict[str, type]:
    """Every knob key of RULES.md section 5 -> its value type (bool, int or str), from the two presets."""
    types: dict[str, type] = {}
    for ruleset in RULESETS:
        for key, value in RuleSet.make(ruleset).knobs().items():
            if value is not None:
                types[key] = type(value)
    for key in ("tie", "unclaimed_last_trick_value"):  # None in one ruleset, a string in the other
        types.setdefault(key, str)
    return types


KNOB_TYPES = _knob_types()
#: Sentinel default of each knob parameter: the ruleset's own value.
_DEFAULT = {bool: -1, int: -1, str: ""}
#: Spellings of ``exchange_rank="9"`` (R66-3) as a parameter: OpenSpiel's game strings read ``9`` as an int.
_NINE = ("nine", "9")
#: OpenSpiel's parameter specification: ``ruleset`` and every knob with its sentinel default (module docstring).
PARAMETERS: dict[str, Any] = {"ruleset": "schnapsen20", **{k: _DEFAULT[t] for k, t in sorted(KNOB_TYPES.items())}}


def rules_from_params(params: dict[str, Any] | None) -> RuleSet:
    """The :class:`RuleSet` of OpenSpiel game parameters (module docstring, "Parameters").

    Raises:
        RulesError: an unknown key, an unknown ruleset, a yes/no knob other than -1, 0 or 1, or a knob value the
            ruleset does not take; the message names the key and the allowed values.
    """
    params = dict(params or {})
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise RulesError(f"unknown {GAME_NAME} parameter(s) {unknown}: expected some of {sorted(PARAMETERS)}")
    ruleset = params.pop("ruleset", "schnapsen20")
    knobs: dict[str, Any] = {}
    for key, value in params.items():
        kind = KNOB_TYPES[key]
        if value == _DEFAULT[kind] and type(value) is type(_DEFAULT[kind]):
            continue
        if key == "exchange_rank" and value in _NINE:
            value = "9"
        if kind is bool:
            if type(value) is not int or value not in (0, 1):
                raise RulesError(f"{GAME_NAME} parameter {key!r} got {value!r}: expected -1 (the ruleset's "
                                 "default), 0 (false) or 1 (true)")
            value = bool(value)
        knobs[key] = value
    return RuleSet.make(ruleset, **knobs)


def params_from_rules(rules: RuleSet) -> dict[str, Any]:
    """OpenSpiel game parameters that load ``rules`` (every knob given; the inverse of :func:`rules_from_params`)."""
    out: dict[str, Any] = {"ruleset": rules.name}
    for key, value in rules.knobs().items():
        out[key] = int(value) if isinstance(value, bool) else value
    if out["exchange_rank"] == "9":
        out["exchange_rank"] = "nine"  # a game string would read 9 as an int
    return out


def load_game(rules: RuleSet | str = "schnapsen20", **knobs: Any) -> pyspiel.Game:
    """``pyspiel.load_game("python_schnapsen", ...)`` for a RuleSet (or a ruleset name and knobs, as
    :meth:`RuleSet.make` takes them, yes/no knobs as Python bools)."""
    rules = RuleSet.make(rules, **knobs)
    return pyspiel.load_game(GAME_NAME, params_from_rules(rules))


GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Schnapsen / Sixty-Six (schnapsen-env)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


def _deal_slots(rules: RuleSet) -> list[str]:
    """Where each position of the deal order goes (R2, as :meth:`GameState.from_deck` deals): ``"non_dealer"``,
    ``"dealer"``, ``"turn_up"`` or ``"stock"``."""
    second = rules.hand_size - 3
    slots = ["non_dealer"] * 3 + ["dealer"] * 3 + ["turn_up"] + ["non_dealer"] * second + ["dealer"] * second
    return slots + ["stock"] * (rules.n_cards - len(slots))


def max_events(rules: RuleSet) -> int:
    """Rows of the information state's ``history``: every action of a hand (one play per card plus
    :data:`_EXTRA_ACTIONS`), my draws (half the stock) and the turn-up drawn by the opponent."""
    return rules.n_cards + _EXTRA_ACTIONS + rules.stock0 // 2 + 1


class SchnapsenGame(pyspiel.Game):
    """The OpenSpiel game (module docstring). Build it with ``pyspiel.load_game("python_schnapsen", params)``.

    Attributes: ``rules`` (the :class:`RuleSet`), ``slots`` (deal position -> destination).

    Raises:
        RulesError: bad parameters (:func:`rules_from_params`).
    """

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.rules = rules_from_params(params)
        rules = self.rules
        info = pyspiel.GameInfo(
            num_distinct_actions=rules.n_actions, max_chance_outcomes=rules.n_cards, num_players=2,
            min_utility=-float(MAX_GAME_POINTS), max_utility=float(MAX_GAME_POINTS), utility_sum=0.0,
            max_game_length=rules.n_cards + _EXTRA_ACTIONS)
        super().__init__(GAME_TYPE, info, params_from_rules(rules))
        self.slots = _deal_slots(rules)

    def new_initial_state(self) -> SchnapsenState:
        """The state before the deal (a chance node: the dealer)."""
        return SchnapsenState(self)

    def new_state_from(self, game_state: GameState) -> SchnapsenState:
        """A state that continues ``game_state`` (copied; its rules must be this game's), with no chance history:
        for search from a position or a determinisation. Its information states start from each player's
        observation of ``game_state`` (:meth:`SchnapsenState.information_state_string`).

        Raises:
            ValueError: ``game_state`` is played under other rules.
        """
        if game_state.rules != self.rules:
            raise ValueError(f"the state is played under {game_state.rules}, this game under {self.rules}")
        state = SchnapsenState(self)
        state._hand = _Hand.loaded(game_state)
        return state

    def max_chance_nodes_in_history(self) -> int:
        """The dealer and one node per card."""
        return self.rules.n_cards + 1

    def make_py_observer(self, iig_obs_type: pyspiel.IIGObservationType | None = None,
                         params: dict | None = None) -> SchnapsenObserver:
        """The observer of the information state (``perfect_recall=True``) or of the observation (module
        docstring).

        Raises:
            ValueError: observer parameters (none are taken), or an observation type other than one player's
                private and public information.
        """
        if params:
            raise ValueError(f"{GAME_NAME} observers take no parameters, got {params}")
        if iig_obs_type is None:
            iig_obs_type = pyspiel.IIGObservationType(perfect_recall=False)
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(f"{GAME_NAME} observes one player's private and public information only "
                             f"(private_info=SINGLE_PLAYER, public_info=True), got {iig_obs_type}")
        return SchnapsenObserver(self.rules, iig_obs_type.perfect_recall)


class _Hand:
    """The Python side of a state: the engine state and what OpenSpiel needs besides it.

    Attributes:
        rules: the RuleSet. dealer: seat, or None before the first chance node.
        deck: card ids dealt so far, in deal order (a state from :meth:`SchnapsenGame.new_state_from`: None).
        base: the state the hand continues (a loaded state) or None; never changed.
        gs: the :class:`GameState` once dealt (or loaded), else None.
        heads: per seat, the start of its information state string once dealt (cached; it depends on the deal or
            the base only).
        events: ``(seat, action, card, public)`` per event since the deal: an action of ``seat`` (``card`` -1,
            public), or a draw of ``card`` by ``seat`` (``action`` -1; public only for the turn-up, R27).
    """

    __slots__ = ("rules", "dealer", "deck", "base", "gs", "events", "heads")

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.dealer: int | None = None
        self.deck: list[int] | None = []
        self.base: GameState | None = None
        self.gs: GameState | None = None
        self.events: list[tuple[int, int, int, bool]] = []
        self.heads: dict[int, str] = {}  # per seat, the start of its information state string once dealt

    @classmethod
    def loaded(cls, game_state: GameState) -> _Hand:
        h = cls(game_state.rules)
        h.dealer = game_state.dealer
        h.deck = None
        h.base = game_state.copy()
        h.gs = game_state.copy()
        return h

    def __deepcopy__(self, memo: dict) -> _Hand:
        """A copy sharing the immutable parts (rules, base); OpenSpiel's clone deep-copies the state's attributes."""
        h = _Hand.__new__(_Hand)
        h.rules, h.dealer, h.base = self.rules, self.dealer, self.base
        h.deck = None if self.deck is None else list(self.deck)
        h.gs = None if self.gs is None else self.gs.copy()
        h.events = list(self.events)
        # Shared once dealt: it depends on the deal (or the base) only, which the copy then shares. A copy made during
        # the deal gets its own: its deal may still differ (OpenSpiel's tree walks clone chance nodes).
        h.heads = self.heads if self.gs is not None else {}
        return h

    def __getstate__(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict) -> None:
        for name, value in state.items():
            setattr(self, name, value)


class SchnapsenState(pyspiel.State):
    """A state of :class:`SchnapsenGame` (module docstring). The engine state is ``game_state`` once dealt."""

    def __init__(self, game: SchnapsenGame) -> None:
        super().__init__(game)
        self._hand = _Hand(game.rules)

    @property
    def game_state(self) -> GameState | None:
        """The engine's :class:`GameState` (not a copy: do not change it), or None during the deal."""
        return self._hand.gs

    # ------------------------------------------------------------------ OpenSpiel API
    def current_player(self) -> int:
        """The seat to move, ``pyspiel.PlayerId.CHANCE`` during the deal, ``TERMINAL`` after the hand."""
        gs = self._hand.gs
        if gs is None:
            return pyspiel.PlayerId.CHANCE
        if gs.result is not None:
            return pyspiel.PlayerId.TERMINAL
        return gs.to_move

    def is_terminal(self) -> bool:
        gs = self._hand.gs
        return gs is not None and gs.result is not None

    def _legal_actions(self, player: int) -> list[int]:
        """The engine's legal actions, sorted (the player to move only)."""
        return self._hand.gs.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The dealer (seats 0, 1 at 1/2) or the next card of the deal (uniform over the cards not dealt)."""
        h = self._hand
        if h.dealer is None:
            return [(0, 0.5), (1, 0.5)]
        left = sorted(set(range(h.rules.n_cards)) - set(h.deck))
        p = 1.0 / len(left)
        return [(c, p) for c in left]

    def _apply_action(self, action: int) -> None:
        """Deal (chance) or play one action; an illegal player action raises :class:`IllegalActionError` and
        changes nothing."""
        h = self._hand
        if h.gs is None:
            self._deal(int(action))
            return
        gs = h.gs
        action = int(action)
        me = gs.to_move
        stock = gs.stock
        if gs.legal_bits() >> action & 1:
            gs.push(action)
        else:
            gs.step(action)  # raises IllegalActionError naming the action and the legal ones
        h.events.append((me, action, -1, True))
        if len(gs.stock) == len(stock) - 2:  # the trick was won and both drew (R7): the winner first
            winner = gs.leader
            h.events.append((winner, -1, stock[0], False))
            h.events.append((1 - winner, -1, stock[1], len(stock) == 2))  # the turn-up is public (R27)

    def _deal(self, outcome: int) -> None:
        h = self._hand
        if h.dealer is None:
            if outcome not in (0, 1):
                raise IllegalActionError(f"the dealer is seat 0 or 1, got chance outcome {outcome}")
            h.dealer = outcome
            return
        if not 0 <= outcome < h.rules.n_cards or outcome in h.deck:
            raise IllegalActionError(f"chance outcome {outcome}: expected a card id not dealt yet")
        h.deck.append(outcome)
        if len(h.deck) == h.rules.n_cards:
            codes = h.rules.deck.codes
            h.gs = GameState.from_deck(h.rules, [codes[c] for c in h.deck], h.dealer)

    def _action_to_string(self, player: int, action: int) -> str:
        rules = self._hand.rules
        if player == pyspiel.PlayerId.CHANCE:
            if self._hand.dealer is None:
                return f"dealer {PLAYERS[action]}"
            return f"deal {rules.deck.codes[action]}"
        return rules.action_names[action]

    def returns(self) -> list[float]:
        """``[g, -g]`` game points for seat 0 winning, ``[-g, g]`` for seat 1, ``[0, 0]`` for a tie or before
        the end."""
        gs = self._hand.gs
        if gs is None or gs.result is None or gs.result.winner is None:
            return [0.0, 0.0]
        g = float(gs.result.game_points)
        return [g, -g] if gs.result.winner == 0 else [-g, g]

    def __str__(self) -> str:
        """The dealer and the cards dealt during the deal; the engine's position dict (JSON) after it."""
        h = self._hand
        if h.gs is None:
            dealer = "?" if h.dealer is None else PLAYERS[h.dealer]
            return f"dealer={dealer} dealt={' '.join(h.rules.deck.codes[c] for c in h.deck)}"
        return json.dumps(h.gs.position(), sort_keys=True)

    # ------------------------------------------------------------------ search support
    def unseen_cards(self, player: int) -> int:
        """Bit set of the cards ``player`` has not seen (the opponent's hidden hand and the face-down stock;
        during the deal, the dealt cards that went elsewhere than to ``player`` or the turn-up)."""
        h = self._hand
        gs = h.gs
        if gs is None:
            mine = "dealer" if h.dealer == player else "non_dealer"
            slots = self.get_game().slots
            return sum(1 << c for k, c in enumerate(h.deck) if slots[k] not in (mine, "turn_up"))
        turn_up = (1 << gs.stock[-1]) if gs.stock else 0
        table = (1 << gs.table) if gs.table >= 0 else 0
        seen = gs.hands[player] | turn_up | gs.won[0] | gs.won[1] | table | gs.known[1 - player]
        return gs.deck.full & ~seen

    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float] | np.random.Generator,
                                max_tries: int = 10_000) -> SchnapsenState:
        """A state with the same information state for ``player_id``: the cards it has not seen are dealt anew
        over the places they could be (the opponent's hand, the stock) and the hand is replayed; a world in which
        a past action is illegal (a revoke the opponent did not make, a marriage it could not hold back) is
        rejected, so the result is uniform over the worlds consistent with the history.

        Args:
            player_id: the seat whose information state is kept.
            probability_sampler: uniform floats in [0, 1): a callable (OpenSpiel's convention, e.g.
                ``pyspiel.UniformProbabilitySampler``) or a ``numpy.random.Generator``.
            max_tries: worlds tried before giving up.

        Raises:
            RuntimeError: no consistent world in ``max_tries`` tries (never seen in the tests).
        """
        uniform = probability_sampler.random if isinstance(probability_sampler, np.random.Generator) \
            else probability_sampler
        for _ in range(max_tries):
            state = self._resampled(player_id, uniform)
            if state is not None:
                return state
        raise RuntimeError(f"no world consistent with player {player_id}'s information in {max_tries} tries")

    def _resampled(self, player: int, uniform: Callable[[], float]) -> SchnapsenState | None:
        """One try of :meth:`resample_from_infostate`: the new state, or None when the replay hits an illegal
        action."""
        h = self._hand
        game = self.get_game()
        unseen = self.unseen_cards(player)
        if h.base is None:  # dealt by chance: permute the unseen cards over their deal positions
            places = [k for k, c in enumerate(h.deck) if unseen >> c & 1]
            cards = [h.deck[k] for k in places]
            _shuffle(cards, uniform)
            deck = list(h.deck)
            for k, c in zip(places, cards):
                deck[k] = c
            state = game.new_initial_state()
            state.apply_action(h.dealer)
            for c in deck:
                state.apply_action(c)
        else:  # loaded: permute them over the base's hidden places (the opponent's hidden hand, the stock)
            base = h.base
            other = 1 - player
            hidden_hand = [c for c in range(base.deck.size) if (base.hands[other] >> c & 1) and unseen >> c & 1]
            stock = list(base.stock)
            stock_places = [k for k, c in enumerate(stock) if unseen >> c & 1]
            cards = hidden_hand + [stock[k] for k in stock_places]
            _shuffle(cards, uniform)
            hands = list(base.hands)
            hidden = sum(1 << c for c in hidden_hand)
            hands[other] = (hands[other] & ~hidden) | sum(1 << c for c in cards[:len(hidden_hand)])
            for k, c in zip(stock_places, cards[len(hidden_hand):]):
                stock[k] = c
            world = base.copy()
            world.hands = hands
            world.stock = tuple(stock)
            state = game.new_state_from(world)
            if player in h.heads:
                state._hand.heads[player] = h.heads[player]  # the same for the player who resamples
        gs = state._hand.gs
        if gs is None:
            return state
        start = 0 if h.base is None else len(h.base.actions)
        for a in h.gs.actions[start:]:
            if gs.result is not None or not gs.legal_bits() >> a & 1:
                return None
            state.apply_action(a)
        return state


def _shuffle(items: list, uniform: Callable[[], float]) -> None:
    """Fisher-Yates shuffle in place, driven by uniform floats in [0, 1)."""
    for i in range(len(items) - 1, 0, -1):
        j = min(int(uniform() * (i + 1)), i)
        items[i], items[j] = items[j], items[i]


class SchnapsenObserver:
    """OpenSpiel's Python observer (``tensor``, ``dict``, ``set_from``, ``string_from``) of one player.

    Args:
        rules: the RuleSet. perfect_recall: the information state (observation + ``history``) if True, else the
            observation.
    """

    def __init__(self, rules: RuleSet, perfect_recall: bool) -> None:
        self.rules = rules
        self.perfect_recall = perfect_recall
        n_obs = encoding.obs_size(rules)
        self.width = 2 + rules.n_actions + rules.n_cards
        self.rows = max_events(rules) if perfect_recall else 0
        self.tensor = np.zeros(n_obs + self.rows * self.width, dtype=np.float32)
        self.dict: dict[str, np.ndarray] = {name: self.tensor[sl] for name, sl in encoding.layout(rules).items()}
        if perfect_recall:
            self.dict["history"] = self.tensor[n_obs:].reshape(self.rows, self.width)
        self._n_obs = n_obs
        self._layout = encoding.layout(rules)

    def set_from(self, state: SchnapsenState, player: int) -> None:
        """Write ``player``'s observation (and history) of ``state`` into ``tensor``."""
        h = state._hand
        t = self.tensor
        if h.gs is not None:
            t[:self._n_obs] = encoding.observation(h.gs, player)
        else:
            t[:self._n_obs] = 0.0
            lay = self._layout
            if h.dealer is not None:
                t[lay["dealer"].start] = float(h.dealer == player)
                for c in self._dealt_to(state, player):
                    t[lay["hand"].start + c] = 1.0
                if len(h.deck) > 6:  # the turn-up is dealt
                    turn_up = h.deck[6]
                    t[lay["turn_up"].start + turn_up] = 1.0
                    t[lay["trump"].start + self.rules.deck.suit[turn_up]] = 1.0
        if self.perfect_recall:
            t[self._n_obs:] = 0.0
            history = self.dict["history"]
            n_actions = self.rules.n_actions
            for row, (seat, action, card, _) in enumerate(_visible(h.events, player)):
                history[row, 0 if seat == player else 1] = 1.0
                history[row, 2 + action if action >= 0 else 2 + n_actions + card] = 1.0

    @staticmethod
    def _dealt_to(state: SchnapsenState, player: int) -> list[int]:
        h = state._hand
        mine = "dealer" if h.dealer == player else "non_dealer"
        slots = state.get_game().slots
        return [c for k, c in enumerate(h.deck) if slots[k] == mine]

    def string_from(self, state: SchnapsenState, player: int) -> str:
        """``player``'s information state string (perfect recall) or observation string of ``state``."""
        h = state._hand
        codes = self.rules.deck.codes
        if not self.perfect_recall:
            if h.gs is None:
                return self._deal_string(state, player)
            obs = encoding.decode_observation(encoding.observation(h.gs, player), self.rules)
            return f"p{player} " + " ".join(f"{k}={_compact(v)}" for k, v in obs.items())
        head = h.heads.get(player) if h.gs is not None else None
        if head is None:
            if h.base is not None:
                obs = encoding.observation(h.base, player)
                head = f"p{player} from observation " + " ".join(f"{i}:{obs[i]:.4g}" for i in np.flatnonzero(obs))
            else:
                head = self._deal_string(state, player)
            if h.gs is not None:
                h.heads[player] = head
        names = self.rules.action_names
        events = [f"{'me' if seat == player else 'opp'}:{names[a] if a >= 0 else 'draw ' + codes[c]}"
                  for seat, a, c, _ in _visible(h.events, player)]
        return " ".join([head] + events)

    def _deal_string(self, state: SchnapsenState, player: int) -> str:
        """``player``'s seat, the dealer, its cards dealt (so far) and the turn-up."""
        h = state._hand
        codes = self.rules.deck.codes
        if h.dealer is None:
            return f"p{player}"
        dealt = self._dealt_to(state, player)
        hand = " ".join(codes[c] for c in sorted(dealt))
        turn_up = codes[h.deck[6]] if len(h.deck) > 6 else "-"
        dealer = "me" if h.dealer == player else "opp"
        return f"p{player} dealer:{dealer} hand:[{hand}] turn-up:{turn_up}"


def _visible(events: list[tuple[int, int, int, bool]], player: int) -> list[tuple[int, int, int, bool]]:
    """The events ``player`` perceives: every action, its own draws, and a draw of the turn-up (R27)."""
    return [e for e in events if e[3] or e[0] == player]


def _compact(value: Any) -> str:
    if isinstance(value, list):
        return "[" + " ".join(str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + " ".join(f"{k}:{_compact(v)}" for k, v in value.items()) + "}"
    return str(value)


pyspiel.register_game(GAME_TYPE, SchnapsenGame)

__all__ = ["GAME_NAME", "GAME_TYPE", "KNOB_TYPES", "MAX_GAME_POINTS", "PARAMETERS", "SchnapsenGame",
           "SchnapsenObserver", "SchnapsenState", "load_game", "max_events", "params_from_rules",
           "rules_from_params"]
