"""No import circle wider than one package (docs/architecture.md §2, "What may import what").

The graph is read from the source of every module under bot/, cogs/ and journal/ with ``ast``:
every import counts, at the top of a module or inside a function, except under ``if
TYPE_CHECKING:`` (never run). Importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py``
first, so it is an edge to each of them too, save to the packages that hold the importing module
(those ran before it, whatever it imports; ``import a`` or ``from a import name`` still counts).
A circle among the modules of one package (a package's ``__init__`` and its own modules) is the
package's business; a circle through modules of two packages or more fails, and is printed
module by module.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOTS = ("bot", "cogs", "journal")


def module_files(repo: Path = REPO) -> dict[str, Path]:
    """Every module under the roots, by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for root in ROOTS:
        for path in sorted((repo / root).rglob("*.py")):
            parts = path.relative_to(repo).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` but those under an ``if TYPE_CHECKING:`` (its ``else`` runs)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def imported_names(source: str, module: str, is_package: bool) -> set[str]:
    """Every dotted name a module's source imports when it runs, made absolute: ``from a import b``
    gives ``a.b`` (``b`` may be a module or a name in ``a``)."""
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    for node in _nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _ancestors(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def _runs(name: str, importer: str, known: Mapping[str, object]) -> set[str]:
    """The modules of the tree that importing ``name`` from ``importer`` runs: the module named
    (the longest known prefix of the name) and every package above it but ``importer``'s own."""
    parts = name.split(".")
    prefixes = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
    target = next((p for p in prefixes if p in known), None)
    if target is None:
        return set()
    return {target} | (_ancestors(target) & set(known)) - _ancestors(importer)


def import_graph(sources: Mapping[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module → the modules of the tree it imports, from ``{module: (source, is_package)}``."""
    graph: dict[str, set[str]] = {}
    for module, (source, is_package) in sources.items():
        edges: set[str] = set()
        for name in imported_names(source, module, is_package):
            edges |= _runs(name, module, sources)
        edges.discard(module)
        graph[module] = edges
    return graph


def package_of(module: str, packages: set[str]) -> str:
    return module if module in packages else module.rpartition(".")[0]


def _components(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(sorted(component))
    return found


def _circle_through(graph: Mapping[str, set[str]], members: set[str], src: str, dst: str) -> list[str]:
    """The shortest path ``dst → … → src`` inside ``members``, closed by the edge ``src → dst``."""
    came_from: dict[str, str] = {dst: dst}
    queue = deque([dst])
    while queue:
        node = queue.popleft()
        if node == src:
            break
        for nxt in sorted(graph[node] & members):
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    path = [src]
    while path[-1] != dst:
        path.append(came_from[path[-1]])
    return [src, *reversed(path)]


def circles_across_packages(graph: Mapping[str, set[str]], packages: set[str]) -> list[list[str]]:
    """One circle for each group of modules that import one another across packages: the
    shortest through an import from one package into another."""
    circles = []
    for component in _components(graph):
        members = set(component)
        if len({package_of(m, packages) for m in members}) < 2:
            continue
        crossing = min(
            (src, dst)
            for src in component
            for dst in graph[src] & members
            if package_of(src, packages) != package_of(dst, packages)
        )
        circles.append(_circle_through(graph, members, *crossing))
    return circles


@cache  # read once for the tests of this module; none changes it
def _tree() -> tuple[dict[str, set[str]], set[str]]:
    files = module_files()
    sources = {module: (path.read_text(), path.name == "__init__.py") for module, path in files.items()}
    packages = {module for module, (_source, is_package) in sources.items() if is_package}
    return import_graph(sources), packages


def test_no_import_circle_is_wider_than_one_package() -> None:
    graph, packages = _tree()
    assert {
        "bot.config",
        "bot.worlds.factory",
        "bot.play.minds.factory",
        "cogs.play",
        "journal.schema",
    } <= set(graph)  # the walk sees the whole tree
    circles = circles_across_packages(graph, packages)
    assert not circles, "import circles across packages:\n" + "\n".join(" → ".join(c) for c in circles)


def test_the_graph_sees_every_import_that_runs_and_none_that_does_not() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import typing\n"
        "if TYPE_CHECKING:\n    from a.b.hidden import Shape\n"
        "if typing.TYPE_CHECKING:\n    import a.b.hidden\n"
        "else:\n    from a.b import shown\n"
        "def later():\n    import a.c.deep\n"
        "from ..c import near\n"
        "from . import sibling\n"
        "from a import TOP\n"
    )
    modules = ["a", "a.b", "a.b.hidden", "a.b.shown", "a.b.sibling", "a.b.me", "a.c", "a.c.deep", "a.c.near"]
    sources = {m: (source if m == "a.b.me" else "", m in ("a", "a.b", "a.c")) for m in modules}
    graph = import_graph(sources)
    assert graph["a.b.me"] == {"a", "a.b.shown", "a.b.sibling", "a.c", "a.c.deep", "a.c.near"}


def test_a_circle_across_packages_is_found_and_printed_and_one_inside_a_package_is_not() -> None:
    packages = {"p", "q"}
    inside = {"p": {"p.one"}, "p.one": {"p.two"}, "p.two": {"p"}, "q": set(), "q.x": set()}
    assert circles_across_packages(inside, packages) == []
    across = {**inside, "p.two": {"p", "q.x"}, "q.x": {"q.y"}, "q.y": {"p.one"}}
    assert circles_across_packages(across, packages) == [["p.two", "q.x", "q.y", "p.one", "p.two"]]


def test_the_configuration_imports_nothing_of_the_tree_and_the_mouth_only_the_settled_turn_of_play() -> None:
    graph, _packages = _tree()
    assert graph["bot.config"] == set()  # below both registries: they import it, never the other way
    mouth_to_play = {dst for src, dsts in graph.items() if src.startswith("bot.mouth") for dst in dsts}
    assert {m for m in mouth_to_play if m.startswith("bot.play")} == {"bot.play", "bot.play.settled_turn"}
