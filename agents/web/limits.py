"""The limits of ``schnapsen-web``, declared once (the app, its search workers and the command read them here;
this module imports nothing, so the command's ``--help`` and checks need neither the web extra nor the agents).

Each is ``(default, lowest, highest)`` (both allowed) in the unit its name ends with; the command's flag of the same
name sets it (``--max-move-seconds``, ...). The lowest values keep the server usable (a deadline of
nanoseconds stops every search, a read timeout of nanoseconds refuses every body, ...).
"""

from __future__ import annotations

#: An opponent's move: its search is stopped after this many seconds, and the ``heuristic`` moves instead. The
#: expert keeps a move within its node budget (under a second on one core, ``docs/benchmarks.md``); the bound is
#: for options that lift the budget and for a machine too busy to give the search its core.
MAX_MOVE_SECONDS = (5.0, 0.1, 3600.0)
#: An analysis: stopped after this many seconds and answered with an error (504).
MAX_ANALYSIS_SECONDS = (10.0, 0.1, 3600.0)
#: Seconds a client has to send a request's headers (from its connection or its previous answer), and again its
#: body (from its headers).
READ_TIMEOUT = (10.0, 0.5, 600.0)
#: Minutes a game or replay is kept unused (no request names it) before it is forgotten.
IDLE_MINUTES = (120.0, 1.0, 7 * 24 * 60.0)
#: Seconds uvicorn keeps a connection idle between two requests.
KEEP_ALIVE_SECONDS = 5

#: The flags that set them.
FLAGS = {"--max-move-seconds": MAX_MOVE_SECONDS, "--max-analysis-seconds": MAX_ANALYSIS_SECONDS,
         "--read-timeout": READ_TIMEOUT, "--idle-minutes": IDLE_MINUTES}

__all__ = ["FLAGS", "IDLE_MINUTES", "KEEP_ALIVE_SECONDS", "MAX_ANALYSIS_SECONDS", "MAX_MOVE_SECONDS", "READ_TIMEOUT"]
