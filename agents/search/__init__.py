"""Search players, which see only their own observation (RULES.md R27) and search worlds consistent with it:

* :mod:`~agents.search.worlds`: drawing determinisations (worlds) into the compiled state layout;
* :mod:`~agents.search.solver_core`: the compiled exact solver of a perfect-information hand (alpha-beta);
* :mod:`~agents.search.pimc` (``pimc``), :mod:`~agents.search.expert` (``expert``, full-depth PIMC) and
  :mod:`~agents.search.rollout` (``rollout``, with its compiled twin :mod:`~agents.search.rollout_core`);
* :mod:`~agents.search.openspiel_bots`: OpenSpiel's ISMCTS and MCTS bots (the ``openspiel`` extra);
* :mod:`~agents.search.options`: the checks of their integer options.

The readable reference solver that the compiled one is tested against is a test helper:
``tests/helpers/reference_solver.py``.
"""
