"""The layout's rules, checked on the source (issue "A codebase a newcomer can change"): no import cycle between
the modules of ``schnapsen_env`` and ``agents``, and no private name imported from another module."""

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
