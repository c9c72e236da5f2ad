"""The games and replays ``schnapsen-web`` keeps in memory, and the agents a browser may choose.

* :class:`Catalogue`: the opponents and analysers on offer, by id: every registered agent name with its default
  options (:func:`agents.agent_names`, where it can play the ruleset) and the ``--policy`` checkpoint given on the
  server's command line. A browser names one of these ids, never a path, so it cannot make the server load a file.
* :class:`Game`: one hand or one match to ``match_target`` between the person (one seat) and an opponent, with the
  hidden :class:`~schnapsen_env.rules.GameState`; everything it sends is built by :mod:`agents.web.view` from the
  person's observation. Its ``version`` counts its changes, so that a request made on an old view is refused.
  The opponent's tasks carry its own history of the hand (:func:`seat_history`), for the agents that read it.
* :class:`Replay`: records uploaded or taken from a finished game, replayed move by move.
* :class:`Store`: games or replays by an unguessable id (:func:`secrets.token_urlsafe`), the least recently used
  dropped beyond a maximum count (and for replays a maximum of bytes), each dropped once unused for a while.

Nothing here knows HTTP: a refused request raises :class:`WebError` with the status the app answers.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from agents import agent_names, can_play
from agents.learned.shipped import STRONGEST_POLICIES
from agents.web.search import POLICY_NAMES, VALUE_ANALYSERS, AgentSpec, History
from agents.web.view import OPPONENT, YOU, describe_move, player_view, record_summary, replay_frames, result_view
from schnapsen_env.encoding import obs_size, observation
from schnapsen_env.errors import IllegalActionError, RulesError, short_repr
from schnapsen_env.match import Match
from schnapsen_env.records import HandRecord, RecordError, record_of, replay
from schnapsen_env.rules import PLAYERS, GameState
from schnapsen_env.ruleset import RULESETS, RuleSet

MODES = ("hand", "match")
log = logging.getLogger("schnapsen-web")
#: The label of the person's seat in the game records a game writes (``"players"``).
HUMAN = "human"
MAX_SEED = 2 ** 63 - 1


class WebError(Exception):
    """A refused request: ``status`` (an HTTP status), the message, and extra JSON fields for the answer."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.extra = status, message, extra


def derive_seed(*keys: int) -> int:
    """A seed from ints (a game's seed, a hand number, a move number, ...) through ``numpy.random.SeedSequence``:
    the same keys give the same seed, different keys independent ones. In ``0 .. 2**63 - 1``."""
    return int(np.random.SeedSequence([int(k) for k in keys]).generate_state(1, np.uint64)[0] >> np.uint64(1))


def seat_history(state: GameState, seat: int) -> History:
    """``seat``'s history of the hand so far, as its agent kept through the hand would have recorded it: its
    observation before each of its earlier decisions (:func:`schnapsen_env.encoding.observation`, which shows a seat
    only what it may know, RULES.md R27) and the action it took there, oldest first.

    Args:
        state: the hand now, dealt and played by its actions (as a game's or a replay's: its actions since the deal
            are undone on a copy and replayed; ``state`` is unchanged).
        seat: 0 or 1.

    Returns:
        :data:`agents.web.search.History`: float32 ``(T, obs_size)`` and int64 ``(T,)``, T the seat's decisions so
        far (the decision it is to make now not included).
    """
    s = state.copy()
    actions = list(s.actions)
    for _ in actions:
        s.pop()
    seen, taken = [], []
    for action in actions:
        if s.to_move == seat:
            seen.append(observation(s, seat))
            taken.append(action)
        s.push(action)
    return (np.array(seen, dtype=np.float32).reshape(len(seen), obs_size(state.rules)),
            np.array(taken, dtype=np.int64))


def text_key(text: str) -> int:
    """A text as an int key for :func:`derive_seed` (the first 63 bits of its SHA-256)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


# ------------------------------------------------------------------------------------------------- catalogue
@dataclass(frozen=True)
class Choice:
    """An agent a browser may choose: its ``id`` (what the browser sends), a ``label``, the :data:`AgentSpec` the
    workers build, the rulesets it plays, and whether it is a policy (analysed by its probabilities)."""

    id: str
    label: str
    spec: AgentSpec
    rulesets: tuple[str, ...]
    policy: bool

    def to_json(self) -> dict[str, Any]:
        """``{"id", "label", "kind"}`` (kind: ``"policy"`` or ``"agent"``)."""
        return {"id": self.id, "label": self.label, "kind": "policy" if self.policy else "agent"}


class Catalogue:
    """The opponents and analysers a browser may choose (module docstring).

    Args:
        policy: path of a ``policy.pt`` to offer (``schnapsen-web --policy``), loaded here to check it and learn its
            ruleset; None: the registered agents only.

    Raises:
        ValueError: the policy does not load (``CheckpointError``: a missing, corrupt or foreign file).
    """

    def __init__(self, policy: str | os.PathLike | None = None) -> None:
        self.choices: dict[str, Choice] = {}
        for name in agent_names():
            rulesets = tuple(r for r in RULESETS if can_play(name, r))
            self.choices[name] = Choice(name, name, ("name", name), rulesets, name in POLICY_NAMES)
        self.policy_id: str | None = None
        if policy is not None:
            from agents.learned.policy import PolicyAgent  # torch: imported only where a policy plays

            agent = PolicyAgent.load(policy)  # CheckpointError (a ValueError) names the file and the problem
            path = os.path.abspath(os.fspath(policy))
            self.policy_id = "file:" + os.path.basename(path)  # ':' is in no registered name: no clash
            self.choices[self.policy_id] = Choice(self.policy_id, os.path.basename(path), ("file", path),
                                                  (agent.rules.name,), True)

    def opponents(self, ruleset: str) -> list[Choice]:
        """The agents that play ``ruleset``, the ``--policy`` first."""
        out = [c for c in self.choices.values() if ruleset in c.rulesets]
        return sorted(out, key=lambda c: c.id != self.policy_id)

    def default_opponent(self, ruleset: str) -> str:
        """The ``--policy`` where it plays ``ruleset``, else the ruleset's strongest shipped policy
        (:data:`~agents.learned.data.STRONGEST_POLICIES`), else ``pimc``."""
        ids = [c.id for c in self.opponents(ruleset)]
        for pick in (self.policy_id, STRONGEST_POLICIES.get(ruleset), "pimc", "heuristic"):
            if pick in ids:
                return pick
        return ids[0]

    def analysers(self, ruleset: str) -> list[Choice]:
        """The searches that value every action (:data:`VALUE_ANALYSERS`), then the policies that play ``ruleset``."""
        return ([self.choices[n] for n in VALUE_ANALYSERS if n in self.choices]
                + [c for c in self.opponents(ruleset) if c.policy])

    def opponent(self, choice_id: Any, rules: RuleSet) -> Choice:
        """The opponent ``choice_id`` for ``rules``.

        Raises:
            WebError: 422, an id not on offer (a path, a name with options) or one that cannot play ``rules``.
        """
        c = self.choices.get(choice_id) if isinstance(choice_id, str) else None
        if c is None:
            raise WebError(422, f"opponent {short_repr(choice_id)} is not on offer: expected one of "
                                f"{[x.id for x in self.opponents(rules.name)]}", field="opponent")
        if rules.name not in c.rulesets:
            raise WebError(422, f"opponent {short_repr(choice_id)} plays {', '.join(c.rulesets)}, not {rules.name}: expected "
                                f"one of {[x.id for x in self.opponents(rules.name)]}", field="opponent")
        return c

    def analyser(self, choice_id: Any, rules: RuleSet) -> Choice:
        """The analyser ``choice_id`` for ``rules``.

        Raises:
            WebError: 422, an id that is not an analyser of ``rules``.
        """
        on_offer = self.analysers(rules.name)
        for c in on_offer:
            if c.id == choice_id:
                return c
        raise WebError(422, f"analyser {short_repr(choice_id)} is not on offer for {rules.name}: expected some of "
                            f"{[c.id for c in on_offer]}", field="analysers")


# ------------------------------------------------------------------------------------------------- games
class Game:
    """One hand, or a match to ``rules.match_target``, between the person (``seat``) and ``opponent``.

    The deals come from ``numpy.random.default_rng(seed)``; the opponent's decision at each move is built with
    :func:`derive_seed` of the seed, the hand and the move (:meth:`opponent_seed`), so a seeded game replays
    exactly. The opponent's moves themselves are made by the caller (the app, in a worker process): see
    :attr:`opponent_to_move`, :meth:`apply_opponent`.

    Args:
        gid: the game's id.
        opponent: the opponent (:meth:`Catalogue.opponent`).
        seat: the person's seat, 0 or 1 (a match keeps it).
        rules: the rule set.
        mode: ``"hand"`` or ``"match"``.
        seed: the game's seed.
        seed_given: the person chose the seed (then it is no secret); else the server drew it, and it is sent only
            once the game is over (:attr:`public_seed`): it deals every hand, hidden cards included.
    """

    def __init__(self, gid: str, opponent: Choice, seat: int, rules: RuleSet, mode: str, seed: int,
                 seed_given: bool = True) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
        self.id, self.opponent, self.seat, self.rules, self.mode, self.seed = gid, opponent, seat, rules, mode, seed
        self.seed_given = seed_given
        self.rng = np.random.default_rng(seed)
        self.match = Match(rules, self.rng) if mode == "match" else None
        self.state: GameState = self.match.state if self.match is not None else GameState.new_hand(rules, self.rng)
        self.hand_no = 1
        self.version = 0
        self.log: list[dict[str, Any]] = []
        self.finished: list[HandRecord] = []  # the records of the hands played to their end
        self.lock = asyncio.Lock()  # one request at a time changes or reads the game
        self.analyses: dict[tuple, Any] = {}  # (version, analyser id) -> its search (agents.web.app)

    # ----------------------------------------------------------------- turns
    @property
    def hand_over(self) -> bool:
        """The current hand has its result."""
        return self.state.result is not None

    @property
    def match_over(self) -> bool:
        """A match game whose match has a winner (always False for a single hand)."""
        return self.match is not None and self.match.over

    @property
    def over(self) -> bool:
        """The game is over: its single hand has its result, or its match has a winner."""
        return self.hand_over and (self.match is None or self.match.over)

    @property
    def public_seed(self) -> int | None:
        """The seed, where the person may know it: one they chose, or any once the game is over. A seed the server
        drew deals the hands, the opponent's cards and the stock order included (R27): None before the end."""
        return self.seed if self.seed_given or self.over else None

    def file_stem(self) -> str:
        """A name for the game's files and replays: its seed where public (:attr:`public_seed`), else its id's
        start."""
        seed = self.public_seed
        return f"{self.rules.name}-{seed}" if seed is not None else f"{self.rules.name}-{self.id[:8]}"

    @property
    def your_turn(self) -> bool:
        """The person is to move."""
        return not self.hand_over and self.state.to_move == self.seat

    @property
    def opponent_to_move(self) -> bool:
        """The opponent is to move (the app then asks a worker for its decision)."""
        return not self.hand_over and self.state.to_move != self.seat

    def observation(self, seat: int) -> dict[str, np.ndarray]:
        """The agent contract's ``{"observation", "action_mask"}`` of ``seat`` (its mask all zeros when it is not to
        move)."""
        mask = self.state.action_mask()
        if self.state.to_move != seat:
            mask = np.zeros_like(mask)
        return {"observation": observation(self.state, seat), "action_mask": mask}

    def history(self, seat: int) -> History:
        """``seat``'s own history of the current hand (:func:`seat_history`), sent with its agent's tasks."""
        return seat_history(self.state, seat)

    def opponent_seed(self) -> int:
        """The seed of the opponent's agent for its decision now."""
        return derive_seed(self.seed, self.hand_no, len(self.state.actions), 0)

    def analysis_seed(self, analyser: str) -> int:
        """The seed of an analyser of the position now (the same position, the same analysis)."""
        return derive_seed(self.seed, self.hand_no, len(self.state.actions), 1, text_key(analyser))

    def check_version(self, version: int | None) -> None:
        """Refuse a request made on an old view.

        Raises:
            WebError: 409, ``version`` is given and is not the game's current one.
        """
        if version is not None and version != self.version:
            raise WebError(409, f"stale request: it was made on version {version} of this game, which is now at "
                                f"version {self.version}; reload the game", version=self.version)

    # ----------------------------------------------------------------- moves
    def _apply(self, action: int) -> dict[str, Any]:
        mover = self.state.to_move
        before = observation(self.state, self.seat)
        self.state.step(action)
        event = describe_move(self.rules, YOU if mover == self.seat else OPPONENT, action, before,
                              observation(self.state, self.seat))
        self.log.append(event)
        self.version += 1
        if self.hand_over:
            self.finished.append(record_of(self.state, self.players()))
            if self.match is not None:
                self.match.finish_hand()
        return event

    def play(self, action: Any) -> dict[str, Any]:
        """The person plays ``action`` (an action name such as ``"play QH"``, or its id).

        Returns:
            The log entry of the move.

        Raises:
            WebError: 409 when it is not the person's turn or the action is not legal now (the message names it
                and the legal actions); 422 for a name or id that is no action of the rules. The game is unchanged.
        """
        names = self.rules.action_names
        if self.hand_over:
            r = result_view(self.state.result, self.seat)
            won = "a tie" if r["winner"] is None else f"{r['winner']} won {r['game_points']} game point(s), {r['reason']}"
            raise WebError(409, f"the hand is over ({won}): no action is legal; "
                                + ("deal the next hand" if self.mode == "match" and not self.match_over
                                   else "start a new game"))
        if not self.your_turn:  # say nothing of the opponent's legal actions: they would show its hand
            raise WebError(409, "it is not your turn: the opponent is to move")
        if isinstance(action, str):
            if action not in names:
                raise WebError(422, f"unknown action {short_repr(action)}: expected an action name ('play {names[3][5:]}', "
                                    f"'marriage {names[self.rules.marriage_action(0)][-1]}', 'exchange', 'close', "
                                    f"'claim'); legal now: {self.state.legal_action_names()}",
                               field="action", legal=self.state.legal_action_names())
            action_id = names.index(action)
        else:
            action_id = int(action)
            if not 0 <= action_id < self.rules.n_actions:
                raise WebError(422, f"action id {action_id} out of range 0..{self.rules.n_actions - 1}; legal now: "
                                    f"{self.state.legal_action_names()}", field="action",
                               legal=self.state.legal_action_names())
        if not self.state.is_legal(action_id):
            raise WebError(409, f"{names[action_id]!r} is not legal now: legal are "
                                f"{self.state.legal_action_names()}", legal=self.state.legal_action_names())
        try:
            return self._apply(action_id)
        except IllegalActionError as e:  # not reached: legality was checked above
            raise WebError(409, str(e)) from None

    def apply_opponent(self, action: int, fallback: str | None = None) -> dict[str, Any]:
        """Apply the opponent's decision.

        Args:
            action: the action id it chose.
            fallback: why another agent chose it (the opponent's search reached its deadline); the log entry says
                so under ``"fallback"``.

        Raises:
            WebError: 500, the opponent chose an action that is not legal (the game is unchanged). The answer does
                not name the action: it may be a card the person cannot see (one of the opponent's hand that it may
                not play, one of the stock); the server's log has it.
        """
        if not self.opponent_to_move or not self.state.is_legal(int(action)):
            log.error("the opponent %r of game %s chose action %r, which is not legal", self.opponent.label,
                      self.id[:8], action)
            raise WebError(500, f"the opponent {self.opponent.label!r} chose an action that is not legal (the "
                                "server's log names it); retry with POST /api/games/<id>/opponent")
        event = self._apply(int(action))
        if fallback is not None:
            event["fallback"] = fallback
        return event

    def next_hand(self) -> None:
        """Deal the next hand of the match.

        Raises:
            WebError: 409 in a single-hand game, before the hand's end, or after the match's end.
        """
        if self.match is None:
            raise WebError(409, "this game is a single hand: start a new game for another")
        if not self.hand_over:
            raise WebError(409, "the hand is not over yet: play it to its end first")
        if self.match.over:
            raise WebError(409, f"the match is over ({self.match.points[self.seat]}-{self.match.points[1 - self.seat]}"
                                "): start a new game")
        self.state = self.match.next_hand()
        self.hand_no += 1
        self.log = []
        self.version += 1
        self.analyses.clear()

    def players(self) -> dict[str, str]:
        """The record's labels: ``human`` for the person's seat, the opponent's label for the other."""
        return {PLAYERS[self.seat]: HUMAN, PLAYERS[1 - self.seat]: self.opponent.label}

    # ----------------------------------------------------------------- views
    def view(self) -> dict[str, Any]:
        """What the person's browser is sent: the game's settings and :func:`agents.web.view.player_view` of the
        person's observation (the opponent's remaining cards only once the hand is over; the seed only where
        :attr:`public_seed` allows, else None)."""
        s = self.state
        mine = self.observation(self.seat)
        opp_hand = None
        if self.hand_over:  # the issue: the opponent's cards are revealed after the hand
            opp_hand = self.rules.deck.codes_of(s.hands[1 - self.seat])
        to_move = None if self.hand_over else (YOU if self.your_turn else OPPONENT)
        table = player_view(self.rules, mine["observation"], mine["action_mask"], to_move=to_move,
                            result=result_view(s.result, self.seat), log=self.log, opponent_hand=opp_hand)
        match = None
        if self.match is not None:
            m = self.match
            match = {YOU: m.points[self.seat], OPPONENT: m.points[1 - self.seat], "carry": m.carry,
                     "target": self.rules.match_target, "hands_played": m.hands_played, "over": m.over,
                     "winner": None if m.winner is None else (YOU if m.winner == self.seat else OPPONENT)}
        return {"game": self.id, "version": self.version, "seat": PLAYERS[self.seat], "ruleset": self.rules.name,
                "mode": self.mode, "seed": self.public_seed, "opponent": self.opponent.to_json(),
                "hand_no": self.hand_no,
                "match": match, "finished_hands": len(self.finished), "table": table}


# ------------------------------------------------------------------------------------------------- replays
class Replay:
    """Game records to replay (uploaded, or the finished hands of a game).

    A replay keeps each record as its compact JSON text (about 1 KB), not as Python objects (about 6 KB each: an
    upload of 1 MiB held 6 MB), and parses the one it is asked about again (a millisecond); :attr:`size` is what
    it holds, in bytes, for the store's budget.

    Args:
        rid: the replay's id.
        name: how messages name the source (``"upload 'games.jsonl'"``).
        records: the records, each already replayed once (:func:`schnapsen_env.records.parse_records` with
            ``check=True`` or the records of finished hands), and each of text that JSON can carry (UTF-8, no NaN).

    Raises:
        WebError: 422, no records.
    """

    def __init__(self, rid: str, name: str, records: list[HandRecord]) -> None:
        if not records:
            raise WebError(422, f"{name}: no records in it: expected a JSON Lines file with one game record a line")
        self.id, self.name = rid, name
        self._lines = [json.dumps(r.to_dict(), separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
                       for r in records]
        self._last: tuple[int, HandRecord] | None = None
        self.size = sum(len(line) for line in self._lines)
        self.lock = asyncio.Lock()
        self.analyses: dict[tuple, Any] = {}

    def __len__(self) -> int:
        return len(self._lines)

    def summary(self) -> dict[str, Any]:
        """``{"replay", "name", "records": [record_summary ...]}``."""
        return {"replay": self.id, "name": self.name,
                "records": [record_summary(self.record(k), k) for k in range(len(self._lines))]}

    def record(self, index: int) -> HandRecord:
        """Record ``index``.

        Raises:
            WebError: 404, no such record.
        """
        if not 0 <= index < len(self._lines):
            raise WebError(404, f"record {index} is not in {self.name}: it holds records 0..{len(self._lines) - 1}")
        if self._last is None or self._last[0] != index:
            self._last = (index, HandRecord.from_dict(json.loads(self._lines[index]), f"{self.name} record {index}"))
        return self._last[1]

    def record_text(self, index: int) -> bytes:
        """Record ``index`` as its compact JSON text (raises as :meth:`record`)."""
        self.record(index)
        return self._lines[index]

    def default_seat(self, index: int) -> int:
        """The seat a record is seen from: the one labelled ``human`` (a game of this app), else ``player_0``."""
        players = self.record(index).players or {}
        for seat, label in players.items():
            if label == HUMAN:
                return PLAYERS.index(seat)
        return 0

    def frames(self, index: int, seat: int | None) -> dict[str, Any]:
        """The frames of record ``index`` seen from ``seat`` (None: :meth:`default_seat`), every card shown."""
        seat = self.default_seat(index) if seat is None else seat
        record = self.record(index)
        try:
            frames = replay_frames(record, seat, f"{self.name} record {index}")
        except (RecordError, RulesError) as e:
            raise WebError(422, str(e)) from None
        return {"replay": self.id, "index": index, "seat": PLAYERS[seat],
                "summary": record_summary(record, index), "frames": frames}

    def position(self, index: int, step: int) -> GameState:
        """The state of record ``index`` after its first ``step`` actions.

        Raises:
            WebError: 404, no such record or step.
        """
        record = self.record(index)
        if not 0 <= step <= len(record.actions):
            raise WebError(404, f"step {step} is not in record {index}: it has steps 0..{len(record.actions)}")
        for k, (state, _) in enumerate(replay(record)):
            if k == step:
                return state.copy()
        raise AssertionError("unreachable: the record replays to its end")  # pragma: no cover


# ------------------------------------------------------------------------------------------------- store
T = TypeVar("T")


class Store(Generic[T]):
    """Items by an unguessable id: at most ``limit`` of them and ``max_bytes`` of their sizes together (the least
    recently used are dropped first), each forgotten once unused for ``idle_seconds``.

    Args:
        what: what the items are, for messages (``"game"``).
        limit: the most items kept.
        idle_seconds: an item unused (neither made nor asked for) this long is dropped (None: never).
        max_bytes: the most bytes of items kept together, by ``size`` (None: no budget).
        size: an item's size in bytes (for ``max_bytes``).
        on_drop: called with ``(key, item, why)`` for every item dropped (``why``: ``"deleted"``, ``"expired"``,
            ``"evicted"``), after it is gone from the store: the app stops the item's searches.
        clock: the time in seconds (:func:`time.monotonic`; tests pass their own).
    """

    def __init__(self, what: str, limit: int, idle_seconds: float | None = None, max_bytes: int | None = None,
                 size: Callable[[T], int] | None = None, on_drop: Callable[[str, T, str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.what, self.limit, self.idle_seconds, self.max_bytes = what, limit, idle_seconds, max_bytes
        self._size, self._on_drop, self._clock = size or (lambda item: 0), on_drop, clock
        self._items: OrderedDict[str, T] = OrderedDict()  # least recently used first
        self._used: dict[str, float] = {}
        self.bytes = 0
        #: Items dropped since the start, by why.
        self.dropped: dict[str, int] = {"deleted": 0, "expired": 0, "evicted": 0}

    @staticmethod
    def new_id() -> str:
        """A fresh id: 128 random bits, URL-safe (:func:`secrets.token_urlsafe`)."""
        return secrets.token_urlsafe(16)

    def _drop(self, key: str, why: str) -> None:
        item = self._items.pop(key)
        del self._used[key]
        self.bytes -= self._size(item)
        self.dropped[why] += 1
        if self._on_drop is not None:
            self._on_drop(key, item, why)

    def expire(self) -> int:
        """Drop the items unused for ``idle_seconds``; returns how many."""
        if self.idle_seconds is None:
            return 0
        now, n = self._clock(), 0
        while self._items:
            key = next(iter(self._items))
            if now - self._used[key] < self.idle_seconds:
                break
            self._drop(key, "expired")
            n += 1
        return n

    def add(self, key: str, item: T) -> None:
        """Keep ``item`` under ``key``, dropping the least recently used items beyond the limit and the budget (the
        new item stays, even alone over the budget).

        Raises:
            ValueError: ``key`` is taken.
        """
        self.expire()
        if key in self._items:
            raise ValueError(f"{self.what} id {key!r} is taken")
        self._items[key] = item
        self._used[key] = self._clock()
        self.bytes += self._size(item)
        while len(self._items) > self.limit or (self.max_bytes is not None and self.bytes > self.max_bytes
                                                 and len(self._items) > 1):
            self._drop(next(iter(self._items)), "evicted")

    def get(self, key: str) -> T:
        """The item ``key`` (now the most recently used).

        Raises:
            WebError: 404, no such item (never made, deleted, dropped or expired).
        """
        self.expire()
        try:
            item = self._items[key]
        except (KeyError, TypeError):
            raise WebError(404, f"unknown {self.what} {str(key)[:40]!r}: it does not exist or has expired (the server "
                                "keeps games in memory only, and restarts forget them); start a new one") from None
        self._items.move_to_end(key)
        self._used[key] = self._clock()
        return item

    def remove(self, key: str) -> None:
        """Forget ``key``.

        Raises:
            WebError: 404, no such item.
        """
        self.get(key)
        self._drop(key, "deleted")

    def __len__(self) -> int:
        return len(self._items)


__all__ = ["HUMAN", "MAX_SEED", "MODES", "Catalogue", "Choice", "Game", "Replay", "Store", "WebError",
           "derive_seed", "seat_history", "text_key"]
