"""The worlds are the bottom layer of the character: nothing under bot/worlds imports the play
loop (bot.play) or anything above it. Checked on the source, so an import inside a function or
under TYPE_CHECKING counts too."""

from __future__ import annotations

import ast
from pathlib import Path

import bot.worlds

ABOVE = (
    "bot.play",
    "bot.captain",
    "bot.mouth",
    "bot.web",
    "bot.tools",
    "bot.app",
    "bot.character",
    "bot.cli",
    "cogs",
)
WORLDS = Path(bot.worlds.__file__).parent
ROOT = WORLDS.parent.parent


def module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module (and imported name) a module's source imports, absolute."""
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


def _above(name: str) -> bool:
    return any(name == top or name.startswith(top + ".") for top in ABOVE)


def test_no_module_under_bot_worlds_imports_the_play_loop_or_anything_above_it() -> None:
    files = sorted(WORLDS.rglob("*.py"))
    assert len(files) > 20 and WORLDS / "factory.py" in files  # the walk sees the whole tree
    offending = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files
        for name in sorted(imports_of(path.read_text(), module_of(path), path.name == "__init__.py"))
        if _above(name)
    ]
    assert offending == []


def test_the_check_sees_every_way_of_importing() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from bot.play.play_host import StartRequest\n"
        "def later():\n    import bot.mouth.receive\n"
        "from ... import play\n"
        "from ...web import app\n"
        "from .. import sandbox\n"
        "from .model_2048 import Board\n"
    )
    names = imports_of(source, "bot.worlds.browser.probe")
    assert {n for n in names if _above(n)} == {
        "bot.play.play_host", "bot.play.play_host.StartRequest", "bot.mouth.receive", "bot.play", "bot.web", "bot.web.app",
    }  # fmt: skip
    assert {"bot.worlds.sandbox", "bot.worlds.browser.model_2048.Board", "bot"} <= names
