"""Shared helpers of the test suite (no tests here).

- :mod:`helpers.rulebook`: the scenarios of ``docs/RULES.md`` section 6, parsed (the tests' single source of them).
- :mod:`helpers.drivers`: replaying a scenario through the engine or the PettingZoo env.
- :mod:`helpers.engine`: loading positions and checking states in the rule book's notation (A/B, action names).
- :mod:`helpers.areas`: the short position builders and checks of the per-area rule tests (seats 0/1).
- :mod:`helpers.fault_positions`: positions of the section 7 fault tests that the rule book does not list.
- :mod:`helpers.knob_cases`: the rule-knob sets that the lockstep and solver tests run over.
- :mod:`helpers.lockstep`: the driver of the lockstep tests (the compiled core beside the reference engine).
- :mod:`helpers.solver_positions`: seeded positions for the solver tests and ``benchmarks/solver_core.py``.
- :mod:`helpers.scripts`: ``train.py`` and ``train_rllib.py`` loaded from their files (they are not installed).
- :mod:`helpers.play`: seeded random records, random episodes, the observation of the player to move, an agent
  playing legal hands.
- :mod:`helpers.training`: the tiny ``train.Args`` of the trainer's tests.
- :mod:`helpers.web_server`: the real ``schnapsen-web`` in a subprocess (its sockets, processes and signals).
- :mod:`helpers.reference_solver`: the readable reference solver (plain Python alpha-beta) the compiled one is
  tested against; ``benchmarks/solver.py`` and ``benchmarks/solver_core.py`` time it.

``tests/conftest.py`` puts ``tests/`` on ``sys.path``, so test modules import these as ``helpers.<module>``.
"""
