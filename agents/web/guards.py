"""What stands between the network and the routes of ``schnapsen-web``: ASGI middlewares and the read deadline of
a request's headers.

* :class:`Guard` (outermost): every answer gets the :data:`SECURITY_HEADERS`; a request's body must arrive within
  ``read_timeout`` seconds of its headers (else JSON 408); a request whose client goes away (closes the
  connection) is cancelled, and with it the search it waits for (:mod:`agents.web.search` stops its worker); a
  request cut off by the server's stop gets JSON 503, and a failure no route handled JSON 500: never uvicorn's
  plain-text 500.
* :class:`TrustedHosts`: the ``Host`` allow-list against DNS rebinding (a page of another site whose name is made
  to point at 127.0.0.1), IPv6 literals included (``[::1]:8000``); refused with JSON 400.
* :class:`SameOrigin`: a request that changes something sent by a page of another site gets JSON 403.
* :class:`NoRanges`: the page and its files are always sent whole (a ``Range`` header is ignored; Starlette
  answers a bad one in plain text).
* :class:`BodyLimit`: a JSON body over its limit gets JSON 413 without being read whole.
* :func:`header_deadline_protocol`: uvicorn's HTTP protocol with a deadline for a request's headers (uvicorn has
  none: its keep-alive timeout is reset by every byte), so a client that sends part of its headers and stops is
  answered 408 and disconnected instead of holding the connection forever; and bytes that are no HTTP get a JSON
  400 (uvicorn's own is plain text).

Every error here is JSON ``{"error": MESSAGE}``, as the app's own (:mod:`agents.web.app`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
from collections import deque
from typing import Any
from urllib.parse import urlsplit

from starlette.responses import JSONResponse

log = logging.getLogger("schnapsen-web")

#: The policy of the page: its script, style, icon and API calls come from this server only (no inline script or
#: style: ``static/index.html`` loads ``app.js`` and ``style.css``; the card faces are inline SVG markup with
#: presentation attributes, which ``style-src`` does not govern), no plug-ins, and no page may frame it.
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
                           "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
                           "form-action 'self'; frame-ancestors 'none'")
#: Sent with every answer: no framing (clickjacking), no guessing of content types, no referrer to other sites.
SECURITY_HEADERS = (("x-frame-options", "DENY"), ("content-security-policy", CONTENT_SECURITY_POLICY),
                    ("x-content-type-options", "nosniff"), ("referrer-policy", "no-referrer"))
_HEADERS = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in SECURITY_HEADERS]


class BodyRefused(Exception):
    """A request body that is not read to its end: ``status`` 408 (too slow) or 413 (too large). Raised from the
    ``receive`` of :class:`Guard` and :class:`BodyLimit` while the app reads the body; the app answers it."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


#: Longest error message sent: a longer one (one that quotes a large part of the request) keeps its start and its
#: end, where it says what was expected.
MAX_MESSAGE = 1000


def shorten(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message``, or its start and end around ``" ... "`` when it is over ``limit`` characters."""
    if len(message) <= limit:
        return message
    half = (limit - 5) // 2
    return f"{message[:half]} ... {message[-half:]}"


def json_error(status: int, message: str, **extra: Any) -> JSONResponse:
    """The JSON error answer: ``{"error": message, **extra}`` with ``status`` (the message :func:`shorten`ed);
    ``Connection: close`` for a request whose body was not read to its end (408, 413), so the connection is not
    reused half-read."""
    headers = {"connection": "close"} if status in (408, 413) else None
    return JSONResponse({"error": shorten(message), **extra}, status_code=status, headers=headers)


def _has_body(scope) -> bool:
    headers = dict(scope.get("headers") or ())
    return b"transfer-encoding" in headers or headers.get(b"content-length", b"0").strip() not in (b"0", b"")


class Guard:
    """ASGI middleware: security headers, the body's read deadline, cancelling on disconnect, JSON for failures
    (module docstring).

    Args:
        app: the ASGI app.
        read_timeout: seconds from a request's headers to the end of its body.
    """

    def __init__(self, app, read_timeout: float) -> None:
        self.app, self.read_timeout = app, read_timeout

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.read_timeout
        started = answered = False
        replaced = False  # the Guard answered in the app's place: the app's own answer is dropped
        gone = asyncio.Event()
        pending: deque = deque()  # messages the watcher read before the app asked for them
        watcher: asyncio.Task | None = None

        async def deliver(message) -> None:
            nonlocal started, answered
            if message["type"] == "http.response.start":
                started = True
                have = {k.lower() for k, _ in message.get("headers") or ()}
                message = {**message, "headers": [*(message.get("headers") or ()),
                                                  *((k, v) for k, v in _HEADERS if k not in have)]}
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True  # from now on the server reports the request's end as a disconnect

        async def send_(message) -> None:  # the app's messages
            if not replaced:
                await deliver(message)

        async def watch() -> None:  # once the body is read: the next message is the client's going away
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    gone.set()
                    return
                pending.append(message)

        async def receive_():
            nonlocal watcher
            if pending:
                return pending.popleft()
            if watcher is not None or gone.is_set():
                await gone.wait()
                return {"type": "http.disconnect"}
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                raise BodyRefused(408, f"the request's body did not arrive within {self.read_timeout:g} s of its "
                                       "headers: expected the whole body (its Content-Length in bytes) at once") \
                    from None
            if message["type"] == "http.disconnect":
                gone.set()
            elif not message.get("more_body", False):
                watcher = asyncio.ensure_future(watch())
            return message

        if not _has_body(scope):
            watcher = asyncio.ensure_future(watch())
        task = asyncio.ensure_future(self.app(scope, receive_, send_))
        left = asyncio.ensure_future(gone.wait())
        try:
            await asyncio.wait({task, left}, return_when=asyncio.FIRST_COMPLETED)
            if answered and not task.done():  # the "disconnect" that follows the answer: let the app finish
                await asyncio.wait({task})
        except asyncio.CancelledError:  # the server cancels the requests it stops waiting for (uvicorn's shutdown)
            if not started and not gone.is_set():  # answer first: the server's loop ends soon after
                # Once this answer is out the server closes the connection, and a route still reading its body
                # takes that for a client gone and answers it: dropped (it was a traceback after the 503).
                replaced = True
                await _answer(deliver, 503, "the server is shutting down: this request was stopped before its "
                                            "answer; try again once the server is back")
            task.cancel()
            await asyncio.wait({task})
            _retrieve(task)
            return
        finally:
            left.cancel()
            if watcher is not None:
                watcher.cancel()
        if gone.is_set() and not answered:  # the client went away: stop working for it (and the search it waits for)
            task.cancel()
            await asyncio.wait({task})
            _retrieve(task)  # what it raised on its way out (a ClientDisconnect) is nobody's to read
            return
        if task.cancelled():  # a cancel from inside the app (not this request's): its search was stopped
            if not started:
                await _answer(send_, 503, "the request was stopped before its answer (the server is shutting "
                                          "down?): try again")
            return
        exc = task.exception()
        if exc is not None:  # a bug: Starlette's ServerErrorMiddleware answered, or the answer had begun
            log.error("%s %s failed: %s: %s", scope.get("method"), scope.get("path"), type(exc).__name__, exc,
                      exc_info=exc)
            if not started:
                await _answer(send_, 500, f"the server failed ({type(exc).__name__}); its log has the details")


def _retrieve(task: asyncio.Task) -> None:
    """Mark what a finished task raised as read (asyncio logs "Task exception was never retrieved" otherwise)."""
    if not task.cancelled():
        task.exception()


async def _answer(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    try:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})
    except Exception:  # the connection is gone meanwhile: nobody to answer
        pass


def normal_host(host: str) -> str:
    """A host name or address as the allow-list compares it: lower case, an IP address in its short form, without
    the brackets of an IPv6 literal (``[::1]``, ``[0:0::1]`` and ``::1`` are all ``::1``)."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


class TrustedHosts:
    """ASGI middleware: a request whose ``Host`` header names another host than ``allowed`` (see
    :func:`normal_host`; any port) gets JSON 400. Starlette's ``TrustedHostMiddleware`` answers in plain text."""

    def __init__(self, app, allowed: list[str]) -> None:
        self.app, self.allowed = app, sorted({normal_host(h) for h in allowed})

    def host_of(self, value: str) -> str | None:
        """The host of a ``Host`` header value, or None when it is no ``host[:port]``."""
        try:
            parts = urlsplit("//" + value)
            parts.port  # noqa: B018 (raises ValueError for a bad port)
        except ValueError:
            return None
        if parts.netloc != value or not parts.hostname or "@" in value:
            return None
        return normal_host(parts.hostname)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        value = dict(scope.get("headers") or ()).get(b"host", b"").decode("latin-1")
        host = self.host_of(value)
        if host in self.allowed:
            await self.app(scope, receive, send)
            return
        shown = ", ".join(f"[{h}]" if ":" in h else h for h in self.allowed)
        await json_error(400, f"Host header {value[:100]!r} is not this server: expected one of {shown} (with the "
                              "port), as the page's own requests send")(scope, receive, send)


class SameOrigin:
    """ASGI middleware: a request that changes something (any method but GET, HEAD, OPTIONS) sent by a page of
    another site is refused with 403. Browsers send ``Origin`` with every such request; a page of another site may
    send simple POSTs (no body, or ``text/plain``) without asking first, and could otherwise make games and replays
    by the hundred, evicting the person's own. Clients that send no ``Origin`` (scripts, curl) are not browsers'
    pages and pass."""

    SAFE = ("GET", "HEAD", "OPTIONS")

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["method"] not in self.SAFE:
            headers = dict(scope.get("headers") or ())
            origin = headers.get(b"origin")
            if origin is not None:
                host = headers.get(b"host", b"").decode("latin-1").lower()
                try:
                    parts = urlsplit(origin.decode("latin-1").lower()) if origin != b"null" else None
                except ValueError:  # an Origin that is no URL (an unclosed IPv6 bracket)
                    parts = None
                if parts is None or (parts.scheme, parts.netloc) != (scope.get("scheme", "http"), host):
                    await json_error(403, f"a request from a page of another site ({origin.decode('latin-1')[:100]!r})"
                                          f" is refused: expected one from this server's own page (http://{host}/)")(
                        scope, receive, send)
                    return
        await self.app(scope, receive, send)


class NoRanges:
    """ASGI middleware: the page and its files (``/``, ``/static/...``, a few KB each) are always sent whole. A
    ``Range`` request header is ignored (HTTP lets a server do so: the answer is 200 with the whole file) and no
    answer says ``Accept-Ranges``: Starlette's own answers to a bad ``Range`` (400, 416) are plain text, and every
    error here is JSON."""

    DROPPED = (b"range", b"if-range")

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers") or ()
        if any(k.lower() in self.DROPPED for k, _ in headers):
            scope = dict(scope, headers=[(k, v) for k, v in headers if k.lower() not in self.DROPPED])

        async def whole(message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message, headers=[(k, v) for k, v in message.get("headers", ())
                                                 if k.lower() != b"accept-ranges"])
            await send(message)

        await self.app(scope, receive, whole)


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes is answered 413 without being read whole: at once when
    its ``Content-Length`` says so, else as soon as the bytes read pass the limit (the app then fails reading it,
    and its handlers answer 413). The paths in ``skip`` (the upload, with its own larger limit) pass."""

    def __init__(self, app, limit: int, skip: tuple[str, ...]) -> None:
        self.app, self.limit, self.skip = app, limit, skip

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["path"] in self.skip:
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or ()).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limit:
            await json_error(413, f"the request's body is {int(length):,} bytes, over the limit of {self.limit:,} "
                                  "bytes: expected a small JSON object")(scope, receive, send)
            return
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyRefused(413, f"the request's body is over the limit of {self.limit:,} bytes: expected "
                                           "a small JSON object")
            return message

        await self.app(scope, counted, send)


def _raw_answer(status: int, reason: str, message: str) -> bytes:
    """A whole HTTP/1.1 answer with a JSON error, for the protocol to write before it closes the connection."""
    body = json.dumps({"error": message}).encode()
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\nconnection: close\r\n".encode()
            + b"".join(k + b": " + v + b"\r\n" for k, v in _HEADERS)
            + b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def header_deadline_protocol(seconds: float):
    """uvicorn's HTTP/1.1 protocol class (``h11`` or ``httptools``, whichever uvicorn picks) with a deadline for a
    request's headers: ``seconds`` from the connection's start, or from the end of its previous answer, to the
    end of the request's headers; past it the connection gets a JSON 408 and is closed. The body's deadline is
    :class:`Guard`'s; an idle connection between requests is closed by uvicorn's keep-alive timeout.

    Returns:
        A class for ``uvicorn.Config(http=...)``.
    """
    from uvicorn.protocols.http.auto import AutoHTTPProtocol  # uvicorn: imported only where a server starts

    late = _raw_answer(408, "Request Timeout", f"the request's headers did not arrive within {seconds:g} s: "
                                               "expected a whole HTTP request")

    class HeaderDeadline(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        """uvicorn's protocol with a deadline for the headers (:func:`header_deadline_protocol`)."""

        def connection_made(self, transport) -> None:
            self._header_timer = None
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
            self._armed_cycle = self.cycle  # a request that starts after this point replaces it
            self._header_timer = self.loop.call_later(seconds, self._headers_late)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._header_timer is not None and self.cycle is not self._armed_cycle:
                self._disarm()  # the headers are in: the request runs

        def on_response_complete(self) -> None:
            cycle = self.cycle
            super().on_response_complete()
            if not self.transport.is_closing():  # the next request on this connection gets its own time
                self._arm()
                if self.cycle is not cycle:  # a pipelined request started at once
                    self._disarm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def send_400_response(self, msg: str) -> None:  # uvicorn's answer to bytes that are no HTTP: plain text
            self.transport.write(_raw_answer(400, "Bad Request", f"not an HTTP/1.1 request this server reads "
                                                                 f"({msg}): expected a request line, headers and an "
                                                                 "optional body"))
            self.transport.close()

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.transport.is_closing() or self.cycle is not self._armed_cycle:
                return
            if self.cycle is not None and not self.cycle.response_complete:  # pragma: no cover (disarmed before)
                return
            self.transport.write(late)
            self.transport.close()

    return HeaderDeadline


__all__ = ["CONTENT_SECURITY_POLICY", "MAX_MESSAGE", "SECURITY_HEADERS", "BodyLimit", "BodyRefused", "Guard", "NoRanges",
           "SameOrigin", "TrustedHosts", "header_deadline_protocol", "json_error", "normal_host", "shorten"]
