"""The vendored Embedded App SDK (bot/web/static/discord-sdk/): every file matches its sha256
manifest at the pinned version, the tree imports nothing by a bare name, and it ships in the
package."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from bot.web import vendor_sdk
from bot.web.vendor_sdk import MANIFEST, TARGET, VERSION, VendorError, check

ROOT = Path(__file__).resolve().parents[2]
IMPORT = re.compile(
    r"""(?:^|\s)(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]"""
)


def test_every_vendored_file_matches_its_checksum_at_the_pinned_version() -> None:
    assert check(TARGET) == VERSION == "2.5.0"
    assert (TARGET / "LICENSE.md").read_text().startswith("MIT License")


def test_a_changed_missing_or_unlisted_file_is_named(tmp_path: Path) -> None:
    copy = tmp_path / "sdk"
    shutil.copytree(TARGET, copy)
    (copy / "Discord.mjs").write_bytes((copy / "Discord.mjs").read_bytes() + b"\n")
    with pytest.raises(VendorError, match=r"Discord\.mjs: sha256 differs from SHA256SUMS"):
        check(copy)
    shutil.copy(TARGET / "Discord.mjs", copy / "Discord.mjs")
    (copy / "extra.mjs").write_text("export {};\n")
    with pytest.raises(VendorError, match=r"extra\.mjs: not listed in SHA256SUMS"):
        check(copy)
    (copy / "extra.mjs").unlink()
    (copy / "error.mjs").unlink()
    with pytest.raises(VendorError, match=r"error\.mjs: listed in SHA256SUMS but missing"):
        check(copy)


def test_the_tree_imports_only_by_relative_paths_that_exist() -> None:
    modules = sorted(TARGET.rglob("*.mjs"))
    assert len(modules) == 70
    for module in modules:
        for match in IMPORT.finditer(module.read_text(encoding="utf-8")):
            spec = match.group(1) or match.group(2)
            assert spec.startswith("./") or spec.startswith("../"), f"{module.name}: bare import {spec!r}"
            assert (module.parent / spec).resolve().is_file(), f"{module.name}: {spec} is missing"


def test_the_package_ships_the_sdk_and_the_page() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = config["tool"]["setuptools"]["package-data"]["bot.web"]
    assert "static/*" in data and "static/discord-sdk/**/*" in data
    assert (ROOT / "Makefile").read_text().count("bot.web.vendor_sdk") == 1
    assert vendor_sdk.ENTRY == "index.mjs" and (TARGET / MANIFEST).is_file()
