"""A soak of ``schnapsen-web``: the real server under a bounded mixed load from the loopback, its memory and answer
times recorded, then stopped by SIGTERM (and a second, short run by SIGKILL) with nothing of it left running.

Run:

    bash scripts/bootstrap.sh --extras web,dev python benchmarks/web_soak.py --json benchmarks/web_soak.json

The script starts ``python -m agents.cli.web --port 0 --seed SEED`` from this checkout, waits until its search
workers are ready, and drives it for ``--minutes`` with a fixed number of concurrent clients, each a thread that
sends one request at a time and pauses between them (every choice from its own seeded ``numpy`` Generator; the
threads' interleaving, and so the exact requests, still varies from run to run):

* players: whole games (a hand or a match, every ruleset, either seat, seeded or not) against ``heuristic``,
  against a search (``pimc``, ``expert``, ``policy+expert``) or against a shipped policy, with random legal moves;
  after a game they download its records, replay it, delete it or leave it;
* analysts: analyses of their games' positions (``pimc``, ``expert``, the policies, or every analyser) and of
  replay positions;
* uploaders: record files (about 1 MB, small ones, bad ones, ones over the limit) and the frames of their replays;
* slow clients: a body sent slowly but in time, a body that stops short, headers that stop short, and clients that
  leave in the middle of an expert's search;
* a client of bad requests (each must get its 4xx JSON error).

**Warm-up.** Memory grows at first by design: the replays keep up to 32 MiB of record text (and the games up to
500, a few kilobytes each). During the warm-up the uploaders send only 1 MB files, one after the other, to fill the
replays' budget; the warm-up lasts ``--warm-up`` of the run (a fifth) and, beyond it, until the server has evicted a
replay for the budget (for at most ``--minutes`` more, and at least five minutes more). The run is then extended by as much as the warm-up went past
its share, so that the measured part always lasts the rest of ``--minutes``. Memory is judged on the measured part;
the answer times are given for the whole run and for the measured part (the goal is judged on it).

**Goals** (the exit status is 1 when one fails):

* memory flat: the server's resident memory (``VmRSS``, sampled every second) at its highest after the warm-up is
  within ``--max-growth`` (10%) of its median over the first tenth of the measured part;
* the 99th percentile of a move's answer time against ``heuristic`` (the person's move and the heuristic's answer,
  one request) after the warm-up under ``--max-heuristic-p99-ms`` (200 ms);
* no 5xx answer but the documented 504 of an analysis stopped at its deadline, no answer that is not JSON, no
  answer of a status the request did not expect, no request left without an answer (but the slow clients' own),
  no traceback in the server's output;
* nothing left running: every process of the server's tree (the server, its search workers, multiprocessing's
  helper) gone within ``--exit-seconds`` of the server's end, after SIGTERM in the middle of the load and after
  SIGKILL in the middle of a search.

The answer times are measured by the client (from sending the request to reading the whole answer), in a
Python process with a thread per client on the same machine as the server: they include the client's own waits
for the interpreter's lock. This file is a script, not a test; ``tests/test_benchmarks.py`` runs it at a small
size.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's packages, not an installed copy
sys.path.append(str(Path(__file__).resolve().parent))  # the shared harness, however this file is loaded
import harness  # noqa: E402

ROOT = harness.ROOT
PROG = "benchmarks/web_soak.py"
RULESETS = ("schnapsen20", "sixtysix24", "schnapsen10")
POLICIES = ("trained", "trained-long", "trained-100m", "trained-220m")  # the shipped policies (schnapsen20)
SEARCHES = ("pimc", "expert", "policy+expert")  # searching opponents (policy+expert: schnapsen20 only)
#: The server's limits this load is shaped by (agents/web/app.py): the replays' budget of record text, the
#: largest upload, the largest JSON body.
REPLAY_BUDGET, MAX_UPLOAD, MAX_BODY = 32 << 20, 1 << 20, 1 << 16
JSON = "application/json"


# ------------------------------------------------------------------------------------------------ what is recorded
@dataclass
class Answer:
    """One request: when it ended (seconds since the load started), its kind, its status (0: no answer), the
    seconds it took, the phase (``soak``, ``shutdown``, ``kill-run``), and what was wrong with it (None: nothing)."""

    at: float
    kind: str
    status: int
    seconds: float
    phase: str
    problem: str | None = None


@dataclass
class Run:
    """The state the clients share: the server's address, the clock, the phase, the answers."""

    host: str
    port: int
    start: float
    phase: str = "soak"
    warm: bool = False  # the warm-up is over: the uploaders send the mix
    warm_after: float = 0.0  # the warm-up lasts this long at least (seconds)
    warm_limit: float = 0.0  # and this long at most (then it ends whether the budget is full or not)
    warm_at: float | None = None  # when it ended
    warm_why: str = "the replays' budget full"  # why it ended then
    end: float = 0.0  # when the load ended (SIGTERM)
    stop: threading.Event = field(default_factory=threading.Event)
    answers: list[Answer] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def now(self) -> float:
        return time.monotonic() - self.start

    def add(self, kind: str, status: int, seconds: float, problem: str | None = None) -> None:
        with self.lock:
            self.answers.append(Answer(self.now(), kind, status, seconds, self.phase, problem))


class Stopped(Exception):
    """The run is over: the client ends."""


# ------------------------------------------------------------------------------------------------ the clients
class Client:
    """One client: an ``httpx.Client`` (one kept-alive connection, ``TCP_NODELAY`` as browsers set it), a seeded
    Generator, and requests that record their kind, status and time and check the answer."""

    def __init__(self, run: Run, rng: np.random.Generator) -> None:
        import httpx  # the dev extra: imported once the script runs, so that --help needs nothing

        self.run, self.rng, self.httpx = run, rng, httpx
        transport = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        # The server closes a connection idle for 5 s: drop it first, so that no request races that close.
        self.http = httpx.Client(base_url=f"http://{run.host}:{run.port}", transport=transport, timeout=180,
                                 limits=httpx.Limits(max_connections=1, keepalive_expiry=3.0))

    def pause(self, mean: float) -> None:
        """Think for an exponentially distributed time of ``mean`` seconds (at most 4 means)."""
        if self.run.stop.wait(min(float(self.rng.exponential(mean)), 4 * mean)):
            raise Stopped

    def choice(self, items):
        return items[int(self.rng.integers(len(items)))]

    def call(self, kind: str, method: str, path: str, expect: tuple[int, ...], body: Any = None,
             content: bytes | None = None, headers: dict[str, str] | None = None,
             answer: str = JSON) -> tuple[int, Any]:
        """Send one request; record it; return ``(status, parsed JSON or None)``. ``expect``: the statuses this
        request may get; ``answer``: the content type of a 2xx answer (an error is always JSON)."""
        if self.run.stop.is_set():
            raise Stopped
        start = time.perf_counter()
        try:
            r = self.http.request(method, path, json=body, content=content, headers=headers)
        except self.httpx.HTTPError as e:
            self.run.add(kind, 0, time.perf_counter() - start, f"no answer: {type(e).__name__}: {e}"[:300])
            if self.run.stop.is_set():
                raise Stopped from None
            return 0, None
        took = time.perf_counter() - start
        problem, data = _check(r.status_code, r.headers.get("content-type", ""), r.content, expect, answer)
        self.run.add(kind, r.status_code, took, problem)
        return r.status_code, data


def _check(status: int, ctype: str, body: bytes, expect: tuple[int, ...], answer: str = JSON) -> tuple[str | None,
                                                                                                       Any]:
    """What is wrong with an answer (None: nothing) and its JSON."""
    data = None
    want = answer if 200 <= status < 300 else JSON
    if status != 204:
        if not ctype.startswith(want):
            return f"{status} answered {ctype or 'no content type'}, expected {want}: {body[:200]!r}", None
        if want == JSON:
            try:
                data = json.loads(body)
            except ValueError:
                return f"{status} answered a body that is no JSON: {body[:200]!r}", None
    if status not in expect:
        return f"{status}, expected {list(expect)}: {body[:300]!r}", data
    if status == 504 and "limit of" not in str(data):
        return f"504 without the deadline's message: {body[:300]!r}", data
    return None, data


def _raw(run: Run, kind: str, data: bytes, expect: tuple[int, ...], then: bytes = b"", gap: float = 0.0,
         timeout: float = 60) -> tuple[int, float]:
    """Send ``data`` on a fresh connection (then ``then`` in pieces, ``gap`` seconds apart), read the answer to
    its end (the server closes the connection), record it; returns (status, seconds)."""
    start = time.perf_counter()
    with socket.create_connection((run.host, run.port), timeout=timeout) as s:
        try:
            s.sendall(data)
            for k in range(0, len(then), max(1, len(then) // 6)):
                if run.stop.wait(gap):
                    raise Stopped
                s.sendall(then[k:k + max(1, len(then) // 6)])
            answer = b""
            while True:
                head, sep, rest = answer.partition(b"\r\n\r\n")
                if sep and b"content-length:" in head.lower():
                    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                    if len(rest) >= length:
                        break
                chunk = s.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except OSError as e:
            run.add(kind, 0, time.perf_counter() - start, f"no answer: {type(e).__name__}: {e}")
            return 0, time.perf_counter() - start
    took = time.perf_counter() - start
    head, _, body = answer.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        run.add(kind, 0, took, f"no HTTP answer: {answer[:200]!r}")
        return 0, took
    ctype = next((ln.split(b":", 1)[1].strip().decode() for ln in head.split(b"\r\n")
                  if ln.lower().startswith(b"content-type:")), "")
    problem, _ = _check(status, ctype, body, expect)
    run.add(kind, status, took, problem)
    return status, took


def _head(run: Run, method: str, path: str, length: int, extra: str = "") -> bytes:
    return (f"{method} {path} HTTP/1.1\r\nHost: {run.host}:{run.port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n{extra}\r\n").encode()


def play_game(c: Client, opponent: str, ruleset: str, kind: str, analyse: float = 0.0) -> None:
    """A whole game against ``opponent``: random legal moves (each recorded as ``move KIND``), the next
    hands of a match; with probability ``analyse`` an analysis before each of the person's moves; then its records,
    a replay, a delete, or nothing (left to the server's limits)."""
    settings: dict[str, Any] = {"opponent": opponent, "ruleset": ruleset, "seat": c.choice(("player_0", "player_1")),
                                "mode": "match" if c.rng.random() < 0.25 else "hand"}
    if c.rng.random() < 0.5:
        settings["seed"] = int(c.rng.integers(2 ** 31))
    status, view = c.call(f"new game {kind}", "POST", "/api/games", (201,), body=settings)
    if status != 201:
        return
    gid = view["game"]
    while True:
        table = view["table"]
        if table["to_move"] == "you":
            c.pause(0.3)
            if analyse and c.rng.random() < analyse:
                analysis(c, gid, view)
            move = c.choice([a["name"] for a in table["legal"]])
            status, out = c.call(f"move {kind}", "POST", f"/api/games/{gid}/actions", (200,),
                                 body={"action": move, "version": view["version"]})
            if status != 200:
                return
            view = out["view"]
        elif table["to_move"] is None and view["match"] is not None and not view["match"]["over"]:
            c.pause(0.3)
            status, view = c.call("next hand", "POST", f"/api/games/{gid}/next", (200,),
                                  body={"version": view["version"]})
            if status != 200:
                return
        elif table["to_move"] is None:
            break
        else:  # the opponent's search failed (an opponent_error): let it move again
            status, out = c.call(f"move {kind}", "POST", f"/api/games/{gid}/opponent", (200,),
                                 body={"version": view["version"]})
            if status != 200:
                return
            view = out["view"]
    after = c.rng.random()
    if after < 0.2:
        c.call("records", "GET", f"/api/games/{gid}/records", (200,), answer="application/x-ndjson")
    elif after < 0.4:
        status, rep = c.call("replay of a game", "POST", f"/api/games/{gid}/replay", (201,))
        if status == 201:
            c.call("replay frames", "GET", f"/api/replays/{rep['replay']}/records/0", (200,))
            if analyse:
                replay_analysis(c, rep)
    if c.rng.random() < 0.5:
        c.call("delete", "DELETE", f"/api/games/{gid}", (204,))


def analysis(c: Client, gid: str, view: dict) -> None:
    """An analysis of the person's position: PIMC, the expert, the policies or every analyser (the expert early
    in a sixtysix24 hand mostly reaches its deadline: asked for there one time in ten, expecting 200 or 504)."""
    ruleset, stock = view["ruleset"], view["table"]["stock"]["size"]
    picks = ["pimc", "expert"] + (["the policies", "every analyser"] if ruleset == "schnapsen20" else [])
    pick = c.choice(picks)
    if pick == "expert" and ruleset == "sixtysix24" and stock > 6 and c.rng.random() > 0.1:
        pick = "pimc"
    analysers = {"pimc": ["pimc"], "expert": ["expert"], "the policies": list(POLICIES), "every analyser": None}[pick]
    body = {"version": view["version"]} if analysers is None else {"analysers": analysers, "version": view["version"]}
    c.call(f"analysis by {pick}", "POST", f"/api/games/{gid}/analysis", (200,) if pick == "the policies" else (200, 504),
           body=body)


def replay_analysis(c: Client, rep: dict) -> None:
    """PIMC's analysis of a position of a replay (a record's step before its end)."""
    k = int(c.rng.integers(len(rep["records"])))
    steps = rep["records"][k]["moves"] or 1
    c.call("analysis of a replay", "POST", f"/api/replays/{rep['replay']}/analysis", (200, 504),
           body={"record": k, "step": int(c.rng.integers(steps)), "analysers": ["pimc"]})


def player(c: Client, opponents: str) -> None:
    """Games against ``heuristic``, a search or a policy, one after the other."""
    while True:
        if opponents == "heuristic":
            play_game(c, "heuristic", c.choice(RULESETS), "vs heuristic")
        elif opponents == "search":
            opponent = c.choice(SEARCHES)
            play_game(c, opponent, "schnapsen20" if opponent == "policy+expert" else c.choice(RULESETS), f"vs {opponent}")
        else:
            play_game(c, c.choice(POLICIES), "schnapsen20", "vs a policy")
        c.pause(1.0)


def analyst(c: Client) -> None:
    """Games against ``random`` or ``heuristic`` with an analysis before half of the person's moves."""
    while True:
        play_game(c, c.choice(("random", "heuristic")), c.choice(RULESETS), "in an analyst's game", analyse=0.5)
        c.pause(1.0)


def uploader(c: Client, files: dict[str, list[bytes]]) -> None:
    """Record files: during the warm-up 1 MB ones, one after the other; then a mix of 1 MB, small, bad and
    over-limit ones, and the frames of the replays."""
    while True:
        r = c.rng.random() if c.run.warm else 0.0
        if r < 0.3:
            status, rep = c.call("upload of 1 MB", "POST", "/api/replays?name=big.jsonl", (201,),
                                 content=c.choice(files["big"]))
        elif r < 0.7:
            status, rep = c.call("small upload", "POST", "/api/replays?name=small.jsonl", (201,),
                                 content=c.choice(files["small"]))
        elif r < 0.85:
            status, rep = c.call("bad upload", "POST", "/api/replays?name=bad.jsonl", (422,),
                                 content=c.choice(files["bad"]))
        else:  # over the limit: its headers alone (the server refuses it by its length, unread)
            _raw(c.run, "upload over the limit", _head(c.run, "POST", "/api/replays", MAX_UPLOAD + 1000), (413,))
            status = 0
        if status == 201 and c.run.warm:
            for _ in range(int(c.rng.integers(1, 4))):
                k = int(c.rng.integers(len(rep["records"])))
                c.call("replay frames", "GET", f"/api/replays/{rep['replay']}/records/{k}", (200,))
            c.call("bad request", "GET", f"/api/replays/{rep['replay']}/records/{len(rep['records'])}", (404,))
            if c.rng.random() < 0.2:
                replay_analysis(c, rep)
        c.pause(1.5 if c.run.warm else 0.05)


def slow(c: Client) -> None:
    """Slow clients: a body in pieces over about two seconds (in time), a body that stops short and headers that
    stop short (each answered 408 after the read timeout), a client that leaves during an expert's search."""
    run = c.run
    while True:
        r = c.rng.random()
        if r < 0.35:
            body = json.dumps({"opponent": "heuristic", "seed": int(c.rng.integers(2 ** 31))}).encode()
            _raw(run, "slow body (in time)", _head(run, "POST", "/api/games", len(body)), (201,), then=body,
                 gap=float(c.rng.uniform(0.1, 0.5)))
        elif r < 0.5:
            _raw(run, "body that stops short", _head(run, "POST", "/api/games", 1000) + b'{"seed": 1', (408,))
        elif r < 0.65:
            _raw(run, "headers that stop short", f"GET /api/options HTTP/1.1\r\nHost: {run.host}\r\nX-Slow: ".encode(),
                 (408,))
        else:
            left_mid_search(c)
        c.pause(2.0)


def left_mid_search(c: Client) -> None:
    """Ask for the expert's analysis of a sixtysix24 opening (most take about a second, within its node budget)
    and leave after a moment: its search is stopped if it still runs."""
    status, view = c.call("new game vs random", "POST", "/api/games", (201,),
                          body={"opponent": "random", "ruleset": "sixtysix24", "mode": "hand",
                                "seed": int(c.rng.integers(2 ** 31))})
    if status != 201:
        return
    body = json.dumps({"analysers": ["expert"]}).encode()
    start = time.perf_counter()
    with socket.create_connection((c.run.host, c.run.port), timeout=30) as s:
        s.sendall(_head(c.run, "POST", f"/api/games/{view['game']}/analysis", len(body)) + body)
        s.settimeout(float(c.rng.uniform(0.1, 1.0)))
        try:
            answer = s.recv(65536)  # a search that ended before we left: answered
        except TimeoutError:
            answer = b""
    c.run.add("left during a search", int(answer.split(b" ", 2)[1]) if answer else -1, time.perf_counter() - start)
    if c.rng.random() < 0.5:
        c.call("delete", "DELETE", f"/api/games/{view['game']}", (204,))


def bad_requests(c: Client) -> None:
    """Bad requests one after the other, each expecting its 4xx JSON error."""
    _, view = c.call("new game vs heuristic", "POST", "/api/games", (201,),
                     body={"opponent": "heuristic", "mode": "hand", "seat": "player_0", "seed": 5})
    gid, version = view["game"], view["version"]
    legal = {a["name"] for a in view["table"]["legal"]}
    illegal = next(f"play {card}" for card in ("AS", "AH", "AD", "AC", "TS", "TH") if f"play {card}" not in legal)
    requests: list[tuple[str, str, Any, dict | None, tuple[int, ...]]] = [
        ("GET", "/api/games/nope", None, None, (404,)),
        ("DELETE", "/api/games/nope", None, None, (404,)),
        ("POST", "/api/games", {"opponent": "nobody"}, None, (422,)),
        ("POST", "/api/games", {"ruleset": "chess"}, None, (422,)),
        ("POST", "/api/games", {"seed": -1}, None, (422,)),
        ("POST", "/api/games", b"{not json", None, (422,)),
        ("POST", "/api/games", {"opponent": "heuristic", "extra": 1}, None, (422,)),
        ("POST", f"/api/games/{gid}/actions", {"action": "play ZZ", "version": version}, None, (422,)),
        ("POST", f"/api/games/{gid}/actions", {"action": illegal, "version": version}, None, (409,)),
        ("POST", f"/api/games/{gid}/actions", {"action": sorted(legal)[0], "version": version + 7}, None, (409,)),
        ("POST", f"/api/games/{gid}/next", {}, None, (409,)),
        ("POST", f"/api/games/{gid}/opponent", {}, None, (409,)),
        ("GET", f"/api/games/{gid}/records", None, None, (409,)),
        ("POST", f"/api/games/{gid}/analysis", {"analysers": ["nobody"]}, None, (422,)),
        ("POST", "/api/games/nope/analysis", {}, None, (404,)),
        ("GET", "/api/replays/nope/records/0", None, None, (404,)),
        ("POST", "/api/replays", b"not a record\n", None, (422,)),
        ("POST", "/api/games", {"opponent": "heuristic"}, {"origin": "http://evil.example"}, (403,)),
        ("GET", "/api/options", None, {"host": "evil.example"}, (400,)),
        ("PUT", "/api/games", None, None, (405,)),
        ("GET", "/nope", None, None, (404,)),
    ]
    while True:
        k = int(c.rng.integers(len(requests) + 2))
        if k == len(requests):  # a JSON body over the limit: its headers alone
            _raw(c.run, "bad request", _head(c.run, "POST", "/api/games", MAX_BODY + 10), (413,))
        elif k == len(requests) + 1:  # bytes that are no HTTP
            _raw(c.run, "bad request", b"HELLO\x00 there\r\n\r\n", (400,))
        else:
            method, path, body, headers, expect = requests[k]
            raw = body if isinstance(body, bytes) else None
            c.call("bad request", method, path, expect, body=None if raw is not None else body, content=raw,
                   headers=({"content-type": JSON} if raw is not None else {}) | (headers or {}))
        c.pause(0.5)


# ------------------------------------------------------------------------------------------------ the files
def record_files(rng: np.random.Generator) -> dict[str, list[bytes]]:
    """The upload bodies: three of about 1 MB (seeded random play of every ruleset), five small ones, and bad ones
    (a line that is no record, an illegal action, a wrong result)."""
    from schnapsen_env import RuleSet
    from schnapsen_env.records import Recorder

    def lines(n_bytes: int) -> list[bytes]:
        out, total = [], 0
        while total < n_bytes:
            rec = Recorder.deal(RuleSet.make(RULESETS[int(rng.integers(3))]), rng)
            while rec.state.result is None:
                legal = rec.state.legal_actions()
                rec.step(int(legal[int(rng.integers(len(legal)))]))
            line = (json.dumps(rec.record().to_dict()) + "\n").encode()
            if total + len(line) > n_bytes:
                break
            out.append(line)
            total += len(line)
        return out

    big = [b"".join(lines(1_000_000)) for _ in range(3)]
    small = [b"".join(lines(int(rng.integers(1_000, 8_000)))) for _ in range(5)]
    one = json.loads(small[0].split(b"\n")[0])
    bad = [b"not a record\n", small[1] + b'{"rules": {"ruleset": "schnapsen20"}}\n',
           json.dumps({**one, "actions": one["actions"][:1] + ["play ZZ"]}).encode() + b"\n",
           json.dumps({**one, "result": {"winner": "player_0", "game_points": 9, "reason": "claim"}}).encode() + b"\n"]
    return {"big": big, "small": small, "bad": bad}


# ------------------------------------------------------------------------------------------------ the server
def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _alive(pid: int, started: str) -> bool:
    """The process ``pid`` that started at ``started`` (clock ticks after boot) runs (not a zombie, not another
    process that reuses the number)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z" and fields[19] == started


def tree(pid: int) -> dict[int, str]:
    """The running processes of ``pid``'s tree (``pid`` and every descendant), with their start times."""
    parents: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and fields[0] != "Z":
                parents[int(fields[1])].append((int(entry), fields[19]))
    out, todo = {}, [pid]
    own = _stat(pid)
    if own is not None and own[0] != "Z":
        out[pid] = own[19]
    while todo:
        for child, started in parents.get(todo.pop(), []):
            out[child] = started
            todo.append(child)
    return out


def rss_mib(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(ln.split()[1]) for ln in f if ln.startswith("VmRSS")) / 1024
    except (OSError, StopIteration):
        return None


class Server:
    """``python -m agents.cli.web --port 0 --seed SEED`` from this checkout; its output kept; the processes of its
    tree seen so far."""

    def __init__(self, seed: int, args: list[str]) -> None:
        self.args = ["--port", "0", "--seed", str(seed), *args]
        self.lines: list[str] = []
        self.seen: dict[int, str] = {}
        self._first: queue.Queue = queue.Queue()

    def start(self, timeout: float = 900) -> Server:
        self.proc = subprocess.Popen([sys.executable, "-m", "agents.cli.web", *self.args], cwd=ROOT,
                                     env=harness.on_path(ROOT), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        threading.Thread(target=self._read, daemon=True).start()
        first = self._first.get(timeout=120)
        if first is None or "serving on http://" not in first:
            raise SystemExit(f"{PROG}: the server did not start:\n{self.output[-3000:]}")
        netloc = first.split("serving on http://")[1].split("/")[0]
        self.host, self.port = netloc.rsplit(":", 1)[0], int(netloc.rsplit(":", 1)[1])
        deadline = time.monotonic() + timeout
        while True:  # every search worker warmed up (a fresh checkout compiles the searches first: minutes)
            lanes = self.status()["searches"]["lanes"]
            if all(lane["ready"] == lane["workers"] for lane in lanes.values()):
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"{PROG}: the server's workers did not warm up in {timeout:g} s: {lanes}")
            time.sleep(0.5)
        self.look()
        return self

    def _read(self) -> None:
        for line in self.proc.stdout:
            if not self.lines:
                self._first.put(line)
            self.lines.append(line)
        self._first.put(None)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def status(self) -> dict:
        import http.client

        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            conn.request("GET", "/api/status")
            return json.loads(conn.getresponse().read())
        finally:
            conn.close()

    def look(self) -> dict[int, str]:
        """The processes of the server's tree now (added to :attr:`seen`)."""
        now = tree(self.proc.pid)
        self.seen.update(now)
        return now

    def end(self, sig: int, exit_seconds: float) -> dict[str, Any]:
        """Send ``sig``, wait for the server's end and then up to ``exit_seconds`` for every process of its tree
        seen; what was left."""
        self.look()
        sent = time.monotonic()
        self.proc.send_signal(sig)
        try:
            status = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            status = None
        ended = time.monotonic()
        while any(_alive(p, s) for p, s in self.seen.items()) and time.monotonic() - ended < exit_seconds:
            time.sleep(0.02)
        gone = time.monotonic()
        left = sorted(p for p, s in self.seen.items() if _alive(p, s))
        for p in left:  # leave nothing behind, whatever the finding
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        return {"signal": signal.Signals(sig).name, "exit_status": status,
                "server_seconds": None if status is None else round(ended - sent, 3),
                "tree_seconds": round(gone - sent, 3), "processes_seen": len(self.seen), "left": left}


# ------------------------------------------------------------------------------------------------ the run
CLIENTS = {  # flag: (default, what it is)
    "players": (6, "clients playing games against heuristic"),
    "searchers": (2, "clients playing against pimc, expert, policy+expert"),
    "policy-players": (2, "clients playing against the shipped policies"),
    "analysts": (2, "clients asking for analyses of their games and replays"),
    "uploaders": (1, "clients uploading record files"),
    "slow": (2, "slow clients: slow bodies, stalled bodies and headers, leaving during a search"),
    "bad": (1, "clients sending bad requests"),
}


def start_clients(run: Run, counts: dict[str, int], seed: int, files: dict) -> list[threading.Thread]:
    """One thread per client, each with its own Generator (``SeedSequence(seed).spawn``)."""
    seqs = iter(np.random.SeedSequence(seed).spawn(sum(counts.values())))
    jobs = {"players": lambda c: player(c, "heuristic"), "searchers": lambda c: player(c, "search"),
            "policy-players": lambda c: player(c, "policy"), "analysts": analyst,
            "uploaders": lambda c: uploader(c, files), "slow": slow, "bad": bad_requests}
    threads = []
    for name, n in counts.items():
        for k in range(n):
            client = Client(run, np.random.default_rng(next(seqs)))

            def body(job=jobs[name], client=client) -> None:
                try:
                    job(client)
                except Stopped:
                    pass
                except Exception as e:  # a failure of the client itself: recorded, the client ends
                    run.add("client failure", 0, 0.0, f"{type(e).__name__}: {e}"[:300])
                finally:
                    client.http.close()

            th = threading.Thread(target=body, name=f"{name}-{k}", daemon=True)
            th.start()
            threads.append(th)
    return threads


def watch(server: Server, run: Run, samples: list, statuses: list, loads: list, until: threading.Event) -> None:
    """Every second: the server's and its workers' memory, its tree; every 5 s ``/api/status``; every 10 s the
    machine's load average."""
    tick = 0
    while not until.wait(1.0 if tick else 0.0):
        procs = server.look()
        mine = rss_mib(server.proc.pid)
        if mine is None:
            break
        workers = sum(rss_mib(p) or 0.0 for p in procs if p != server.proc.pid)
        samples.append((round(run.now(), 2), round(mine, 2), round(workers, 1)))
        if tick % 5 == 0:
            try:
                status = server.status()
            except (OSError, ValueError):
                status = None
            if status is not None:
                statuses.append((round(run.now(), 2), status))
                evicted = status["dropped"]["replays"]["evicted"]
                if not run.warm and evicted and run.now() >= run.warm_after:
                    run.warm, run.warm_at = True, run.now()
        if not run.warm and run.now() >= run.warm_limit:
            run.warm, run.warm_at = True, run.now()
            run.warm_why = "its time limit (the replays' budget was not full)"
        if tick % 10 == 0:
            loads.append((round(run.now(), 1), *(harness.load() or [])))
        tick += 1


def percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1000
    return {"count": len(ms), "p50_ms": float(np.percentile(ms, 50)), "p90_ms": float(np.percentile(ms, 90)),
            "p99_ms": float(np.percentile(ms, 99)), "max_ms": float(ms.max())}


def by_kind(answers: list[Answer]) -> dict[str, dict]:
    """Per kind: the answers' times (percentiles) and their statuses."""
    groups: dict[str, list[Answer]] = defaultdict(list)
    for a in answers:
        groups[a.kind].append(a)
    return {kind: {**percentiles([a.seconds for a in g]),
                   "statuses": dict(sorted(Counter(str(a.status) for a in g).items()))}
            for kind, g in sorted(groups.items())}


def soak(args, counts: dict[str, int], files: dict, server_args: list[str]) -> dict[str, Any]:
    """The main run: the load for ``args.minutes``, then SIGTERM in the middle of it."""
    server = Server(args.seed, server_args).start()
    status0 = server.status()
    seconds = 60 * args.minutes
    run = Run(server.host, server.port, time.monotonic(), warm_after=args.warm_up * seconds,
              warm_limit=args.warm_up * seconds + max(seconds, 300.0))
    measured = (1 - args.warm_up) * seconds
    samples: list = []
    statuses: list = []
    loads: list = []
    until = threading.Event()
    watcher = threading.Thread(target=watch, args=(server, run, samples, statuses, loads, until), daemon=True)
    watcher.start()
    threads = start_clients(run, counts, args.seed, files)
    lanes = ", ".join(f"{k} {v['workers']}" for k, v in status0["searches"]["lanes"].items())
    print(f"{PROG}: {sum(counts.values())} clients for {args.minutes:g} minutes against {server.host}:{server.port} "
          f"(search workers: {lanes})", flush=True)
    while run.warm_at is None or run.now() < run.warm_at + measured:
        time.sleep(min(15.0, max(0.5, (run.warm_at or run.now()) + measured - run.now())))
        n = len(run.answers)
        rss = samples[-1][1] if samples else float("nan")
        print(f"  {run.now():5.0f} s: {n} answers, server {rss:.0f} MiB{'' if run.warm else ' (warming up)'}",
              flush=True)
    final_status = server.status()
    run.end = run.now()
    run.phase = "shutdown"
    until.set()
    watcher.join(10)
    term = server.end(signal.SIGTERM, args.exit_seconds)
    run.stop.set()
    for th in threads:
        th.join(30)
    return {"run": run, "samples": samples, "statuses": statuses, "loads": loads, "status": final_status,
            "term": term, "output": server.output}


def kill_run(args, counts: dict[str, int], files: dict, server_args: list[str]) -> dict[str, Any]:
    """A second, short run: the same load for ``args.kill_seconds``, then SIGKILL while an expert searches."""
    server = Server(args.seed + 1, server_args).start()
    run = Run(server.host, server.port, time.monotonic(), phase="kill-run", warm=True)
    threads = start_clients(run, counts, args.seed + 1, files)
    time.sleep(args.kill_seconds)
    c = Client(run, np.random.default_rng(args.seed))
    searching = threading.Thread(target=lambda: _quietly(left_mid_search_long, c), daemon=True)
    searching.start()
    deadline = time.monotonic() + 30
    while server.status()["searches"]["lanes"]["analysis"]["running"] < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    running = server.status()["searches"]["lanes"]["analysis"]["running"]
    run.phase = "killed"
    kill = server.end(signal.SIGKILL, args.exit_seconds)
    run.stop.set()
    for th in [*threads, searching]:
        th.join(30)
    return {"run": run, "kill": {**kill, "searches_running": running}, "output": server.output}


def left_mid_search_long(c: Client) -> None:
    """An expert's analysis of a sixtysix24 opening, waited for (the server is killed under it)."""
    status, view = c.call("new game vs random", "POST", "/api/games", (201,),
                          body={"opponent": "random", "ruleset": "sixtysix24", "seat": "player_0", "mode": "hand",
                                "seed": 17})
    if status == 201:
        c.call("analysis by expert", "POST", f"/api/games/{view['game']}/analysis", (200, 504),
               body={"analysers": ["expert"]})


def _quietly(fn, *args) -> None:
    try:
        fn(*args)
    except Stopped:
        pass


# ------------------------------------------------------------------------------------------------ figures, goals
def memory(samples: list, warm_at: float, end: float) -> dict[str, Any]:
    """The server's memory over the measured part (from ``warm_at`` to ``end``): the median over its first tenth
    (the baseline), the highest sample, their ratio, the last minute's median and the slope of a straight line
    fitted to it."""
    t = np.array([s[0] for s in samples])
    mb = np.array([s[1] for s in samples])
    after = (t >= warm_at) & (t <= end)
    early = after & (t < warm_at + 0.1 * (end - warm_at))
    baseline = float(np.median(mb[early])) if early.any() else float("nan")
    peak = float(mb[after].max()) if after.any() else float("nan")
    last = after & (t >= end - 60)
    slope = float(np.polyfit(t[after] / 60, mb[after], 1)[0]) if after.sum() > 2 else float("nan")
    step = max(1, len(samples) // 120)  # about 120 points kept for the record
    return {"baseline_mib": baseline, "peak_mib": peak, "growth": peak / baseline - 1, "start_mib": float(mb[0]),
            "last_minute_mib": float(np.median(mb[last])) if last.any() else float("nan"),
            "slope_mib_per_minute": slope, "workers_peak_mib": max(s[2] for s in samples),
            "samples": [list(s) for s in samples[::step]]}


def per_minute(answers: list[Answer], samples: list, statuses: list, loads: list, end: float) -> list[dict]:
    """Each minute of the run: its answers, the p50 and p99 of the moves against heuristic, the server's median
    memory (MiB), the games and replays it kept at the minute's end, and the machine's load average (1 min)."""
    out = []
    for m in range(int(np.ceil(end / 60))):
        def within(t: float, m: int = m) -> bool:
            return m * 60 <= t < (m + 1) * 60

        moves = [a.seconds for a in answers if within(a.at) and a.kind == "move vs heuristic"]
        mib = [s[1] for s in samples if within(s[0])]
        kept = [st for at, st in statuses if within(at)]
        load = [ld[1] for ld in loads if len(ld) == 4 and within(ld[0])]
        out.append({"minute": m + 1, "answers": sum(1 for a in answers if within(a.at)),
                    "heuristic_p50_ms": float(np.percentile(moves, 50) * 1000) if moves else None,
                    "heuristic_p99_ms": float(np.percentile(moves, 99) * 1000) if moves else None,
                    "rss_mib": float(np.median(mib)) if mib else None,
                    "games": kept[-1]["games"] if kept else None, "replays": kept[-1]["replays"] if kept else None,
                    "load_1min": float(np.mean(load)) if load else None})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="The goals and the warm-up are "
                                "described at the top of benchmarks/web_soak.py.")
    p.add_argument("--minutes", type=float, default=10.0, help="minutes of load (default 10), warm-up included; "
                   "more when the warm-up needs more than its share")
    p.add_argument("--warm-up", type=float, default=0.2, help="share of the minutes that is warm-up (default 0.2; "
                   "it lasts beyond until the replays' budget is full)")
    p.add_argument("--seed", type=int, default=0, help="seed of the server and of every client (default 0)")
    for flag, (default, what) in CLIENTS.items():
        p.add_argument(f"--{flag}", type=int, default=default, help=f"{what} (default {default})")
    p.add_argument("--workers", type=int, default=None, help="the server's --workers (default: its own)")
    p.add_argument("--kill-seconds", type=float, default=30.0, help="seconds of load of the run ended by SIGKILL "
                   "(default 30)")
    p.add_argument("--exit-seconds", type=float, default=5.0, help="seconds the server's processes may take to end "
                   "after the server (default 5)")
    p.add_argument("--max-growth", type=float, default=0.10, help="goal: memory growth after the warm-up (default "
                   "0.10)")
    p.add_argument("--max-heuristic-p99-ms", type=float, default=200.0, help="goal: the 99th percentile of a move "
                   "against heuristic after the warm-up (default 200)")
    harness.json_option(p)
    args = p.parse_args(argv)
    counts = {flag: getattr(args, flag.replace("-", "_")) for flag in CLIENTS}
    if not 0 < args.minutes <= 24 * 60 or not 0 <= args.warm_up <= 0.8:
        p.error("--minutes must be above 0 (at most a day) and --warm-up from 0 to 0.8")
    if any(n < 0 for n in counts.values()) or counts["players"] < 1:
        p.error("client counts must be >= 0, and --players >= 1 (the heuristic's moves are a goal)")
    if args.json:
        folder = Path(args.json).resolve().parent
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            p.error(f"--json {args.json}: the folder {folder} does not exist or cannot be written")
    missing = [m for m in ("fastapi", "uvicorn", "httpx") if importlib.util.find_spec(m) is None]
    if missing:
        p.error(f"{' and '.join(missing)} not installed: expected the extras web and dev")
    if not Path("/proc/self/stat").exists():
        p.error("reads /proc (Linux): the server's memory and processes")
    server_args = [] if args.workers is None else ["--workers", str(args.workers)]

    cpu = time.process_time()
    files = record_files(np.random.default_rng(args.seed))
    main_run = soak(args, counts, files, server_args)
    print(f"{PROG}: SIGTERM: the server ended in {main_run['term']['server_seconds']} s; now a run of "
          f"{args.kill_seconds:g} s ended by SIGKILL", flush=True)
    killed = kill_run(args, counts, files, server_args)
    client_cpu = time.process_time() - cpu

    run: Run = main_run["run"]
    warm_at = run.warm_at if run.warm_at is not None else run.end
    soak_answers = [a for a in run.answers if a.phase == "soak"]
    steady = [a for a in soak_answers if a.at >= warm_at]
    counted = soak_answers + [a for a in killed["run"].answers if a.phase == "kill-run"]
    problems = [a for a in counted if a.problem is not None]
    server_5xx = Counter(a.status for a in counted if a.status >= 500 and not (a.status == 504 and a.problem is None))
    deadline_504 = sum(1 for a in counted if a.status == 504 and a.problem is None)
    text = sum(1 for a in problems if "answered" in a.problem and ("expected application" in a.problem
                                                                   or "no JSON" in a.problem))
    no_answer = sum(1 for a in problems if a.status == 0)
    tracebacks = sum(out.count("Traceback") for out in (main_run["output"], killed["output"]))
    log = [ln.rstrip() for out in (main_run["output"], killed["output"]) for ln in out.splitlines()[1:]]
    mem = memory(main_run["samples"], warm_at, run.end)
    kinds, kinds_steady = by_kind(soak_answers), by_kind(steady)
    heuristic = kinds_steady.get("move vs heuristic", {"p99_ms": float("nan"), "count": 0})
    loads = [ld for ld in main_run["loads"] if len(ld) == 4]
    status = main_run["status"]
    shutdown = Counter(str(a.status) for a in run.answers if a.phase == "shutdown")
    goals = [
        {"goal": "memory growth after the warm-up", "value": mem["growth"], "limit": args.max_growth,
         "holds": bool(mem["growth"] <= args.max_growth)},
        {"goal": "p99 of a move against heuristic after the warm-up (ms)", "value": heuristic["p99_ms"],
         "limit": args.max_heuristic_p99_ms, "holds": bool(heuristic["p99_ms"] < args.max_heuristic_p99_ms)},
        {"goal": "5xx answers but the 504 of a deadline", "value": sum(server_5xx.values()), "limit": 0,
         "holds": not server_5xx},
        {"goal": "answers that are not JSON", "value": text, "limit": 0, "holds": text == 0},
        {"goal": "answers of an unexpected status or content, and requests without an answer",
         "value": len(problems), "limit": 0, "holds": not problems},
        {"goal": "tracebacks in the server's output", "value": tracebacks, "limit": 0, "holds": tracebacks == 0},
        {"goal": "processes left after SIGTERM", "value": len(main_run["term"]["left"]), "limit": 0,
         "holds": not main_run["term"]["left"] and main_run["term"]["exit_status"] is not None},
        {"goal": "processes left after SIGKILL", "value": len(killed["kill"]["left"]), "limit": 0,
         "holds": not killed["kill"]["left"]},
    ]
    figures = {
        "title": f"schnapsen-web under {sum(counts.values())} concurrent clients for {run.end / 60:.1f} minutes",
        "minutes": args.minutes, "seed": args.seed, "clients": counts, "server_args": server_args,
        "lanes": {k: v["workers"] for k, v in status["searches"]["lanes"].items()},
        "seconds": run.end, "warm_up": {"seconds": warm_at, "ended_by": run.warm_why},
        "answers": len(soak_answers), "answers_per_second": len(soak_answers) / run.end,
        "kinds": kinds, "after_warm_up": kinds_steady, "memory": mem,
        "per_minute": per_minute(soak_answers, main_run["samples"], main_run["statuses"], main_run["loads"],
                                 run.end),
        "server_status": {k: status[k] for k in ("games", "replays", "replay_bytes", "dropped")}
        | {"searches": status["searches"]["counts"]},
        "errors": {"server_5xx": {str(k): v for k, v in sorted(server_5xx.items())}, "deadline_504": deadline_504,
                   "text_answers": text, "no_answer": no_answer, "problems": len(problems),
                   "examples": [f"{a.phase} {a.kind}: {a.problem}" for a in problems[:20]],
                   "server_log": log[:60]},
        "shutdown": {"sigterm": {**main_run["term"], "answers_meanwhile": dict(shutdown)},
                     "sigkill": {**killed["kill"], "answers": len(killed["run"].answers)}},
        "load_during": {"mean_1min": float(np.mean([ld[1] for ld in loads])) if loads else None,
                        "max_1min": float(np.max([ld[1] for ld in loads])) if loads else None,
                        "cores": os.cpu_count(), "client_cpu_seconds": client_cpu, "samples": loads},
        "goals": goals,
    }
    print(report(figures))
    if args.json:
        harness.write_json(args.json, figures)
    return 0 if all(g["holds"] for g in goals) else 1


def report(f: dict) -> str:
    """The readable summary."""
    lines = [f"\n{f['title']} (lanes: {', '.join(f'{k} {v}' for k, v in f['lanes'].items())}); "
             f"{f['answers']:,} answers, {f['answers_per_second']:.1f} a second",
             f"{'kind':<34}{'count':>7}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}  statuses"]
    for kind, k in f["kinds"].items():
        lines.append(f"{kind:<34}{k['count']:>7}{k['p50_ms']:>9.1f}{k['p90_ms']:>9.1f}{k['p99_ms']:>9.1f}"
                     f"{k['max_ms']:>9.0f}  {k['statuses']}")
    lines.append(f"{'minute':>6}{'answers':>9}{'heuristic p50 ms':>18}{'p99 ms':>9}{'server MiB':>12}{'games':>7}"
                 f"{'replays':>9}{'load':>6}")
    for row in f["per_minute"]:
        cells = [("-" if row[k] is None else f"{row[k]:.1f}") for k in
                 ("heuristic_p50_ms", "heuristic_p99_ms", "rss_mib", "load_1min")]
        lines.append(f"{row['minute']:>6}{row['answers']:>9}{cells[0]:>18}{cells[1]:>9}{cells[2]:>12}"
                     f"{row['games'] if row['games'] is not None else '-':>7}"
                     f"{row['replays'] if row['replays'] is not None else '-':>9}{cells[3]:>6}")
    m = f["memory"]
    w = f["warm_up"]
    lines.append(f"warm-up: {w['seconds']:.0f} s (ended by {w['ended_by']}); measured part {f['seconds'] - w['seconds']:.0f} s")
    lines.append(f"memory: {m['start_mib']:.0f} MiB at the start; after the warm-up "
                 f"{m['baseline_mib']:.1f} MiB (median of its first tenth), at most {m['peak_mib']:.1f} MiB "
                 f"({m['growth']:+.1%}), {m['last_minute_mib']:.1f} MiB in the last minute "
                 f"({m['slope_mib_per_minute']:+.2f} MiB a minute); workers together at most "
                 f"{m['workers_peak_mib']:.0f} MiB")
    s = f["server_status"]
    lines.append(f"server at the end: {s['games']} games, {s['replays']} replays ({s['replay_bytes'] / 2**20:.1f} "
                 f"MiB), dropped {s['dropped']}, searches {s['searches']}")
    e = f["errors"]
    lines.append(f"errors: 5xx {e['server_5xx']}, deadline 504s {e['deadline_504']}, not JSON {e['text_answers']}, "
                 f"without an answer {e['no_answer']}, other problems {e['problems']}")
    lines += [f"  {x}" for x in e["examples"][:10]]
    if e["server_log"]:
        lines.append("the server's output (beyond its first line):")
        lines += [f"  {x}" for x in e["server_log"][:20]]
    for what, d in f["shutdown"].items():
        lines.append(f"{what}: server ended after {d['server_seconds']} s (exit status {d['exit_status']}), its "
                     f"{d['processes_seen']} processes gone after {d['tree_seconds']} s, left: {d['left'] or 'none'}")
    ld = f["load_during"]
    if ld["mean_1min"] is not None:
        lines.append(f"machine: load average (1 min) {ld['mean_1min']:.1f} on average, at most {ld['max_1min']:.1f}, "
                     f"on {ld['cores']} cores; the clients used {ld['client_cpu_seconds']:.0f} CPU seconds")
    for g in f["goals"]:
        value = f"{g['value']:.3g}" if isinstance(g["value"], float) else g["value"]
        lines.append(f"goal: {g['goal']}: {value} (limit {g['limit']:g}) {'holds' if g['holds'] else 'MISSED'}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
