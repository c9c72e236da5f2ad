"""The real ``schnapsen-web`` in a subprocess, for the tests that need its sockets, its processes and its signals
(a client that goes away, a server killed outright, a slow client), which FastAPI's in-process test client cannot
show.

:class:`WebServer` starts ``python -m agents.cli.web --port 0 ...`` and reads its address from its first line;
:meth:`WebServer.request` sends one HTTP request (``http.client``, a fresh connection each time);
:meth:`WebServer.wait_ready` waits until every search worker has warmed up (``GET /api/status``);
:func:`children` and :func:`running` read ``/proc`` (Linux).
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def running(pid: int) -> bool:
    """The process ``pid`` runs (a zombie, dead but not yet reaped by whoever adopted it, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def children(pid: int) -> list[int]:
    """The running processes whose parent is ``pid``."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.append(int(entry))
    return out


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds the process ``pid`` used so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Response:
    """An answer: ``status``, ``headers`` (lower-case names), ``body`` (bytes), :meth:`json`."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)


class WebServer:
    """``schnapsen-web`` on a free port of 127.0.0.1 (or ``--host`` given in ``args``), as a context manager that
    kills it (and any worker left, so that a failing test leaves no process behind) on the way out.

    Args:
        args: more flags (``--workers``, ``--max-move-seconds``, ...).
        unbounded_expert: serve with ``expert`` searching without its node budget (``unbounded_expert_web.py``:
            a long search to cut, cancel or interrupt).
    """

    def __init__(self, *args: str, unbounded_expert: bool = False) -> None:
        self.args = ["--port", "0", "--seed", "0", *args]
        self.command = ([str(Path(__file__).with_name("unbounded_expert_web.py"))] if unbounded_expert
                        else ["-m", "agents.cli.web"])
        self.lines: list[str] = []
        self._queue: queue.Queue = queue.Queue()

    def __enter__(self) -> WebServer:
        self.proc = subprocess.Popen([sys.executable, *self.command, *self.args], cwd=ROOT,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        first = self._queue.get(timeout=120)
        assert first is not None and "serving on http://" in first, self.output
        self.url = first.split("serving on ")[1].split()[0]
        netloc = self.url.split("//")[1].rstrip("/")
        self.host, self.port = netloc.rsplit(":", 1)[0].strip("[]"), int(netloc.rsplit(":", 1)[1])
        self.pid = self.proc.pid
        self.seen: set[int] = set()
        return self

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)

    @property
    def output(self) -> str:
        """Everything the server wrote so far (stdout and stderr)."""
        return "".join(self.lines)

    def workers(self) -> list[int]:
        """The server's running child processes (its search workers, and multiprocessing's resource tracker)."""
        kids = children(self.pid) if running(self.pid) else []
        self.seen.update(kids)
        return kids

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
                timeout: float = 300) -> Response:
        """One request on a fresh connection; a dict or list ``body`` is sent as JSON, bytes as they are."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
            hdrs = {"content-type": "application/json"} if isinstance(body, (dict, list)) else {}
            conn.request(method, path, body=data, headers={**hdrs, **(headers or {})})
            r = conn.getresponse()
            return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
        finally:
            conn.close()

    def wait_ready(self, timeout: float = 300) -> dict:
        """Wait until every lane's workers have warmed up; returns ``/api/status``."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.request("GET", "/api/status").json()
            lanes = status["searches"]["lanes"]
            if all(lane["ready"] == lane["workers"] for lane in lanes.values()):
                return status
            assert time.monotonic() < deadline, f"the workers did not warm up in {timeout} s: {status}"
            time.sleep(0.2)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        """Send ``sig`` and wait for the server's end; returns its exit status."""
        self.workers()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.workers()
            self.proc.kill()
            self.proc.wait(30)
        for pid in self.seen:
            if running(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
