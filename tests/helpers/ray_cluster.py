"""A Ray cluster of several nodes on this machine, started with ``ray start`` as a user starts one on several
machines, for the tests of ``train.py --ray-address``; :meth:`RayCluster.stop` kills every process it started, and
:meth:`RayCluster.survivors` names any that is still running (the tests' fixture asserts there is none).

Each node is one ``ray start --block`` in a session of its own: its raylet, agents and (on the head) GCS stay in that
process group, and the actors' worker processes are children of the node's raylet. The cluster's files go to a
fresh ``--temp-dir`` (short: Ray's socket paths must fit 107 bytes) and every port is a free one, so a cluster of a
test meets no other Ray on the machine; its nodes authenticate with a token of its own (``RAY_AUTH_MODE=token``,
``RAY_AUTH_TOKEN``, Ray's documented variables), which :attr:`RayCluster.env` passes to the trainer as well.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
#: The head's health checks of the nodes: a lost node is declared dead after about 1.5 s instead of Ray's 15 or so
#: (the default period of 3 s, 5 failures), so that a test does not wait; a live raylet still has Ray's default
#: timeout to answer, so a busy machine does not lose a node.
FAST_HEALTH_CHECKS = {"health_check_period_ms": 500, "health_check_failure_threshold": 3}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _stat(pid: int) -> tuple[int, int, str] | None:
    """``(ppid, pgid, state)`` of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[2]), fields[0]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _running() -> dict[int, tuple[int, int, str]]:
    """Every live process (zombies left out): pid -> ``(ppid, pgid, state)``."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None and st[2] != "Z":
                out[int(entry)] = st
    return out


def alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[2] != "Z"


def wait_gone(pid: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            raise TimeoutError(f"process {pid} still runs {timeout} s after SIGKILL")
        time.sleep(0.05)


@dataclass
class Node:
    """One ``ray start --block`` and what it started."""
    proc: subprocess.Popen
    log: Path
    head: bool
    node_id: str = ""
    raylet: int = 0


class RayCluster:
    """A head node, then :meth:`add_node` for workers (each with ``--num-cpus`` and resources of its own)."""

    def __init__(self) -> None:
        self.temp_dir = tempfile.mkdtemp(prefix="rt", dir="/tmp")
        self.env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        self.env.pop("RAY_ADDRESS", None)
        self.nodes: list[Node] = []
        self.address = ""
        self.seen: set[int] = set()  # every process of the cluster ever seen, for stop and survivors

    def add_node(self, cpus: int = 1, resources: dict | None = None, timeout: float = 120) -> Node:
        """Start the head (the first call) or a worker node joining it; returns once the node runs."""
        head = not self.nodes
        cmd = [RAY, "start", "--block", f"--num-cpus={cpus}", f"--resources={json.dumps(resources or {})}",
               "--object-store-memory=100000000", "--disable-usage-stats",
               f"--dashboard-agent-listen-port={free_port()}"]
        if head:
            cmd += ["--head", f"--port={free_port()}", f"--ray-client-server-port={free_port()}",
                    "--include-dashboard=false", f"--temp-dir={self.temp_dir}",
                    f"--system-config={json.dumps(FAST_HEALTH_CHECKS)}"]
        else:
            cmd += [f"--address={self.address}"]
        log = Path(self.temp_dir) / f"node{len(self.nodes)}.log"
        with open(log, "wb") as f:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=self.env,
                                    start_new_session=True)
        node = Node(proc, log, head)
        self.nodes.append(node)
        self.seen.add(proc.pid)
        deadline = time.monotonic() + timeout
        while "block forever" not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray start failed (exit {proc.poll()}): {log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
        if head:
            self.address = re.search(r"ray start --address='([^']+)'", log.read_text()).group(1)
        for pid, (_, pgid, _) in _running().items():
            if pgid == proc.pid and "raylet/raylet" in _cmdline(pid):
                node.raylet = pid
                node.node_id = re.search(r"--node_id=([0-9a-f]+)", _cmdline(pid)).group(1)
        assert node.raylet, f"no raylet in the session of {cmd}"
        self._note()
        return node

    def _note(self) -> None:
        """Remember the processes of the nodes' sessions and their descendants (the actors' workers)."""
        running = _running()
        sessions = {n.proc.pid for n in self.nodes}
        grew = True
        while grew:
            new = {pid for pid, (ppid, pgid, _) in running.items()
                   if pid not in self.seen and (pgid in sessions or ppid in self.seen)}
            self.seen |= new
            grew = bool(new)

    def kill_raylet(self, node: Node) -> None:
        """Lose ``node`` as a machine is lost: SIGKILL its raylet (its ``ray start`` then stops the rest)."""
        self._note()
        os.kill(node.raylet, signal.SIGKILL)
        wait_gone(node.raylet)

    def wait_nodes(self, count: int, timeout: float = 60) -> None:
        """Wait until the head counts ``count`` live nodes (``ray status``)."""
        deadline = time.monotonic() + timeout
        while True:
            out = subprocess.run([RAY, "status", f"--address={self.address}"], env=self.env, capture_output=True,
                                 text=True, timeout=60).stdout
            active = out.split("Active:")[-1].split("Pending:")[0]
            if len(re.findall(r"node_[0-9a-f]+", active)) == count:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the cluster does not have {count} live nodes after {timeout} s: {out}")
            time.sleep(0.5)

    def stop(self) -> None:
        """SIGKILL every process of the cluster (each node's session, the workers its raylet started), reap the
        ``ray start`` processes and remove the cluster's files."""
        self._note()
        for node in self.nodes:
            try:
                os.killpg(node.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in self.seen:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for node in self.nodes:
            node.proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while self.survivors() and time.monotonic() < deadline:
            time.sleep(0.1)
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def survivors(self) -> list[str]:
        """The cluster's processes still running: any seen, and any whose command line names its files."""
        running = _running()
        out = [pid for pid in running if pid in self.seen or self.temp_dir in _cmdline(pid)]
        return [f"{pid} {_cmdline(pid)[:120]}" for pid in out]
