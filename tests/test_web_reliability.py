"""``schnapsen-web`` under the conditions an adversarial run found it failing, on the real server (a subprocess:
its sockets, worker processes and signals are what is tested).

* Searches have deadlines: an expert opponent past its move deadline is replaced by the heuristic for that move
  (the log says so); an analysis past its deadline is a JSON 504.
* One game's long search does not hold up another's: a quick analysis is answered within a second while another
  game's expert analysis runs.
* Abandoned work stops: a request whose client goes away, or a game deleted, stops its search (its worker process
  is killed) within a second.
* The workers die with the server: killed outright (SIGKILL) in the middle of a search, no worker survives it for
  more than two seconds; stopped (SIGTERM) during a search, the waiting request gets a JSON 503 and the server's
  output has no traceback and no "leaked semaphore" warning; stopped by Ctrl-C, it says so in one line (status 130).
* Slow clients: a body that stops short gets JSON 408 within the read timeout; connections that send part of
  their headers and stop are answered 408 and closed.
* ``--host ::1`` keeps the Host allow-list.
* Answers are not held back: the connections have ``TCP_NODELAY``, so an answer's second write (uvicorn writes the
  headers, then the body) is not delayed until the client's acknowledgement (40 ms an answer on the loopback).
* Memory: uploads beyond the replays' budget do not grow the server.

Timings are measured on a machine whose two cores other work may load: each bound ("within a second") is the
goal, and the work it bounds takes milliseconds when nothing is queued in front of it, so the margin is the
machine's load, not the code's speed (the file passes with four busy processes beside it on two cores). Every
search that must still be running when something is measured is a ``sixtysix24`` opening of an expert without its
node budget (``helpers/unbounded_expert_web.py``; over 20 s on the machine these tests were written on, where the
budgeted expert answers in about a second), cut by a deadline of a few seconds.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import signal
import socket
import statistics
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the optional extra 'web' (fastapi, uvicorn) is not installed")

from helpers.web_server import WebServer, cpu_seconds, running  # noqa: E402
from schnapsen_env import RuleSet  # noqa: E402
from schnapsen_env.records import Recorder  # noqa: E402

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")

MOVE_SECONDS, ANALYSIS_SECONDS, READ_TIMEOUT = 1.5, 6.0, 1.0
#: A sixtysix24 hand where the person (player_0) leads at once (seed 17): the unbounded expert's analysis of that opening
#: searches for over 20 s, its answer to the person's first card for 8 s (on the machine these tests were written
#: on; the deadlines above are a fraction of that). With seat player_1, seed 9, the expert leads at once: 26 s.
LONG = {"ruleset": "sixtysix24", "seat": "player_0", "mode": "hand", "seed": 17}
EXPERT_LEADS = {"ruleset": "sixtysix24", "seat": "player_1", "mode": "hand", "seed": 9}


@pytest.fixture(scope="module")
def server():
    with WebServer("--max-move-seconds", str(MOVE_SECONDS), "--max-analysis-seconds", str(ANALYSIS_SECONDS),
                   "--read-timeout", str(READ_TIMEOUT), unbounded_expert=True) as s:
        yield s


def new_game(server, **settings) -> dict:
    r = server.request("POST", "/api/games", settings)
    assert r.status == 201, r.body[:300]
    return r.json()


def in_thread(fn):
    """Run ``fn`` in a thread; returns ``(thread, box)``: ``box["out"]`` its result (or ``box["error"]`` what it
    raised: a server killed under a request), ``box["at"]`` when it returned (``time.monotonic``)."""
    box: dict = {}

    def run():
        try:
            box["out"] = fn()
        except Exception as e:  # read by the test that expects it
            box["error"] = e
        finally:
            box["at"] = time.monotonic()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th, box


def wait_running(server, lane: str, timeout: float = 30) -> None:
    """Wait until a task runs in ``lane`` (its worker has started it)."""
    deadline = time.monotonic() + timeout
    while server.request("GET", "/api/status").json()["searches"]["lanes"][lane]["running"] < 1:
        assert time.monotonic() < deadline, f"no task started in the {lane} lane"
        time.sleep(0.02)


def counts(server) -> dict:
    return server.request("GET", "/api/status").json()["searches"]["counts"]


# ------------------------------------------------------------------------------------------------ the pool itself
def test_the_pool_stops_a_task_at_its_deadline_and_serves_other_owners_first():
    """In the analysis lane (two workers): owner A's two long tasks and owner B's short one, submitted in that
    order. B's starts beside A's first (a worker is kept for an owner with nothing running) and A's second waits;
    a task past its deadline raises SearchTimeout and its worker is replaced; cancel_owner stops a running task."""
    import asyncio
    import os

    from agents.web.search import SearchCancelled, SearchPool, SearchTimeout

    pool = SearchPool(4)  # play 2, analysis 2

    async def scenario():
        await asyncio.gather(pool.run("analysis", os.getpid, seconds=60), pool.run("analysis", os.getpid, seconds=60))
        first = set(pool.worker_pids())
        a1 = asyncio.ensure_future(pool.run("analysis", time.sleep, 30, owner="A", seconds=1.0))
        a2 = asyncio.ensure_future(pool.run("analysis", time.sleep, 30, owner="A", seconds=60))
        await asyncio.sleep(0.2)
        # Read before B's task: once it ends, its worker is free and A's second may start at any moment (a race
        # that once failed this test under load).
        stats = pool.stats()["lanes"]["analysis"]
        start = time.monotonic()
        b = await pool.run("analysis", os.getpid, owner="B", seconds=60)
        b_took = time.monotonic() - start
        with pytest.raises(SearchTimeout):
            await a1
        while pool.stats()["lanes"]["analysis"]["queued"]:  # a2 starts once a1 is stopped
            await asyncio.sleep(0.02)
        assert pool.cancel_owner("A", "the game was deleted") == 1  # a2, running
        with pytest.raises(SearchCancelled, match="deleted"):
            await a2
        return first, b, b_took, stats

    try:
        first, b, b_took, stats = asyncio.run(scenario())
        assert b in first and b_took < 1.0, f"B waited {b_took:.2f} s behind A"
        assert stats["running"] == 1 and stats["queued"] == 1  # A's second waits, a worker kept free for others
        counts = pool.stats()["counts"]
        assert counts["timed_out"] == 1 and counts["cancelled"] == 1
        deadline = time.monotonic() + 60
        while pool.stats()["counts"].get("restarts", 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pool.stats()["counts"]["restarts"] == 2  # both stopped workers were replaced
    finally:
        pool.close()


def test_a_lane_whose_worker_cannot_start_fails_its_task_and_recovers():
    """A worker restart that raises (EMFILE: too many open files) does not end the lane: the waiting task fails
    with SearchError (the app's JSON 503), and the lane retries, so the next task is served."""
    import asyncio
    import errno
    import os

    from agents.web.search import SearchError, SearchPool

    pool = SearchPool(1)
    pool.RETRY_SECONDS = 0.01
    original, calls, third = pool._spawn, [], threading.Event()

    def flaky(slot):
        calls.append(slot.lane)
        if len(calls) >= 3:
            third.set()
            return original(slot)
        raise OSError(errno.EMFILE, "Too many open files")

    pool._spawn = flaky

    async def scenario():
        with pytest.raises(SearchError, match="no search process could start"):
            await asyncio.wait_for(pool.run("quick", os.getpid, seconds=60), 30)
        assert await asyncio.to_thread(third.wait, 30)  # two failed starts, then the third that works
        return await asyncio.wait_for(pool.run("quick", os.getpid, seconds=120), 120)

    try:
        pid = asyncio.run(scenario())
        assert pid in pool.worker_pids() and pool.stats()["lanes"]["quick"]["ready"] == 1
    finally:
        pool.close()


def test_a_worker_that_died_idle_is_replaced_and_the_next_task_succeeds():
    """A worker killed while idle (kill -9, the out-of-memory killer): the next task is not lost with it (it runs on
    a fresh worker), and the dead worker is noticed while idle (it no longer counts as ready)."""
    import asyncio
    import os
    from multiprocessing.connection import wait

    from agents.web.search import SearchPool

    pool = SearchPool(1)

    async def scenario():
        first = await pool.run("quick", os.getpid, seconds=120)
        proc = pool._slots["quick"][0].proc
        assert proc.pid == first
        os.kill(first, signal.SIGKILL)
        assert wait([proc.sentinel], 30)  # it is dead: its task would find it so
        return first, await pool.run("quick", os.getpid, seconds=120)

    try:
        first, second = asyncio.run(scenario())
        assert second != first and second in pool.worker_pids()
        assert pool.stats()["counts"]["died"] == 1
        # an idle worker killed is noticed without a task: it is no longer counted ready
        proc = pool._slots["quick"][0].proc
        os.kill(second, signal.SIGKILL)
        assert wait([proc.sentinel], 30)
        deadline = time.monotonic() + 30
        while pool._slots["quick"][0].proc is proc and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool._slots["quick"][0].proc is not proc and pool.stats()["counts"]["died"] == 2
    finally:
        pool.close()


# ------------------------------------------------------------------------------------------------ deadlines
def test_an_expert_past_its_move_deadline_is_replaced_by_the_heuristic(server):
    server.wait_ready()
    start = time.monotonic()
    view = new_game(server, opponent="expert", **EXPERT_LEADS)
    took = time.monotonic() - start
    first = view["table"]["log"][0]
    assert first["by"] == "opponent" and "fallback" in first and "1.5 s" in first["fallback"], first
    assert "heuristic" in first["fallback"]
    assert took < MOVE_SECONDS + 5, f"the move took {took:.1f} s with a deadline of {MOVE_SECONDS} s"
    assert view["table"]["to_move"] == "you"


def test_an_analysis_past_its_deadline_is_a_json_504(server):
    server.wait_ready()
    view = new_game(server, opponent="random", **LONG)
    start = time.monotonic()
    r = server.request("POST", f"/api/games/{view['game']}/analysis", {"analysers": ["expert"]})
    took = time.monotonic() - start
    assert r.status == 504 and r.headers["content-type"] == "application/json", r.body[:300]
    assert f"limit of {ANALYSIS_SECONDS:g} s" in r.json()["error"] and "expert" in r.json()["error"]
    assert took < ANALYSIS_SECONDS + 5


# ------------------------------------------------------------------------------------------------ fairness
def test_a_quick_analysis_is_answered_within_a_second_while_another_games_expert_analysis_runs(server):
    """The adversarial run: three expert analyses kept the one analysis worker busy and others' millisecond
    analyses got no answer within 100 s."""
    server.wait_ready()
    slow = new_game(server, opponent="random", **LONG)
    quick = new_game(server, opponent="random", mode="hand", seed=63)  # schnapsen20: PIMC answers in milliseconds
    th, box = in_thread(lambda: server.request("POST", f"/api/games/{slow['game']}/analysis",
                                               {"analysers": ["expert"]}))
    wait_running(server, "analysis")
    start = time.monotonic()
    r = server.request("POST", f"/api/games/{quick['game']}/analysis", {"analysers": ["pimc"]})
    answered = time.monotonic()
    th.join(60)
    assert r.status == 200 and r.json()["analyses"][0]["analyser"] == "pimc", r.body[:300]
    assert box["out"].status == 504, "the expert's analysis was to run until its deadline"
    assert answered < box["at"], "the quick analysis was not answered while the expert searched"
    assert answered - start < 1.0, f"the quick analysis took {answered - start:.2f} s beside another game's search"


# ------------------------------------------------------------------------------------------------ abandoned work
def test_a_search_whose_client_went_away_stops_within_a_second(server):
    server.wait_ready()
    view = new_game(server, opponent="random", **LONG)
    before = set(server.workers())
    cancelled = counts(server).get("cancelled", 0)
    sock = socket.create_connection((server.host, server.port))
    body = json.dumps({"analysers": ["expert"]}).encode()
    sock.sendall(f"POST /api/games/{view['game']}/analysis HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    wait_running(server, "analysis")
    used = {p: cpu_seconds(p) for p in before}
    time.sleep(0.5)
    busy = max(before, key=lambda p: cpu_seconds(p) - used[p])  # the worker searching: it uses the CPU
    assert running(busy) and cpu_seconds(busy) - used[busy] > 0.1
    sock.close()  # the client goes away without its answer
    left = time.monotonic()
    while running(busy) and time.monotonic() - left < 5:
        time.sleep(0.01)
    stopped = time.monotonic() - left
    assert not running(busy), "the search went on after its client left"
    assert stopped < 1.0, f"the search stopped {stopped:.2f} s after its client left"
    assert counts(server).get("cancelled", 0) == cancelled + 1


def test_deleting_a_game_stops_its_opponents_search(server):
    server.wait_ready()
    view = new_game(server, opponent="expert", **LONG)
    th, box = in_thread(lambda: server.request("POST", f"/api/games/{view['game']}/actions",
                                               {"action": view["table"]["legal"][0]["name"]}))
    wait_running(server, "play")
    start = time.monotonic()
    assert server.request("DELETE", f"/api/games/{view['game']}").status == 204
    th.join(60)
    assert box["out"].status == 404 and "deleted" in box["out"].json()["error"], box["out"].body[:300]
    assert box["at"] - start < 1.0, f"the search ended {box['at'] - start:.2f} s after the game was deleted"


# ------------------------------------------------------------------------------------------------ slow clients
def test_a_body_that_stops_short_gets_a_json_408(server):
    sock = socket.create_connection((server.host, server.port))
    sock.settimeout(20)
    start = time.monotonic()
    sock.sendall(f"POST /api/games HTTP/1.1\r\nHost: {server.host}:{server.port}\r\nContent-Type: application/json"
                 "\r\nContent-Length: 1000\r\n\r\n{\"seed\": 1".encode())
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    took = time.monotonic() - start
    sock.close()
    head, _, payload = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:300]
    assert b"content-type: application/json" in head.lower() and "did not arrive" in json.loads(payload)["error"]
    assert took < READ_TIMEOUT + 3, f"the slow body was held {took:.1f} s"


def test_connections_that_send_part_of_their_headers_are_closed(server):
    socks = []
    start = time.monotonic()
    for _ in range(50):
        s = socket.create_connection((server.host, server.port))
        s.sendall(b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        s.settimeout(20)
        socks.append(s)
    closed = []
    for s in socks:
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        closed.append(time.monotonic() - start)
        s.close()
        assert data.startswith(b"HTTP/1.1 408") and b'"error"' in data, data[:200]
    assert max(closed) < READ_TIMEOUT + 3, f"the last connection was closed after {max(closed):.1f} s"
    assert server.request("GET", "/api/options").status == 200  # the server still answers


# ------------------------------------------------------------------------------------------------ no delayed answers
def test_the_listening_socket_gives_its_connections_tcp_nodelay():
    """asyncio sets TCP_NODELAY only on the connections of a socket whose protocol reads IPPROTO_TCP, and
    ``socket.create_server`` makes its socket with protocol 0: the server's connections had Nagle's algorithm on."""
    from agents.cli.web import _listen

    async def accepted() -> int:
        box: dict = {}

        class Probe(asyncio.Protocol):
            def connection_made(self, transport) -> None:
                box["nodelay"] = transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)

        sock = _listen("127.0.0.1", 0)
        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        _, writer = await asyncio.open_connection("127.0.0.1", sock.getsockname()[1])
        for _ in range(100):
            if "nodelay" in box:
                break
            await asyncio.sleep(0.01)
        writer.close()
        server.close()
        await server.wait_closed()
        return box["nodelay"]

    assert asyncio.run(accepted()) == 1


def test_answers_on_a_kept_alive_connection_are_not_held_back(server):
    """uvicorn writes an answer's headers and its body in two writes; without TCP_NODELAY, Nagle's algorithm held
    the body back until the client's delayed acknowledgement: every answer of the real server on a kept-alive
    connection took 40 ms or more on the loopback (a heuristic's move, a status), found by benchmarks/web_soak.py.
    The answer takes well under a millisecond of work: the median of 30 is bounded at 20 ms, half of that delay."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    took = []
    try:
        for _ in range(30):
            start = time.perf_counter()
            conn.request("GET", "/api/options")
            r = conn.getresponse()
            r.read()
            took.append(time.perf_counter() - start)
            assert r.status == 200
    finally:
        conn.close()
    assert statistics.median(took) < 0.020, f"answers took {[round(t * 1000) for t in took]} ms"


def test_every_answer_of_the_real_server_carries_the_security_headers(server):
    for method, path in [("GET", "/"), ("GET", "/static/app.js"), ("GET", "/api/options"), ("GET", "/nope"),
                         ("POST", "/api/games/x/actions")]:
        r = server.request(method, path, {} if method == "POST" else None)
        assert r.headers.get("x-frame-options") == "DENY", (path, r.headers)
        assert "frame-ancestors 'none'" in r.headers.get("content-security-policy", ""), path
        assert r.headers.get("x-content-type-options") == "nosniff" and r.headers.get("referrer-policy") == \
            "no-referrer", path


# ------------------------------------------------------------------------------------------------ the workers' end
def test_no_worker_outlives_a_server_killed_in_the_middle_of_a_search():
    """SIGKILL runs no shutdown; the workers' own watcher threads cannot run while a compiled search holds the GIL.
    The kernel's parent-death signal ends them at once."""
    with WebServer("--workers", "1", unbounded_expert=True) as s:
        s.wait_ready()
        view = new_game(s, opponent="random", **LONG)
        workers = s.workers()
        in_thread(lambda: s.request("POST", f"/api/games/{view['game']}/analysis", {"analysers": ["expert"]},
                                    timeout=60))
        wait_running(s, "analysis")
        time.sleep(0.3)
        s.stop(signal.SIGKILL)
        killed = time.monotonic()
        while any(running(p) for p in workers) and time.monotonic() - killed < 10:
            time.sleep(0.05)
        left = [p for p in workers if running(p)]
        took = time.monotonic() - killed
        assert not left, f"workers {left} outlived the killed server"
        assert took < 2.0, f"the last worker ended {took:.1f} s after the server"


def test_a_server_stopped_during_a_search_answers_json_503_and_leaves_nothing_behind():
    with WebServer("--workers", "1", unbounded_expert=True) as s:
        s.wait_ready()
        view = new_game(s, opponent="random", **LONG)
        workers = s.workers()
        th, box = in_thread(lambda: s.request("POST", f"/api/games/{view['game']}/analysis",
                                              {"analysers": ["expert"]}, timeout=60))
        wait_running(s, "analysis")
        assert s.stop(signal.SIGTERM) in (0, -signal.SIGTERM)  # uvicorn raises the signal again once it stopped
        th.join(30)
        r = box["out"]
        assert r.status == 503 and r.headers["content-type"] == "application/json", r.body[:300]
        assert "shutting down" in r.json()["error"]
        stopped = time.monotonic()
        while any(running(p) for p in workers) and time.monotonic() - stopped < 2:
            time.sleep(0.05)
        assert not [p for p in workers if running(p)], "workers outlived the stopped server by 2 s"
        assert "leaked semaphore" not in s.output and "Traceback" not in s.output, s.output[-3000:]


def test_ctrl_c_stops_the_server_in_one_quiet_line():
    """Ctrl-C (SIGINT) is how a person stops the server: it ends with the one line ``schnapsen-web: stopped`` and
    status 130, as schnapsen-play and schnapsen-arena end on Ctrl-C, with no error line and no traceback, and its
    workers end with it."""
    with WebServer("--workers", "1") as s:
        s.wait_ready()
        workers = s.workers()
        assert s.stop(signal.SIGINT) == 130, s.output[-3000:]
        deadline = time.monotonic() + 10
        while "stopped" not in s.output and time.monotonic() < deadline:  # the reader thread's last lines
            time.sleep(0.05)
        assert s.output.splitlines()[1:] == ["schnapsen-web: stopped"], s.output[-3000:]
        while any(running(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in workers if running(p)], "workers outlived the stopped server"


def test_a_server_stopped_while_a_body_arrives_answers_json_503_and_logs_no_traceback():
    """SIGTERM while a request's body was still arriving (a slow client): uvicorn cancels the request after its
    graceful timeout, and the Guard answered 503 before it stopped the route, which meanwhile read the end of the
    connection as a client gone, tried to answer that after the 503 and left "Task exception was never retrieved"
    and three tracebacks in the server's output (found by benchmarks/web_soak.py). The route is stopped first now,
    then the 503 goes out."""
    with WebServer("--workers", "0") as s:
        sock = socket.create_connection((s.host, s.port))
        sock.settimeout(30)
        sock.sendall(f"POST /api/games HTTP/1.1\r\nHost: {s.host}:{s.port}\r\nContent-Type: application/json\r\n"
                     "Content-Length: 1000\r\n\r\n{\"seed\": 1".encode())
        time.sleep(0.5)
        assert s.stop(signal.SIGTERM) in (0, -signal.SIGTERM)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        sock.close()
        head, _, payload = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503") and b"content-type: application/json" in head.lower(), answer[:300]
        assert "shutting down" in json.loads(payload)["error"]
        assert "Traceback" not in s.output and "never retrieved" not in s.output, s.output[-3000:]


# ------------------------------------------------------------------------------------------------ --host ::1
def _ipv6_loopback() -> bool:
    try:
        with socket.create_server(("::1", 0), family=socket.AF_INET6):
            return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
def test_the_ipv6_loopback_keeps_the_host_allow_list():
    with WebServer("--host", "::1", "--workers", "0") as s:
        for host, status in [(f"[::1]:{s.port}", 200), (f"localhost:{s.port}", 200), (f"127.0.0.1:{s.port}", 200),
                             (f"evil.example:{s.port}", 400), ("evil.example", 400), (f"[::2]:{s.port}", 400)]:
            r = s.request("GET", "/api/options", headers={"host": host})
            assert r.status == status, (host, r.status, r.body[:200])
            if status == 400:
                assert r.headers["content-type"] == "application/json" and "not this server" in r.json()["error"]


# ------------------------------------------------------------------------------------------------ memory
def _upload_of(size: int) -> bytes:
    """JSON Lines of seeded random sixtysix24 hands, about ``size`` bytes."""
    rng = np.random.default_rng(0)
    lines, total = [], 0
    while True:
        rec = Recorder.deal(RuleSet.make("sixtysix24"), rng)
        while rec.state.result is None:
            legal = rec.state.legal_actions()
            rec.step(int(legal[int(rng.integers(len(legal)))]))
        line = (json.dumps(rec.record().to_dict()) + "\n").encode()
        if total + len(line) > size:
            return b"".join(lines)
        lines.append(line)
        total += len(line)


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


@pytest.mark.slow
def test_uploads_beyond_the_replays_budget_do_not_grow_the_server():
    """An upload of 1 MB held 6.4 MB of parsed records, and the server kept 100 of them: 130 uploads took it from
    204 MB to 845 MB. Replays now keep their records as text, 32 MiB of it together: after the budget is full,
    more uploads evict older replays and the server's memory stays where it was. The bounds: the budget plus
    100 MB of allowance for the allocator over the warm server (40 uploads held 240 MB before), and 40 MB for
    30 uploads more once the budget is full (180 MB before)."""
    data = _upload_of(1_000_000)
    with WebServer("--workers", "0") as s:
        def upload(k: int) -> None:
            r = s.request("POST", f"/api/replays?name=u{k}.jsonl", data)
            assert r.status == 201, r.body[:300]

        for k in range(4):
            upload(k)
        base = _rss_mb(s.pid)
        for k in range(4, 44):
            upload(k)
        full = _rss_mb(s.pid)
        for k in range(44, 74):
            upload(k)
        after = _rss_mb(s.pid)
        status = s.request("GET", "/api/status").json()
        assert status["replay_bytes"] <= 32 << 20 and status["dropped"]["replays"]["evicted"] > 0
        assert full - base < 32 + 100, f"40 uploads grew the server from {base:.0f} MB to {full:.0f} MB"
        assert after - full < 40, f"30 uploads over the full budget grew the server from {full:.0f} to {after:.0f} MB"
