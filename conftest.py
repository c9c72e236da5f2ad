"""pytest outside tests/: the packages' docstring examples run as doctests (pyproject.toml: testpaths,
--doctest-modules). A module that needs an optional extra is not collected when the extra is not installed;
benchmarks/ (scripts) and examples/ (run by tests/test_examples.py) are never collected, even by ``pytest .``."""

import importlib.util

# module or folder -> the package of its extra (pyproject.toml: rllib, web, openspiel)
OPTIONAL = {"agents/training/rllib_module.py": "ray", "agents/web": "fastapi", "schnapsen_env/openspiel.py": "pyspiel",
            "agents/search/openspiel_bots.py": "pyspiel"}

collect_ignore = ["conftest.py", "benchmarks", "examples"]  # this file: it has no examples
collect_ignore += [path for path, package in OPTIONAL.items() if importlib.util.find_spec(package) is None]
