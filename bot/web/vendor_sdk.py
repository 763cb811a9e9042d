"""Discord's Embedded App SDK, vendored (docs/architecture.md §10 "The Activity").

The Activity page loads ``@discord/embedded-app-sdk`` as static ES modules from the web surface
itself: Discord's proxy lets a page reach only its own origin, so no CDN. The package's built
``output/`` is a tree of plain ES modules with relative imports only; its ``*.mjs`` files and its
license are copied to ``bot/web/static/discord-sdk/``, beside ``SHA256SUMS``, which names the
version and the sha256 of every file (a test checks them).

``make vendor`` (``python -m bot.web.vendor_sdk``) refreshes the copy from the npm registry with
npm's own client (``npm pack``, which checks the registry's integrity hash), at :data:`VERSION`,
the one place the version is pinned.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "@discord/embedded-app-sdk"
VERSION = "2.5.0"
TARGET = Path(__file__).parent / "static" / "discord-sdk"
MANIFEST = "SHA256SUMS"
LICENSE = "LICENSE.md"
ENTRY = "index.mjs"  # the page imports it from a versioned folder (bot/web/activity_assets.py)


class VendorError(Exception):
    """The SDK could not be vendored or its copy does not match its manifest (a sentence)."""


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def vendored_files(root: Path) -> list[Path]:
    """Every file of the copy but the manifest, sorted by path."""
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != MANIFEST)


def write_manifest(root: Path, version: str) -> None:
    lines = [f"# {PACKAGE}@{version} from the npm registry (output/*.mjs and {LICENSE})"]
    lines += [f"{sha256_of(p)}  {p.relative_to(root).as_posix()}" for p in vendored_files(root)]
    (root / MANIFEST).write_text("\n".join(lines) + "\n", encoding="utf-8")


def check(root: Path = TARGET) -> str:
    """The vendored version, once every file matches the manifest and the manifest names every
    file; otherwise a :class:`VendorError` naming the first file that does not."""
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise VendorError(f"{manifest}: missing; run `make vendor`")
    lines = manifest.read_text(encoding="utf-8").splitlines()
    header = lines[0] if lines else ""
    prefix = f"# {PACKAGE}@"
    if not header.startswith(prefix):
        raise VendorError(f"{manifest}: the first line should name {PACKAGE}@<version>")
    version = header[len(prefix) :].split(" ", 1)[0]
    listed: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise VendorError(f"{manifest}:{number}: expected '<sha256>  <path>'")
        listed[name] = digest
    present = {p.relative_to(root).as_posix(): p for p in vendored_files(root)}
    for name, digest in listed.items():
        if name not in present:
            raise VendorError(f"{root / name}: listed in {MANIFEST} but missing")
        if sha256_of(present[name]) != digest:
            raise VendorError(f"{root / name}: sha256 differs from {MANIFEST}")
    unlisted = sorted(set(present) - set(listed))
    if unlisted:
        raise VendorError(f"{root / unlisted[0]}: not listed in {MANIFEST}")
    if ENTRY not in listed or LICENSE not in listed:
        raise VendorError(f"{manifest}: the copy lacks {ENTRY} or {LICENSE}")
    return version


def vendor(version: str = VERSION, target: Path = TARGET) -> int:
    """Fetch ``PACKAGE@version`` with ``npm pack`` and replace ``target`` with its ES modules
    and license; the number of files copied."""
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError("npm is not on PATH (Node 18+ with npm is needed to vendor the SDK)")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [npm, "pack", f"{PACKAGE}@{version}", "--pack-destination", tmp, "--silent"],
            capture_output=True,
            text=True,
            check=False,
        )
        tarballs = list(Path(tmp).glob("*.tgz"))
        if done.returncode != 0 or len(tarballs) != 1:
            raise VendorError(f"npm pack {PACKAGE}@{version} failed: {done.stderr.strip()[-400:]}")
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(tarballs[0]) as tar:
            tar.extractall(unpacked, filter="data")
        output = unpacked / "package" / "output"
        if not (output / ENTRY).is_file():
            raise VendorError(f"{PACKAGE}@{version} has no output/{ENTRY}")
        fresh = target.with_name(target.name + ".new")
        shutil.rmtree(fresh, ignore_errors=True)
        copied = 0
        for source in sorted(output.rglob("*.mjs")):
            dest = fresh / source.relative_to(output)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
            copied += 1
        shutil.copyfile(unpacked / "package" / LICENSE, fresh / LICENSE)
        write_manifest(fresh, version)
        shutil.rmtree(target, ignore_errors=True)
        fresh.rename(target)
    check(target)
    return copied


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"vendor {PACKAGE} into {TARGET}")
    parser.add_argument("--check", action="store_true", help="only check the copy against its manifest")
    args = parser.parse_args(argv)
    try:
        if args.check:
            print(f"{PACKAGE}@{check()}: every file matches {MANIFEST}")
        else:
            count = vendor()
            print(f"{PACKAGE}@{VERSION}: {count} modules and {LICENSE} in {TARGET}")
    except VendorError as exc:
        print(f"vendor: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
