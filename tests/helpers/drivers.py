"""Replaying a rule-book scenario through the engine or the PettingZoo AEC env, with the same checks.

A driver plays one hand and answers the questions that the scenarios' ``expect:`` lines ask, each in its own
way: :class:`EngineDriver` through :class:`GameState` (``legal_action_names`` checked against the mask,
``counted``, ``step``), :class:`EnvDriver` through the env (``observe()`` masks, ``infos`` points and tricks,
``env.step``), ``raw`` (``schnapsen_v0.raw_env``) or ``wrapped`` (``schnapsen_v0.env``). Players are ``"A"``
(``player_0``) and ``"B"`` (``player_1``); actions are names (``"play KS"``, ``"marriage S"``, ``"claim"``).

:func:`replay` plays a scenario's steps and calls ``checks[(sid, text)](driver)`` for each ``expect:`` line.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from helpers.rulebook import SEAT, Scenario, load_block
from schnapsen_env import GameState, IllegalActionError, RuleSet, schnapsen_v0

DRIVERS = ("engine", "raw", "wrapped")


class Driver:
    """What every driver offers; the views below (hand, stock, ...) read ``position()``."""

    kind: str

    # ---- implemented per driver
    def to_move(self) -> str | None: ...
    def legal(self, who: str) -> set[str]: ...
    def act(self, who: str, name: str) -> None: ...
    def refuse(self, who: str, name: str) -> None: ...
    def points(self, who: str) -> int: ...
    def tricks(self, who: str) -> int: ...
    def pending(self, who: str) -> int: ...
    def is_strict(self) -> bool: ...
    def position(self) -> dict: ...

    @property
    def over(self) -> bool: ...

    def assert_result(self, winner: str | None, game_points: int, reason: str) -> None:
        res = self.position()["result"]
        assert res is not None, "the hand should be over"
        assert res == {"winner": None if winner is None else SEAT[winner], "game_points": game_points,
                       "reason": reason}, res

    # ---- views
    def hand(self, who: str) -> set[str]:
        return set(self.position()["hands"][SEAT[who]])

    def stock(self) -> list[str]:
        return self.position()["stock"]

    def turn_up(self) -> str | None:
        stock = self.stock()
        return stock[-1] if stock else None

    def snapshot(self) -> tuple[int, int]:
        snap = self.position()["closing_snapshot"]
        return snap["points"], snap["tricks"]

    def marriages(self, who: str) -> list[str]:
        return self.position()["marriages"][SEAT[who]]


class EngineDriver(Driver):
    kind = "engine"

    def __init__(self, state: GameState) -> None:
        self.st = state

    @classmethod
    def load(cls, sc: Scenario, rules: RuleSet) -> EngineDriver:
        return cls(load_block(sc.block, rules))

    @classmethod
    def deal(cls, rules: RuleSet, deck, dealer: str) -> EngineDriver:
        return cls(GameState.from_deck(rules, list(deck), SEAT[dealer]))

    def to_move(self) -> str | None:
        return None if self.st.result is not None else "AB"[self.st.to_move]

    def legal(self, who: str) -> set[str]:
        if self.to_move() != who:
            return set()
        names = set(self.st.legal_action_names())
        mask = self.st.action_mask()
        rules = self.st.rules
        assert names == {rules.action_names[i] for i in range(rules.n_actions) if mask[i]}, \
            "action_mask disagrees with legal_action_names"
        return names

    def act(self, who: str, name: str) -> None:
        assert self.st.result is None, f"{who} {name}: the hand is already over ({self.st.result})"
        assert self.to_move() == who, f"{name}: {self.to_move()} to move, not {who}"
        self.st.step(name)

    def refuse(self, who: str, name: str) -> None:
        """RULES.md ``illegal:``: not offered by the mask, refused by step(), state unchanged."""
        assert self.to_move() == who, f"{name}: {self.to_move()} to move, not {who}"
        assert self.st.action_mask()[self.st.rules.action_id(name)] == 0, f"{name!r} is offered by the mask"
        assert name not in self.legal(who)
        before_pos, before = self.st.position(), self.st.copy()
        with pytest.raises(IllegalActionError):
            self.st.step(name)
        assert self.st.position() == before_pos
        assert self.st == before

    def points(self, who: str) -> int:
        seat = int(SEAT[who][-1])
        assert self.st.position()["points"][SEAT[who]] == self.st.counted(seat)
        return self.st.counted(seat)

    def tricks(self, who: str) -> int:
        return self.st.tricks[int(SEAT[who][-1])]

    def pending(self, who: str) -> int:
        return self.st.pending_marriage_points(int(SEAT[who][-1]))

    def is_strict(self) -> bool:
        return self.st.is_strict

    def position(self) -> dict:
        return self.st.position()

    @property
    def over(self) -> bool:
        return self.st.result is not None

    def assert_result(self, winner: str | None, game_points: int, reason: str) -> None:
        super().assert_result(winner, game_points, reason)
        r = self.st.result
        assert (r.winner, r.game_points, r.reason) == (None if winner is None else "AB".index(winner), game_points,
                                                       reason)
        assert self.st.legal_actions() == [] and not self.st.action_mask().any()


class EnvDriver(Driver):
    """The AEC env: ``raw`` (illegal actions raise and change nothing) or ``wrapped`` (PettingZoo's wrappers: an
    illegal action would end the episode, so :meth:`refuse` checks the mask only)."""

    def __init__(self, kind: str, ruleset: str, knobs: dict) -> None:
        assert kind in ("raw", "wrapped")
        self.kind = kind
        make = schnapsen_v0.raw_env if kind == "raw" else schnapsen_v0.env
        self.env = make(ruleset=ruleset, **knobs)
        self.names = list(self.env.unwrapped.action_names)

    @classmethod
    def load(cls, kind: str, sc: Scenario, rules_knobs: dict) -> EnvDriver:
        d = cls(kind, sc.ruleset, rules_knobs)
        d.env.reset(options={"position": sc.position})
        block, deck = sc.block, d.env.unwrapped.rules.deck
        pos = d.position()
        for who, agent in SEAT.items():  # the listed totals, through the env
            assert sum(deck.points[deck.index(c)] for c in pos["won"][agent]) == block.card_points[agent], agent
            assert d.points(who) == block.counted[agent], agent
            assert d.tricks(who) == block.tricks[agent], agent
        assert len(d.stock()) == block.stock_size
        return d

    @classmethod
    def deal(cls, kind: str, ruleset: str, knobs: dict, deck, dealer: str) -> EnvDriver:
        d = cls(kind, ruleset, knobs)
        d.env.reset(options={"deck": list(deck), "dealer": SEAT[dealer]})
        return d

    def to_move(self) -> str | None:
        return None if self.over else "AB"[int(self.env.agent_selection[-1])]

    def _mask(self, who: str) -> np.ndarray:
        return self.env.observe(SEAT[who])["action_mask"]

    def legal(self, who: str) -> set[str]:
        mask = self._mask(who)
        if self.to_move() != who:
            assert not mask.any(), f"{who} is not to move but has a non-zero mask"
            return set()
        return {self.names[i] for i in np.flatnonzero(mask)}

    def act(self, who: str, name: str) -> None:
        assert not self.over, f"{who} {name}: the hand is already over"
        assert self.to_move() == who, f"{name}: {self.to_move()} to move, not {who}"
        aid = self.names.index(name)
        assert self._mask(who)[aid] == 1, f"{name} not in {who}'s mask"
        self.env.step(aid)

    def refuse(self, who: str, name: str) -> None:
        assert self.to_move() == who, f"{name}: {self.to_move()} to move, not {who}"
        aid = self.names.index(name)
        assert self._mask(who)[aid] == 0, f"{name!r} is offered by the mask"
        if self.kind == "raw":
            before = self.position()
            with pytest.raises(IllegalActionError):
                self.env.step(aid)
            assert self.position() == before and self.to_move() == who

    def _info(self) -> dict:
        assert self.env.infos["player_0"] == self.env.infos["player_1"], "infos differ between agents"
        return self.env.infos["player_0"]

    def points(self, who: str) -> int:
        return self._info()["points"][SEAT[who]]

    def tricks(self, who: str) -> int:
        return self._info()["tricks"][SEAT[who]]

    def pending(self, who: str) -> int:
        """Marriages declared while the player has no trick (RULES.md section 1), from ``position()``."""
        pos = self.position()
        if pos["tricks"][SEAT[who]]:
            return 0
        return sum(40 if s == pos["trump"] else 20 for s in pos["marriages"][SEAT[who]])

    def is_strict(self) -> bool:
        pos = self.position()
        return pos["closed_by"] is not None or not pos["stock"]

    def position(self) -> dict:
        return self.env.unwrapped.position()

    @property
    def over(self) -> bool:
        return all(self.env.terminations.values())

    def assert_result(self, winner: str | None, game_points: int, reason: str) -> None:
        env = self.env
        assert self.over and not any(env.truncations.values())
        res = env.infos["player_0"]["result"]
        assert env.infos["player_1"]["result"] == res
        assert res == {"winner": None if winner is None else SEAT[winner], "game_points": game_points,
                       "reason": reason}, res
        super().assert_result(winner, game_points, reason)
        for who, agent in SEAT.items():
            want = 0 if winner is None else (game_points if who == winner else -game_points)
            assert env.rewards[agent] == want, (agent, env.rewards)
            assert env._cumulative_rewards[agent] == want, (agent, env._cumulative_rewards)
            assert env.observe(agent)["action_mask"].sum() == 0


def load(kind: str, sc: Scenario, **knobs) -> Driver:
    """A driver of ``kind`` (one of :data:`DRIVERS`) at the scenario's position, under its knobs plus ``knobs``."""
    all_knobs = {**sc.knobs, **knobs}
    if kind == "engine":
        return EngineDriver.load(sc, RuleSet.make(sc.ruleset, **all_knobs))
    return EnvDriver.load(kind, sc, all_knobs)


def deal(kind: str, ruleset: str, knobs: dict, deck, dealer: str) -> Driver:
    """A driver of ``kind`` that dealt ``deck`` with ``dealer`` (``"A"``/``"B"``) dealing."""
    if kind == "engine":
        return EngineDriver.deal(RuleSet.make(ruleset, **knobs), deck, dealer)
    return EnvDriver.deal(kind, ruleset, knobs, deck, dealer)


def replay(sc: Scenario, d: Driver, checks: dict[tuple[str, str], Callable[[Driver], None]],
           stop_before: int | None = None) -> None:
    """Play the scenario's steps on ``d`` (up to, not including, step ``stop_before``); ``checks[(sid, text)]``
    checks each ``expect:`` line (a KeyError if a line has no check)."""
    for step in sc.steps:
        if step.number == stop_before:
            return
        where = f"{sc.sid} step {step.number} ({step.text!r}, {d.kind})"
        if step.kind == "expect":
            checks[(sc.sid, step.expect)](d)
        elif step.kind == "illegal":
            d.refuse(step.who, step.actions[0])
        elif step.kind == "scored":
            assert d.over, f"{where}: the hand should have ended by itself"
        elif step.kind == "claim" and d.over:
            # a claim written after the last trick: the engine made it (W3)
            pos = d.position()
            assert not any(pos["hands"].values()), f"{where}: the hand ended before the last trick"
            assert pos["result"]["reason"] == "claim" and pos["result"]["winner"] == SEAT[step.who], where
        else:
            if step.kind == "exchange":
                assert d.turn_up() == step.turn_up and step.card in d.hand(step.who), where
            hands_before = d.position()["hands"]
            for name in step.actions:
                d.act(step.who, name)
            if step.kind == "exchange":
                assert d.turn_up() == step.card, where
                assert step.turn_up in d.hand(step.who) and step.card not in d.hand(step.who), where
            elif step.kind == "close":
                assert d.position()["closed_by"] == SEAT[step.who], where
            elif step.kind == "claim":
                assert d.over, f"{where}: a claim ends the hand"
                pos = d.position()
                assert pos["hands"] == hands_before and pos["table"] is None, f"{where}: nobody plays after a claim"
