"""The journal core never imports the original service's dialect: journal/original/ builds on
the core (journal/*.py) and registers nothing itself; journal/__init__.py, the one junction,
registers both dialects. Checked on the source, so an import inside a function or under
TYPE_CHECKING counts too — no late import may dodge a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import journal
from journal import dialect

PACKAGE = Path(journal.__file__).parent
ROOT = PACKAGE.parent
JUNCTION = PACKAGE / "__init__.py"
ORIGINAL = "journal.original"


def module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module (and ``module.name``) a module's source imports, absolute."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _imports(path: Path) -> set[str]:
    return imports_of(path.read_text(), module_of(path), path.name == "__init__.py")


def _is_original(name: str) -> bool:
    return name == ORIGINAL or name.startswith(ORIGINAL + ".")


def test_no_core_module_imports_the_original_dialect() -> None:
    core = sorted(PACKAGE.glob("*.py"))
    assert PACKAGE / "evaluate.py" in core and PACKAGE / "journeys.py" in core and len(core) > 15
    offending = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in core
        if path != JUNCTION
        for name in sorted(_imports(path))
        if _is_original(name)
    ]
    assert offending == []
    assert f"{ORIGINAL}.dialect.ORIGINAL" in _imports(JUNCTION)  # the junction is where it is registered


def test_the_original_dialect_builds_on_core_modules_only() -> None:
    """journal/original/ imports core modules by name, never the package's own names (which
    journal/__init__.py is still assembling when it imports journal/original/)."""
    files = sorted((PACKAGE / "original").glob("*.py"))
    assert len(files) >= 10
    core_modules = {f"journal.{p.stem}" for p in PACKAGE.glob("*.py") if p != JUNCTION}
    offending = []
    for path in files:
        for name in sorted(_imports(path)):
            if not name.startswith("journal") or _is_original(name):
                continue
            if name == "journal" or not any(name == m or name.startswith(m + ".") for m in core_modules):
                offending.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offending == []


def test_both_dialects_are_registered_once_ours_the_default() -> None:
    names = [d.name for d in dialect.registered()]
    assert names == ["clankie", "original"]
    assert [d.name for d in dialect.registered() if d.claims is None] == ["clankie"]


def test_the_check_sees_every_way_of_importing() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from journal.original.schema import TurnV2\n"
        "def later():\n    import journal.original.dialect\n"
        "from .original import translate\n"
        "from . import ours\n"
    )
    names = imports_of(source, "journal.report")
    assert {n for n in names if _is_original(n)} == {
        "journal.original.schema", "journal.original.schema.TurnV2", "journal.original.dialect",
        "journal.original", "journal.original.translate",
    }  # fmt: skip
    assert "journal.ours" in names
