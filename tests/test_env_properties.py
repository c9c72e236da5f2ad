"""Seeded random-play property tests through the PettingZoo AEC env (``schnapsen_v0.raw_env``).

Both rulesets, hand and match episodes, a few knob variants. At every step:

* for every action id, the action is in the mask of the agent to move iff a copy of the engine loaded from
  ``env.unwrapped.position()`` accepts ``step(action)`` (no ``IllegalActionError``); the waiting agent's mask
  is all zeros;
* both agents' observations lie in their observation space, ``state()`` in ``state_space``;
* the observation equals ``encoding.observation`` of the loaded copy (it is a function of the position);
* ``infos`` are the same for both agents, hold only the public keys of API.md, agree with the engine's points
  and tricks, and contain no card code of any card in a hand or in the stock;
* rewards are zero-sum, zero except at the end of a hand, and match ``infos`` results.

``position()`` must also round-trip exactly through ``GameState.from_position`` at every step (API.md).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from schnapsen_env import GameState, IllegalActionError, InvalidPositionError, encoding, schnapsen_v0

PLAYERS = ("player_0", "player_1")
CARD_CODE = re.compile(r"(?<![A-Za-z0-9])[ATKQJ9][CDHS](?![A-Za-z0-9])")
INFO_KEYS = {"points", "tricks", "match_points", "carry", "result", "match_winner", "last_hand"}

# (id, env kwargs, number of episodes)
CONFIGS = [
    ("schnapsen20-hand", {"ruleset": "schnapsen20"}, 40),
    ("sixtysix24-hand", {"ruleset": "sixtysix24"}, 36),
    ("schnapsen20-match", {"ruleset": "schnapsen20", "episode": "match"}, 5),
    ("sixtysix24-match-gp", {"ruleset": "sixtysix24", "episode": "match", "reward": "game_points"}, 5),
    ("schnapsen20-hand-mirror-min2", {"ruleset": "schnapsen20", "false_claim": "mirror", "exchange_min_stock": 2,
                                      "close_min_stock": 2}, 20),
    ("sixtysix24-match-auto", {"ruleset": "sixtysix24", "episode": "match", "claim_mode": "auto",
                               "false_claim": "pagat"}, 3),
]


def _loadable(pos: dict) -> dict:
    """``pos`` with ``exchanged`` cleared once a card is on the table (see test_position_round_trip_every_step:
    ``from_position`` refuses that combination, which ``position()`` produces after an exchange and a lead)."""
    if pos["exchanged"] and pos["table"] is not None:
        return {**pos, "exchanged": False}
    return pos


def _strings(obj):
    """Every string (dict keys included) inside a nested structure of dicts / lists / tuples."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(obj, (list, tuple, set)):
        for v in obj:
            yield from _strings(v)


def _check_infos(env, pos: dict) -> None:
    infos = env.infos
    assert set(infos) == set(env.agents)
    info = infos["player_0"]
    assert infos["player_1"] == info, "infos differ between agents (they must hold public info only)"
    assert set(info) <= INFO_KEYS, set(info) - INFO_KEYS
    private = set(pos["hands"]["player_0"]) | set(pos["hands"]["player_1"]) | set(pos["stock"])
    for s in _strings(info):
        leaked = set(CARD_CODE.findall(s)) & private
        assert not leaked, f"infos hold hidden card(s) {leaked}: {info}"
    assert info["points"] == pos["points"] and info["tricks"] == pos["tricks"]


def _play(config_id: str, kwargs: dict, episodes: int, seed: int, check_round_trip: bool = False) -> dict:
    env = schnapsen_v0.raw_env(**kwargs)
    rules = env.rules
    n_actions = rules.n_actions
    rng = np.random.default_rng(seed)
    stats = {"steps": 0, "hands_ended": 0, "round_trip_failures": []}
    for ep in range(episodes):
        env.reset(seed=seed * 1000 + ep)
        while True:
            pos = env.unwrapped.position()
            _check_infos(env, pos)
            assert env.state_space.contains(env.state())
            for agent in PLAYERS:
                o = env.observe(agent)
                assert env.observation_space(agent).contains(o), (agent, o)
            if all(env.terminations.values()):
                break
            agent = env.agent_selection
            seat = PLAYERS.index(agent)
            other = PLAYERS[1 - seat]
            assert env.observe(other)["action_mask"].sum() == 0
            obs = env.observe(agent)
            mask = obs["action_mask"]
            if check_round_trip:
                try:
                    back = GameState.from_position(rules, pos).position()
                    if back != pos:
                        stats["round_trip_failures"].append(("changed", pos, back))
                except InvalidPositionError as e:
                    stats["round_trip_failures"].append((str(e), pos))
            game = GameState.from_position(rules, _loadable(pos))
            assert game.to_move == seat
            assert np.array_equal(obs["observation"], encoding.observation(game, seat))
            for aid in range(n_actions):
                copy = game.copy()
                try:
                    copy.step(aid)
                    accepted = True
                except IllegalActionError:
                    accepted = False
                    assert copy == game, "a refused step changed the state"
                assert accepted == bool(mask[aid]), (
                    f"{config_id}: action {env.action_names[aid]!r} mask={mask[aid]} engine accepts={accepted}\n"
                    f"{pos}")
            assert mask.sum() >= 1
            action = int(rng.choice(np.flatnonzero(mask)))
            env.step(action)
            stats["steps"] += 1
            rewards = env.rewards
            assert sum(rewards.values()) == 0
            ended = all(env.terminations.values()) or "last_hand" in env.infos["player_0"]
            if ended:
                stats["hands_ended"] += 1
                res = env.infos["player_0"].get("last_hand") or env.infos["player_0"]["result"]
                assert res["game_points"] in (0, 1, 2, 3)
                if env.episode == "hand":
                    want = {a: 0 for a in PLAYERS}
                    if res["winner"] is not None:
                        want[res["winner"]] = res["game_points"]
                        want[PLAYERS[1 - PLAYERS.index(res["winner"])]] = -res["game_points"]
                    assert rewards == want
            else:
                assert not any(rewards.values()), rewards
    return stats


@pytest.mark.parametrize("config_id, kwargs, episodes", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_random_play_properties(config_id, kwargs, episodes):
    stats = _play(config_id, kwargs, episodes, seed=7 + CONFIGS.index((config_id, kwargs, episodes)))
    assert stats["hands_ended"] >= episodes
    assert stats["steps"] >= 4 * episodes


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_position_round_trip_every_step(ruleset):
    """API.md: ``position()`` round-trips exactly, so ``reset(options={"position": env.position()})`` and
    ``GameState.from_position(rules, env.position())`` work at every step."""
    stats = _play(f"{ruleset}-round-trip", {"ruleset": ruleset}, 30, seed=99, check_round_trip=True)
    failures = stats["round_trip_failures"]
    assert not failures, (f"{len(failures)} of {stats['steps']} positions do not round-trip; first: "
                          f"{failures[0][0]} (table={failures[0][1]['table']}, exchanged="
                          f"{failures[0][1]['exchanged']}): {failures[0][1]}")
