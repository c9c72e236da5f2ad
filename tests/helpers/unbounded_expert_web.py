"""``schnapsen-web`` whose ``expert`` has no node budget (``max_nodes=None``: every world solved exactly, however
long), for the tests that need a search still running when they measure something (deadlines, cancelling, a
server stopped mid-search). At its default budget the expert answers a ``sixtysix24`` opening within about a
second; unbounded, that opening takes tens of seconds, as a user's ``expert:max_nodes=...`` of a large budget would.

Run as a script (``python tests/helpers/unbounded_expert_web.py --port 0 ...``, the command's own flags): the
search workers are ``spawn``ed, and a spawned process imports the parent's main script again (as ``__mp_main__``),
so the changed default holds in every worker as in the server. Imported under any other name (pytest's doctest
collection imports every module of ``tests/``) it changes nothing.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents.search.expert import ExpertAgent  # noqa: E402


def unbound_expert() -> None:
    """Make ``max_nodes=None`` the default of :class:`ExpertAgent` in this process."""
    params = list(inspect.signature(ExpertAgent.__init__).parameters.values())[1:]
    defaults = [p.default for p in params if p.default is not inspect.Parameter.empty]
    names = [p.name for p in params if p.default is not inspect.Parameter.empty]
    defaults[names.index("max_nodes")] = None
    ExpertAgent.__init__.__defaults__ = tuple(defaults)


if __name__ in ("__main__", "__mp_main__"):  # the server, and each spawned search worker
    unbound_expert()

if __name__ == "__main__":
    from agents.cli.web import main

    sys.exit(main())
