import io
import json
import logging

from bot import logs


def test_secrets_are_redacted_by_key_and_by_value_in_json_logs():
    buf = io.StringIO()
    logs.configure(json=True, stream=buf)
    logs.register_secrets(["Bot-Token-123456", None, "short"])
    logger = logs.get_logger("test")
    logger.info(
        "connecting",
        token="anything",
        api_key="sk-x",
        url="wss://x?auth=Bot-Token-123456",
        nested={"password": "p", "ok": 1},
    )
    logging.getLogger("discord.http").warning("header Authorization: Bot Bot-Token-123456")
    lines = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert len(lines) == 2
    first, second = lines
    assert first["token"] == "[redacted]" and first["api_key"] == "[redacted]"
    assert first["url"] == "wss://x?auth=[redacted]"
    assert first["nested"] == {"password": "[redacted]", "ok": 1}
    assert "Bot-Token-123456" not in buf.getvalue()
    assert second["logger"] == "discord.http" and "[redacted]" in second["event"]


def test_console_mode_is_readable_text():
    buf = io.StringIO()
    logs.configure(json=False, stream=buf)
    logs.get_logger("t").info("hello", turn=3)
    out = buf.getvalue()
    assert "hello" in out and "turn=3" in out
    assert not out.lstrip().startswith("{")


def test_secrets_in_tracebacks_are_redacted_in_both_renderers():
    for as_json in (True, False):
        buf = io.StringIO()
        logs.configure(json=as_json, stream=buf)
        logs.register_secrets(["sk-live-abcdef123456"])
        try:
            raise RuntimeError("upstream refused key sk-live-abcdef123456")
        except RuntimeError:
            logs.get_logger("t").exception("call failed")
            logging.getLogger("openai").exception("stdlib call failed")
        out = buf.getvalue()
        assert "sk-live-abcdef123456" not in out
        assert out.count("RuntimeError: upstream refused key [redacted]") == 2


def test_redaction_processor_on_its_own():
    logs.register_secrets(["discord-token-value-xyz"])
    event = {
        "event": "joined with discord-token-value-xyz",
        "DISCORD_TOKEN": "abc",
        "Api-Key": None,
        "args": ("discord-token-value-xyz", 3),
        "turn": 7,
    }
    out = logs.redact_secrets(None, "info", event)
    assert out == {
        "event": "joined with [redacted]",
        "DISCORD_TOKEN": "[redacted]",
        "Api-Key": None,
        "args": ("[redacted]", 3),
        "turn": 7,
    }


def test_flags_named_like_secrets_stay_readable():
    buf = io.StringIO()
    logs.configure(json=True, stream=buf)
    logs.get_logger("t").info(
        "web", token_required=True, api_key=None, nested={"token_set": False, "token": "x"}
    )
    line = json.loads(buf.getvalue())
    assert line["token_required"] is True and line["api_key"] is None
    assert line["nested"] == {"token_set": False, "token": "[redacted]"}


def test_secrets_of_any_length_are_redacted():
    buf = io.StringIO()
    logs.configure(json=True, stream=buf)
    logs.register_secrets(["k9z", "k9z-longer-secret"])
    logs.get_logger("t").info("calling", url="https://x/?a=k9z&b=k9z-longer-secret")
    line = json.loads(buf.getvalue())
    assert line["url"] == "https://x/?a=[redacted]&b=[redacted]"  # the longer one went whole


def test_a_tool_name_a_model_made_up_is_escaped_in_the_console_line():
    import asyncio

    from bot.tools.context import ToolContext, ToolServices
    from bot.tools.defaults import build_registry

    buf = io.StringIO()
    logs.configure(json=False, stream=buf)
    context = ToolContext(ToolServices(), "captain")
    for name in ("look\x00\x1b[2J\u202eevil\nfake_line level=error", "peek\x00\x1b[2J"):
        result = asyncio.run(build_registry().dispatch(name, "{}", context))
        assert result.is_error
    out = buf.getvalue()
    assert out.count("\n") == 2  # one line each, however the name was made
    for raw in ("\x00", "\x1b", "\u202e"):
        assert raw not in out
    assert "tool=peek\\x00\\x1b[2J" in out
    assert "\\u202eevil\\\\x0afake_line level=error" in out  # quoted (spaces): repr doubles the \\


def test_tracebacks_keep_their_lines_when_values_are_escaped():
    buf = io.StringIO()
    logs.configure(json=False, stream=buf)
    try:
        raise ValueError("bad\x07value")
    except ValueError:
        logs.get_logger("t").exception("failed", what="a\tb")
    out = buf.getvalue()
    assert "what=a\\x09b" in out and "Traceback (most recent call last):\n" in out


def test_repeated_stdlib_errors_are_held_back_and_counted():
    buf = io.StringIO()
    logs.configure(json=True, stream=buf)
    clock = [0.0]
    for handler in logging.getLogger().handlers:
        for filt in handler.filters:
            if isinstance(filt, logs.RepeatFilter):
                filt.throttle.clock = lambda: clock[0]
    flood = logging.getLogger("asyncio")
    for _ in range(5000):
        flood.error("socket.accept() out of system resource", exc_info=OSError(24, "Too many open files"))
    logging.getLogger("aiohttp.server").error("something else")
    lines = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert len(lines) == logs.REPEAT_BURST + 1
    clock[0] += logs.REPEAT_WINDOW_S
    flood.error("socket.accept() out of system resource", exc_info=OSError(24, "Too many open files"))
    last = json.loads(buf.getvalue().splitlines()[-1])
    assert f"and {5000 - logs.REPEAT_BURST} more like it held back" in last["event"]
