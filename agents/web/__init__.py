"""``schnapsen-web``: play and analyse in the browser (the optional extra ``web``: FastAPI on uvicorn).

* :mod:`agents.web.view`: the JSON a browser gets, built from the player's observation (never the hidden state);
* :mod:`agents.web.sessions`: the games and replays kept in memory, and the agents a browser may choose;
* :mod:`agents.web.search`: the opponents' decisions and the analyses, in worker processes, with deadlines;
* :mod:`agents.web.limits`: the limits (deadlines, timeouts, idle time), declared once;
* :mod:`agents.web.guards`: the middlewares between the network and the routes (security headers, read deadlines,
  cancelling on disconnect, the Host allow-list, JSON for every failure);
* :mod:`agents.web.app`: the ASGI app, its routes and error answers (``create_app``);
* ``static/``: the page (one HTML file, its script and style; no build step).

The command is :mod:`agents.cli.web`. Only :mod:`agents.web.app` and :mod:`agents.web.guards` import the web
framework (FastAPI, Starlette, uvicorn), so the rest is importable without the extra.
"""
