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
