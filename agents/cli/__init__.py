"""The command-line apps, one module each (run them by name once installed, or with ``python -m``):

* ``schnapsen-arena`` (:mod:`agents.cli.arena`, ``python -m agents.cli.arena``): duplicate-deal matches and round
  robins between agents (:mod:`agents.evaluation.arena`);
* ``schnapsen-play`` (:mod:`agents.cli.play`, ``python -m agents.cli.play``): play against an agent in the
  terminal;
* ``schnapsen-replay`` (:mod:`agents.cli.replay`, ``python -m agents.cli.replay``): replay recorded hands; it uses
  only :mod:`schnapsen_env`;
* ``schnapsen-web`` (:mod:`agents.cli.web`, ``python -m agents.cli.web``): play and analyse in the browser
  (:mod:`agents.web`; the optional extra ``web``).

The command names are declared under ``[project.scripts]`` in ``pyproject.toml``.
"""
