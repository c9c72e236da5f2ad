"""The ASGI app of ``schnapsen-web`` (FastAPI): the page, its static files and the JSON API.

Routes (every error is JSON ``{"error": MESSAGE, ...}`` with a 4xx status, and changes nothing):

===========================================  ==================================================================
``GET  /``                                   the page (``static/index.html``; its script and style under ``/static``)
``GET  /api/options``                        rulesets, opponents and analysers on offer, their defaults
``GET  /api/cards``                          the SVG card faces and back (:func:`schnapsen_env.svg.card_svg`)
``POST /api/games``                          a new game ``{opponent, seat, ruleset, mode, seed}``: 201, its view
                                             (with ``opponent_error`` when the opponent's first move failed; a
                                             seed the server drew is shown only once the game is over)
``GET  /api/games/{id}``                     the game's view (:meth:`agents.web.sessions.Game.view`)
``DELETE /api/games/{id}``                   forget the game
``POST /api/games/{id}/actions``             play ``{action, version}``; the opponent answers: ``{moves, view}``
``POST /api/games/{id}/next``                deal the match's next hand ``{version}``
``POST /api/games/{id}/opponent``            let the opponent move (after its search failed)
``POST /api/games/{id}/analysis``            ``{analysers, version}``: values or probabilities of each legal action
``GET  /api/games/{id}/records``             the finished hands as JSON Lines records (a download)
``POST /api/games/{id}/replay``              a replay of the finished hands
``POST /api/replays``                        upload a ``.jsonl`` file (the request body): a replay
``GET  /api/replays/{id}/records/{k}``       the frames of record ``k`` (``?seat=player_1``), every card shown
``POST /api/replays/{id}/analysis``          ``{record, step, analysers}``: analysis for the player to move there

``GET  /api/status``                         games, replays, the search lanes and their counts, the limits, memory
===========================================  ==================================================================

Statuses: 400 a ``Host`` header that is not this server's; 404 an unknown (or expired) game or replay, or one
deleted while its search ran; 408 a body that did not arrive within the read timeout; 409 a request that does not
fit the game now (an illegal action, not your turn, a stale ``version``, the hand not over); 413 an upload over
:data:`MAX_UPLOAD_BYTES`; 422 a malformed body (naming the field), an unknown action name, an opponent or analyser
not on offer, a bad record (naming its line and field). 500, 503 and 504 are the server's own failures: an
opponent that failed; a search process that died, a lane too busy, the server shutting down; a search stopped at
its deadline (an analysis; an opponent's move past its deadline is made by the ``heuristic`` instead, and its log
entry says so under ``"fallback"``).

A request that changes something and comes from a page of another site (its ``Origin`` is not this server) gets
403; a JSON body over :data:`MAX_BODY_BYTES` gets 413 unread. Every answer carries the security headers of
:mod:`agents.web.guards`.

Searches run in :mod:`agents.web.search`'s worker processes, each with a deadline, owned by its game or replay:
a request whose client goes away is cancelled with its search, and a game or replay deleted, evicted or expired
stops its searches. Games and replays are forgotten once unused for ``idle_minutes``; replays keep their records
as compact text, at most :data:`MAX_REPLAY_BYTES` of it together.

Sealed information: the views come from :class:`~agents.web.sessions.Game`, built from the person's observation
only (:mod:`agents.web.view`), and the opponent and the analysers get a player's observation only (the agent
contract), in worker processes (:mod:`agents.web.search`) so that long searches never hold up the server.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import warnings
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import Body, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from starlette.exceptions import HTTPException as StarletteHTTPException

from agents.web import limits
from agents.web.guards import BodyLimit, BodyRefused, Guard, NoRanges, SameOrigin, TrustedHosts, json_error
from agents.web.search import (
    ANALYSIS_SECONDS,
    FALLBACK,
    MOVE_SECONDS,
    History,
    SearchCancelled,
    SearchError,
    SearchPool,
    SearchTimeout,
    is_quick,
)
from agents.web.sessions import (
    MAX_SEED,
    MODES,
    Catalogue,
    Choice,
    Game,
    Replay,
    Store,
    WebError,
    derive_seed,
    seat_history,
    text_key,
)
from agents.web.view import action_entry
from schnapsen_env.cards import DECK24
from schnapsen_env.encoding import observation
from schnapsen_env.records import IncompleteLineWarning, RecordError, parse_records
from schnapsen_env.rules import PLAYERS, GameState
from schnapsen_env.ruleset import RULESETS, RuleSet
from schnapsen_env.svg import card_svg

STATIC = Path(__file__).with_name("static")
log = logging.getLogger("schnapsen-web")
#: Largest records file accepted for upload (a record is a line of about 1 KB: a thousand hands).
MAX_UPLOAD_BYTES = 1 << 20
#: Largest JSON body of the other requests (each is well under a kilobyte): a larger one gets 413 unread.
MAX_BODY_BYTES = 1 << 16
#: Games and replays kept in memory (the least recently used beyond these are forgotten).
MAX_GAMES, MAX_REPLAYS = 500, 100
#: Bytes of record text the replays keep together (about 1 KB a record; an upload holds at most
#: :data:`MAX_UPLOAD_BYTES`): the least recently used replays beyond it are forgotten.
MAX_REPLAY_BYTES = 32 << 20
#: Default minutes a game or replay is kept unused, and seconds a request's headers and again its body have to
#: arrive (:mod:`agents.web.limits`).
IDLE_MINUTES, READ_TIMEOUT = limits.IDLE_MINUTES[0], limits.READ_TIMEOUT[0]
#: Seconds between two sweeps of the idle games and replays (each request sweeps too).
SWEEP_SECONDS = 60.0
#: Analyses kept per game or replay for requests asked again (a game keeps only its current position's).
MAX_ANALYSES = 64
#: The int knobs that RULES.md leaves unbounded, and the largest value of each that an uploaded record may hold: the
#: compiled searches keep the rules in int64 and the page's view decodes the observation's floats, so a match target
#: of 10**400 failed there (a bare 500) long after the upload was accepted.
INT_KNOBS_UNBOUNDED, MAX_INT_KNOB = ("match_target", "last_trick_bonus"), 100_000

Seed = Annotated[StrictInt, Field(ge=0, le=MAX_SEED)]
Version = Annotated[StrictInt, Field(ge=0)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewGame(_Body):
    """``POST /api/games``: the opponent's id (:meth:`Catalogue.opponents`; default: the ruleset's default), the
    person's seat, the ruleset, a hand or a match, and an optional seed (default: drawn from the server's)."""

    opponent: StrictStr | None = None
    seat: Literal["player_0", "player_1"] = "player_0"
    ruleset: Literal[RULESETS] = "schnapsen20"  # type: ignore[valid-type]
    mode: Literal[MODES] = "match"  # type: ignore[valid-type]
    seed: Seed | None = None


class Play(_Body):
    """``POST /api/games/{id}/actions``: an action name (``"play QH"``) or id, and the version it was chosen on."""

    action: StrictStr | StrictInt
    version: Version | None = None


class VersionOnly(_Body):
    """``POST /api/games/{id}/next`` and ``/opponent``: the version the request was made on (optional)."""

    version: Version | None = None


class Analyse(_Body):
    """``POST /api/games/{id}/analysis``: the analysers (default: every one on offer) and the version."""

    analysers: list[StrictStr] | None = Field(default=None, max_length=10)
    version: Version | None = None


class ReplayAnalyse(_Body):
    """``POST /api/replays/{id}/analysis``: the record, the step (actions played before the position) and the
    analysers."""

    record: Annotated[StrictInt, Field(ge=0)] = 0
    step: Annotated[StrictInt, Field(ge=0)]
    analysers: list[StrictStr] | None = Field(default=None, max_length=10)


def _field_errors(exc: RequestValidationError) -> tuple[str, list[dict[str, Any]]]:
    """A one-line message naming each bad field (``body.action: Field required``) and the fields as a list."""
    fields = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()))
        fields.append({"field": loc, "problem": err.get("msg", "invalid")})
    message = "; ".join(f"{f['field']}: {f['problem']}" for f in fields) or "malformed request"
    return message, fields


def _expected_body(request: Request) -> str:
    """What the route of ``request`` takes as its body: ``expected a JSON object with the fields [...]``."""
    dependant = getattr(request.scope.get("route"), "dependant", None)
    for param in getattr(dependant, "body_params", None) or ():
        model = param.field_info.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):
            fields = [f"{name!r}" + (" (required)" if f.is_required() else "")
                      for name, f in model.model_fields.items()]
            return f"expected a JSON object with the fields {', '.join(fields)}"
    return "expected a JSON object"


def _unparsed_body(cause: BaseException) -> str:
    """Why a body did not parse as JSON (the exception FastAPI turned into its bare 400)."""
    if isinstance(cause, RecursionError):
        return "JSON nested too deeply"
    if isinstance(cause, UnicodeDecodeError):
        return f"not UTF-8 text ({cause.reason} at byte {cause.start})"
    text = str(cause).split(";")[0]  # an int's digit limit: not the advice to raise it
    return f"not JSON that this server reads ({text[:160]})" if text else f"not JSON ({type(cause).__name__})"


def _json_flaw(value: Any, path: str = "") -> tuple[str, str] | None:
    """The first value in ``value`` (a parsed JSON document) that this server's answers cannot carry, as ``(path,
    problem)``: a string or key with a lone surrogate (``"\\ud800"`` parses, but is no Unicode text and cannot be
    written as UTF-8), or a float NaN or infinity (Python's parser takes ``NaN``; JSON has no such value). None when
    there is none."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            return path or "the value", f"holds a lone surrogate {value[e.start]!r} (half of a UTF-16 pair)"
    elif isinstance(value, float) and not math.isfinite(value):
        return path or "the value", f"is {value!r}, which JSON has no number for"
    elif isinstance(value, dict):
        for k, v in value.items():
            flaw = _json_flaw(k, f"{path}.<key>" if path else "<key>") or _json_flaw(v, f"{path}.{k}" if path else
                                                                                  str(k))
            if flaw is not None:
                return flaw
    elif isinstance(value, list):
        for i, v in enumerate(value):
            flaw = _json_flaw(v, f"{path}[{i}]")
            if flaw is not None:
                return flaw
    return None


def _parse_upload(data: bytes, where: str) -> tuple[list, list[str]]:
    """The records of an uploaded file, each replayed, and the warnings about it (an incomplete last line).

    Raises:
        RecordError: the first bad line and what is wrong with it; the first record whose int knobs are beyond
            :data:`MAX_INT_KNOB`, or that holds text or numbers JSON answers cannot carry (:func:`_json_flaw`).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IncompleteLineWarning)
        recs = parse_records(data, where)
    # The records are the file's non-blank lines in order (an incomplete last line, skipped, comes after them all).
    lines = [k + 1 for k, raw in enumerate(data.split(b"\n")) if raw.decode("utf-8", "replace").strip()]
    for rec, lineno in zip(recs, lines):
        flaw = _json_flaw(rec.to_dict())
        if flaw is not None:
            field, problem = flaw
            shown = ascii(field) if len(field) <= 60 else ascii(field[:60]) + "..."
            raise RecordError(f"{where} line {lineno}: {shown} {problem}: expected UTF-8 text and finite numbers")
        for knob in INT_KNOBS_UNBOUNDED:
            value = rec.rules.get(knob)
            if isinstance(value, int) and value > MAX_INT_KNOB:
                shown = f"{value}" if len(str(value)) <= 20 else f"an int of {len(str(value))} digits"
                raise RecordError(f"{where} line {lineno}: rule key {knob!r} got {shown}: this app shows and analyses "
                                  f"records whose {knob} is at most {MAX_INT_KNOB:,}")
    return recs, [str(w.message) for w in caught if issubclass(w.category, IncompleteLineWarning)]


def _upload_answer(data: bytes, where: str) -> tuple[Replay, JSONResponse]:
    """The replay of an uploaded file and its answer (201: the replay's summary and the warnings), made in a thread:
    replaying, storing and summarising a thousand records (a 1 MB file), and the answer's JSON, take a tenth of a
    second of Python that on the event loop held up every other request (a heuristic's move waited up to a second
    under load).

    Raises:
        RecordError: a bad line (:func:`_parse_upload`).
        WebError: 422, a file without records.
    """
    recs, notes = _parse_upload(data, where)
    rep = Replay(Store.new_id(), where, recs)
    return rep, JSONResponse({**rep.summary(), "warnings": notes}, status_code=201)


class _Shared:
    """An analysis asked for by one or more requests (:func:`create_app`'s ``run_analyses``): its task, and how many
    requests wait for it. The last waiter to go away (its client left) cancels it, which stops its search."""

    __slots__ = ("task", "waiters")

    def __init__(self, task: asyncio.Task) -> None:
        self.task, self.waiters = task, 0


def _rss_bytes() -> int | None:
    """This process's resident memory in bytes (Linux ``/proc``; None elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def create_app(policy: str | None = None, seed: int | None = None, workers: int | None = None,
               allowed_hosts: list[str] | None = None, warm_up: bool = False, move_seconds: float = MOVE_SECONDS,
               analysis_seconds: float = ANALYSIS_SECONDS, read_timeout: float = READ_TIMEOUT,
               idle_minutes: float = IDLE_MINUTES) -> FastAPI:
    """The ``schnapsen-web`` app.

    Args:
        policy: a ``policy.pt`` to offer as an opponent and analyser (``--policy``).
        seed: the seed of the generator that seeds the games created without one (None: fresh entropy).
        workers: processes for the searches (:class:`~agents.web.search.SearchPool`; 0: threads of this process).
        allowed_hosts: the ``Host`` headers accepted (:class:`~agents.web.guards.TrustedHosts`: a page of another
            site that renames itself to 127.0.0.1, DNS rebinding, is refused); None accepts any.
        warm_up: start the search workers at start-up (each loads its compiled code before its first task).
        move_seconds: the deadline of an opponent's move, in seconds (past it the ``heuristic`` moves instead).
        analysis_seconds: the deadline of an analysis, in seconds (past it the analysis is answered 504).
        read_timeout: seconds a request's body has to arrive after its headers (past it: 408).
        idle_minutes: a game or replay unused this long is forgotten.

    Returns:
        The FastAPI app; ``app.state.games`` and ``app.state.replays`` are its stores, ``app.state.pool`` its
        workers.

    Raises:
        ValueError: the policy does not load; a bad ``workers`` or deadline.
    """
    if isinstance(idle_minutes, bool) or not isinstance(idle_minutes, (int, float)) or not idle_minutes > 0:
        raise ValueError(f"idle_minutes must be a positive number of minutes, got {idle_minutes!r}")
    catalogue = Catalogue(policy)
    policies = tuple((c.spec, RuleSet.make(c.rulesets[0])) for c in catalogue.choices.values()
                     if c.policy and c.rulesets)
    pool = SearchPool(workers, move_seconds=move_seconds, analysis_seconds=analysis_seconds, policies=policies)

    def stop_searches(key: str, item: Game | Replay, why: str) -> None:
        pool.cancel_owner(key, f"the {'game' if isinstance(item, Game) else 'replay'} was {why} during the search")

    idle = 60.0 * idle_minutes
    games: Store[Game] = Store("game", MAX_GAMES, idle_seconds=idle, on_drop=stop_searches)
    replays: Store[Replay] = Store("replay", MAX_REPLAYS, idle_seconds=idle, max_bytes=MAX_REPLAY_BYTES,
                                   size=lambda rep: rep.size, on_drop=stop_searches)
    seeds = np.random.default_rng(seed)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if warm_up:
            pool.start()

        async def sweep() -> None:
            while True:
                await asyncio.sleep(SWEEP_SECONDS)
                games.expire()
                replays.expire()

        sweeper = asyncio.ensure_future(sweep())
        try:
            yield
        finally:
            sweeper.cancel()
            await asyncio.to_thread(pool.close)  # off the loop: the answers of the requests it stops still go out

    app = FastAPI(title="schnapsen-web", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.games, app.state.replays, app.state.pool, app.state.catalogue = games, replays, pool, catalogue
    app.add_middleware(NoRanges)  # the innermost: the files are sent whole
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES, skip=("/api/replays",))
    app.add_middleware(SameOrigin)
    if allowed_hosts is not None:
        app.add_middleware(TrustedHosts, allowed=allowed_hosts)
    app.add_middleware(Guard, read_timeout=read_timeout)  # the outermost: its headers go on every answer

    @app.exception_handler(WebError)
    async def _web_error(request: Request, exc: WebError) -> JSONResponse:
        return json_error(exc.status, exc.message, **exc.extra)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        for err in exc.errors():
            if err.get("type") == "json_invalid":  # not JSON: one message, not a field named by its position
                where = err.get("loc", ("body", "?"))[-1]
                problem = (err.get("ctx") or {}).get("error", "JSON decode error")
                message = f"body: not JSON ({problem}: character {where}): {_expected_body(request)}"
                return json_error(422, message, fields=[{"field": "body", "problem": problem}])
        message, fields = _field_errors(exc)
        return json_error(422, message, fields=fields[:20])

    @app.exception_handler(BodyRefused)
    async def _refused(request: Request, exc: BodyRefused) -> JSONResponse:
        return json_error(exc.status, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and isinstance(exc.__cause__, BodyRefused):  # raised while FastAPI read it
            return json_error(exc.__cause__.status, exc.__cause__.message)
        if exc.status_code == 400 and exc.__cause__ is not None:  # FastAPI's bare "error parsing the body"
            problem = _unparsed_body(exc.__cause__)
            return json_error(422, f"body: {problem}: {_expected_body(request)}",
                              fields=[{"field": "body", "problem": problem}])
        return json_error(exc.status_code, f"{exc.detail}: {request.method} {request.url.path[:200]}",
                          **({"allowed": sorted(exc.headers["allow"].split(", "))}
                             if exc.status_code == 405 and exc.headers and "allow" in exc.headers else {}))

    @app.exception_handler(Exception)
    async def _failed(request: Request, exc: Exception) -> JSONResponse:  # a bug: logged by the Guard
        return json_error(500, f"the server failed ({type(exc).__name__}); its log has the details")

    # ------------------------------------------------------------------------------------------ page
    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/options")
    async def options() -> dict[str, Any]:
        return {"rulesets": list(RULESETS), "modes": list(MODES), "seats": list(PLAYERS),
                "match_target": {r: RuleSet.make(r).match_target for r in RULESETS},
                "opponents": {r: [c.to_json() for c in catalogue.opponents(r)] for r in RULESETS},
                "default_opponent": {r: catalogue.default_opponent(r) for r in RULESETS},
                "analysers": {r: [c.to_json() for c in catalogue.analysers(r)] for r in RULESETS},
                "max_upload_bytes": MAX_UPLOAD_BYTES}

    @app.get("/api/status")
    async def status() -> dict[str, Any]:
        return {"games": len(games), "replays": len(replays), "replay_bytes": replays.bytes,
                "dropped": {"games": games.dropped, "replays": replays.dropped}, "searches": pool.stats(),
                "limits": {"max_games": MAX_GAMES, "max_replays": MAX_REPLAYS, "max_replay_bytes": MAX_REPLAY_BYTES,
                           "idle_minutes": idle_minutes, "read_timeout": read_timeout,
                           "max_upload_bytes": MAX_UPLOAD_BYTES, "max_body_bytes": MAX_BODY_BYTES},
                "rss_bytes": _rss_bytes()}

    @app.get("/api/cards")
    async def cards() -> dict[str, Any]:
        return {"back": card_svg(None), "faces": {code: card_svg(code) for code in DECK24.codes}}

    # ------------------------------------------------------------------------------------------ games
    async def run_opponent(game: Game) -> None:
        """The opponent moves until it is the person's turn or the hand is over (the caller holds the lock). A
        searching opponent stopped at its deadline is replaced for that move by the ``heuristic``."""
        opp = 1 - game.seat
        label = game.opponent.label
        while game.opponent_to_move:
            obs = game.observation(opp)
            args = (game.rules, obs["observation"], obs["action_mask"], game.opponent_seed(), game.history(opp))
            fallback = None
            try:
                try:
                    action = await pool.choose(game.opponent.spec, *args, owner=game.id)
                except SearchTimeout as e:
                    if is_quick(game.opponent.spec):
                        raise
                    fallback = (f"{label} was stopped at the server's limit of {e.seconds:g} s a move; the "
                                f"{FALLBACK[1]} chose this move")
                    log.info("game %s: %s", game.id[:8], fallback)
                    action = await pool.choose(FALLBACK, *args, owner=game.id)
            except SearchTimeout as e:
                raise WebError(504, f"the opponent {label!r} did not move within the server's limit of "
                                    f"{e.seconds:g} s; retry with POST /api/games/<id>/opponent") from None
            except SearchCancelled as e:
                raise WebError(404, f"game {game.id[:8]}...: {e}") from None
            except SearchError as e:
                raise WebError(503, f"the opponent {label!r} could not move: {e}") from None
            except Exception as e:  # the agent failed (a user's policy): the game waits for a retry
                # Its message stays in the server's log: it may name the opponent's legal actions, hence its cards.
                log.error("the opponent %r of game %s failed: %s: %s", label, game.id[:8], type(e).__name__, e)
                raise WebError(500, f"the opponent {label!r} failed ({type(e).__name__}; the server's "
                                    "log has its message); retry with POST /api/games/<id>/opponent") from None
            game.apply_opponent(action, fallback)

    @app.post("/api/games", status_code=201)
    async def new_game(body: Annotated[NewGame, Body()] = NewGame()) -> dict[str, Any]:
        rules = RuleSet.make(body.ruleset)
        choice = catalogue.opponent(body.opponent if body.opponent is not None
                                    else catalogue.default_opponent(rules.name), rules)
        game_seed = body.seed if body.seed is not None else int(seeds.integers(0, MAX_SEED, endpoint=True))
        game = Game(Store.new_id(), choice, PLAYERS.index(body.seat), rules, body.mode, game_seed,
                    seed_given=body.seed is not None)
        games.add(game.id, game)
        async with game.lock:
            try:
                await run_opponent(game)
            except WebError as e:  # the game exists: answer with it (and the failure), so the page can retry
                return {**game.view(), "opponent_error": e.message}
            return game.view()

    @app.get("/api/games/{gid}")
    async def get_game(gid: str) -> dict[str, Any]:
        game = games.get(gid)
        async with game.lock:
            return game.view()

    @app.delete("/api/games/{gid}", status_code=204)
    async def delete_game(gid: str) -> Response:
        games.remove(gid)
        return Response(status_code=204)

    @app.post("/api/games/{gid}/actions")
    async def play(gid: str, body: Play) -> dict[str, Any]:
        game = games.get(gid)
        async with game.lock:
            game.check_version(body.version)
            start = len(game.log)
            game.play(body.action)
            try:
                await run_opponent(game)
            finally:
                moves = game.log[start:]
            return {"moves": moves, "view": game.view()}

    @app.post("/api/games/{gid}/next")
    async def next_hand(gid: str, body: Annotated[VersionOnly, Body()] = VersionOnly()) -> dict[str, Any]:
        game = games.get(gid)
        async with game.lock:
            game.check_version(body.version)
            game.next_hand()
            await run_opponent(game)
            return game.view()

    @app.post("/api/games/{gid}/opponent")
    async def opponent_moves(gid: str, body: Annotated[VersionOnly, Body()] = VersionOnly()) -> dict[str, Any]:
        game = games.get(gid)
        async with game.lock:
            game.check_version(body.version)
            if not game.opponent_to_move:
                raise WebError(409, "the opponent is not to move")
            start = len(game.log)
            await run_opponent(game)
            return {"moves": game.log[start:], "view": game.view()}

    @app.get("/api/games/{gid}/records")
    async def records(gid: str) -> Response:
        game = games.get(gid)
        async with game.lock:
            if not game.finished:  # a hand in progress is never sent: its deck would show the hidden cards
                raise WebError(409, "no hand of this game is finished yet: a record is available once its hand is over")
            text = "".join(json.dumps(r.to_dict()) + "\n" for r in game.finished)
            name = f"schnapsen-{game.file_stem()}.jsonl"  # a seed the server drew is named only after the game
        return Response(text, media_type="application/x-ndjson",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.post("/api/games/{gid}/replay", status_code=201)
    async def replay_game(gid: str) -> dict[str, Any]:
        game = games.get(gid)
        async with game.lock:
            if not game.finished:
                raise WebError(409, "no hand of this game is finished yet: a replay is available once its hand is over")
            rep = Replay(Store.new_id(), f"game {game.file_stem()}", list(game.finished))
        replays.add(rep.id, rep)
        return rep.summary()

    # ------------------------------------------------------------------------------------------ analysis
    async def run_analyses(owner: Game | Replay, key: tuple, rules: RuleSet, obs: dict, history: History,
                           chosen: list[Choice], seed_of) -> list[dict[str, Any]]:
        """Every chosen analyser on the observation ``obs`` with the player's ``history`` of the hand (in parallel,
        in the workers); an analysis asked for
        twice at the same position is computed once (``owner.analyses``), and stopped once no request waits for it
        (its clients went away)."""
        async def one(choice: Choice) -> dict[str, Any]:
            k = key + (choice.id,)
            entry = owner.analyses.get(k)
            if entry is None:
                entry = _Shared(asyncio.ensure_future(pool.analyse(
                    choice.spec, rules, obs["observation"], obs["action_mask"], seed_of(choice.id), history,
                    owner=owner.id)))
                owner.analyses[k] = entry
                while len(owner.analyses) > MAX_ANALYSES:  # a replay's positions: keep the latest answers
                    owner.analyses.pop(next(iter(owner.analyses)))
            entry.waiters += 1
            try:
                out = await asyncio.shield(entry.task)
            except asyncio.CancelledError:
                if entry.waiters == 1 and not entry.task.done():  # the last one waiting for it: stop the search
                    entry.task.cancel()
                    if owner.analyses.get(k) is entry:
                        del owner.analyses[k]
                raise
            except Exception as e:
                if owner.analyses.get(k) is entry:
                    del owner.analyses[k]
                what = f"analysis by {choice.label!r}"
                if isinstance(e, SearchTimeout):
                    raise WebError(504, f"{what} was stopped at the server's limit of {e.seconds:g} s an analysis: "
                                        "positions this early in the hand take longer; try a later one, or PIMC "
                                        "(schnapsen-web --max-analysis-seconds sets the limit)") from None
                if isinstance(e, SearchCancelled):
                    raise WebError(404, f"{what}: {e}") from None
                if isinstance(e, SearchError):
                    raise WebError(503, f"{what}: {e}") from None
                raise WebError(500, f"{what} failed: {type(e).__name__}: {e}") from None
            finally:
                entry.waiters -= 1
            values = [{**action_entry(rules, a), "value": v} for a, v in sorted(out["values"].items())]
            top = max(v["value"] for v in values)
            return {"analyser": choice.id, "label": choice.label, "kind": out["kind"],
                    "unit": "game points" if out["kind"] == "values" else "probability", "values": values,
                    "best": [v["name"] for v in values if v["value"] >= top - 1e-9], "seconds": out["seconds"]}

        return list(await asyncio.gather(*(one(c) for c in chosen)))

    def choose_analysers(ids: list[str] | None, rules: RuleSet) -> list[Choice]:
        if ids is None:
            return catalogue.analysers(rules.name)
        if not ids:
            raise WebError(422, f"analysers: empty list: expected some of "
                                f"{[c.id for c in catalogue.analysers(rules.name)]}", field="analysers")
        return [catalogue.analyser(i, rules) for i in dict.fromkeys(ids)]

    @app.post("/api/games/{gid}/analysis")
    async def analyse_game(gid: str, body: Annotated[Analyse, Body()] = Analyse()) -> dict[str, Any]:
        game = games.get(gid)
        async with game.lock:  # read the position; the searches run after the lock is released
            game.check_version(body.version)
            if not game.your_turn:
                raise WebError(409, "nothing to analyse: " + ("the hand is over" if game.hand_over
                                                              else "the opponent is to move"))
            chosen = choose_analysers(body.analysers, game.rules)
            obs = game.observation(game.seat)  # the person's observation: what the analysers may know
            history = game.history(game.seat)  # and the person's own earlier ones
            version = game.version
            seed_of = {c.id: game.analysis_seed(c.id) for c in chosen}.__getitem__
            for k in [k for k in game.analyses if k[0] != version]:  # the answers for older positions
                del game.analyses[k]
        results = await run_analyses(game, (version,), game.rules, obs, history, chosen, seed_of)
        return {"game": game.id, "version": version, "analyses": results}

    # ------------------------------------------------------------------------------------------ replays
    @app.post("/api/replays", status_code=201)
    async def upload(request: Request, name: Annotated[str, Query(max_length=200)] = "upload") -> dict[str, Any]:
        where = f"upload {name!r}"
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_UPLOAD_BYTES:
            raise WebError(413, f"{where}: {int(length):,} bytes, over the limit of {MAX_UPLOAD_BYTES:,} bytes")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > MAX_UPLOAD_BYTES:
                raise WebError(413, f"{where}: over the limit of {MAX_UPLOAD_BYTES:,} bytes")
        try:
            rep, answer = await asyncio.to_thread(_upload_answer, bytes(data), where)
        except RecordError as e:
            raise WebError(422, str(e)) from None
        replays.add(rep.id, rep)
        return answer

    @app.get("/api/replays/{rid}/records/{index}")
    async def replay_record(rid: str, index: int,
                            seat: Literal["player_0", "player_1"] | None = None) -> dict[str, Any]:
        rep = replays.get(rid)
        return rep.frames(index, None if seat is None else PLAYERS.index(seat))

    @app.post("/api/replays/{rid}/analysis")
    async def analyse_replay(rid: str, body: ReplayAnalyse) -> dict[str, Any]:
        rep = replays.get(rid)
        state: GameState = rep.position(body.record, body.step)
        if state.result is not None:
            raise WebError(409, f"nothing to analyse: the hand is over at step {body.step}")
        seat = state.to_move
        rules = state.rules
        chosen = choose_analysers(body.analysers, rules)
        obs = {"observation": observation(state, seat), "action_mask": state.action_mask()}  # the mover's view only
        record_key = text_key(json.dumps(rep.record(body.record).to_dict(), sort_keys=True))
        results = await run_analyses(rep, (body.record, body.step), rules, obs, seat_history(state, seat), chosen,
                                     lambda cid: derive_seed(record_key, body.step, text_key(cid)))
        return {"replay": rep.id, "record": body.record, "step": body.step, "seat": PLAYERS[seat],
                "analyses": results}

    return app


__all__ = ["MAX_BODY_BYTES", "MAX_UPLOAD_BYTES", "create_app"]
