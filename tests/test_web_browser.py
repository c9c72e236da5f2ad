"""``schnapsen-web`` in a real browser: the system's Chromium, headless, driven by Playwright.

The real command (``python -m agents.cli.web --port 0``) serves in a subprocess; the test opens the page with a
seeded game, plays a whole hand by clicking the offered cards and buttons, asks for an analysis on the way,
replays the hand, and saves screenshots under ``artifacts/web/`` (ignored by git; CI can keep them). Every page is
opened under the Content-Security-Policy the server is meant to send (added here to the page's response, so the
check does not depend on the server's headers), and no violation may be reported. It skips,
saying why, where Playwright or a Chromium binary is missing: ``.ci/run`` installs Debian's ``chromium``.
Playwright's own browser download is never used (``executable_path``). Set ``SCHNAPSEN_CHROMIUM`` to use another
Chromium binary.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the optional extra 'web' (fastapi, uvicorn) is not installed")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the dev extra) is not installed")

from agents import STRONGEST_POLICY  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "artifacts" / "web"
CHROMIUM = os.environ.get("SCHNAPSEN_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
# Headless, and quiet on a closed network: without the background-networking flags Chromium keeps calling home.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Waits are given as functions: Playwright evaluates a bare expression with eval, which the CSP forbids.
SETTLED = "() => ['your-turn', 'hand-over', 'match-over'].includes(document.body.dataset.state)"
# Generous waits: on a fresh clone the first search compiles numba's code first; warm, the waits are short.
WAIT_MS = 240_000
# The policy a page must work under: no inline script or style, no eval (set on the page's response in `open_page`).
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
# Collects the page's CSP violations from its first script on (Playwright's init scripts are exempt from the CSP).
CSP_LISTENER = """window.__cspViolations = [];
document.addEventListener('securitypolicyviolation',
  (e) => window.__cspViolations.push(`${e.violatedDirective}: ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));"""

if CHROMIUM is None:
    pytest.skip("no Chromium binary (apt-get install chromium, or set SCHNAPSEN_CHROMIUM); .ci/run installs it",
                allow_module_level=True)


@pytest.fixture(scope="module")
def server():
    """The real ``schnapsen-web`` on a free port; yields its URL."""
    proc = subprocess.Popen([sys.executable, "-m", "agents.cli.web", "--port", "0", "--seed", "0", "--workers", "2"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    try:
        first = lines.get(timeout=120)
        assert "serving on http://" in first, first
        yield first.split("serving on ")[1].split()[0]
    finally:
        proc.terminate()  # SIGTERM: uvicorn shuts down and the app stops its search workers
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def open_page(browser, server: str, query: str, width: int = 1280, height: int = 800):
    """A new page at ``server/?query`` under :data:`CSP`; returns it and the list its errors are collected in (page
    errors, console errors, which include Chromium's report of a CSP violation). :func:`no_problems` checks both."""
    page = browser.new_page(viewport={"width": width, "height": height})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.add_init_script(CSP_LISTENER)

    def with_csp(route):
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, "content-security-policy": CSP})

    page.route(lambda url: urlparse(url).path == "/", with_csp)
    page.goto(f"{server}?{query}")
    page.wait_for_function(SETTLED, timeout=WAIT_MS)
    return page, problems


def no_problems(page, problems: list[str]) -> None:
    """No page or console error and no CSP violation so far; then checks that a violation would be seen: an inline
    style attribute added by the test is reported (the check can fail)."""
    assert problems == []
    assert page.evaluate("window.__cspViolations") == []
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<div id=\"csp-probe\" style=\"color: red\"></div>')")
    page.wait_for_function("() => window.__cspViolations.length > 0", timeout=10_000)
    assert "style-src" in page.evaluate("window.__cspViolations")[0]


def boxes_overlap(page, a: str, b: str) -> list[str]:
    """The elements matching selector ``b`` whose rectangle intersects that of the (visible) element ``a``."""
    return page.evaluate("""([a, b]) => {
      const r = document.querySelector(a).getBoundingClientRect();
      return [...document.querySelectorAll(b)].filter((e) => {
        const q = e.getBoundingClientRect();
        return q.width > 0 && q.left < r.right && r.left < q.right && q.top < r.bottom && r.top < q.bottom;
      }).map((e) => e.dataset.card || e.id || e.className);
    }""", [a, b])


def check_banner(page) -> None:
    """The end-of-hand banner is shown and covers no card on the table (the last trick stays in view)."""
    assert page.locator("#banner").is_visible()
    assert boxes_overlap(page, "#banner", "#felt .card, #trick-area .label") == []


def unclaimed(table: dict) -> list[str]:
    """The sides (``you``/``opponent``) that ended the hand with the claim target reached but made no claim: the
    claimant of a correct claim is the winner, of a false one the loser; under R66-10's ``count`` the winner needs
    no claim."""
    r = table["result"]
    claimant = {"claim": r["winner"], "false_claim": {"you": "opponent", "opponent": "you"}.get(r["winner"])}.get(
        r["reason"])
    return [side for side in ("you", "opponent") if table[side]["points"] >= table["claim_target"]
            and side != claimant and not (r["reason"] == "count" and side == r["winner"])]


def check_analysis_fits(page, widths=(1280, 1440, 1920), shot: str | None = None) -> None:
    """At each window width the analysis table (every analyser's column) lies within its panel; the window is set
    back to the first width after."""
    for width in widths:
        page.set_viewport_size({"width": width, "height": 800})
        edges = page.evaluate("""() => {
          const panel = document.getElementById('analysis-panel'), table = document.querySelector('#analysis table');
          const p = panel.getBoundingClientRect(), t = table.getBoundingClientRect(), cs = getComputedStyle(panel);
          return {table: [t.left, t.right], panel: [p.left + parseFloat(cs.borderLeftWidth),
                                                   p.right - parseFloat(cs.borderRightWidth)],
                  cells: [...table.querySelectorAll('th, td')].map((c) => c.getBoundingClientRect().right)};
        }""")
        left, right = edges["panel"]
        assert left <= edges["table"][0] and edges["table"][1] <= right, (width, edges["table"], edges["panel"])
        assert max(edges["cells"]) <= right, (width, max(edges["cells"]), right)
        if shot:
            page.screenshot(path=str(ARTIFACTS / f"{shot}-{width}.png"))
    page.set_viewport_size({"width": widths[0], "height": 800})


def server_view(server: str, page) -> dict:
    """The server's view of the page's game, read over HTTP here (not through the page's script)."""
    gid = page.evaluate("sessionStorage.getItem('schnapsen-web-game')")
    with urllib.request.urlopen(f"{server}api/games/{gid}", timeout=60) as r:
        return json.loads(r.read())


def offered_actions(page, server: str) -> list[str]:
    """The actions the page offers to click; checks that they are exactly the server's legal actions, and that
    the cards of the hand that are buttons are those of a legal play, or a K or Q to be led with a legal marriage
    (R13: not a legal play before the marriage; marked ``marriage``, clicking it announces and leads); the rest are
    no buttons."""
    offered = page.locator("[data-action]:not([disabled])")
    names = [offered.nth(k).get_attribute("data-action") for k in range(offered.count())]
    legal = [a["name"] for a in server_view(server, page)["table"]["legal"]]
    assert legal and sorted(names) == sorted(legal), (names, legal)
    hand = page.locator("#my-hand .card")
    for k in range(hand.count()):
        card = hand.nth(k)
        code = card.get_attribute("data-card")
        is_button = card.evaluate("e => e.tagName") == "BUTTON"
        by_marriage = f"play {code}" not in legal and code[0] in "KQ" and f"marriage {code[1]}" in legal
        assert is_button == (f"play {code}" in legal or by_marriage), code
        assert ("marriage" in (card.get_attribute("class") or "").split()) == by_marriage, code
    return names


def test_a_whole_hand_played_by_clicking(server, browser):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page, problems = open_page(browser, server, "opponent=heuristic&ruleset=schnapsen20&seat=player_0&mode=match&seed=4")
    assert page.locator("#opt-opponent").input_value() == "heuristic"
    assert page.locator("#opp-hand .card").count() == 5 and page.locator("#my-hand .card").count() == 5
    assert page.locator("#opp-hand .card[data-card]").count() == 0  # the opponent's cards face down
    rng = np.random.default_rng(1)
    clicks, analysed = 0, False
    while page.evaluate("document.body.dataset.state") == "your-turn":
        names = offered_actions(page, server)
        if clicks == 2 and not analysed:  # ask for the analysis of this position; the page stays usable meanwhile
            page.click("#btn-analyse")
            page.wait_for_function("() => document.querySelectorAll('#analysis td.num').length > 0 && "
                                   "document.querySelectorAll('#analysis td.pending').length === 0", timeout=WAIT_MS)
            rows = page.locator("#analysis tbody tr")
            assert rows.count() == len(names)  # one row per legal action
            assert page.locator("#analysis td.failed").count() == 0
            page.screenshot(path=str(ARTIFACTS / "analysis.png"))
            check_analysis_fits(page)
            analysed = True
        choice = names[int(rng.integers(len(names)))]
        page.click(f"[data-action='{choice}']")
        page.wait_for_function(SETTLED, timeout=WAIT_MS)
        clicks += 1
        assert clicks < 40
    assert analysed and clicks >= 3
    assert page.evaluate("document.body.dataset.state") == "hand-over"
    banner = page.locator("#banner")
    assert banner.is_visible() and "game point" in banner.inner_text()
    check_banner(page)
    # a side that reached 66 without claiming is named (seed 4: you, with 75 points; the last trick decided)
    table = server_view(server, page)["table"]
    notes = page.locator("#banner .unclaimed")
    assert notes.count() == len(unclaimed(table)), (notes.all_inner_texts(), table["result"])
    for side, text in zip(unclaimed(table), notes.all_inner_texts()):
        assert text.startswith("You" if side == "you" else "The opponent"), text
        assert f"reached {table['claim_target']} with {table[side]['points']} points" in text and "not claim" in text
    assert page.locator("#log li").count() >= 1
    assert page.locator("#my-hand button.card").count() == 0  # nothing to click after the hand
    page.screenshot(path=str(ARTIFACTS / "hand-over.png"))
    # replay the hand: back to the deal, where every card is face up, then one move forward
    page.click("#btn-replay")
    page.wait_for_function("() => document.body.dataset.state === 'replay'", timeout=30_000)
    page.click("#rp-first")
    assert page.locator("#rp-step").inner_text().startswith("move 0 of ")
    assert page.locator("#opp-hand .card[data-card]").count() == 5  # the opponent's hand shown in a replay
    page.click("#rp-next")
    assert page.locator("#rp-step").inner_text().startswith("move 1 of ")
    page.screenshot(path=str(ARTIFACTS / "replay.png"))
    page.click("#rp-close")
    page.wait_for_function("() => document.body.dataset.state === 'hand-over'", timeout=10_000)
    page.click("#btn-next")  # the match goes on
    page.wait_for_function(SETTLED, timeout=WAIT_MS)
    assert "hand 2" in page.locator("#match-score").inner_text()
    no_problems(page, problems)


def test_a_narrow_window_from_the_second_seat_across_hands(server, browser):
    """sixtysix24 from player_1 in a phone-sized window: at every decision exactly the legal actions are
    clickable, nothing is wider than the window, and the match goes on to the next hand."""
    page, problems = open_page(browser, server, "opponent=heuristic&ruleset=sixtysix24&seat=player_1&mode=match&seed=11",
                               375, 740)
    wide = "document.documentElement.scrollWidth - window.innerWidth"
    rng = np.random.default_rng(2)
    hands = decisions = 0
    while hands < 2:
        state = page.evaluate("document.body.dataset.state")
        assert page.evaluate(wide) <= 0, f"{page.evaluate(wide)} px wider than the window ({state})"
        if state == "your-turn":
            names = offered_actions(page, server)
            if decisions == 1:
                page.screenshot(path=str(ARTIFACTS / "narrow.png"), full_page=True)
            page.click(f"[data-action='{names[int(rng.integers(len(names)))]}']")
            decisions += 1
        else:
            assert state == "hand-over", state  # seed 11: the match is not over after two hands
            assert page.locator("[data-action]").count() == 0
            hands += 1
            if hands == 1:
                check_banner(page)
                page.screenshot(path=str(ARTIFACTS / "narrow-hand-over.png"), full_page=True)
                page.click("#btn-next")
        if hands < 2:
            page.wait_for_function(SETTLED, timeout=WAIT_MS)
    assert decisions >= 8 and server_view(server, page)["hand_no"] == 2
    no_problems(page, problems)


def test_a_link_with_bad_settings_still_starts_a_game(server, browser):
    """A link whose settings are not on offer (a seat or mode that does not exist, an opponent path) starts a game
    with the defaults for those settings instead of a page stuck with an error."""
    page, problems = open_page(browser, server, "seat=player_9&mode=tournament&opponent=../../etc/passwd&ruleset=skat"
                               "&seed=-5", 1000)
    view = server_view(server, page)
    assert (view["seat"], view["mode"], view["ruleset"]) == ("player_0", "match", "schnapsen20")
    assert view["opponent"]["id"] == STRONGEST_POLICY and not page.locator("#error").is_visible()
    no_problems(page, problems)


def test_the_king_and_queen_of_a_marriage_are_played_through_it(server, browser):
    """Seed 1 deals you KS QS to lead with, where the marriage is legal and (R13) the K and Q are no legal plays
    on their own: the page shows both as playable by way of the marriage, not dimmed, and clicking the king
    announces the marriage and leads it. On the way, the analysis of this position, with every analyser's column
    and the marriage and close rows, fits its panel at the common window widths."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page, problems = open_page(browser, server, "opponent=random&ruleset=schnapsen20&seat=player_0&mode=hand&seed=1")
    assert sorted(offered_actions(page, server)) == ["close", "marriage S", "play AH", "play AS", "play TC"]
    for code in ("KS", "QS"):
        card = page.locator(f"#my-hand .card[data-card='{code}']")
        assert card.evaluate("e => e.tagName") == "BUTTON" and "illegal" not in card.get_attribute("class")
        assert card.evaluate("e => getComputedStyle(e).opacity") == "1"
        assert "marriage" in card.get_attribute("title") and "marriage" in card.get_attribute("aria-label")
    assert page.locator("#my-hand .card.illegal").count() == 0  # the other three are legal plays
    page.click("#btn-analyse")
    page.wait_for_function("() => document.querySelectorAll('#analysis td.num').length > 0 && "
                           "document.querySelectorAll('#analysis td.pending').length === 0", timeout=WAIT_MS)
    analysers = page.evaluate("fetch('/api/options').then((r) => r.json()).then((o) => o.analysers.schnapsen20.length)")
    assert page.locator("#analysis thead th").count() == 1 + analysers >= 7
    assert page.locator("#analysis tbody tr").count() == 5 and page.locator("#analysis td.failed").count() == 0
    check_analysis_fits(page, shot="analysis-width")
    page.screenshot(path=str(ARTIFACTS / "marriage.png"))
    page.click("#my-hand .card[data-card='KS']")
    page.wait_for_function(SETTLED, timeout=WAIT_MS)
    log = server_view(server, page)["table"]["log"]
    assert [(e["by"], e["action"]) for e in log[:2]] == [("you", "marriage S"), ("you", "play KS")], log
    assert "married" in page.locator("#my-score").inner_text()
    no_problems(page, problems)


def _records_file(path: Path, n: int) -> None:
    """``n`` seeded random hands of schnapsen20 as a JSON Lines records file."""
    from schnapsen_env import RuleSet
    from schnapsen_env.records import Recorder

    rng = np.random.default_rng(5)
    with open(path, "w") as f:
        for _ in range(n):
            rec = Recorder.deal(RuleSet.make("schnapsen20"), rng)
            while rec.state.result is None:
                legal = rec.state.legal_actions()
                rec.step(int(legal[int(rng.integers(len(legal)))]))
            f.write(json.dumps(rec.record().to_dict()) + "\n")


def test_an_uploaded_file_opens_at_its_first_deal(server, browser, tmp_path):
    """Uploading a records file opens its first record at the deal (move 0), whatever the number of records; a
    bad file is refused with its message shown, and the page goes on."""
    page, problems = open_page(browser, server, "opponent=random&mode=hand&seed=1")
    good = tmp_path / "three.jsonl"
    _records_file(good, 3)
    page.set_input_files("#upload", str(good))
    page.wait_for_function("() => document.body.dataset.state === 'replay'", timeout=30_000)
    assert page.locator("#replay-record option").count() == 3
    assert page.locator("#replay-record").input_value() == "0"
    assert page.locator("#rp-step").inner_text().startswith("move 0 of "), page.locator("#rp-step").inner_text()
    page.click("#rp-close")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    page.set_input_files("#upload", str(bad))
    page.wait_for_function("() => !document.getElementById('error').hidden", timeout=30_000)
    assert "line 1: not JSON" in page.locator("#error").inner_text()
    assert page.evaluate("document.body.dataset.state") in ("your-turn", "hand-over")
    refused = [p for p in problems if "status of 422" in p]  # Chromium logs the refused upload's answer
    assert len(refused) == 1, problems
    problems.remove(refused[0])
    no_problems(page, problems)


def _unclaimed_record(path: Path) -> tuple[str, int]:
    """A seeded random hand of schnapsen20 in which nobody claims and the loser of the last trick ends with 66 or
    more (R22: the last trick decides), written as a records file; returns that player's seat and points."""
    from schnapsen_env import RuleSet
    from schnapsen_env.records import Recorder
    from schnapsen_env.rules import PLAYERS

    rules = RuleSet.make("schnapsen20")
    rng = np.random.default_rng(8)
    for _ in range(500):
        rec = Recorder.deal(rules, rng)
        while rec.state.result is None:
            legal = [a for a in rec.state.legal_actions() if rules.action_names[a] != "claim"]
            rec.step(int(legal[int(rng.integers(len(legal)))]))
        result = rec.state.result
        loser = 1 - result.winner
        if result.reason == "last_trick" and rec.state.counted(loser) >= 66:
            path.write_text(json.dumps(rec.record().to_dict()) + "\n")
            return PLAYERS[loser], rec.state.counted(loser)
    raise AssertionError("no such hand in 500 deals")


def test_a_replay_ends_with_the_66_that_was_not_claimed(server, browser, tmp_path):
    """At the end of a replayed hand whose loser had reached 66 without claiming, the banner says so, and it
    covers neither the last trick nor any other card."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page, problems = open_page(browser, server, "opponent=random&mode=hand&seed=2")
    seat, points = _unclaimed_record(tmp_path / "unclaimed.jsonl")
    page.set_input_files("#upload", str(tmp_path / "unclaimed.jsonl"))
    page.wait_for_function("() => document.body.dataset.state === 'replay'", timeout=30_000)
    page.click("#rp-last")
    page.wait_for_function("() => !document.getElementById('banner').hidden", timeout=10_000)
    check_banner(page)
    note = page.locator("#banner .unclaimed")
    assert note.count() == 1 and note.inner_text().startswith(f"{seat} reached 66 with {points} points"), \
        note.all_inner_texts()
    assert page.locator("#trick-area .card").count() == 2  # the last trick, in view
    page.screenshot(path=str(ARTIFACTS / "replay-unclaimed.png"))
    no_problems(page, problems)
