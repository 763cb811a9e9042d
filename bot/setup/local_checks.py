"""The doctor's checks of this machine and the OpenAI account: the key and the models, Chromium,
libopus, davey, the state directories, the web port."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket

from bot.config import Settings
from bot.play.state_dir import StateUnwritable, check_state
from bot.setup.commands import RECORD_FILE
from bot.setup.report import Check, failed, not_checked, passed
from bot.usage.unpriced import any_limit, unpriced
from bot.web.auth import WebConfigError, check_bind
from bot.worlds.browser.settings import BrowserSettings

NO_KEY_FIX = (
    "export OPENAI_API_KEY=… (platform.openai.com → API keys), or set OPENAI_BASE_URL to an "
    "OpenAI-compatible endpoint; it drives his voice, the captain and the openai and agent minds"
)


async def openai_checks(settings: Settings) -> list[Check]:
    """The key is accepted (``GET /v1/models``) and the configured models are among its models."""
    import openai

    cfg = settings.openai
    if cfg.api_key is None and cfg.base_url is None:
        return [
            failed("OpenAI key", "OPENAI_API_KEY is not set", NO_KEY_FIX),
            not_checked("models", "no OpenAI key"),
        ]
    key = cfg.api_key.get_secret_value() if cfg.api_key is not None else "none"
    client = openai.AsyncOpenAI(api_key=key, base_url=cfg.base_url, max_retries=0, timeout=cfg.timeout_s)
    where = str(client.base_url).rstrip("/")
    try:
        page = await client.models.list()
        ids = [m.id for m in page.data]
    except openai.AuthenticationError as exc:
        return [
            failed(
                "OpenAI key",
                f"{where} refused the key (401: {_message(exc)})",
                "set OPENAI_API_KEY to a valid key",
            ),
            not_checked("models", "the key was refused"),
        ]
    except openai.APIConnectionError as exc:
        return [
            failed("OpenAI key", f"cannot reach {where} ({exc})", "check the network, or OPENAI_BASE_URL"),
            not_checked("models", "the endpoint could not be reached"),
        ]
    except openai.APIStatusError as exc:
        return [
            failed(
                "OpenAI key", f"{where} answered {exc.status_code}: {_message(exc)}", "check OPENAI_BASE_URL"
            ),
            not_checked("models", "the model list could not be read"),
        ]
    finally:
        await client.close()
    return [passed("OpenAI key", f"{where} accepts it ({len(ids)} models)"), _models(settings, ids)]


def _message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])[:200]
    return str(exc)[:200]


def _models(settings: Settings, ids: list[str]) -> Check:
    cfg = settings.openai
    # (key, configured model, what it is for, whether it is a realtime model)
    wanted = [
        ("model", cfg.model, "the captain and the openai and agent minds", False),
        ("realtime_model", cfg.realtime_model, "his voice", True),
    ]
    absent = [(key, name, realtime) for key, name, _what, realtime in wanted if name not in ids]
    if not absent:
        return passed("models", "; ".join(f"{name} ({what})" for _k, name, what, _r in wanted))
    found = ", ".join(f"{name} is not one of this key's models" for _k, name, _r in absent)
    fixes = []
    for key, _name, realtime in absent:
        some = [i for i in ids if ("realtime" in i) == realtime][:4]
        fixes.append(f"set [openai] {key} to one that is" + (f" ({', '.join(some)})" if some else ""))
    return failed("models", found, "; ".join(fixes))


def budget_check(settings: Settings) -> list[Check]:
    """With a ``[budget]`` limit set: every configured model has a price for each kind it is
    billed by (else its calls count as nothing against the limit). No limit: no check."""
    if not any_limit(settings.budget):
        return []
    gaps = unpriced(settings)
    if not gaps:
        return [passed("budget prices", "every configured model is priced, so [budget] counts all its calls")]
    return [
        failed(
            "budget prices",
            "; ".join(g.sentence() for g in gaps) + ": its calls count as $0 against [budget]",
            "; ".join(dict.fromkeys(g.fix() for g in gaps)),
        )
    ]


def _executable(configured: str) -> str | None:
    """The program ``configured`` names (a path, or a name looked up on ``PATH``), if it can run."""
    path = configured if os.sep in configured else shutil.which(configured)
    if path is None or not os.path.isfile(path) or not os.access(path, os.X_OK):
        return None
    return path


async def chromium_check(settings: Settings) -> Check:
    """The browser world's Chromium runs (``--version``)."""
    configured = settings.world_settings(BrowserSettings).chromium_path
    path = _executable(configured)
    fix = "install it (Debian/Ubuntu: apt-get install chromium), or set [browser] chromium_path"
    if path is None:
        return failed("Chromium", f"no Chromium at {configured}", fix)
    try:
        proc = await asyncio.create_subprocess_exec(
            path, "--version", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    except (OSError, TimeoutError) as exc:
        return failed("Chromium", f"{path} does not run ({exc})", fix)
    if proc.returncode != 0:
        why = (err or out).decode(errors="replace").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return failed("Chromium", f"{path} does not run ({why[0][:160]})", fix)
    return passed("Chromium", f"{out.decode(errors='replace').strip()[:80]} at {path}")


def opus_check() -> Check:
    from discord import opus

    try:
        version = opus.Decoder.get_opus_version()
    except opus.OpusNotLoaded:
        return failed(
            "libopus",
            "libopus is not loadable",
            "install it (Debian/Ubuntu: apt-get install libopus0); voice needs it",
        )
    return passed("libopus", f"{version} loads")


def davey_check() -> Check:
    try:
        from bot.mouth.receive.dave import DAVEY_RANGE, davey_version_problem
    except ImportError as exc:
        return failed("davey", f"cannot import davey ({exc})", "pip install 'davey>=0.1.7,<0.2'")
    problem = davey_version_problem()
    if problem is not None:
        return failed("davey", problem, f"pip install 'davey{DAVEY_RANGE}'")
    import importlib.metadata

    return passed("davey", f"{importlib.metadata.version('davey')} (needs {DAVEY_RANGE})")


def state_check(settings: Settings) -> Check:
    extra = (
        ("the voice receipt trail", settings.receipt_path),
        ("the command record", settings.state_dir / RECORD_FILE),
    )
    try:
        check_state(settings.journal_dir, settings.event_log, *extra)
    except StateUnwritable as exc:
        return failed("state", str(exc), "fix that path, or point CLANKIE_STATE at a writable directory")
    return passed(
        "state",
        f"journals {settings.journal_dir}, events {settings.event_log}, receipts {settings.receipt_path}",
    )


def web_port_check(settings: Settings) -> Check:
    web = settings.web
    if not web.enabled:
        return passed("web port", "the web surface is off ([web] enabled = false)")
    token = web.token.get_secret_value() if web.token is not None else None
    try:
        check_bind(web.host, token)
    except WebConfigError as exc:
        return failed("web port", str(exc), "set [web] token, or keep [web] host on 127.0.0.1")
    if web.port == 0:
        return passed("web port", f"{web.host}: any free port ([web] port = 0)")
    try:
        addresses = socket.getaddrinfo(web.host, web.port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return failed(
            "web port", f"cannot resolve {web.host} ({exc})", "set [web] host to an address of this machine"
        )
    for family, kind, proto, _name, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the web surface binds
            try:
                probe.bind(address)
            except OSError as exc:
                return failed(
                    "web port",
                    f"{web.host}:{web.port} is taken ({exc.strerror or exc})",
                    "stop what listens there, or set [web] port to a free one",
                )
    return passed("web port", f"{web.host}:{web.port} is free")
