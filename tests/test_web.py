"""``schnapsen-web`` through its HTTP API (FastAPI's test client; the searches in real worker processes).

* Whole hands in both rulesets from both seats, and whole matches to 7, played over HTTP: every view agrees with
  the server's hidden state where the person may see it, and the downloaded records replay to the results shown.
* Bad requests (an illegal action, a stale version, an unknown game, malformed bodies, an opponent path instead of
  an id, oversized and corrupt uploads) each get a clear 4xx and change nothing.
* Sealed information: at decision points of seeded games the hidden cards (the opponent's unseen hand, the stock
  order) are swapped in the server's state; the JSON the page receives, and the analysis it gets, stay identical,
  and no hidden card is named anywhere in it. Swapping a card the person sees changes the view (the check can fail).
  A seed the server drew (it deals the hidden cards) is sent only once the game is over; an opponent's illegal
  action is not named.
* Hostile requests: bodies that are no JSON, oversized bodies, requests from a page of another site, records whose
  knobs the app cannot hold.
* Analysis gives a value (or probability) for every legal action; several games at once do not interfere; the
  server answers while a long search runs; uploaded records replay move by move with every card shown.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the optional extra 'web' (fastapi, uvicorn) is not installed")
pytest.importorskip("httpx", reason="httpx (the dev extra) runs FastAPI's test client")

with warnings.catch_warnings():  # starlette's test client prefers httpx2 (Python >= 3.11 only); httpx works
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")
    from fastapi.testclient import TestClient  # noqa: E402

from agents import STRONGEST_POLICIES, STRONGEST_POLICY, shipped_policies  # noqa: E402
from agents.web.app import MAX_UPLOAD_BYTES, create_app  # noqa: E402
from agents.web.search import POLICY_NAMES  # noqa: E402
from schnapsen_env import GameState, RuleSet  # noqa: E402
from schnapsen_env.encoding import observation  # noqa: E402
from schnapsen_env.errors import IllegalActionError  # noqa: E402
from schnapsen_env.records import Recorder, parse_records, record_of, replay_to_end  # noqa: E402
from schnapsen_env.rules import PLAYERS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CARD = re.compile(r"\b[ATKQJ9][CDHS]\b")


@pytest.fixture(scope="module")
def app():
    return create_app(seed=0, workers=2)


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app) as c:  # the lifespan runs: the workers stop at the end
        yield c


def new_game(client, **settings) -> dict:
    r = client.post("/api/games", json=settings)
    assert r.status_code == 201, r.json()
    return r.json()


def act(client, view: dict, action: str) -> dict:
    r = client.post(f"/api/games/{view['game']}/actions", json={"action": action, "version": view["version"]})
    assert r.status_code == 200, r.json()
    return r.json()


def check_against_state(app, view: dict) -> None:
    """The view shows what the person may see of the server's real state, correctly."""
    game = app.state.games.get(view["game"])
    s, me = game.state, game.seat
    opp = 1 - me
    codes = s.rules.deck.codes
    t = view["table"]
    assert t["hand"] == [codes[c] for c in range(s.deck.size) if s.hands[me] >> c & 1]
    assert t["opponent"]["hand_size"] == s.hands[opp].bit_count()
    assert t["opponent"]["known"] == s.rules.deck.codes_of(s.known[opp])
    assert t["stock"]["size"] == len(s.stock)
    assert t["stock"]["turn_up"] == (codes[s.stock[-1]] if s.stock else None)
    assert (t["you"]["points"], t["opponent"]["points"]) == (s.counted(me), s.counted(opp))
    assert (t["you"]["tricks"], t["opponent"]["tricks"]) == (s.tricks[me], s.tricks[opp])
    assert t["table"] == (codes[s.table] if s.table >= 0 else None)
    if s.result is None and s.to_move == me:
        assert [a["name"] for a in t["legal"]] == s.legal_action_names()
    else:
        assert t["legal"] == []


def play_to_end(client, app, view: dict, rng: np.random.Generator) -> tuple[dict, list[dict]]:
    """Random legal moves of the person until the hand ends; returns the last view and every move reported."""
    moves = list(view["table"]["log"])
    while view["table"]["result"] is None:
        check_against_state(app, view)
        legal = [a["name"] for a in view["table"]["legal"]]
        out = act(client, view, legal[int(rng.integers(len(legal)))])
        moves += out["moves"]
        view = out["view"]
    check_against_state(app, view)
    return view, moves


# ------------------------------------------------------------------------------------------------ the page
def test_the_page_and_its_files_are_served(client):
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    for path in ("/static/app.js", "/static/style.css", "/static/favicon.svg"):
        assert path in r.text
        assert client.get(path).status_code == 200
    cards = client.get("/api/cards").json()
    assert len(cards["faces"]) == 24 and "AS" in cards["faces"] and "9C" in cards["faces"]
    assert cards["faces"]["TH"].startswith("<svg") and "#2e5fa3" in cards["back"]


def test_options_offer_the_registered_agents_and_no_paths(client):
    o = client.get("/api/options").json()
    s20 = [x["id"] for x in o["opponents"]["schnapsen20"]]
    s24 = [x["id"] for x in o["opponents"]["sixtysix24"]]
    assert {"random", "heuristic", "rollout", "pimc", "expert", *shipped_policies("schnapsen20")} <= set(s20)
    for ruleset, offered in o["opponents"].items():  # each ruleset's shipped policies, and no other's
        assert set(POLICY_NAMES) & {x["id"] for x in offered} == set(shipped_policies(ruleset)), ruleset
    assert set(shipped_policies("sixtysix24")) <= set(s24)
    assert o["default_opponent"] == STRONGEST_POLICIES and STRONGEST_POLICIES["schnapsen20"] == STRONGEST_POLICY
    assert [a["id"] for a in o["analysers"]["schnapsen20"]][:2] == ["pimc", "expert"]
    assert set(shipped_policies("schnapsen20")) <= {a["id"] for a in o["analysers"]["schnapsen20"]}
    assert [a["id"] for a in o["analysers"]["sixtysix24"]] == ["pimc", "expert", *shipped_policies("sixtysix24")]


@pytest.mark.parametrize("ruleset, claim, plain, trump", [("schnapsen20", 66, 20, 40), ("sixtysix24", 66, 20, 40),
                                                         ("schnapsen10", 33, 10, 20)])
def test_the_view_carries_the_rulesets_targets_for_the_labels(client, ruleset, claim, plain, trump):
    """The page labels the claim and marriage buttons from the view (RS3 halves them), not from constants."""
    view = new_game(client, opponent="random", seat="player_0", ruleset=ruleset, mode="hand", seed=1)
    t = view["table"]
    assert (t["claim_target"], t["marriage_points"]) == (claim, {"plain": plain, "trump": trump})
    js = (Path(__file__).resolve().parents[1] / "agents" / "web" / "static" / "app.js").read_text()
    assert "Claim 66" not in js and "t.claim_target" in js and "t.marriage_points.trump" in js


def test_the_view_counts_the_tricks_a_closed_hand_lasts():
    """Closed at its first lead, the stock's cards are dead (R19) and the hand lasts the five tricks of the cards in
    the hands: the view (and so the page's "trick 3 of 5") counts those, from the player's observation alone."""
    from agents.web.view import YOU, player_view
    from schnapsen_env.encoding import observation

    rules = RuleSet.make("schnapsen20")
    state = Recorder.deal(rules, np.random.default_rng(4)).state
    counters = []
    while state.result is None:
        view = player_view(rules, observation(state, state.to_move), state.action_mask(), to_move=YOU)
        counters.append((view["trick"], view["n_tricks"]))
        close = rules.action_names.index("close")
        state.step(close if state.is_legal(close) else state.legal_actions()[0])
    assert state.closed_by >= 0 and sum(state.tricks) == 5
    assert counters[0] == (1, 10) and counters[1:] == [(k, 5) for k in range(1, 6) for _ in range(2)], counters


# ------------------------------------------------------------------------------------------------ whole games
@pytest.mark.parametrize("ruleset,seat,opponent", [("schnapsen20", "player_0", "random"),
                                                   ("schnapsen20", "player_1", "heuristic"),
                                                   ("sixtysix24", "player_0", "heuristic"),
                                                   ("sixtysix24", "player_1", "random"),
                                                   ("schnapsen10", "player_1", "expert")])
def test_a_whole_hand_over_http(client, app, ruleset, seat, opponent):
    rng = np.random.default_rng(7)
    for seed in (11, 12):
        view = new_game(client, opponent=opponent, seat=seat, ruleset=ruleset, mode="hand", seed=seed)
        assert (view["seat"], view["ruleset"], view["mode"], view["seed"]) == (seat, ruleset, "hand", seed)
        view, moves = play_to_end(client, app, view, rng)
        assert moves == view["table"]["log"]  # the moves reported, in order, are the hand's log
        assert view["match"] is None and view["finished_hands"] == 1
        r = client.get(f"/api/games/{view['game']}/records")
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
        assert "attachment" in r.headers["content-disposition"]
        [record] = parse_records(r.content, "download")  # replays (check=True)
        assert record.actions == [m["action"] for m in moves]
        assert record.players == {seat: "human", PLAYERS[1 - PLAYERS.index(seat)]: opponent}
        end = replay_to_end(record)
        me = PLAYERS.index(seat)
        winner = None if end.result.winner is None else ("you" if end.result.winner == me else "opponent")
        assert view["table"]["result"] == {"winner": winner, "game_points": end.result.game_points,
                                           "reason": str(end.result.reason)}
        assert view["table"]["opponent_hand"] == end.rules.deck.codes_of(end.hands[1 - me])  # revealed at the end
        again = client.post(f"/api/games/{view['game']}/actions", json={"action": "claim"})
        assert again.status_code == 409 and "hand is over" in again.json()["error"]


@pytest.mark.parametrize("ruleset,seat", [("schnapsen20", "player_1"), ("sixtysix24", "player_0")])
def test_a_whole_match_to_7_over_http(client, app, ruleset, seat):
    rng = np.random.default_rng(3)
    view = new_game(client, opponent="random", seat=seat, ruleset=ruleset, mode="match", seed=5)
    me = PLAYERS.index(seat)
    score, carry, hands = [0, 0], 0, 0
    while True:
        assert view["match"]["hands_played"] == hands
        before = view["table"]["match_before"]
        assert (before["you"], before["opponent"], before["carry"]) == (score[me], score[1 - me], carry)
        view, _ = play_to_end(client, app, view, rng)
        hands += 1
        res = view["table"]["result"]
        if res["winner"] is None:
            carry += 1
        else:
            score[me if res["winner"] == "you" else 1 - me] += res["game_points"] + carry
            carry = 0
        m = view["match"]
        assert (m["you"], m["opponent"], m["carry"], m["hands_played"]) == (score[me], score[1 - me], carry, hands)
        if m["over"]:
            break
        assert max(score) < 7
        r = client.post(f"/api/games/{view['game']}/next", json={"version": view["version"]})
        assert r.status_code == 200, r.json()
        view = r.json()
        assert view["hand_no"] == hands + 1 and view["table"]["result"] is None
    assert max(score) >= 7 and m["winner"] == ("you" if score[me] >= 7 else "opponent")
    assert client.post(f"/api/games/{view['game']}/next").status_code == 409  # the match is over
    records = parse_records(client.get(f"/api/games/{view['game']}/records").content, "download")
    assert len(records) == hands
    dealers = [r.dealer for r in records]
    assert all(a != b for a, b in zip(dealers, dealers[1:]))  # the deal alternates (R26)


def test_a_seeded_game_replays_exactly(client):
    def run() -> list[dict]:
        view = new_game(client, opponent="heuristic", seat="player_1", mode="hand", seed=99)
        views = [view]
        rng = np.random.default_rng(1)
        while view["table"]["result"] is None:
            legal = [a["name"] for a in view["table"]["legal"]]
            view = act(client, view, legal[int(rng.integers(len(legal)))])["view"]
            views.append(view)
        return [{k: v for k, v in x.items() if k != "game"} for x in views]

    assert run() == run()


# ------------------------------------------------------------------------------------------------ bad requests
def snapshot(client, view) -> dict:
    r = client.get(f"/api/games/{view['game']}")
    assert r.status_code == 200
    return r.json()


def test_an_illegal_action_is_refused_and_changes_nothing(client, app):
    view = new_game(client, opponent="random", mode="hand", seed=21)
    game = app.state.games.get(view["game"])
    legal = [a["name"] for a in view["table"]["legal"]]
    not_mine = next(f"play {c}" for c in game.rules.deck.codes if f"play {c}" not in legal)
    before = snapshot(client, view)
    cases = [({"action": not_mine}, 409, [not_mine, *legal]),
             ({"action": "exchange"} if "exchange" not in legal else {"action": "claim"}, 409, legal),
             ({"action": "play ZZ"}, 422, ["play ZZ", "action"]),
             ({"action": 999}, 422, ["999"]),
             ({"action": legal[0], "version": view["version"] + 1}, 409, ["stale", str(view["version"])])]
    for body, status, named in cases:
        r = client.post(f"/api/games/{view['game']}/actions", json=body)
        assert r.status_code == status, (body, r.json())
        message = r.json()["error"]
        assert all(n in message for n in named), (body, message)
        assert snapshot(client, view) == before  # nothing changed, not even the version
    assert len(game.state.actions) == len(before["table"]["log"])


def test_malformed_bodies_get_422_naming_the_field(client):
    view = new_game(client, opponent="random", mode="hand", seed=22)
    before = snapshot(client, view)
    url = f"/api/games/{view['game']}/actions"
    cases = [({}, "body.action"), ({"action": ["play AC"]}, "body.action"), ({"action": True}, "body.action"),
             ({"action": "claim", "verison": 1}, "body.verison"), ({"action": "claim", "version": -1}, "body.version"),
             ({"action": "claim", "version": "3"}, "body.version"), ([1, 2], "body")]
    for body, field in cases:
        r = client.post(url, json=body)
        assert r.status_code == 422, body
        assert field in r.json()["error"] and r.json()["fields"], (body, r.json())
    r = client.post(url, content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422 and "body" in r.json()["error"]
    assert snapshot(client, view) == before
    n_games = len(client.app.state.games)
    for body, field in [({"seat": "player_2"}, "body.seat"), ({"ruleset": "skat"}, "body.ruleset"),
                        ({"mode": "tournament"}, "body.mode"), ({"seed": -1}, "body.seed"),
                        ({"seed": 2 ** 63}, "body.seed"), ({"seed": 1.5}, "body.seed"), ({"opponent": 3}, "body.opponent"),
                        ({"colour": "red"}, "body.colour")]:
        r = client.post("/api/games", json=body)
        assert r.status_code == 422 and field in r.json()["error"], (body, r.json())
    assert len(client.app.state.games) == n_games  # no game was made


def test_bodies_that_are_no_json_get_422_saying_what_was_expected(client):
    """A body that does not parse (cut-off JSON, JSON nested too deeply, an int beyond Python's digit limit, text
    that is not UTF-8) is one 422 that says what is wrong with it and which fields the route takes; it changes
    nothing."""
    view = new_game(client, opponent="random", mode="hand", seed=25)
    before = snapshot(client, view)
    n_games = len(client.app.state.games)
    json_type = {"content-type": "application/json"}
    cases = [(f"/api/games/{view['game']}/actions", b'{"action": "play', "not JSON", ["action", "version"]),
             (f"/api/games/{view['game']}/actions", b"[" * 30_000 + b"]" * 30_000, "nested too deeply",
              ["action", "version"]),
             ("/api/games", b'{"seed": ' + b"9" * 5000 + b"}", "digits",
              ["opponent", "seat", "ruleset", "mode", "seed"]),
             ("/api/games", '{"opponent": "\u00e9"}'.encode("latin-1"), "UTF-8", ["opponent", "seed"]),
             (f"/api/games/{view['game']}/analysis", b"{" * 50_000, "", ["analysers", "version"])]
    for url, data, problem, fields in cases:
        r = client.post(url, content=data, headers=json_type)
        assert r.status_code == 422, (url, data[:30], r.text[:200])
        message = r.json()["error"]
        assert message.startswith("body: ") and problem in message and "expected a JSON object" in message, message
        assert all(repr(f) in message for f in fields), message
    assert snapshot(client, view) == before and len(client.app.state.games) == n_games


def test_an_oversized_json_body_gets_413_before_it_is_read_whole(client, app):
    """A JSON body far beyond any request of the API (the upload has its own limit) gets 413 naming the limit,
    whether its length is declared or it comes in chunks, and changes nothing; the server is not made to hold it."""
    from agents.web.app import MAX_BODY_BYTES

    view = new_game(client, opponent="random", mode="hand", seed=26)
    before = snapshot(client, view)
    url = f"/api/games/{view['game']}/actions"
    big = b'{"action": "' + b"x" * (MAX_BODY_BYTES + 1) + b'"}'
    r = client.post(url, content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and f"{MAX_BODY_BYTES:,} bytes" in r.json()["error"], r.text[:200]

    def chunks():  # no Content-Length: the limit must hold while the body is read
        for k in range(0, len(big), 1 << 14):
            yield big[k:k + (1 << 14)]

    r = client.post(url, content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "over the limit" in r.json()["error"], r.text[:200]
    r = client.post("/api/games", content=b'{"seed": 1' + b" " * (MAX_BODY_BYTES + 1) + b"}",
                    headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert snapshot(client, view) == before
    ok = client.post(url, json={"action": view["table"]["legal"][0]["name"], "version": view["version"]})
    assert ok.status_code == 200  # a request of normal size still works


def test_requests_from_a_page_of_another_site_are_refused(client, app):
    """A page of another site open in the same browser may send simple POSTs to 127.0.0.1 (no preflight: no body,
    or text/plain): it cannot read the answers, but without a check it could make games and replays by the
    hundred (evicting the person's own game, keeping the workers busy). A request whose Origin is not the server
    itself is refused with 403, before anything is made; the page's own requests (same origin) and clients that
    send no Origin (scripts, curl) pass."""
    n_games, n_replays = len(app.state.games), len(app.state.replays)
    for origin in ("http://evil.example", "null", "http://127.0.0.1.evil.example"):
        for path, content in [("/api/games", None), ("/api/replays", _records_text([("schnapsen20", 9)]))]:
            r = client.post(path, content=content, headers={"origin": origin, "content-type": "text/plain"})
            assert r.status_code == 403 and "another site" in r.json()["error"], (origin, path, r.text[:200])
    assert (len(app.state.games), len(app.state.replays)) == (n_games, n_replays)
    r = client.post("/api/games", json={"opponent": "random"}, headers={"origin": "http://testserver"})
    assert r.status_code == 201  # the page itself: the same origin as the Host it asked
    assert client.get(f"/api/games/{r.json()['game']}", headers={"origin": "http://evil.example"}).status_code == 200


def test_opponents_are_ids_never_paths(client):
    """A browser cannot make the server load a file: a checkpoint path (even of a real policy) is not an id."""
    shipped = str(ROOT / "agents" / "learned" / "data" / "schnapsen20_policy.pt")
    for opponent in (shipped, "agents/learned/data/schnapsen20_policy.pt", "rollout:n_samples=1000", "../x.pt", ""):
        r = client.post("/api/games", json={"opponent": opponent})
        assert r.status_code == 422, opponent
        assert "not on offer" in r.json()["error"] and r.json()["field"] == "opponent"
    r = client.post("/api/games", json={"opponent": "trained-long", "ruleset": "sixtysix24"})
    assert r.status_code == 422 and "plays schnapsen20, not sixtysix24" in r.json()["error"]


def test_unknown_games_and_routes_get_404_json(client):
    for method, path in [("GET", "/api/games/nope"), ("POST", "/api/games/nope/actions"),
                         ("POST", "/api/games/nope/next"), ("POST", "/api/games/nope/analysis"),
                         ("GET", "/api/games/nope/records"), ("DELETE", "/api/games/nope"),
                         ("GET", "/api/replays/nope/records/0"), ("GET", "/api/no-such-route")]:
        r = client.request(method, path, json={"action": "claim"} if path.endswith("actions") else None)
        assert r.status_code == 404, (method, path)
        assert "error" in r.json() and ("unknown" in r.json()["error"] or "Not Found" in r.json()["error"])


def test_a_deleted_game_is_gone(client):
    view = new_game(client, opponent="random", mode="hand", seed=23)
    assert client.delete(f"/api/games/{view['game']}").status_code == 204
    assert client.get(f"/api/games/{view['game']}").status_code == 404


def test_requests_that_do_not_fit_the_game_now_get_409(client, app):
    view = new_game(client, opponent="random", mode="hand", seed=24)
    gid = view["game"]
    assert client.post(f"/api/games/{gid}/next").status_code == 409  # a single hand
    r = client.get(f"/api/games/{gid}/records")  # the hand is running: its deck would show the hidden cards
    assert r.status_code == 409 and "deck" not in r.text and "once its hand is over" in r.json()["error"]
    assert client.post(f"/api/games/{gid}/replay").status_code == 409
    assert client.post(f"/api/games/{gid}/opponent").status_code == 409  # it is the person's turn
    match = new_game(client, opponent="random", mode="match", seed=24)
    r = client.post(f"/api/games/{match['game']}/next")
    assert r.status_code == 409 and "not over yet" in r.json()["error"]
    view, _ = play_to_end(client, app, view, np.random.default_rng(0))
    r = client.post(f"/api/games/{gid}/analysis", json={"analysers": ["pimc"]})
    assert r.status_code == 409 and "hand is over" in r.json()["error"]


# ------------------------------------------------------------------------------------------------ sealed
def _position_variants(state: GameState, seat: int, rng: np.random.Generator) -> dict[str, dict]:
    """Positions that differ from ``state`` only in what ``seat`` cannot see: (a) the face-down stock permuted,
    (b) the opponent's unseen cards swapped with face-down stock cards, (c) both."""
    pos = state.position()
    if pos["exchanged"] and pos["table"] is not None:  # the engine keeps the flag past the lead (test_env_sealed)
        pos["exchanged"] = False
    opp = PLAYERS[1 - seat]
    face_down = list(pos["stock"][:-1])  # the turn-up (last) was seen, even once the stock is closed
    hidden = [c for c in pos["hands"][opp] if c not in pos["known"][opp]]
    out = {}
    if len(face_down) >= 2:
        perm = list(face_down)
        while perm == face_down:
            perm = [face_down[i] for i in rng.permutation(len(face_down))]
        out["stock order"] = {**pos, "stock": perm + [pos["stock"][-1]]}
    if hidden and face_down:
        k = int(rng.integers(1, min(len(hidden), len(face_down)) + 1))
        gone = [hidden[i] for i in rng.choice(len(hidden), k, replace=False)]
        slots = sorted(int(i) for i in rng.choice(len(face_down), k, replace=False))
        stock = list(pos["stock"])
        came = [stock[i] for i in slots]
        for i, c in zip(slots, gone):
            stock[i] = c
        hands = {**pos["hands"], opp: [c for c in pos["hands"][opp] if c not in gone] + came}
        out["hidden hand"] = {**pos, "stock": stock, "hands": hands}
        if "stock order" in out and len(face_down) >= 2:
            fd = stock[:-1]
            out["both"] = {**pos, "hands": hands, "stock": list(reversed(fd)) + [stock[-1]]}
    return out


def _seen_variant(state: GameState, seat: int) -> dict | None:
    """A position where one card of ``seat``'s own hand is swapped with a card it cannot see (the control)."""
    pos = state.position()
    if pos["exchanged"] and pos["table"] is not None:
        pos["exchanged"] = False
    me, opp = PLAYERS[seat], PLAYERS[1 - seat]
    hidden = [c for c in pos["hands"][opp] if c not in pos["known"][opp]]
    mine = [c for c in pos["hands"][me] if c not in pos["known"][me]]
    if not hidden or not mine:
        return None
    a, b = mine[0], hidden[0]
    hands = {me: [b if c == a else c for c in pos["hands"][me]], opp: [a if c == b else c for c in pos["hands"][opp]]}
    return {**pos, "hands": hands}


def _hidden_codes(state: GameState, seat: int) -> set[str]:
    codes = state.rules.deck.codes
    opp = 1 - seat
    out = {codes[c] for c in range(state.deck.size) if state.hands[opp] >> c & 1 and not state.known[opp] >> c & 1}
    return out | {codes[c] for c in state.stock[:-1]}


def _swap_in(game, state: GameState):
    """Put ``state`` into the game (keeping its record and its undo stack, which the person's history of the hand is
    replayed from: a loaded position has no deal or past of its own)."""
    state.deal, state.actions = game.state.deal, list(game.state.actions)
    state._stack = list(game.state._stack)
    game.state = state


@pytest.mark.parametrize("case,ruleset,seat,opponent", [(0, "schnapsen20", "player_0", "trained"),
                                                        (1, "schnapsen20", "player_1", "heuristic"),
                                                        (2, "sixtysix24", "player_0", "random"),
                                                        (3, "sixtysix24", "player_1", "heuristic")])
def test_the_client_never_receives_a_hidden_card(client, app, case, ruleset, seat, opponent):
    """Swap what the person cannot see in the server's state: the JSON sent is identical; swap what they see: it
    differs. No hidden card code appears anywhere in what is sent."""
    rng = np.random.default_rng(case)
    checked = control = 0
    for seed in (31, 32, 33):
        view = new_game(client, opponent=opponent, seat=seat, ruleset=ruleset, mode="match", seed=seed)
        game = app.state.games.get(view["game"])
        me = game.seat
        while view["table"]["result"] is None:
            original = game.state
            sent = snapshot(client, view)
            text = json.dumps({k: v for k, v in sent.items() if k != "game"})
            assert not set(CARD.findall(text)) & _hidden_codes(original, me), "a hidden card was sent"
            for what, pos in _position_variants(original, me, rng).items():
                variant = GameState.from_position(game.rules, pos)
                assert variant != original
                _swap_in(game, variant)
                assert snapshot(client, view) == sent, f"{what} swapped: the view changed"
                game.state = original
                checked += 1
            seen = _seen_variant(original, me)
            if seen is not None:
                _swap_in(game, GameState.from_position(game.rules, seen))
                assert snapshot(client, view)["table"]["hand"] != sent["table"]["hand"]
                game.state = original
                control += 1
            legal = [a["name"] for a in view["table"]["legal"]]
            view = act(client, view, legal[int(rng.integers(len(legal)))])["view"]
        # after the hand, the opponent's remaining cards are shown (and only then)
        assert view["table"]["opponent_hand"] == game.rules.deck.codes_of(game.state.hands[1 - me])
    assert checked >= 20 and control >= 5


@pytest.mark.parametrize("mode", ["hand", "match"])
def test_a_seed_the_server_drew_is_sent_only_once_the_game_is_over(client, app, mode):
    """A game's seed fixes its deals: a game started without one must not send the seed the server drew (in its
    view, a record's file name, a replay's name) before the game is over, or the browser could deal the hand itself
    and see every hidden card. Once the game is over the seed is shown, and it deals the game again."""
    view = new_game(client, opponent="random", mode=mode)
    game = app.state.games.get(view["game"])
    secret = str(game.seed)
    rng = np.random.default_rng(6)
    sent: list[str] = []

    def over(v: dict) -> bool:
        return v["table"]["result"] is not None and (v["match"] is None or v["match"]["over"])

    while not over(view):
        assert view["seed"] is None
        sent.append(json.dumps(view))
        if view["table"]["result"] is None:
            legal = [a["name"] for a in view["table"]["legal"]]
            out = act(client, view, legal[int(rng.integers(len(legal)))])
            sent.append(json.dumps(out["moves"]))
            view = out["view"]
            continue
        download = client.get(f"/api/games/{view['game']}/records")  # the finished hands of a match going on
        rep = client.post(f"/api/games/{view['game']}/replay")
        assert download.status_code == 200 and rep.status_code == 201
        frames = client.get(f"/api/replays/{rep.json()['replay']}/records/0")
        sent += [download.text, json.dumps(dict(download.headers)), rep.text, frames.text]
        r = client.post(f"/api/games/{view['game']}/next", json={"version": view["version"]})
        assert r.status_code == 200, r.json()
        view = r.json()
    assert len(sent) >= 10 and not [s for s in sent if secret in s], "the seed was sent during the game"
    assert view["seed"] == game.seed  # the game is over: its seed is shown
    again = app.state.games.get(new_game(client, opponent="random", mode=mode, seed=view["seed"])["game"])
    assert record_of(again.state).deck == game.finished[0].deck  # the seed deals the game's first hand again


# The expert's search of a sixtysix24 opening is long (its first eight worlds; docs, "The web app"):
# from trick 4 on it is short.
@pytest.mark.parametrize("ruleset,analysers,from_trick", [("schnapsen20", ["pimc", "expert", "trained-long"], 1),
                                                          ("sixtysix24", ["pimc", "expert"], 4)])
def test_the_analysis_sees_only_the_persons_observation(client, app, ruleset, analysers, from_trick):
    """The analysis of a position is the same whatever the hidden cards are (the analysers get the person's
    observation only): swap them and analyse again, with the cached answer dropped."""
    rng = np.random.default_rng(5)
    view = new_game(client, opponent="random", ruleset=ruleset, mode="hand", seed=41)
    game = app.state.games.get(view["game"])
    strip = lambda out: [{k: v for k, v in a.items() if k != "seconds"} for a in out["analyses"]]  # noqa: E731
    compared = 0
    while view["table"]["result"] is None and compared < 3:
        variants = _position_variants(game.state, game.seat, rng)
        if variants and view["table"]["trick"] >= from_trick:  # a decision with something hidden to swap
            url = f"/api/games/{view['game']}/analysis"
            first = client.post(url, json={"analysers": analysers, "version": view["version"]}).json()
            original = game.state
            for pos in variants.values():
                game.analyses.clear()  # no cached answer: the searches run again on the swapped state
                _swap_in(game, GameState.from_position(game.rules, pos))
                again = client.post(url, json={"analysers": analysers, "version": view["version"]}).json()
                game.state = original
                assert strip(again) == strip(first)
            compared += 1
        legal = [a["name"] for a in view["table"]["legal"] if a["kind"] != "close"]
        view = act(client, view, legal[int(rng.integers(len(legal)))])["view"]
    assert compared >= 3


# ------------------------------------------------------------------------------------------------ analysis
def test_analysis_values_every_legal_action(client, app):
    view = new_game(client, opponent="trained", mode="hand", seed=51)
    gid = view["game"]
    while "exchange" not in [a["name"] for a in view["table"]["legal"]] and view["table"]["trick"] < 3:
        view = act(client, view, view["table"]["legal"][0]["name"])["view"]
    r = client.post(f"/api/games/{gid}/analysis", json={"version": view["version"]})  # every analyser on offer
    assert r.status_code == 200, r.json()
    out = r.json()
    assert out["version"] == view["version"]
    legal = [a["name"] for a in view["table"]["legal"]]
    by = {a["analyser"]: a for a in out["analyses"]}
    assert list(by) == ["pimc", "expert", *sorted(shipped_policies("schnapsen20"))]  # the registry's order
    for name, a in by.items():
        assert [v["name"] for v in a["values"]] == legal, name
        values = [v["value"] for v in a["values"]]
        assert a["best"] == [v["name"] for v in a["values"] if v["value"] >= max(values) - 1e-9]
        if name in ("pimc", "expert"):
            assert a["kind"] == "values" and a["unit"] == "game points" and all(-3 <= x <= 3 for x in values)
        else:
            assert a["kind"] == "probabilities" and abs(sum(values) - 1) < 1e-4 and all(x >= 0 for x in values)
    # the same position analysed again from scratch: the same answer (seeded by the game and the position)
    app.state.games.get(gid).analyses.clear()
    again = client.post(f"/api/games/{gid}/analysis", json={"analysers": ["expert"]}).json()
    assert again["analyses"][0]["values"] == by["expert"]["values"]
    bad = [({"analysers": ["random"]}, 422, "not on offer"), ({"analysers": []}, 422, "empty"),
           ({"analysers": ["trained"], "version": view["version"] + 5}, 409, "stale")]
    for body, status, text in bad:
        r = client.post(f"/api/games/{gid}/analysis", json=body)
        assert r.status_code == status and text in r.json()["error"], (body, r.json())
    six = new_game(client, opponent="random", ruleset="sixtysix24", mode="hand", seed=52)
    r = client.post(f"/api/games/{six['game']}/analysis", json={"analysers": ["trained"]})
    assert r.status_code == 422 and "not on offer for sixtysix24" in r.json()["error"]


def test_the_server_answers_while_a_long_search_runs(client):
    """A search holds Python's GIL for its whole call, so it runs in a worker process: meanwhile the server answers
    another game at once."""
    slow = new_game(client, opponent="random", mode="hand", seed=61)  # the expert at an opening: long enough
    other = new_game(client, opponent="random", mode="hand", seed=62)
    client.post(f"/api/games/{other['game']}/analysis", json={"analysers": ["expert"]})  # the worker is warm
    answer = {}
    th = threading.Thread(target=lambda: answer.setdefault("r", client.post(
        f"/api/games/{slow['game']}/analysis", json={"analysers": ["expert"]})))
    game = client.app.state.games.get(slow["game"])
    th.start()
    deadline = time.monotonic() + 30
    while not game.analyses and time.monotonic() < deadline:  # the search has been handed to a worker
        time.sleep(0.005)
    start = time.perf_counter()
    r = client.get(f"/api/games/{other['game']}")
    took = time.perf_counter() - start
    still_searching = th.is_alive()
    th.join(60)
    assert r.status_code == 200 and answer["r"].status_code == 200
    assert still_searching, "the search ended before the other request: the check proves nothing; use a longer one"
    assert took < 0.5, f"the server took {took:.2f} s to answer during a search"


def test_a_searching_opponent_does_not_hold_up_another_games_quick_opponent(client):
    """One game's opponent searching (the expert at a sixtysix24 opening, seconds to a minute) must not make
    another game's quick opponent (random, heuristic, a policy) wait its turn behind that search."""
    quick = new_game(client, opponent="trained", mode="hand", seed=63)  # the person leads (seed 63)
    assert quick["table"]["to_move"] == "you"
    r = client.post(f"/api/games/{quick['game']}/actions", json={"action": quick["table"]["legal"][0]["name"]})
    quick = r.json()["view"]  # the quick opponent's worker is warm
    answer = {}
    th = threading.Thread(target=lambda: answer.setdefault("r", client.post("/api/games", json={
        "opponent": "expert", "ruleset": "sixtysix24", "seat": "player_1", "mode": "hand", "seed": 4})))
    n = len(client.app.state.games)
    th.start()
    deadline = time.monotonic() + 30
    while len(client.app.state.games) == n and time.monotonic() < deadline:  # the expert's search has begun
        time.sleep(0.005)
    time.sleep(0.2)
    start = time.perf_counter()
    r = client.post(f"/api/games/{quick['game']}/actions", json={"action": quick["table"]["legal"][0]["name"],
                                                                   "version": quick["version"]})
    took = time.perf_counter() - start
    still_searching = th.is_alive()
    th.join(120)
    assert r.status_code == 200 and answer["r"].status_code == 201
    assert answer["r"].json()["table"]["log"][0]["by"] == "opponent"  # the expert did search (it leads)
    assert took < 1.0, f"the quick opponent's answer waited {took:.2f} s for another game's search"
    assert still_searching, "the search ended before the other game's move: the check proves nothing"


@pytest.mark.parametrize("seat", ["player_0", "player_1"])  # with seed 8: the opponent leads / the person leads
def test_a_failing_opponent_names_none_of_its_cards_and_can_retry(monkeypatch, seat):
    """An opponent whose agent raises: the answer names the failure but not its message (which may list the
    opponent's legal actions, hence its cards); the game waits at the opponent's turn, and a retry plays on."""
    from agents.web import search

    app = create_app(seed=2, workers=0)  # threads: the failure is patched into this process
    real, calls = search.choose_action, []

    def fails_once(spec, rules, obs, mask, seed, history=None):
        calls.append(seed)
        if len(calls) == 1:
            raise ValueError(f"legal are {list(np.flatnonzero(mask))}: SECRET")
        return real(spec, rules, obs, mask, seed, history)

    monkeypatch.setattr(search, "choose_action", fails_once)
    with TestClient(app) as c:
        r = c.post("/api/games", json={"opponent": "random", "mode": "hand", "seed": 8, "seat": seat})
        assert r.status_code == 201 and "SECRET" not in r.text
        view = r.json()
        if calls:  # the opponent leads: its first move failed while the game was made
            assert seat == "player_0" and "ValueError" in view["opponent_error"]
        else:  # the person leads: the opponent fails answering
            assert seat == "player_1" and "opponent_error" not in view
            r = c.post(f"/api/games/{view['game']}/actions", json={"action": view["table"]["legal"][0]["name"]})
            assert r.status_code == 500 and "ValueError" in r.json()["error"] and "SECRET" not in r.text
        stuck = c.get(f"/api/games/{view['game']}").json()
        assert stuck["table"]["to_move"] == "opponent" and stuck["table"]["legal"] == []
        r = c.post(f"/api/games/{view['game']}/opponent", json={"version": stuck["version"]})
        assert r.status_code == 200 and r.json()["moves"][0]["by"] == "opponent"
        assert r.json()["view"]["table"]["to_move"] == "you"


def test_an_opponent_that_chooses_an_illegal_card_names_none_of_its_cards(monkeypatch):
    """An opponent whose agent answers an illegal action (a broken ``--policy``): the answer says so without naming
    the action, which is a card the person cannot see (here one of the face-down stock; a card of the opponent's
    hand that it may not play would be one too); the game is unchanged and a retry plays on."""
    from agents.web import search

    app = create_app(seed=2, workers=0)  # threads: the agent is patched into this process
    real, chosen = search.choose_action, []

    def illegal_once(spec, rules, obs, mask, seed, history=None):
        if not chosen:
            [game] = list(app.state.games._items.values())
            card = int(game.state.stock[0])  # face down: hidden from the person
            chosen.append((game.rules.deck.codes[card], card))
            return card
        return real(spec, rules, obs, mask, seed, history)

    monkeypatch.setattr(search, "choose_action", illegal_once)
    with TestClient(app) as c:
        r = c.post("/api/games", json={"opponent": "random", "mode": "hand", "seed": 8, "seat": "player_1"})
        assert r.status_code == 201
        view = r.json()
        game = app.state.games.get(view["game"])
        before = game.state.copy()
        r = c.post(f"/api/games/{view['game']}/actions", json={"action": view["table"]["legal"][0]["name"]})
        assert chosen and r.status_code == 500 and "not legal" in r.json()["error"]
        hidden, (code, card) = _hidden_codes(game.state, game.seat), chosen[0]
        assert code in hidden and not set(CARD.findall(r.text)) & hidden, r.json()["error"]
        assert not re.search(rf"\b{card}\b", r.json()["error"]), r.json()["error"]  # nor its action id
        assert len(game.state.actions) == len(before.actions) + 1  # the person's move stands, no more
        stuck = c.get(f"/api/games/{view['game']}").json()
        r = c.post(f"/api/games/{view['game']}/opponent", json={"version": stuck["version"]})
        assert r.status_code == 200 and r.json()["view"]["table"]["to_move"] == "you"


def _search_half(agent):
    """The part of an agent that draws its worlds and keeps the hand's history (the expert of ``expert+``)."""
    return getattr(agent, "expert", None) or agent


@pytest.mark.parametrize("name, options, seat, seed", [("expert+", {"worlds": 4}, "player_0", 5),
                                                       ("expert", {"inference": "consistent", "worlds": 8,
                                                                   "max_nodes": 50_000}, "player_1", 6)])
def test_an_opponent_that_reads_the_hand_decides_as_one_kept_through_it(monkeypatch, name, options, seat, seed):
    """The web app builds the opponent afresh for every move; an agent that weighs its worlds by the hand's history
    gets that history with the task (the seat's own earlier observations and actions), so every one of its moves
    equals the move of the same agent kept through the hand in a plain loop, given the same generator state (the
    move's seed) and the same observations. Without the history the tasks would carry an empty one."""
    from agents import make_agent
    from agents.web import search

    real_make, real_choose, tasks = search.make_agent, search.choose_action, []
    monkeypatch.setattr(search, "make_agent", lambda what, rules, seed=None: real_make(
        what, rules, seed=seed, **(options if what == name else {})))

    def recorded(spec, rules, obs, mask, seed, history=None):
        action = real_choose(spec, rules, obs, mask, seed, history)
        if spec == ("name", name):
            tasks.append((obs, mask, seed, history, action))
        return action

    monkeypatch.setattr(search, "choose_action", recorded)
    app = create_app(seed=0, workers=0)  # threads: the agent is patched into this process
    with TestClient(app) as c:
        view = new_game(c, opponent=name, mode="hand", seed=seed, seat=seat)
        play_to_end(c, app, view, np.random.default_rng(seed))
        game = app.state.games.get(view["game"])
    opp = 1 - game.seat
    whole = make_agent(name, game.rules, seed=0, **options)
    g = GameState.from_deck(game.rules, game.finished[-1].deck, game.finished[-1].dealer)
    moves, kept = 0, None
    for action in game.state.actions:
        if g.to_move == opp:
            obs, mask, task_seed, history, chosen = tasks[moves]
            assert np.array_equal(obs, observation(g, opp)) and np.array_equal(mask, g.action_mask())
            kept = _search_half(whole).history
            assert history[1].tolist() == kept.actions
            assert np.array_equal(history[0], np.array(kept.observations).reshape(history[0].shape))
            _search_half(whole).rng = np.random.default_rng(task_seed)
            assert whole.act({"observation": obs, "action_mask": mask}) == chosen == action, f"move {moves}"
            moves += 1
        g.step(action)
    assert moves == len(tasks) >= 5 and len(tasks[-1][3][1]) == moves - 1 > 0  # the last task: a long history


def _unseen_by(state: GameState, seat: int) -> list[int]:
    """Cards ``seat`` has never seen in the hand so far: the other's cards never played, shown or turned up, and the
    face-down stock."""
    other, d = 1 - seat, state.rules.deck
    dealt = GameState.from_deck(state.rules, [d.codes[c] for c in state.deal[0]], state.deal[1])
    ever_up = {dealt.turn_up, state.rules.exchange_card(state.trump)}  # the first turn-up; the jack may follow it
    hidden = [c for c in range(d.size) if state.hands[other] >> c & 1 and not state.known[other] >> c & 1]
    return [c for c in hidden + list(state.stock[:-1]) if c not in ever_up]


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24"])
def test_the_history_a_task_carries_is_the_seats_own(ruleset):
    """The history sent with a seat's task (``Game.history``) is what that seat saw: deal the same hand with two
    cards it never saw swapped (another of the other's hidden cards, another stock order), replay the same actions:
    the history is identical. Swapping a card the seat was dealt and still holds changes it (the check can fail: the
    seat's first decision, in trick 1, saw its dealt hand)."""
    from agents.web.sessions import seat_history

    rules, rng = RuleSet.make(ruleset), np.random.default_rng(11)
    codes, checked, controls = rules.deck.codes, 0, 0
    for _ in range(6):
        g = GameState.new_hand(rules, rng)
        while g.result is None:
            seat = g.to_move
            history = seat_history(g, seat)
            assert history[0].shape == (len(history[1]), len(observation(g, seat)))
            assert history[0].dtype == np.float32 and history[1].dtype == np.int64
            deck, dealer = list(g.deal[0]), g.deal[1]
            unseen = _unseen_by(g, seat)
            dealt = GameState.from_deck(rules, [codes[c] for c in deck], dealer).hands[seat]
            mine = [c for c in range(rules.deck.size) if (g.hands[seat] & dealt) >> c & 1]
            pairs = []
            if len(unseen) >= 2:
                pairs.append((tuple(rng.choice(unseen, 2, replace=False)), True))
            if mine and unseen and len(history[1]):
                pairs.append(((mine[0], unseen[0]), False))
            for pair, same in pairs:
                a, b = (deck.index(int(c)) for c in pair)
                swapped = list(deck)
                swapped[a], swapped[b] = swapped[b], swapped[a]
                s = GameState.from_deck(rules, [codes[c] for c in swapped], dealer)
                try:
                    for action in g.actions:
                        s.step(action)
                except IllegalActionError:  # the swap makes an earlier action a revoke: no such deal
                    continue
                other = seat_history(s, seat)
                equal = np.array_equal(other[0], history[0]) and np.array_equal(other[1], history[1])
                assert equal == same, (pair, same)
                checked += same
                controls += not same
            legal = g.legal_actions()
            g.step(legal[int(rng.integers(len(legal)))])
    assert checked > 30 and controls > 10


def test_a_worker_keeps_a_bounded_number_of_policies():
    """A worker keeps each policy it loaded, by (spec, rules): records under ever new knobs (an upload's match
    targets) must not make it keep ever more of them."""
    from agents.web import search

    search._POLICIES.clear()
    bound = search.MAX_POLICIES
    kept = []
    for target in range(1, 3 * bound + 1):
        kept.append(search.build_agent(("name", "trained"), RuleSet.make("schnapsen20", match_target=target), None))
        assert len(search._POLICIES) <= bound
    latest = RuleSet.make("schnapsen20", match_target=3 * bound)
    assert search.build_agent(("name", "trained"), latest, None) is kept[-1]  # the latest ones are still kept
    search._POLICIES.clear()


def _running(pid: int) -> bool:
    """The process ``pid`` runs (a zombie, dead but not yet reaped by whoever adopted it, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_the_search_workers_end_when_the_server_is_killed():
    """A server killed outright (SIGKILL, the kernel's out-of-memory killer) runs no shutdown: its workers, blocked
    on their task queue, must still end by themselves rather than stay forever."""
    script = ("import asyncio, os\n"
              "from agents.web.search import SearchPool\n"
              "pool = SearchPool(2)\n"
              "async def main():\n"
              "    await pool.run('play', os.getpid)\n"
              "    await pool.run('analysis', os.getpid)\n"
              "    print(*pool.worker_pids(), flush=True)\n"
              "    await asyncio.sleep(600)\n"
              "asyncio.run(main())\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    pids: list[int] = []
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2 and all(_running(p) for p in pids)
        proc.kill()
        proc.wait(10)
        deadline = time.monotonic() + 30
        while any(_running(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in pids if _running(p)], "the workers outlived their server"
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in pids:
            if _running(p):
                os.kill(p, signal.SIGKILL)


def test_warm_up_loads_the_policies_and_the_compiled_searches():
    from agents.web.search import build_agent, warm_up

    rules = RuleSet.make("schnapsen20")
    assert warm_up(True, ((("name", "trained"), rules.to_dict()),)) > 0
    kept = build_agent(("name", "trained"), rules, None)
    assert build_agent(("name", "trained"), rules, 5) is kept  # loaded once, kept: it plays greedily, unseeded
    assert build_agent(("name", "pimc"), rules, 5) is not build_agent(("name", "pimc"), rules, 5)  # built per task
    with pytest.raises(ValueError, match="agent spec"):
        build_agent(("path", "/etc/passwd"), rules, 0)


# ------------------------------------------------------------------------------------------------ several games
def test_several_games_at_once_do_not_interfere(client, app):
    """Two games with the same seed, one played interleaved with a third game and one alone, see the same views;
    two games played at the same time from two threads both end well."""
    def views_of(seed, moves_rng, interleave=None):
        view = new_game(client, opponent="heuristic", mode="hand", seed=seed)
        out = [view]
        while view["table"]["result"] is None:
            if interleave is not None:
                interleave()
            legal = [a["name"] for a in view["table"]["legal"]]
            view = act(client, view, legal[int(moves_rng.integers(len(legal)))])["view"]
            out.append(view)
        return [{k: v for k, v in x.items() if k != "game"} for x in out]

    third = new_game(client, opponent="random", mode="match", seed=71)
    third_rng = np.random.default_rng(2)

    def step_third():
        nonlocal third
        if third["table"]["result"] is None:
            legal = [a["name"] for a in third["table"]["legal"]]
            third = act(client, third, legal[int(third_rng.integers(len(legal)))])["view"]

    assert views_of(70, np.random.default_rng(4), step_third) == views_of(70, np.random.default_rng(4))
    ends, errors = [], []

    def play(seed):
        try:
            view = new_game(client, opponent="random", mode="hand", seed=seed)
            view, _ = play_to_end(client, app, view, np.random.default_rng(seed))
            ends.append((view["game"], view["table"]["result"]))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=play, args=(s,)) for s in (81, 82, 83)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and len(ends) == 3
    for gid, result in ends:
        [record] = parse_records(client.get(f"/api/games/{gid}/records").content)
        assert record.result["game_points"] == result["game_points"]


def test_the_store_forgets_the_least_recently_used_game():
    from agents.web.sessions import Store, WebError

    store = Store("game", 2)
    ids = [store.new_id() for _ in range(3)]
    assert len(set(ids)) == 3 and all(len(i) >= 22 for i in ids)  # 128 random bits each
    store.add(ids[0], "a")
    store.add(ids[1], "b")
    assert store.get(ids[0]) == "a"  # a is used: b is now the least recently used
    store.add(ids[2], "c")
    assert len(store) == 2 and store.get(ids[0]) == "a" and store.get(ids[2]) == "c"
    with pytest.raises(WebError, match="unknown game") as e:
        store.get(ids[1])
    assert e.value.status == 404


# ------------------------------------------------------------------------------------------------ records
def _records_text(specs) -> bytes:
    """JSON Lines of seeded random hands: ``specs`` is a list of (ruleset, seed)."""
    lines = []
    for ruleset, seed in specs:
        rng = np.random.default_rng(seed)
        rec = Recorder.deal(RuleSet.make(ruleset), rng)
        while rec.state.result is None:
            legal = rec.state.legal_actions()
            rec.step(int(legal[int(rng.integers(len(legal)))]))
        d = rec.record().to_dict()
        d["players"] = {"player_0": "random", "player_1": "human"}
        lines.append(json.dumps(d) + "\n")
    return "".join(lines).encode()


def test_an_uploaded_record_replays_move_by_move_with_every_card_shown(client):
    data = _records_text([("schnapsen20", 1), ("sixtysix24", 2)])
    r = client.post("/api/replays?name=games.jsonl", content=data)
    assert r.status_code == 201, r.json()
    summary = r.json()
    assert [s["ruleset"] for s in summary["records"]] == ["schnapsen20", "sixtysix24"] and summary["warnings"] == []
    records = parse_records(data)
    for k, record in enumerate(records):
        out = client.get(f"/api/replays/{summary['replay']}/records/{k}").json()
        assert out["seat"] == "player_1"  # the seat labelled human
        frames = out["frames"]
        assert len(frames) == len(record.actions) + 1
        assert [f["step"] for f in frames] == list(range(len(frames)))
        assert [e["action"] for e in frames[-1]["log"]] == record.actions
        end = replay_to_end(record)
        n = end.deck.size
        for f in frames:  # every card is somewhere on view: nothing is hidden in a replay
            seen = (f["hand"] + f["opponent_hand"] + f["stock_order"] + f["you"]["won"] + f["opponent"]["won"]
                    + ([f["table"]] if f["table"] else []))
            assert sorted(seen) == sorted(end.rules.deck.codes) and len(seen) == n
            assert f["legal"] == []  # watched, not played
        assert frames[-1]["result"]["game_points"] == record.result["game_points"]
        seat0 = client.get(f"/api/replays/{summary['replay']}/records/{k}?seat=player_0").json()
        assert seat0["seat"] == "player_0" and seat0["frames"][0]["hand"] == frames[0]["opponent_hand"]
    assert client.get(f"/api/replays/{summary['replay']}/records/2").status_code == 404
    assert client.get(f"/api/replays/{summary['replay']}/records/0?seat=player_9").status_code == 422


def test_a_replay_position_can_be_analysed_for_the_player_to_move(client):
    data = _records_text([("schnapsen20", 3)])
    rid = client.post("/api/replays", content=data).json()["replay"]
    record = parse_records(data)[0]
    frames = client.get(f"/api/replays/{rid}/records/0?seat=player_0").json()["frames"]
    step = 2
    r = client.post(f"/api/replays/{rid}/analysis", json={"record": 0, "step": step, "analysers": ["pimc", "trained"]})
    assert r.status_code == 200, r.json()
    out = r.json()
    state = GameState.from_deck(RuleSet.from_dict(record.rules), record.deck, record.dealer)
    for name in record.actions[:step]:
        state.step(name)
    assert out["seat"] == PLAYERS[state.to_move]
    assert frames[step]["to_move"] == ("you" if state.to_move == 0 else "opponent")
    for a in out["analyses"]:
        assert [v["name"] for v in a["values"]] == state.legal_action_names()
    end = len(record.actions)
    assert client.post(f"/api/replays/{rid}/analysis", json={"record": 0, "step": end}).status_code == 409
    assert client.post(f"/api/replays/{rid}/analysis", json={"record": 0, "step": end + 1}).status_code == 404
    assert client.post(f"/api/replays/{rid}/analysis", json={"record": 1, "step": 0}).status_code == 404
    assert client.post(f"/api/replays/{rid}/analysis", json={"step": "x"}).status_code == 422


def test_records_under_other_knobs_replay_and_knobs_beyond_the_app_are_refused(client, app):
    """Records of either ruleset under other knobs replay and analyse; int knobs too large for the compiled searches
    and the page (a match target of 10**400 made the replay's frames a bare 500) are refused at the upload, naming
    the line and the knob."""
    knobbed = [(RuleSet.make("schnapsen20", false_claim="mirror", close_min_stock=2, match_target=3), 5),
               (RuleSet.make("sixtysix24", tie="none", last_trick_bonus=20, exchange_rank="J"), 6)]
    r = client.post("/api/replays", content=_records_text(knobbed))
    assert r.status_code == 201, r.json()
    rid = r.json()["replay"]
    for k in range(2):
        frames = client.get(f"/api/replays/{rid}/records/{k}")
        assert frames.status_code == 200, frames.text
        analysers = ["pimc", "trained"] if k == 0 else ["pimc"]  # the shipped policies play schnapsen20's knobs
        out = client.post(f"/api/replays/{rid}/analysis", json={"record": k, "step": 1, "analysers": analysers})
        assert out.status_code == 200 and out.json()["analyses"], out.text
    good = _records_text([("schnapsen20", 7)])
    n = len(app.state.replays)
    for ruleset, knob, value in [("schnapsen20", "match_target", 10 ** 400), ("schnapsen20", "match_target", 10 ** 6),
                                 ("sixtysix24", "last_trick_bonus", 10 ** 30)]:
        bad = _records_text([(RuleSet.make(ruleset, **{knob: value}), 8)])
        r = client.post("/api/replays?name=k.jsonl", content=good + b"\n" + bad)
        assert r.status_code == 422, (knob, value, r.text[:300])
        message = r.json()["error"]
        assert "k.jsonl" in message and "line 3" in message and knob in message and "at most" in message, message
    assert len(app.state.replays) == n


def test_a_finished_game_replays(client, app):
    view = new_game(client, opponent="heuristic", mode="hand", seed=91)
    view, moves = play_to_end(client, app, view, np.random.default_rng(9))
    r = client.post(f"/api/games/{view['game']}/replay")
    assert r.status_code == 201
    summary = r.json()
    frames = client.get(f"/api/replays/{summary['replay']}/records/0").json()
    assert frames["seat"] == view["seat"]
    assert frames["frames"][-1]["log"] == moves and frames["frames"][-1]["result"] == view["table"]["result"]


def test_bad_uploads_get_4xx_naming_the_problem_and_change_nothing(client, app):
    good = _records_text([("schnapsen20", 4)])
    line = json.loads(good)
    bad_action = dict(line, actions=line["actions"][:2] + ["play ZZ"])
    wrong_result = dict(line, result={"winner": "player_0", "game_points": 3, "reason": "claim"}
                        if line["result"]["game_points"] != 3 else {**line["result"], "game_points": 1})
    cases = [
        (b"", 422, "no records"),
        (b"hello\n", 422, "line 1: not JSON"),
        (good + b"[1, 2]\n", 422, "line 2: expected a JSON object"),
        ((json.dumps(bad_action) + "\n").encode(), 422, "line 1, action 2 'play ZZ'"),
        ((json.dumps(wrong_result) + "\n").encode(), 422, "differs from the replayed"),
        (b"\xff\xfe\n", 422, "not UTF-8"),
        (good * (MAX_UPLOAD_BYTES // len(good) + 1), 413, "over the limit"),
    ]
    n = len(app.state.replays)
    for data, status, text in cases:
        r = client.post("/api/replays?name=x.jsonl", content=data)
        assert r.status_code == status, (data[:60], r.json())
        assert text in r.json()["error"] and "x.jsonl" in r.json()["error"], r.json()
    assert len(app.state.replays) == n  # no replay was made
    cut = client.post("/api/replays", content=good + good[:40])  # a last line cut off by an interrupted write
    assert cut.status_code == 201 and len(cut.json()["records"]) == 1 and "incomplete last line" in cut.json()[
        "warnings"][0]


# ------------------------------------------------------------------------------------------------ --policy
def test_a_policy_file_is_offered_as_opponent_and_analyser(tmp_path):
    path = tmp_path / "mine.pt"
    shutil.copy(ROOT / "agents" / "learned" / "data" / "schnapsen20_policy.pt", path)
    app = create_app(policy=str(path), seed=1, workers=0)
    with TestClient(app) as c:
        o = c.get("/api/options").json()
        assert o["opponents"]["schnapsen20"][0] == {"id": "file:mine.pt", "label": "mine.pt", "kind": "policy"}
        assert o["default_opponent"]["schnapsen20"] == "file:mine.pt"
        assert "file:mine.pt" not in [x["id"] for x in o["opponents"]["sixtysix24"]]
        view = new_game(c, mode="hand", seed=3)
        assert view["opponent"]["id"] == "file:mine.pt"
        r = c.post(f"/api/games/{view['game']}/analysis", json={"analysers": ["file:mine.pt"]})
        assert r.status_code == 200 and r.json()["analyses"][0]["kind"] == "probabilities"
        view, moves = play_to_end(c, app, view, np.random.default_rng(0))
        assert any(m["by"] == "opponent" for m in moves)
    with pytest.raises(ValueError, match="missing.pt"):
        create_app(policy=str(tmp_path / "missing.pt"), workers=0)


# ------------------------------------------------------------------------------------------------ the command
@pytest.mark.parametrize("argv,text", [
    (["--port", "70000"], "--port 70000: expected a port from 0 to 65535"),
    (["--port", "x"], "invalid int value"),
    (["--seed", "-1"], "--seed -1"),
    (["--workers", "-1"], "--workers -1"),
    (["--policy", "missing.pt"], "--policy 'missing.pt' does not exist"),
    (["--policy", "FOLDER"], "is a folder"),
    (["--policy", "/dev/null"], "--policy '/dev/null' is not a regular file"),
    (["--policy", "BROKEN"], "--policy"),
    (["--host", "no-such-host.invalid"], "--host 'no-such-host.invalid': unknown host"),
    (["--bogus"], "unrecognized arguments"),
])
def test_bad_command_lines_are_one_line_errors(argv, text, tmp_path, capsys):
    from agents.cli.web import main

    broken = tmp_path / "broken.pt"
    broken.write_bytes(b"not a checkpoint")
    argv = [str(tmp_path) if a == "FOLDER" else str(broken) if a == "BROKEN" else a for a in argv]
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("schnapsen-web: error: ") and text in err, err
    assert "Traceback" not in err


def test_a_port_in_use_is_a_one_line_error(capsys):
    import socket

    from agents.cli.web import main

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as e:
            main(["--port", str(port), "--workers", "0"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--port {port}: cannot listen there" in err, err


def test_a_missing_web_extra_is_a_one_line_error(monkeypatch, capsys):
    import importlib.util

    from agents.cli.web import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a))
    with pytest.raises(SystemExit) as e:
        main([])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "uvicorn not installed" in err and "extra 'web'" in err, err



def test_a_warm_up_broken_by_the_servers_own_closing_is_not_logged(caplog):
    """Ctrl-C during the warm-up once printed "a search worker failed to warm up: BrokenProcessPool" for each
    worker the closing terminated (bug); a warm-up that fails while the server runs is still logged."""
    import asyncio

    from agents.web.search import SearchPool

    broken = ((("file", "/no/such/policy.pt"), RuleSet.make("schnapsen20")),)
    with caplog.at_level("WARNING", logger="schnapsen-web"):
        pool = SearchPool(2, policies=broken)
        pool.start()
        time.sleep(0.5)  # the workers are starting
        pool.close()
        assert caplog.text == ""
        pool = SearchPool(2, policies=broken)
        try:
            assert asyncio.run(pool.run("quick", os.getpid)) > 0  # answered once the worker warmed up
        finally:
            pool.close()
        assert "failed to warm up" in caplog.text and "policy.pt" in caplog.text
