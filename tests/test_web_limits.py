"""``schnapsen-web``'s guards and limits through FastAPI's test client (in-process, fast): the security headers of
every answer and a page that passes its Content-Security-Policy, the Host allow-list for every loopback address
(IPv6 included) and the one-line errors of a bad ``--host`` or limit, uploads whose text JSON answers cannot carry
(refused before anything is stored), JSON for a failure no route handled, and games and replays that expire or
are evicted by the replays' budget. The real server's deadlines, cancelling, timeouts and signals are in
``tests/test_web_reliability.py``."""

from __future__ import annotations

import json
import re
import shutil
import time
import warnings
import weakref
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the optional extra 'web' (fastapi, uvicorn) is not installed")
pytest.importorskip("httpx", reason="httpx (the dev extra) runs FastAPI's test client")

with warnings.catch_warnings():  # starlette's test client prefers httpx2 (Python >= 3.11 only); httpx works
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")
    from fastapi.testclient import TestClient  # noqa: E402

from agents.cli.web import allowed_hosts, main  # noqa: E402
from agents.web.app import MAX_BODY_BYTES, create_app  # noqa: E402
from agents.web.guards import CONTENT_SECURITY_POLICY  # noqa: E402
from agents.web.sessions import Replay, Store, WebError  # noqa: E402
from schnapsen_env import RuleSet  # noqa: E402
from schnapsen_env.records import Recorder, parse_records  # noqa: E402
from schnapsen_env.svg import card_svg  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "agents" / "web" / "static"
HEADERS = {"x-frame-options": "DENY", "x-content-type-options": "nosniff", "referrer-policy": "no-referrer",
           "content-security-policy": CONTENT_SECURITY_POLICY}


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(seed=0, workers=0), raise_server_exceptions=False) as c:
        yield c


def record_line(seed: int = 1, ruleset: str = "schnapsen20") -> dict:
    rng = np.random.default_rng(seed)
    rec = Recorder.deal(RuleSet.make(ruleset), rng)
    while rec.state.result is None:
        legal = rec.state.legal_actions()
        rec.step(int(legal[int(rng.integers(len(legal)))]))
    return {**rec.record().to_dict(), "players": {"player_0": "random", "player_1": "human"}}


# ------------------------------------------------------------------------------------------------ headers
def test_every_answer_carries_the_security_headers(client):
    game = client.post("/api/games", json={"opponent": "random", "mode": "hand", "seed": 1}).json()["game"]
    answers = [client.get("/"), client.get("/static/app.js"), client.get("/static/style.css"),
               client.get("/api/options"), client.get("/api/status"), client.get(f"/api/games/{game}"),
               client.get("/api/nope"), client.put("/api/games"), client.post("/api/games", json={"seat": 3}),
               client.post("/api/games", content=b"x" * (MAX_BODY_BYTES + 1)),
               client.post("/api/games", headers={"origin": "http://evil.example"}),
               client.post("/api/replays", content=(json.dumps(record_line()) + "\n").encode())]
    for r in answers:
        for name, value in HEADERS.items():
            assert r.headers.get(name) == value, (r.request.url, r.status_code, name, r.headers.get(name))
    with TestClient(create_app(workers=0, allowed_hosts=["127.0.0.1"])) as c:
        r = c.get("/api/options")  # the test client's Host, testserver, is not allowed
        assert r.status_code == 400 and r.headers["x-frame-options"] == "DENY"


def test_the_page_needs_nothing_its_policy_forbids():
    """``script-src 'self'`` and ``style-src 'self'`` without 'unsafe-inline': the page may hold no inline script,
    no event-handler attribute, no ``<style>`` element and no ``style=`` attribute, in its HTML, in the markup its
    script writes, or in the card faces it inserts; nothing is loaded from elsewhere."""
    html = (STATIC / "index.html").read_text()
    js = (STATIC / "app.js").read_text()
    faces = "".join(card_svg(c) for c in (None, "AS", "TH", "9C", "JD"))
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "an inline script in index.html"
    for name, text in (("index.html", html), ("app.js", js), ("the card faces", faces)):
        assert not re.search(r"<style\b|\sstyle\s*=|\son[a-z]+\s*=\s*[\"']", text, re.I), f"inline style or handler in {name}"
        assert not re.search(r"\b(src|href)\s*=\s*[\"'](https?:)?//", text), f"a resource of another site in {name}"
    assert "eval(" not in js and "new Function" not in js
    assert not re.search(r"url\((?![\"']?/)", (STATIC / "style.css").read_text()), "style.css loads from elsewhere"


def test_the_page_raises_no_policy_violation_in_a_browser():
    """The page in Chromium (where Playwright and Chromium are installed): loading it, dealing a hand and drawing
    the table raise no ``securitypolicyviolation`` event."""
    import os

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the dev extra) is not installed")
    chromium = os.environ.get("SCHNAPSEN_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no Chromium binary (apt-get install chromium, or set SCHNAPSEN_CHROMIUM)")
    from helpers.web_server import WebServer

    with WebServer("--workers", "0") as s, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.add_init_script("window.__violations = []; document.addEventListener('securitypolicyviolation',"
                                 " (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));")
            page.goto(s.url + "?opponent=random&mode=hand&seed=3")
            deadline = time.monotonic() + 60  # polled: wait_for_function's string predicate runs through eval,
            while page.evaluate("document.body.dataset.state") not in ("your-turn", "hand-over"):  # which the
                assert time.monotonic() < deadline, "the page did not deal"  # policy forbids, as it should
                time.sleep(0.1)
            assert page.locator("#my-hand svg").count() > 0  # the card faces were drawn
            assert page.evaluate("window.__violations") == []
        finally:
            browser.close()


# ------------------------------------------------------------------------------------------------ hosts
@pytest.mark.parametrize("listen", ["::1", "127.0.0.1", "localhost", "127.0.0.2"])
def test_every_loopback_address_keeps_the_host_allow_list(listen):
    allowed = allowed_hosts(listen)
    assert allowed is not None and {"127.0.0.1", "localhost", "::1"} <= set(allowed)
    with TestClient(create_app(workers=0, allowed_hosts=allowed)) as c:
        for host, ok in [("[::1]:8000", True), ("[0:0:0:0:0:0:0:1]:8000", True), ("localhost:8000", True),
                         ("LOCALHOST", True), ("127.0.0.1:8000", True), ("evil.example", False),
                         ("evil.example:8000", False), ("[::2]:8000", False), ("::1", False), ("[::1", False),
                         ("127.0.0.1:x", False), ("127.0.0.1@evil.example", False), ("", False)]:
            r = c.get("/api/options", headers={"host": host})
            assert (r.status_code == 200) == ok, (listen, host, r.status_code)
            if not ok:
                assert r.headers["content-type"] == "application/json" and "not this server" in r.json()["error"]
    assert allowed_hosts("0.0.0.0") is None and allowed_hosts("::") is None  # every interface: names unknown
    assert "192.168.1.5" in allowed_hosts("192.168.1.5")


@pytest.mark.parametrize("host, problem", [
    ("", "empty"),
    (" ", "empty"),
    ("evil..example", "an empty label"),
    (".example", "an empty label"),
    ("a" * 64 + ".example", "over the 63 of a label"),
    ("x" * 254, "over the 253 of a host name"),
    ("[::1]", "brackets"),
    ("bad-.example", "starts or ends with a hyphen"),
    ("exa mple", "other characters"),
    ("a\0b", "other characters"),
    ("b\u00fccher..example", "an empty label"),
    ("\udcff.example", "no international domain name"),
])
def test_a_bad_host_is_a_one_line_error(host, problem, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--host", host, "--workers", "0"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("schnapsen-web: error: --host ") and problem in err and "expected an IP address" in err, err


@pytest.mark.parametrize("flag, value", [("--max-move-seconds", "0"), ("--max-move-seconds", "-1"),
                                         ("--max-move-seconds", "nan"), ("--max-analysis-seconds", "inf"),
                                         ("--max-analysis-seconds", "1e9"), ("--read-timeout", "0"),
                                         ("--idle-minutes", "0"), ("--idle-minutes", "x"),
                                         ("--read-timeout", "1e-9"), ("--idle-minutes", "1e-12"),
                                         ("--max-move-seconds", "1e-300"), ("--max-analysis-seconds", "0.01")])
def test_a_bad_limit_is_a_one_line_error(flag, value, capsys):
    with pytest.raises(SystemExit) as e:
        main([flag, value, "--workers", "0"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and flag in err and "Traceback" not in err, err
    if value != "x":
        assert "expected a number of" in err and " from " in err, err


def test_more_workers_than_four_per_core_is_warned(monkeypatch, capsys):
    import agents.cli.web as web

    monkeypatch.setattr(web.os, "cpu_count", lambda: 2)
    with pytest.raises(SystemExit) as e:  # stopped by the next check, after the warning
        main(["--workers", "9", "--read-timeout", "0", "--host", ""])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "warning: --workers 9 is over 4 per core (2 cores here)" in err, err


# ------------------------------------------------------------------------------------------------ uploads
@pytest.mark.parametrize("change, named", [
    (lambda d: d["players"].update(player_0="\ud800"), "'players.player_0' holds a lone surrogate '\\ud800'"),
    (lambda d: d["players"].update(player_1="ok\udfffok"), "'players.player_1' holds a lone surrogate"),
    (lambda d: d["result"].update(extra=float("nan")), "'result.extra'"),
])
def test_an_upload_with_text_json_cannot_carry_is_refused_before_it_is_stored(client, change, named):
    """A lone surrogate (``"\\ud800"`` parses in Python's JSON, but is no text and cannot be written as UTF-8)
    made the answer fail with a 500 after the replay was stored."""
    good = record_line(2)
    bad = json.loads(json.dumps(good))
    change(bad)
    data = (json.dumps(good) + "\n" + json.dumps(bad) + "\n").encode()
    n = len(client.app.state.replays)
    r = client.post("/api/replays?name=s.jsonl", content=data)
    assert r.headers["content-type"] == "application/json" and r.status_code in (409, 422), (r.status_code, r.text)
    message = r.json()["error"]
    assert "s.jsonl" in message and "line 2" in message, message
    if r.status_code == 422 and "surrogate" in named:
        assert named in message and "expected UTF-8 text" in message, message
    assert len(client.app.state.replays) == n  # nothing stored


def test_an_upload_is_read_summarised_and_encoded_off_the_event_loop(client, monkeypatch):
    """Replaying an upload's records ran in a thread, but building its replay, the summary of its records and the
    answer's JSON ran on the server's event loop: a 1 MB upload (a thousand records) held every other request for
    over 100 ms on an idle machine, and under the soak's load (benchmarks/web_soak.py) a heuristic's move answered
    during such an upload took up to a second. All of it runs in the thread now."""
    import asyncio

    from starlette.responses import JSONResponse

    seen: list[tuple[str, str]] = []

    def probe(name, fn):
        def wrapped(*args, **kwargs):
            try:
                asyncio.get_running_loop()
                seen.append((name, "the event loop"))
            except RuntimeError:  # no loop runs in this thread
                seen.append((name, "a thread"))
            return fn(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(Replay, "__init__", probe("the replay", Replay.__init__))
    monkeypatch.setattr(Replay, "summary", probe("its summary", Replay.summary))
    monkeypatch.setattr(JSONResponse, "render", probe("the answer's JSON", JSONResponse.render))
    data = "".join(json.dumps(record_line(seed)) + "\n" for seed in range(3)).encode()
    r = client.post("/api/replays?name=t.jsonl", content=data)
    assert r.status_code == 201 and len(r.json()["records"]) == 3, r.text
    assert {name for name, _ in seen} == {"the replay", "its summary", "the answer's JSON"}, seen
    on_loop = sorted({name for name, where in seen if where == "the event loop"})
    assert not on_loop, f"made on the event loop: {on_loop}"


def test_an_unhandled_failure_is_a_json_500(client, monkeypatch):
    from agents.web.sessions import Game

    view = client.post("/api/games", json={"opponent": "random", "mode": "hand", "seed": 4}).json()

    def broken(self):
        raise RuntimeError("a bug")

    monkeypatch.setattr(Game, "view", broken)
    r = client.get(f"/api/games/{view['game']}")
    assert r.status_code == 500 and r.headers["content-type"] == "application/json", r.text
    assert "RuntimeError" in r.json()["error"] and r.headers["x-frame-options"] == "DENY"


# ------------------------------------------------------------------------------------------------ memory, expiry
def test_the_store_expires_idle_items_and_keeps_used_ones():
    now = [0.0]
    dropped = []
    store: Store[str] = Store("game", 10, idle_seconds=60, clock=lambda: now[0],
                              on_drop=lambda key, item, why: dropped.append((key, why)))
    store.add("a", "A")
    store.add("b", "B")
    now[0] = 50
    assert store.get("a") == "A"  # used: its idle time starts again
    now[0] = 100
    assert store.expire() == 1 and dropped == [("b", "expired")]
    with pytest.raises(WebError) as e:
        store.get("b")
    assert e.value.status == 404 and "expired" in e.value.message
    now[0] = 109
    assert store.get("a") == "A"
    now[0] = 170
    with pytest.raises(WebError):
        store.get("a")  # expired on the way
    assert dropped[-1] == ("a", "expired") and len(store) == 0
    store.add("c", "C")
    store.remove("c")
    assert dropped[-1] == ("c", "deleted")
    with pytest.raises(ValueError, match="taken"):
        store.add("d", "D")
        store.add("d", "D")


def test_the_replays_budget_evicts_the_least_recently_used_and_frees_them():
    dropped = []
    store: Store[Replay] = Store("replay", 100, max_bytes=10_000, size=lambda rep: rep.size,
                                 on_drop=lambda key, item, why: dropped.append((key, why)))
    records = parse_records((json.dumps(record_line(3)) + "\n").encode())
    refs = []
    for k in range(30):
        rep = Replay(f"r{k}", f"upload {k}", records * 4)
        refs.append(weakref.ref(rep))
        store.add(rep.id, rep)
        del rep
        assert store.bytes <= 10_000 or len(store) == 1
    assert dropped and all(why == "evicted" for _, why in dropped)
    assert store.get("r29").record(3).to_dict() == records[0].to_dict()  # kept as text, parsed again when asked
    import gc

    gc.collect()
    assert [r() for r in refs[:len(dropped)]] == [None] * len(dropped), "an evicted replay is still held"


def test_a_replay_holds_its_records_as_compact_text():
    line = record_line(4)
    data = (json.dumps(line, indent=2).replace("\n", " ") + "\n").encode()
    rep = Replay("r", "upload", parse_records(data))
    assert rep.size == len(json.dumps(line, separators=(",", ":")).encode()) < len(data)
    assert rep.record(0).to_dict() == line and rep.summary()["records"][0]["moves"] == len(line["actions"])


def test_games_and_replays_expire_after_their_idle_time():
    with TestClient(create_app(workers=0, idle_minutes=0.01)) as c:  # 0.6 s
        game = c.post("/api/games", json={"opponent": "random", "mode": "hand", "seed": 5}).json()["game"]
        rid = c.post("/api/replays", content=(json.dumps(record_line(5)) + "\n").encode()).json()["replay"]
        time.sleep(1.0)
        r = c.get(f"/api/games/{game}")
        assert r.status_code == 404 and "expired" in r.json()["error"]
        assert c.get(f"/api/replays/{rid}/records/0").status_code == 404
        status = c.get("/api/status").json()
        assert status["dropped"]["games"]["expired"] == 1 and status["dropped"]["replays"]["expired"] == 1
        assert status["limits"]["idle_minutes"] == 0.01


# ------------------------------------------------------------------------------------------------ Range
@pytest.mark.parametrize("path", ["/", "/static/app.js", "/static/style.css"])
@pytest.mark.parametrize("range_", ["bytes=abc", "bytes=999999999-", "bytes=5-2", "pages=1-2"])
def test_a_bad_range_header_is_ignored_and_the_whole_file_sent(client, path, range_):
    """Starlette answered a bad ``Range`` on the page and its files with a plain-text 400 or 416: the files are
    always sent whole (HTTP lets a server ignore ``Range``), and no answer offers ranges."""
    whole = client.get(path)
    r = client.get(path, headers={"Range": range_, "If-Range": whole.headers.get("etag", "x")})
    assert r.status_code == 200 and r.content == whole.content and r.content, (r.status_code, r.text[:200])
    assert "accept-ranges" not in r.headers and "content-range" not in r.headers
    assert client.get("/static/no-such.js", headers={"Range": range_}).headers["content-type"] == "application/json"
