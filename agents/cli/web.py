"""``schnapsen-web``: play and analyse Schnapsen in the browser, against any agent, on this computer.

    schnapsen-web                                # http://127.0.0.1:8000/ : a match against the strongest shipped policy
    schnapsen-web --open --port 8080             # ... and open it in a browser tab
    schnapsen-web --policy runs/NAME/policy.pt   # also offer your own trained policy as an opponent

The page plays a hand or a match to 7 against a registered agent or the ``--policy`` file, from either seat, in
either ruleset; it analyses any position with PIMC, the expert search and the policies, and downloads, uploads and
replays game records. Games live in the server's memory (one per browser tab) and end with it. The server listens
on 127.0.0.1 only unless ``--host`` says otherwise; it needs the optional extra ``web``
(``pip install 'schnapsen-env[web]'``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import socket
import sys
import threading
import time
import webbrowser

from agents.cli.console import ArgumentParser, console_main
from schnapsen_env.errors import short_repr
from schnapsen_env.files import describe_os_error

PROG = "schnapsen-web"
MAX_SEED = 2 ** 63 - 1
#: The hosts that mean every interface (any Host header is then accepted).
ANY_HOST = ("0.0.0.0", "::", "")


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (port 0: a free port), IPv4 or IPv6 as ``host`` resolves.

    Raises:
        OSError: the address is in use, not this machine's, or not allowed (a port below 1024).
    """
    info = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, address = info[0]
    return socket.create_server(address[:2], family=family, backlog=128)


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    if host in ANY_HOST:
        host = "127.0.0.1"
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


@console_main(PROG)
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``schnapsen-web``; serves until Ctrl-C and returns the exit status.

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
                   "analyses (default: 2 on up to 4 cores, else 4; one more moves the quick opponents; 0: threads "
                   "of the server, which a long search then holds up)")
    args = p.parse_args(argv)
    if not 0 <= args.port <= 65535:
        p.error(f"--port {args.port}: expected a port from 0 to 65535")
    if args.seed is not None and not 0 <= args.seed <= MAX_SEED:
        p.error(f"--seed {args.seed}: expected an int from 0 to 2**63 - 1")
    if args.workers is not None and not 0 <= args.workers <= 64:
        p.error(f"--workers {args.workers}: expected an int from 0 to 64")
    if "\0" in args.host or len(args.host) > 253:
        p.error(f"--host {short_repr(args.host)}: expected a host name or address such as 127.0.0.1")
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

    allowed = None if args.host in ANY_HOST or ":" in args.host else sorted({"127.0.0.1", "localhost", args.host})
    try:
        app = create_app(policy=args.policy, seed=args.seed, workers=args.workers, allowed_hosts=allowed,
                         warm_up=True)
    except ValueError as e:  # CheckpointError: the policy's file, what is wrong with it
        p.error(f"--policy {short_repr(args.policy)}: {e}")
    try:
        sock = _listen(args.host, args.port)
    except socket.gaierror as e:
        p.error(f"--host {short_repr(args.host)}: unknown host ({e.strerror}): expected a host name or address "
                "such as 127.0.0.1")
    except OSError as e:
        p.error(f"--host {args.host} --port {args.port}: cannot listen there ({describe_os_error(e)}): expected a "
                "free port of this computer (--port 0 picks one)")
    url = _url(sock)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3)
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
    with sock:
        server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
