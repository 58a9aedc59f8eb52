"""The rooms' layout: no import circles, and no import across a forbidden arrow.

Every module of engine/, protocol/, server/ and client/ is parsed with ``ast``
(nothing is imported); every ``import`` statement counts, at module level or
inside a function, since a lazy import is still a dependency. The arrows
(docs/architecture.md): engine/ imports nothing of ours outside engine/,
protocol/ nothing outside protocol/, server/ nothing from client/, client/
nothing from server/.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ROOMS = ("engine", "protocol", "server", "client")
#: Our top-level packages: an import of anything else is a library's.
OURS = (*ROOMS, "scripts", "tests")
#: room -> the rooms (of ours) it must never import.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "engine": ("protocol", "server", "client", "scripts", "tests"),
    "protocol": ("engine", "server", "client", "scripts", "tests"),
    "server": ("client", "scripts", "tests"),
    "client": ("server", "scripts", "tests"),
}
#: Libraries the pure engine must not import: no I/O, no clocks, no trio.
ENGINE_FORBIDDEN_LIBRARIES = ("time", "datetime", "trio", "socket", "asyncio", "threading",
                              "os", "io", "sqlite3", "logging", "secrets")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for room in ROOMS:
        for path in sorted((ROOT / room).rglob("*.py")):
            found[_module_name(path)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """``(imported module, line)`` for every import in the file, resolved to a module
    of ours where one exists (``from pkg import sub`` names ``pkg.sub``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield (candidate if candidate in MODULES else base), node.lineno


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for target, _ in _imports(name, path):
            while target and target not in MODULES:   # a.b.c (an attribute) -> a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_room_has_modules() -> None:
    for room in ROOMS:
        assert any(name.split(".")[0] == room for name in MODULES), room


def test_no_import_circles() -> None:
    circles = _circles(_graph())
    assert not circles, f"import circles: {[sorted(c) for c in circles]}"


def test_the_engine_has_no_import_circle() -> None:
    engine = {n: {t for t in ts if t.startswith("engine")} for n, ts in _graph().items()
              if n.startswith("engine")}
    assert _circles(engine) == []


@pytest.mark.parametrize("room", ROOMS)
def test_no_import_crosses_a_forbidden_arrow(room: str) -> None:
    crossings = []
    for name, path in MODULES.items():
        if name.split(".")[0] != room:
            continue
        for target, line in _imports(name, path):
            top = target.split(".")[0]
            if top in FORBIDDEN[room]:
                crossings.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not crossings, "\n".join(crossings)


def test_the_engine_imports_no_clock_no_io_and_no_trio() -> None:
    found = [f"{path.relative_to(ROOT)}:{line} imports {target}"
             for name, path in MODULES.items() if name.split(".")[0] == "engine"
             for target, line in _imports(name, path)
             if target.split(".")[0] in ENGINE_FORBIDDEN_LIBRARIES]
    assert not found, "\n".join(found)


def test_the_circle_finder_finds_a_circle_and_the_parser_sees_lazy_imports(tmp_path) -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        frozenset({"a", "b", "c"})]
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from engine import core\n    import server.app\n"
                     "from .rules import WarState\n")
    assert sorted(t for t, _ in _imports("engine.war.probe", probe)) == [
        "engine.core", "engine.war.rules", "server.app"]
