"""Over two hundred bad requests to ``schnapsen-web``, each answered with a 4xx status and the app's JSON error
``{"error": MESSAGE, ...}``: never a 5xx, never plain text, never a traceback in the server's log.

The requests: paths that name nothing (bad ids, bad record numbers, paths that climb out), methods a route does
not take, bodies of the wrong JSON types, out-of-range and huge numbers, lone surrogates, NaN and infinities,
nested junk, stale versions, bad query parameters, bodies that are no JSON or not UTF-8, other content types,
requests from another site, and uploads with records malformed in many ways. Each is run in-process (FastAPI's
test client raises any exception the app lets through, and the log is read for ERROR records), and a few that
only a real server sees (request lines and headers that are no HTTP) go to ``schnapsen-web`` itself.
"""

from __future__ import annotations

import copy
import json
import logging
import socket
import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the optional extra 'web' (fastapi, uvicorn) is not installed")
pytest.importorskip("httpx", reason="httpx (the dev extra) runs FastAPI's test client")

with warnings.catch_warnings():  # starlette's test client prefers httpx2 (Python >= 3.11 only); httpx works
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")
    from fastapi.testclient import TestClient  # noqa: E402

from agents.web.app import MAX_BODY_BYTES, MAX_UPLOAD_BYTES, create_app  # noqa: E402
from schnapsen_env import RuleSet  # noqa: E402
from schnapsen_env.records import Recorder  # noqa: E402

JSON = {"content-type": "application/json"}


def _record(seed: int = 1, ruleset: str = "schnapsen20") -> dict:
    rng = np.random.default_rng(seed)
    rec = Recorder.deal(RuleSet.make(ruleset), rng)
    while rec.state.result is None:
        legal = rec.state.legal_actions()
        rec.step(int(legal[int(rng.integers(len(legal)))]))
    return {**rec.record().to_dict(), "players": {"player_0": "random", "player_1": "human"}}


GOOD = _record()


def _with(**changes: Any) -> bytes:
    """The good record with top-level keys changed (a value of ``...`` removes the key), as one JSON line."""
    d = copy.deepcopy(GOOD)
    for k, v in changes.items():
        if v is ...:
            d.pop(k, None)
        else:
            d[k] = v
    return (json.dumps(d) + "\n").encode()


def _edit(fn) -> bytes:
    d = copy.deepcopy(GOOD)
    fn(d)
    return (json.dumps(d) + "\n").encode()


def _raw_line(text: str) -> bytes:
    return (text + "\n").encode("utf-8", "surrogatepass")


def _deck_swap(d: dict) -> None:
    d["deck"].reverse()  # another deal: the actions no longer fit it


G, R = "{game}", "{replay}"  # filled in with a real game's and replay's ids
DEEP = "[" * 100_000 + "]" * 100_000
BIG = "9" * 5000

# (method, path, body, headers): body is JSON-encoded when it is not bytes; None sends no body.
CASES: list[tuple[str, str, Any, dict | None]] = []


def case(method: str, path: str, body: Any = None, headers: dict | None = None) -> None:
    CASES.append((method, path, body, headers))


def raw(method: str, path: str, data: bytes | str, content_type: str = "application/json") -> None:
    case(method, path, data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data,
         {"content-type": content_type})


# ------------------------------------------------------------------ paths that name nothing
for gid in ["x", "nope" * 20, "a" * 5000, "%00", "..%2F..%2Fetc%2Fpasswd", "%ED%A0%80", "%FF%FE", "%20", "caf%C3%A9",
            "0", "-1", "null", "None", "[]"]:
    case("GET", f"/api/games/{gid}")
for rest in ["/actions", "/next", "/opponent", "/analysis", "/replay"]:
    case("POST", f"/api/games/nope{rest}", {})
case("GET", "/api/games/nope/records")
case("DELETE", "/api/games/nope")
for k in ["-1", "3", "99999999999999999999", BIG, "abc", "1e3", "0x1", "1.0", "%20", "%ED%A0%80"]:
    case("GET", f"/api/replays/{R}/records/{k}")
for path in ["/api/replays/nope/records/0", "/api/replays/" + "r" * 3000 + "/records/0", f"/api/games/{G}/nope",
             f"/api/games/{G}/records/extra", "/api/", "/api", "/api/options/x", "/static/nope.js",
             "/static/../app.py", "/static/%2e%2e/app.py", "/static/", "/index.html", "/favicon.ico",
             "/api/games/%0a", "/api/replays", "/api/replays/"]:
    case("GET", path)
case("POST", "/api/replays/nope/analysis", {"step": 0})

# ------------------------------------------------------------------ methods a route does not take
for method, path in [("PUT", "/api/games"), ("PATCH", "/api/games"), ("DELETE", "/api/options"),
                     ("POST", "/api/options"), ("PUT", "/api/options"), ("POST", "/api/cards"),
                     ("POST", "/api/status"), ("DELETE", "/"), ("POST", "/"), ("PUT", f"/api/games/{G}"),
                     ("PATCH", f"/api/games/{G}"), ("POST", f"/api/games/{G}"), ("GET", f"/api/games/{G}/actions"),
                     ("PUT", f"/api/games/{G}/actions"), ("GET", f"/api/games/{G}/analysis"),
                     ("DELETE", f"/api/games/{G}/records"), ("GET", f"/api/games/{G}/replay"),
                     ("PUT", "/api/replays"), ("DELETE", f"/api/replays/{R}/records/0"),
                     ("POST", f"/api/replays/{R}/records/0"), ("GET", f"/api/replays/{R}/analysis"),
                     ("DELETE", f"/api/replays/{R}")]:
    case(method, path, {} if method in ("POST", "PUT", "PATCH") else None)

# ------------------------------------------------------------------ POST /api/games: wrong types, ranges, junk
for field, values in {
    "opponent": [1, 1.5, True, [], ["random"], {}, "", "x" * 1000, "\ud800", "random\u0000", "RANDOM", "random ",
                 "file:/etc/passwd", "rollout:n_samples=1"],
    "seat": [0, 1, "PLAYER_0", "player_2", "", ["player_0"], True, "\udfff"],
    "ruleset": ["SCHNAPSEN20", 20, "", "schnapsen20 ", ["schnapsen20"], "\ud83d"],
    "mode": ["Hand", "", 1, "tournament", {"mode": "hand"}],
    "seed": [-1, 2 ** 63, 2 ** 64, 10 ** 30, 1.5, 1.0, "1", True, [1], {"a": 1}, -(2 ** 63)],
}.items():
    for value in values:
        case("POST", "/api/games", {field: value})
for body in [[], "random", 1, True, {"x": 1}, {"opponent": "random", "extra": None}, {"Opponent": "random"},
             {"opponent": {"a": {"b": {"c": [1, 2, 3]}}}}]:
    case("POST", "/api/games", body)
for text in ['{"seed": NaN}', '{"seed": Infinity}', '{"seed": -Infinity}', '{"seed": ' + BIG + "}", "{",
             "null", "nul", '{"opponent": "random",}', "{'opponent': 'random'}", DEEP, '{"a":' * 50_000,
             '{"seed": 1} trailing', '{"seed": 1e400}', '{"opponent": "\\ud800"}',
             '{"opponent": "random", "opponent": 5}']:
    raw("POST", "/api/games", text)
raw("POST", "/api/games", b'{"opponent": "\xff"}')
raw("POST", "/api/games", b"\x00\x01\x02")
raw("POST", "/api/games", "opponent=random", "application/x-www-form-urlencoded")
raw("POST", "/api/games", '{"opponent": 1}', "text/plain")
raw("POST", "/api/games", '{"opponent": 1}', "application/xml")
raw("POST", "/api/games", "--x\r\nContent-Disposition: form-data; name=\"opponent\"\r\n\r\nrandom\r\n--x--\r\n",
    "multipart/form-data; boundary=x")
raw("POST", "/api/games", b'{"opponent": "caf\xe9"}', "application/json; charset=latin-1")

# ------------------------------------------------------------------ POST /api/games/{id}/actions
for body in [{}, {"action": None}, {"action": ""}, {"action": "play"}, {"action": "play QH QH"},
             {"action": "PLAY QH"}, {"action": "\ud800"}, {"action": "play \udcff"}, {"action": 1.5}, {"action": -1},
             {"action": 10 ** 20}, {"action": 2 ** 63}, {"action": True}, {"action": []}, {"action": {}},
             {"action": "play XX"}, {"action": "marriage X"}, {"action": "claim", "version": -1},
             {"action": "claim", "version": "0"}, {"action": "claim", "version": 1.5},
             {"action": "claim", "version": 10 ** 30}, {"action": "claim", "version": True},
             {"action": "claim", "version": 99}, {"action": "claim", "extra": 1}, [{"action": "claim"}],
             {"action": ["play QH"]}, {"action": "x" * 60_000}, "claim", None]:
    case("POST", f"/api/games/{G}/actions", body)
for text in ['{"action": NaN}', '{"action": "claim", "version": NaN}', '{"action": "claim", "version": Infinity}',
             '{"action": ' + BIG + "}", DEEP, '{"action": "claim"', "", " ", "\n"]:
    raw("POST", f"/api/games/{G}/actions", text)
raw("POST", f"/api/games/{G}/actions", '{"action": "claim"}', "text/plain")
raw("POST", f"/api/games/{G}/actions", b'{"action": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}')

# ------------------------------------------------------------------ analysis, next hand, the opponent
for body in [{"analysers": "pimc"}, {"analysers": [1]}, {"analysers": [None]}, {"analysers": []},
             {"analysers": ["nope"]}, {"analysers": ["\ud800"]}, {"analysers": ["pimc"] * 11},
             {"analysers": [["pimc"]]}, {"analysers": ["PIMC"]}, {"analysers": ["file:/etc/passwd"]},
             {"analysers": ["pimc"], "version": -1}, {"analysers": ["pimc"], "version": "1"},
             {"analysers": ["pimc"], "version": 99}, {"analysers": ["pimc"], "extra": True},
             {"analysers": {"pimc": True}}, [], 5]:
    case("POST", f"/api/games/{G}/analysis", body)
raw("POST", f"/api/games/{G}/analysis", '{"analysers": ["pimc"], "version": NaN}')
for rest in ["next", "opponent"]:
    for body in [{"version": "x"}, {"version": -1}, {"version": 1.5}, {"foo": 1}, [], {"version": 10 ** 40}, None]:
        case("POST", f"/api/games/{G}/{rest}", body)
case("POST", f"/api/games/{G}/replay")  # the hand is not over
case("GET", f"/api/games/{G}/records")

# ------------------------------------------------------------------ replays: frames and analysis
for q in ["seat=player_2", "seat=", "seat=PLAYER_0", "seat=%00", "seat=player_0&seat=player_9", "seat=0",
          "seat=%ED%A0%80"]:
    case("GET", f"/api/replays/{R}/records/0?{q}")
for body in [{"record": -1, "step": 0}, {"record": "0", "step": 0}, {"record": 1.5, "step": 0},
             {"record": 10 ** 20, "step": 0}, {"record": None, "step": 0}, {"record": 0}, {"record": 0, "step": -1},
             {"record": 0, "step": "1"}, {"record": 0, "step": 10 ** 20}, {"record": 0, "step": 1.0},
             {"record": 5, "step": 0}, {"record": 0, "step": 999}, {"record": 0, "step": 0, "analysers": []},
             {"record": 0, "step": 0, "analysers": ["nope"]}, {"record": 0, "step": 0, "analysers": "pimc"},
             {"record": 0, "step": 0, "extra": 1}, {"record": 0, "step": len(GOOD["actions"])}, [], {}]:
    case("POST", f"/api/replays/{R}/analysis", body)
raw("POST", f"/api/replays/{R}/analysis", '{"record": 0, "step": 1e400}')
raw("POST", f"/api/replays/{R}/analysis", '{"record": 0, "step": NaN}')

# ------------------------------------------------------------------ requests from a page of another site
for origin in ["http://evil.example", "null", "http://testserver.evil.example", "https://testserver", "http://[::1"]:
    case("POST", "/api/games", {"opponent": "random"}, {"origin": origin})
case("DELETE", f"/api/games/{G}", None, {"origin": "http://evil.example"})

# ------------------------------------------------------------------ uploads of malformed records
UPLOADS: list[bytes] = [
    b"", b"\n\n  \n", b"null\n", b"[]\n", b"{}\n", b"1\n", b'"record"\n', b"true\n", b"\xff\xfe\n", b"\x00\n",
    DEEP.encode() + b"\n", b'{"rules": ' * 50_000 + b"\n", b"hello\n", b"{'rules': 1}\n",
    _raw_line(json.dumps(GOOD)[:-1] + ', "x": 1}'), _raw_line(json.dumps(GOOD) + " trailing"),
    _raw_line(json.dumps(GOOD).replace('"players"', '"players", "players"', 0) + "\n" + "{"),
    _with(rules=...), _with(deck=...), _with(dealer=...), _with(actions=...), _with(result=...),
    _with(extra=1), _with(rules=None), _with(rules="schnapsen20"), _with(rules=[]), _with(rules={"ruleset": "skat"}),
    _with(rules={"ruleset": "schnapsen20", "bogus": 1}), _with(rules={"ruleset": "schnapsen20", "match_target": "7"}),
    _with(rules={"ruleset": "schnapsen20", "match_target": -1}),
    _with(rules={"ruleset": "schnapsen20", "match_target": 10 ** 6}),
    _with(rules={"ruleset": "schnapsen20", "match_target": 10 ** 400}),
    _with(rules={"ruleset": "schnapsen20", "match_target": 7.5}), _with(rules={1: 2}),
    _with(deck=None), _with(deck="AS KS"), _with(deck=GOOD["deck"][:-1]), _with(deck=GOOD["deck"] + ["AS"]),
    _with(deck=[GOOD["deck"][0]] * len(GOOD["deck"])), _with(deck=["ZZ"] + GOOD["deck"][1:]),
    _with(deck=[1] * len(GOOD["deck"])), _with(deck=["\ud800"] + GOOD["deck"][1:]), _edit(_deck_swap),
    _with(dealer="player_2"), _with(dealer=0), _with(dealer=None), _with(dealer="\ud800"),
    _with(actions=None), _with(actions="play AS"), _with(actions=[1, 2]), _with(actions=["play ZZ"]),
    _with(actions=GOOD["actions"][:3] + ["claim", "claim"]), _with(actions=GOOD["actions"] + ["play AS"]),
    _with(actions=["\ud800"]), _with(actions=[GOOD["actions"][1]] + GOOD["actions"]),
    _with(result=5), _with(result="won"), _with(result={"winner": "player_0"}),
    _with(result={**GOOD["result"], "game_points": True}), _with(result={**GOOD["result"], "game_points": 1.5}),
    _with(result={**GOOD["result"], "game_points": GOOD["result"]["game_points"] % 3 + 1}),
    _with(result={**GOOD["result"], "winner": "player_9"}), _with(result={**GOOD["result"], "reason": "\ud800"}),
    _with(result={**GOOD["result"], "extra": float("nan")}),
    _with(result={**GOOD["result"], "game_points": 10 ** 40}),
    _with(players=[]), _with(players="human"), _with(players={"player_2": "x"}), _with(players={"player_0": 1}),
    _with(players={"player_0": "\ud800"}), _with(players={"player_0": "ok", "player_1": "a\udfffb"}),
    _with(players={"\ud800": "x"}), _with(players={"player_0": ["x"] * 1000}),
    _raw_line(json.dumps(GOOD).replace('"deck"', '"de\\u0000ck"')),
    _raw_line(json.dumps(GOOD)) + _with(dealer="nobody"),
    _raw_line(json.dumps(GOOD).replace(str(GOOD["result"]["game_points"]), "NaN", 1)),
    (json.dumps(GOOD) + "\n").encode() * (MAX_UPLOAD_BYTES // len(json.dumps(GOOD)) + 2),
]
for k, data in enumerate(UPLOADS):
    case("POST", f"/api/replays?name=bad{k}.jsonl", data, {"content-type": "application/x-ndjson"})
for q in ["name=" + "n" * 201, "name=" + "%ED%A0%80" * 100]:
    case("POST", f"/api/replays?{q}", (json.dumps(GOOD) + "\n").encode())

assert len(CASES) >= 200, len(CASES)


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(seed=0, workers=0)) as c:  # raise_server_exceptions: an unhandled error fails
        yield c


@pytest.fixture(scope="module")
def ids(client) -> dict[str, str]:
    game = client.post("/api/games", json={"opponent": "random", "mode": "hand", "seed": 63})
    replay = client.post("/api/replays", content=(json.dumps(GOOD) + "\n").encode())
    assert game.status_code == 201 and replay.status_code == 201
    return {"game": game.json()["game"], "replay": replay.json()["replay"]}


def _label(c: tuple) -> str:
    method, path, body, _ = c
    shown = body[:40] if isinstance(body, bytes) else json.dumps(body, ensure_ascii=True)[:40]
    return f"{method} {path[:50]} {shown!r}"


@pytest.mark.parametrize("request_", CASES, ids=[f"{k:03d}" for k in range(len(CASES))])
def test_a_bad_request_gets_a_4xx_json_error(client, ids, request_, caplog):
    method, path, body, headers = request_
    path = path.replace(G, ids["game"]).replace(R, ids["replay"])
    before = client.get(f"/api/games/{ids['game']}").json()
    n_games, n_replays = len(client.app.state.games), len(client.app.state.replays)
    kwargs: dict[str, Any] = {"headers": headers}
    if isinstance(body, bytes):
        kwargs["content"] = body
    elif body is not None:
        kwargs["content"] = json.dumps(body, ensure_ascii=True).encode()
        kwargs["headers"] = {**JSON, **(headers or {})}
    with caplog.at_level(logging.WARNING):
        r = client.request(method, path, **kwargs)
    label = _label(request_)
    assert 400 <= r.status_code < 500, (label, r.status_code, r.text[:300])
    assert r.headers["content-type"] == "application/json", (label, r.headers["content-type"], r.text[:200])
    error = r.json()["error"]
    assert isinstance(error, str) and error.strip(), (label, r.text[:300])
    assert len(error) < 2000, (label, f"a message of {len(error)} characters")
    assert not [x for x in caplog.records if x.levelno >= logging.ERROR or x.exc_info], (label, caplog.text[-2000:])
    # Nothing changed: the game, and the count of games and replays.
    assert client.get(f"/api/games/{ids['game']}").json() == before, label
    assert (len(client.app.state.games), len(client.app.state.replays)) == (n_games, n_replays), label


# ------------------------------------------------------------------ what only a real server sees
RAW_HTTP = [b"GARBAGE\r\n\r\n", b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
            b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
            b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"y" * 70_000 + b"\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]


def test_requests_that_are_no_http_get_a_json_400_from_the_real_server():
    from helpers.web_server import WebServer

    with WebServer("--workers", "0") as s:
        for data in RAW_HTTP:
            with socket.create_connection((s.host, s.port), timeout=20) as sock:
                sock.sendall(data)
                answer = b""
                while chunk := sock.recv(65536):
                    answer += chunk
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 4"), (data[:60], answer[:200])
            assert b"content-type: application/json" in head.lower(), (data[:60], head)
            assert json.loads(body)["error"], (data[:60], body)
        assert s.request("GET", "/api/options").status == 200
        assert "Traceback" not in s.output, s.output[-3000:]
