"""`clankie doctor` with `[activity] enabled`: the client secret (never shown), an https
`[web] public_url`, `/healthz` reached through it (a real nginx terminating TLS with a test
certificate authority, trusted through SSL_CERT_FILE), and the Entry Point command Discord holds —
each passing and failing against the fakes."""

from __future__ import annotations

import datetime
import ipaddress
import re
import tomllib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pydantic import SecretStr

from bot.config import Settings
from bot.play.play_host import PlayHost
from bot.setup.activity_checks import activity_checks
from bot.setup.report import Check
from bot.web.app import WebSurface
from bot.web.share_store import ShareStore
from tests.setup.conftest import Setup, line
from tests.web.nginx import Nginx, free_port, running_nginx

ROOT = Path(__file__).resolve().parents[2]
SECRET = "not-a-real-client-secret-7f3a"
WEB_TOKEN = "a-web-token-of-enough-length"


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A test certificate authority and a certificate for 127.0.0.1 it signed: (ca, cert, key)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("clankie test CA"))
        .issuer_name(_name("clankie test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = (folder / "ca.pem", folder / "cert.pem", folder / "key.pem")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return paths


README_SECTION = "## Watch in the call"
README_HOST = "clankie.example.org"
README_WEB = "127.0.0.1:8750"


def readme_section() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index(README_SECTION)
    return readme[start : readme.index("\n## ", start + 1)]


def readme_block(kind: str) -> str:
    """The section's first block of ``kind``: for toml, step 3's configuration (the blocks after
    it add optional settings to it)."""
    blocks = re.findall(rf"```{kind}\n(.*?)```", readme_section(), re.S)
    assert blocks, f"README's {README_SECTION!r} has no {kind} block"
    return str(blocks[0])


@asynccontextmanager
async def https_front(tmp_path: Path, web_port: int) -> AsyncIterator[tuple[Nginx, Path]]:
    """README's "Watch in the call" nginx block as written, on https://127.0.0.1:<port>/ with a
    test certificate, in front of ``web_port``; yields it and the authority that signed it."""
    ca, cert, key = make_certificates(tmp_path)
    port = free_port()
    block = readme_block("nginx")
    for old, new in (
        ("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;"),
        (f"/etc/letsencrypt/live/{README_HOST}/fullchain.pem", str(cert)),
        (f"/etc/letsencrypt/live/{README_HOST}/privkey.pem", str(key)),
        (f"http://{README_WEB}/", f"http://127.0.0.1:{web_port}/"),
    ):
        assert old in block, old
        block = block.replace(old, new)
    async with running_nginx(tmp_path / "nginx", port, block) as nginx:
        yield nginx, ca


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


@pytest.fixture
def activity(setup: Setup) -> Setup:
    """The setup with `[activity] enabled`, the secret in the environment's place, and Activities
    enabled in the (fake) portal."""
    settings = setup.settings
    settings.activity.enabled = True
    settings.activity.client_secret = SecretStr(SECRET)
    settings.web.token = SecretStr(WEB_TOKEN)
    setup.discord.launcher.enable(setup.discord)
    return setup


async def test_everything_in_place_passes_and_the_secret_is_never_shown(
    activity: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = activity.settings
    settings.web.port = free_port()
    async with https_front(tmp_path, settings.web.port) as (nginx, ca):
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))
        settings.web.public_url = f"https://127.0.0.1:{nginx.port}/"
        await activity.sync()
        code, lines = await activity.doctor()
    assert code == 0, lines
    assert line(lines, "client secret") == "✓ client secret: DISCORD_CLIENT_SECRET is set (not shown)"
    assert line(lines, "public URL").startswith(f"✓ public URL: https://127.0.0.1:{nginx.port}/ (")
    assert line(lines, "public URL").endswith(f"URL Mappings: / → 127.0.0.1:{nginx.port})")
    assert line(lines, "Activity reachable") == (
        f"✓ Activity reachable: https://127.0.0.1:{nginx.port}/healthz answers ok (answered by this "
        f"doctor on 127.0.0.1:{settings.web.port} for the check)"
    )
    assert line(lines, "Entry Point command") == (
        "✓ Entry Point command: /launch (type 4) is there: Activities are on for the application"
    )
    assert line(lines, "web token") == (
        "✓ web token: set (not shown): only viewers Discord proved see without it"
    )
    assert SECRET not in "\n".join(lines) and WEB_TOKEN not in "\n".join(lines)
    # README's five lines, for its host and port
    public = f"127.0.0.1:{nginx.port}"
    shown = [
        x.replace(README_HOST, public).replace(README_WEB, f"127.0.0.1:{settings.web.port}")
        for x in readme_section().splitlines()
        if x.startswith("✓ ")
    ]
    assert lines[-6:-1] == shown
    # the doctor's own health answer is gone: the port is free for `clankie run`
    assert f"✓ web port: 127.0.0.1:{settings.web.port} is free" in lines


async def test_the_running_surface_answers_its_own_healthz_through_the_proxy(
    activity: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = activity.settings
    settings.web.port = free_port()
    async with https_front(tmp_path, settings.web.port) as (nginx, ca):
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))
        settings.web.public_url = f"https://127.0.0.1:{nginx.port}/"
        host = PlayHost(settings)
        surface = WebSurface(settings, host, ShareStore())
        await surface.start()  # the real app, with its token and the Activity's routes
        try:
            checks = by_name(await activity_checks(settings))
        finally:
            await surface.close()
            await host.stop()
    reached = checks["Activity reachable"]
    assert reached.ok and reached.found.endswith(
        f"(the surface already listening on 127.0.0.1:{settings.web.port})"
    )


async def test_no_secret_fails_with_where_to_find_it(activity: Setup) -> None:
    activity.settings.activity.client_secret = None
    check = by_name(await activity_checks(activity.settings))["client secret"]
    assert not check.ok and check.found.startswith("DISCORD_CLIENT_SECRET is not set")
    assert check.fix is not None and "OAuth2 → Client Secret" in check.fix


@pytest.mark.parametrize(("token", "why"), [(None, "is not set"), ("short", "is 5 characters")])
async def test_no_or_a_short_web_token_fails(activity: Setup, token: str | None, why: str) -> None:
    activity.settings.web.token = None if token is None else SecretStr(token)
    check = by_name(await activity_checks(activity.settings))["web token"]
    assert not check.ok and why in check.found and check.fix is not None and "16 characters" in check.fix


@pytest.mark.parametrize("url", [None, "http://clankie.example.org/"])
async def test_a_missing_or_plain_http_public_url_fails_and_reachability_is_not_checked(
    activity: Setup, url: str | None
) -> None:
    activity.settings.web.public_url = url
    checks = by_name(await activity_checks(activity.settings))
    assert not checks["public URL"].ok
    assert ("is not set" if url is None else "is not an https address") in checks["public URL"].found
    assert checks["Activity reachable"].found == "not checked: no https [web] public_url"


async def test_an_unreachable_or_untrusted_public_url_fails(
    activity: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = activity.settings
    settings.web.port = free_port()
    settings.web.public_url = f"https://127.0.0.1:{free_port()}/"  # nothing listens there
    check = by_name(await activity_checks(settings))["Activity reachable"]
    assert not check.ok and "cannot be reached" in check.found
    assert check.fix == (
        f"point the proxy or tunnel for {settings.web.public_url} at this machine's web port "
        f"(127.0.0.1:{settings.web.port})"
    )
    async with https_front(tmp_path, settings.web.port) as (nginx, _ca):
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "cert.pem"))  # not the authority
        settings.web.public_url = f"https://127.0.0.1:{nginx.port}/"
        check = by_name(await activity_checks(settings))["Activity reachable"]
    assert not check.ok and "its certificate is not trusted" in check.found


async def test_a_proxy_that_leads_elsewhere_fails(
    activity: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nginx in front of another port than [web] port: something answers, but not ok."""
    settings = activity.settings
    settings.web.port = free_port()
    async with https_front(tmp_path, free_port()) as (nginx, ca):
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))
        settings.web.public_url = f"https://127.0.0.1:{nginx.port}/"
        check = by_name(await activity_checks(settings))["Activity reachable"]
    assert not check.ok and check.found.endswith("answered 502, not the web surface's ok")


async def test_no_entry_point_command_says_to_enable_activities(setup: Setup) -> None:
    setup.settings.activity.enabled = True  # but not enabled in the portal
    check = by_name(await activity_checks(setup.settings))["Entry Point command"]
    assert not check.ok and "no Entry Point command" in check.found
    assert check.fix is not None and "Activities → Settings: Enable Activities" in check.fix
    setup.settings.discord.token = None
    check = by_name(await activity_checks(setup.settings))["Entry Point command"]
    assert check.found == "not checked: no token"


async def test_with_the_activity_off_the_doctor_checks_none_of_it(setup: Setup) -> None:
    assert await activity_checks(setup.settings) == []


async def test_the_global_commands_check_does_not_count_the_entry_point_as_foreign(activity: Setup) -> None:
    """Without a test server the doctor compares the global commands; Discord's Entry Point is
    among them after `clankie sync --global` and is not "not in this code"."""
    from bot.app import sync_once

    settings = activity.settings
    settings.discord.test_guild_id = None
    assert await sync_once(settings, activity.discord.token, global_=True) == 0
    assert 4 in {c["type"] for c in activity.discord.commands[None]}
    code, lines = await activity.doctor()
    assert line(lines, "slash commands") == (
        "✓ slash commands: every server (global) has /play, /share, /clankie, /voice as this code declares"
    )


def test_the_readme_configuration_turns_the_activity_on() -> None:
    settings = Settings.model_validate(tomllib.loads(readme_block("toml")))
    assert settings.activity.enabled and settings.web.public_url == f"https://{README_HOST}/"
    assert settings.web.token is not None and len(settings.web.token.get_secret_value()) >= 16
    assert "export DISCORD_CLIENT_SECRET=" in readme_block("sh")
