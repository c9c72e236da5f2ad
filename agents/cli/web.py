"""``schnapsen-web``: play and analyse Schnapsen in the browser, against any agent, on this computer.

    schnapsen-web                                # http://127.0.0.1:8000/ : a match against the strongest shipped policy
    schnapsen-web --open --port 8080             # ... and open it in a browser tab
    schnapsen-web --policy runs/NAME/policy.pt   # also offer your own trained policy as an opponent

The page plays a hand or a match to 7 against a registered agent or the ``--policy`` file, from either seat, in
any ruleset; it analyses any position with PIMC, the expert search and the policies, and downloads, uploads and
replays game records. Games live in the server's memory (one per browser tab) and end with it. The server listens
on 127.0.0.1 only unless ``--host`` says otherwise; it needs the optional extra ``web``
(``pip install 'schnapsen-env[web]'``).
"""

from __future__ import annotations

import argparse
import importlib.util
import ipaddress
import math
import os
import re
import socket
import sys
import threading
import time
import webbrowser

from agents.cli.console import ArgumentParser, console_main
from agents.web import limits
from schnapsen_env.errors import short_repr
from schnapsen_env.files import describe_os_error

PROG = "schnapsen-web"
MAX_SEED = 2 ** 63 - 1
#: The hosts that mean every interface (any Host header is then accepted: the names it is reached by are unknown).
ANY_HOST = ("0.0.0.0", "::")
#: The names a request to this computer's loopback may carry in its Host header, whatever loopback --host names.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
_LABEL = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?")
_EXPECTED_HOST = ("expected an IP address (127.0.0.1, ::1, 0.0.0.0 for every interface) or a host name of "
                  "dot-separated labels of 1 to 63 letters, digits and hyphens")


def host_problem(host: str) -> str | None:
    """What is wrong with ``host`` as an address to listen on (None: nothing): an IP address, or a host name of
    labels of 1 to 63 letters, digits, hyphens and underscores (non-ASCII labels as IDNA allows them), 253
    characters at most."""
    if not host.strip():  # "" would listen on every interface, unseen: that takes 0.0.0.0 said outright
        return "empty"
    if host in ANY_HOST:
        return None
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    if host.startswith("[") or host.endswith("]"):
        return "brackets: write an IPv6 address without them (::1, not [::1])"
    if len(host) > 253:
        return f"{len(host)} characters, over the 253 of a host name"
    labels = host[:-1].split(".") if host.endswith(".") else host.split(".")
    for label in labels:
        if not label:
            return "an empty label (two dots in a row, or a leading dot)"
        try:
            ascii_label = label.encode("idna").decode("ascii") if not label.isascii() else label
        except UnicodeError:
            return f"the label {label[:70]!r} is no international domain name"
        if len(ascii_label) > 63:
            return f"the label {label[:70]!r} has {len(ascii_label)} characters, over the 63 of a label"
        if not _LABEL.fullmatch(ascii_label):
            return f"the label {label[:70]!r} holds other characters than letters, digits and hyphens, or starts " \
                   "or ends with a hyphen"
    return None


def allowed_hosts(host: str) -> list[str] | None:
    """The Host headers the server accepts when it listens on ``host``: None (any) for every interface (the names
    it is reached by are unknown); else the loopback names and ``host`` itself (DNS rebinding: a page of another
    site whose name is made to point at this computer sends its own name)."""
    if host in ANY_HOST:
        return None
    return sorted({*LOOPBACK_NAMES, host.lower()})


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (port 0: a free port), IPv4 or IPv6 as ``host`` resolves.

    Raises:
        OSError: the address is in use, not this machine's, or not allowed (a port below 1024).
    """
    info = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, address = info[0]
    sock = socket.create_server(address[:2], family=family, backlog=128)
    # create_server makes its socket with protocol 0, and asyncio sets TCP_NODELAY only on the connections of a
    # socket whose protocol reads IPPROTO_TCP: without it Nagle's algorithm held each answer's body (uvicorn writes
    # the headers, then the body) until the client's delayed acknowledgement, 40 ms an answer. The same socket,
    # named as TCP.
    return socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, fileno=sock.detach())


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    if host in ANY_HOST:
        host = "127.0.0.1"
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


@console_main(PROG)
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``schnapsen-web``; serves until Ctrl-C and returns the exit status (Ctrl-C: the line
    ``schnapsen-web: stopped`` and status 130, as the other programs end on it).

    A user's mistake is one line on stderr and exit status 2, never a traceback: a bad flag, a missing extra, a
    policy that does not load, an address that cannot be listened on (in use, not this machine's).
    """
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0].replace("``", ""),
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog=__doc__.split("\n\n", 1)[1].replace("``", ""))
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this computer "
                   "only; 0.0.0.0 for every interface)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000; 0: any free port)")
    p.add_argument("--open", action="store_true", help="open the page in a browser tab")
    p.add_argument("--policy", metavar="PATH", help="a policy.pt (train.py) to offer as an opponent and analyser")
    p.add_argument("--seed", type=int, default=None, help="seed of the games started without one (reproducible "
                   "deals and opponents)")
    p.add_argument("--workers", type=int, default=None, help="processes for the opponents' searches and the "
                   "analyses (default: 3 on up to 4 cores, else 4: half for the opponents, the rest for the "
                   "analyses; one more moves the quick opponents; 0: threads of the server, which a long search "
                   "then holds up)")
    p.add_argument("--max-move-seconds", type=float, metavar="S", default=limits.MAX_MOVE_SECONDS[0],
                   help="an opponent's search is stopped after S seconds and the heuristic moves instead (default: "
                   "%(default)g)")
    p.add_argument("--max-analysis-seconds", type=float, metavar="S", default=limits.MAX_ANALYSIS_SECONDS[0],
                   help="an analysis is stopped after S seconds and answered with an error (default: %(default)g)")
    p.add_argument("--read-timeout", type=float, metavar="S", default=limits.READ_TIMEOUT[0],
                   help="seconds a client has to send a request's headers, and again its body (default: "
                   "%(default)g)")
    p.add_argument("--idle-minutes", type=float, metavar="M", default=limits.IDLE_MINUTES[0],
                   help="a game or replay unused for M minutes is forgotten (default: %(default)g)")
    args = p.parse_args(argv)
    if not 0 <= args.port <= 65535:
        p.error(f"--port {args.port}: expected a port from 0 to 65535")
    if args.seed is not None and not 0 <= args.seed <= MAX_SEED:
        p.error(f"--seed {args.seed}: expected an int from 0 to 2**63 - 1")
    if args.workers is not None and not 0 <= args.workers <= 64:
        p.error(f"--workers {args.workers}: expected an int from 0 to 64")
    cores = os.cpu_count() or 1
    if args.workers is not None and args.workers > 4 * cores:
        print(f"{PROG}: warning: --workers {args.workers} is over 4 per core ({cores} cores here): the searches will "
              "wait for the cores, and each worker holds its own memory", file=sys.stderr)
    for flag, (_, low, high) in limits.FLAGS.items():
        value = getattr(args, flag[2:].replace("-", "_"))
        if not (math.isfinite(value) and low <= value <= high):
            unit = "minutes" if flag.endswith("minutes") else "seconds"
            p.error(f"{flag} {value:g}: expected a number of {unit} from {low:g} to {high:g}")
    problem = host_problem(args.host)
    if problem is not None:
        p.error(f"--host {short_repr(args.host)}: {problem}: {_EXPECTED_HOST}")
    missing = [m for m in ("fastapi", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        p.error(f"{' and '.join(missing)} not installed: {PROG} needs the optional extra 'web' "
                "(pip install 'schnapsen-env[web]', or bash scripts/bootstrap.sh --extras web ...)")
    if args.policy is not None:
        if not os.path.isfile(args.policy):
            what = ("is a folder" if os.path.isdir(args.policy) else "is not a regular file"
                    if os.path.exists(args.policy) else "does not exist")  # a device, a FIFO: never read
            p.error(f"--policy {short_repr(args.policy)} {what}: expected a policy.pt written by train.py")
    import uvicorn

    from agents.web.app import create_app  # fastapi (the web extra): imported only when a server starts
    from agents.web.guards import header_deadline_protocol  # starlette, uvicorn: the same

    try:
        app = create_app(policy=args.policy, seed=args.seed, workers=args.workers,
                         allowed_hosts=allowed_hosts(args.host), warm_up=True, move_seconds=args.max_move_seconds,
                         analysis_seconds=args.max_analysis_seconds, read_timeout=args.read_timeout,
                         idle_minutes=args.idle_minutes)
    except ValueError as e:  # CheckpointError: the policy's file, what is wrong with it
        p.error(f"--policy {short_repr(args.policy)}: {e}")
    try:
        sock = _listen(args.host, args.port)
    except socket.gaierror as e:
        p.error(f"--host {short_repr(args.host)}: unknown host ({e.strerror}): expected a host name or address "
                "such as 127.0.0.1")
    except UnicodeError as e:  # a name the IDNA codec refuses beyond the checks above
        p.error(f"--host {short_repr(args.host)}: {e}: {_EXPECTED_HOST}")
    except OSError as e:
        p.error(f"--host {args.host} --port {args.port}: cannot listen there ({describe_os_error(e)}): expected a "
                "free port of this computer (--port 0 picks one)")
    url = _url(sock)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3,
                            timeout_keep_alive=limits.KEEP_ALIVE_SECONDS,
                            http=header_deadline_protocol(args.read_timeout))
    server = uvicorn.Server(config)
    print(f"{PROG}: serving on {url} (Ctrl-C stops)", flush=True)
    if args.open:
        def open_when_ready() -> None:
            for _ in range(600):
                if server.started:
                    if not webbrowser.open(url, new=2):  # no browser here (a headless machine)
                        print(f"{PROG}: no browser to open here: open {url} in one", flush=True)
                    return
                time.sleep(0.05)

        threading.Thread(target=open_when_ready, daemon=True).start()
    try:
        with sock:
            server.run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C: uvicorn stopped the server (and its workers), then raised SIGINT again
        print(f"{PROG}: stopped", flush=True)
        return 130  # as schnapsen-play and schnapsen-arena end on Ctrl-C
    return 0


if __name__ == "__main__":
    sys.exit(main())
