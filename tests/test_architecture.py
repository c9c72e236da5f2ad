"""The layout's rules, checked on the source: no import cycle between the modules of ``schnapsen_env`` and
``agents``, no private name imported from another module, and the rooms of ``agents/`` importing only the rooms
below them (:data:`ALLOWED`, stated once here)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("schnapsen_env", "agents")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = f.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:`` (imports for annotations only)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, ast.AST]]:
    """Package modules that ``name`` imports at run time, anywhere in it (top level or inside functions)."""
    out = []
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, node) for a in node.names if a.name in modules]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module in modules:
            subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
            out += [(s, node) for s in subs]
            if len(subs) < len(node.names):
                out.append((node.module, node))
    return out


def test_no_private_name_imported_from_another_module():
    modules = _modules()
    bad = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES:
                bad += [f"{name}: from {node.module} import {a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
    assert not bad, "private names imported across modules:\n" + "\n".join(bad)


def test_no_import_cycle():
    """Package ``__init__`` modules only re-export, so edges into a package (not a module) are left out."""
    modules = _modules()
    packages = {name for name, path in modules.items() if path.name == "__init__.py"}
    graph = {name: sorted({m for m, _ in _imports(name, path, modules) if m not in packages and m != name})
             for name, path in modules.items() if name not in packages}
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    stack: list[str] = []
    cycles = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in graph.get(m, []):
            if state.get(n) == 1:
                cycles.append(" -> ".join(stack[stack.index(n):] + [n]))
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_checks_see_imports():
    """The import scanner finds what it must (so that the two tests above can fail), and skips imports made for
    annotations only."""
    modules = _modules()
    found = {m for m, _ in _imports("schnapsen_env.rules", modules["schnapsen_env.rules"], modules)}
    assert {"schnapsen_env.position", "schnapsen_env.scoring", "schnapsen_env.ruleset"} <= found
    assert "schnapsen_env.rules" not in {
        m for m, _ in _imports("schnapsen_env.position", modules["schnapsen_env.position"], modules)}


#: The rooms of ``agents/`` (a subpackage, or a module directly in ``agents/``) and the rooms each may import, at
#: run time, anywhere in its modules; a room may always import itself and ``schnapsen_env``. Players sit above
#: the contract and the spec resolver; evaluation, exact game theory and training above the players; the apps
#: (``cli``, ``web``) on top, the only rooms that import the registry (the package ``agents`` itself).
PLAYERS = {"agents.scripted", "agents.search", "agents.learned"}
ALLOWED: dict[str, set[str]] = {
    "agents.base": set(),
    "agents.moved": set(),
    "agents.specs": {"agents.base"},
    "agents.scripted": {"agents.base"},
    "agents.search": {"agents.base"},
    "agents.learned": {"agents.base", "agents.specs", "agents.search"},
    "agents.evaluation": {"agents.base", "agents.specs"},
    "agents.game_theory": {"agents.base", "agents.learned", "agents.search"},
    "agents.training": {"agents.base", "agents.specs", *PLAYERS, "agents.evaluation", "agents.game_theory"},
    "agents.web": {"agents", "agents.base", "agents.specs", *PLAYERS, "agents.evaluation"},
    "agents.cli": {"agents", "agents.base", "agents.specs", *PLAYERS, "agents.evaluation", "agents.web"},
    # the registry (agents/__init__.py); it also registers the local best response, a player of game theory's room
    "agents": {"agents.moved", "agents.base", "agents.specs", *PLAYERS, "agents.game_theory"},
}
#: At most this many modules directly in ``agents/`` besides ``__init__.py``; the rest live in rooms named by job.
MAX_TOP_MODULES = 6


def _room(module: str) -> str:
    parts = module.split(".")
    return module if parts[0] != "agents" or len(parts) == 1 else ".".join(parts[:2])


def _room_problems(modules: dict[str, Path]) -> list[str]:
    bad = []
    for name, path in modules.items():
        if not name.startswith("agents"):
            continue
        src = _room(name)
        for target, node in _imports(name, path, modules):
            dst = _room(target)
            if not target.startswith("agents") or dst == src or dst in ALLOWED.get(src, set()):
                continue
            bad.append(f"{name} (line {node.lineno}) imports {target}: {src} may import "
                       f"{sorted(ALLOWED.get(src, set())) or 'no other room'}")
    return bad


def test_every_room_of_agents_is_declared():
    rooms = {_room(name) for name in _modules() if name.startswith("agents")}
    assert rooms == set(ALLOWED), f"rooms without a rule: {sorted(rooms - set(ALLOWED))}; rules without a room: " \
                                  f"{sorted(set(ALLOWED) - rooms)}"


def test_rooms_import_only_the_rooms_below_them():
    bad = _room_problems(_modules())
    assert not bad, "imports running back up between the rooms of agents/:\n" + "\n".join(bad)


def test_the_room_check_finds_an_upward_import(tmp_path):
    """A player importing the arena is found (so that the test above can fail)."""
    modules = _modules()
    fake = tmp_path / "fake.py"
    fake.write_text("from agents.evaluation.arena import play_match\n", encoding="utf-8")
    problems = _room_problems({**modules, "agents.search.fake": fake})
    assert any(p.startswith("agents.search.fake (line 1) imports agents.evaluation.arena") for p in problems)


def test_few_modules_directly_in_agents():
    top = sorted(f.name for f in (ROOT / "agents").glob("*.py") if f.name != "__init__.py")
    assert len(top) <= MAX_TOP_MODULES, f"{len(top)} modules directly in agents/: {top}"


def test_old_import_paths_warn_once_and_work():
    """Every moved module answers at its old path (``agents.pimc``) for one release: the same module object, one
    DeprecationWarning naming the new path the first time, none after."""
    import subprocess
    import sys

    from agents.moved import MOVED

    code = f"""
import importlib, sys, warnings
import agents
moved = {MOVED!r}
for old, new in moved.items():
    with warnings.catch_warnings(record=True) as first:
        warnings.simplefilter("always")
        try:
            mod = importlib.import_module(old)
        except ModuleNotFoundError as e:  # an optional extra the new module needs
            assert e.name != old, e
            continue
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        assert importlib.import_module(old) is mod
    assert mod is importlib.import_module(new), old
    assert [str(w.message).split(";")[0] for w in first if w.category is DeprecationWarning] == \\
        [f"{{old}} moved to {{new}}"], (old, [str(w.message) for w in first])
    assert not [w for w in again if w.category is DeprecationWarning], old
print("checked", len(moved))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == f"checked {len(MOVED)}"


def test_old_schnapsen_env_paths_warn_once_and_work():
    """``schnapsen_env.core`` (split into ``rules_core``, ``state_layout`` and ``jit``) answers at its old path for
    one release: every name it exported is the same object as in its new home, one DeprecationWarning naming the new
    modules the first time, none after; importing ``schnapsen_env`` imports nothing of ``agents``."""
    import subprocess
    import sys

    code = """
import importlib, sys, warnings
import schnapsen_env
assert not [m for m in sys.modules if m == "agents" or m.startswith("agents.")], "schnapsen_env imported agents"
from schnapsen_env import jit, rules_core, state_layout
from schnapsen_env.moved import MOVED
old_names = ["F", "K", "O", "REASON", "RULE_FIELDS", "STATE_FIELDS", "STATE_SIZE", "SEARCH_SIZE", "UNSEARCHED",
             "MAX_STOCK", "FRESH", "CLAIM", "CLOSE", "EXCHANGE", "apply", "apply_all", "apply_searched",
             "bitgen_addresses", "check_state", "claim", "counted", "deal", "follow_bits", "last_trick", "lead_bits",
             "marriage_value", "trick_winner", "draw_deal", "random_interval", "deal_rows", "from_game_state",
             "legal_bits", "legal_bits_rows", "masks_into", "observe", "observe_all", "observe_masked",
             "refresh_row", "result_of", "step_rows", "rule_table", "state_vector", "state_vectors", "to_game_state",
             "uncounted", "trailing_zeros", "popcount", "float_bits", "bits_float", "card_points", "suit_of",
             "rank_of", "suit_bits", "drop_stale_cache"]
for old, new in MOVED.items():
    with warnings.catch_warnings(record=True) as first:
        warnings.simplefilter("always")
        mod = importlib.import_module(old)
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        assert importlib.import_module(old) is mod
        from schnapsen_env import core
        from schnapsen_env.core import apply, F
    assert core is mod and apply is rules_core.apply and F is state_layout.F
    assert [str(w.message).split(";")[0] for w in first if w.category is DeprecationWarning] == \\
        [f"{old} moved to {', '.join(new)}"], (old, [str(w.message) for w in first])
    assert not [w for w in again if w.category is DeprecationWarning], old
    for name in old_names:
        homes = [m for m in (rules_core, state_layout, jit) if name in vars(m)]
        assert homes and (getattr(mod, name) is getattr(homes[0], name) or name == "drop_stale_cache"), name
    assert set(old_names) <= set(mod.__all__)
print("checked", len(MOVED))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "checked 1"


def test_stale_numba_cache_dropped_by_the_module_file_name(tmp_path):
    """:func:`schnapsen_env.jit.drop_stale_cache` finds a module's cache files by the name of the module's file
    (``rules_core.*.nbi``, not the old ``core``), drops them when a source it depends on changed, keeps them while
    none did, and leaves other modules' caches alone."""
    from types import SimpleNamespace

    from schnapsen_env import jit

    src = tmp_path / "src"
    src.mkdir()
    own = src / "rules_core.py"
    own.write_text("x = 1\n")
    used = tmp_path / "worlds.py"
    used.write_text("y = 1\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()

    def dispatcher(path):
        code = compile("def f(): pass", str(path), "exec")
        fn = next(c for c in code.co_consts if hasattr(c, "co_filename"))
        return SimpleNamespace(py_func=SimpleNamespace(__code__=fn), stats=SimpleNamespace(cache_path=str(cache)))

    mine, other = cache / "rules_core.apply-10.py312.nbi", cache / "solver_core._search-5.py312.nbi"
    for f in (mine, other):
        f.write_text("")
    d = dispatcher(own)
    jit.drop_stale_cache(d, dispatcher(used))  # no fingerprint yet: dropped
    assert not mine.exists() and other.exists()
    assert (cache / "rules_core.sources-sha256").exists()
    mine.write_text("")
    jit.drop_stale_cache(d, dispatcher(used))  # nothing changed: kept
    assert mine.exists()
    used.write_text("y = 2\n")  # a module whose compiled functions it calls changed: dropped
    jit.drop_stale_cache(d, dispatcher(used))
    assert not mine.exists() and other.exists()
    assert [p.name for p in (ROOT / "schnapsen_env").glob("core.py")] == []


def test_an_import_inside_a_function_says_why():
    """A project module imported inside a function (not at the top) is there for a stated reason, in a comment on
    its line: a heavy or optional dependency it brings (torch, pyspiel, the web framework), never to dodge an import
    cycle."""
    modules = _modules()
    bad = []
    for name, path in modules.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES \
                        and "#" not in lines[node.lineno - 1]:
                    bad.append(f"{name}:{node.lineno}: from {node.module} import ...")
    assert not bad, "imports inside functions without a reason:\n" + "\n".join(bad)


def test_a_moved_module_keeps_its_own_spec_and_answers_as_an_attribute():
    """Importing an old path leaves the new module reloadable under its own name (``importlib.reload``, autoreload),
    and ``agents.pimc`` / ``schnapsen_env.core`` answer as attributes, as before the move."""
    import subprocess
    import sys

    code = """
import importlib, warnings
warnings.simplefilter("ignore", DeprecationWarning)
import agents.search.pimc as new
import agents.pimc
assert new.__spec__.name == "agents.search.pimc" == importlib.util.find_spec("agents.search.pimc").name
new.PIMCAgent = None
assert importlib.reload(new).PIMCAgent is not None
import agents, schnapsen_env
assert agents.rollout is importlib.import_module("agents.search.rollout")
assert schnapsen_env.core.F is importlib.import_module("schnapsen_env.state_layout").F
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def test_importing_the_agents_package_loads_no_torch():
    """``import agents`` (the registry, every agent's class) loads no torch: torch is imported where a policy plays,
    so the env's named opponents, the arena's search agents and the command-line programs start without it."""
    import subprocess
    import sys

    code = "import sys, agents, schnapsen_env; print(sorted(m for m in ('torch',) if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "[]"
