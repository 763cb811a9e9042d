"""Voice benchmark (DESIGN §14): CPU time of the mouth's audio pipeline for 10 speakers.

The whole receive path, with and without DAVE (target ≤ 2% of real time with it): per 20 ms,
ten speakers' datagrams as Discord forwards them (real Opus, DAVE-encrypted by real ``davey``
sessions of a real MLS group — formed with the test gateway's external sender — then sealed
with the transport cipher) go through ``ReceivePipeline.feed`` (RTP parse, transport decrypt,
DAVE decrypt with the bot's session, Opus decode straight to 24 kHz mono) into the room mixer,
and the playback side below runs as well. Without DAVE the same frames are sent as plain Opus
under protocol 0. The Opus packets are what discord.py's encoder makes of a tone plus noise
per speaker (48 kHz stereo, 128 kbit/s, fullband CELT): dearer to decode than a client's
voice-mode packets.

The bridge alone, per 20 ms: ten speakers' 24 kHz mono frames (as the decoder gives them) are
mixed into one frame for the model with per-speaker energy recorded for attribution (a user
turn's dominant speaker is asked for every 2 s), and 20 ms of model audio goes through the
playback side (24 kHz mono → 48 kHz stereo, pushed as 100 ms deltas) and out as one 3840-byte
frame. Measured with `time.process_time` (this process's CPU), best of three runs of 30 s of
audio.

Opus decoding is also shown on its own: ten speakers at one decode each per 20 ms, with the
receive path's decoder (24 kHz mono) and with discord.py's own (48 kHz stereo).

The whole path is measured a second time at 64 kbit/s, a voice channel's default bitrate (what
a person's client encodes at unless the server raised it); libopus makes hybrid fullband
packets (TOC config 15) of the tone plus noise then, the kind a client sends for speech (a
client packet shown in serenity-rs/songbird#22 starts with 0x7B: config 15, mono). The check
stays on the dearer 128 kbit/s packets; the 64 kbit/s figure is printed beside it. Last, the
floor: what decoding alone takes of the 2%, and what is left for everything else.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))
sys.path.append(str(HERE))

import davey  # noqa: E402
import numpy as np  # noqa: E402
from _common import Report  # noqa: E402

from bot.mouth.audio import DISCORD_FRAME_SAMPLES, FRAME_MS, MODEL_FRAME_SAMPLES, RoomMixer  # noqa: E402
from bot.mouth.playback import PlaybackBuffer  # noqa: E402
from bot.mouth.receive.opus_decoders import Decoder, ensure_opus_loaded  # noqa: E402
from bot.mouth.receive.pipeline import ReceivePipeline  # noqa: E402
from bot.mouth.receive.ssrc_map import SsrcMap  # noqa: E402
from bot.mouth.receive.transport import XCHACHA_MODE  # noqa: E402
from tests.fakes.discord.dave_external_sender import ExternalSender, form_group  # noqa: E402
from tests.mouth.receive.wire import KEY, DiscordSender  # noqa: E402

SPEAKERS = 10
SECONDS = 30
TARGET = 0.02
DELTA_FRAMES = 5  # model audio arrives as 100 ms deltas
BOT, CHANNEL = 900, 5
DISTINCT_PACKETS = 100  # Opus packets encoded per speaker, cycled (decode cost does not depend on order)
BOT_KBPS = 128  # discord.py's Encoder default: what a bot sends, dearer to decode
CHANNEL_KBPS = 64  # a voice channel's default bitrate: what people's clients send


def speaker_signal(
    rng: np.random.Generator, user: int, count: int, frame_samples: int, rate: int
) -> np.ndarray:
    """A voice-like signal per speaker: a tone plus noise, different for each."""
    n = np.arange(count * frame_samples, dtype=np.float64)
    signal = 4000 * np.sin(2 * np.pi * (150 + 40 * user) * n / rate) + rng.normal(0, 800, len(n))
    return signal.clip(-32768, 32767).astype("<i2")


def speaker_frames(rng: np.random.Generator, user: int, count: int) -> list[bytes]:
    """What a speaker's client encodes: 20 ms frames of 48 kHz stereo s16le."""
    pcm = np.repeat(speaker_signal(rng, user, count, DISCORD_FRAME_SAMPLES, 48_000), 2)
    return [pcm[i * 1920 : (i + 1) * 1920].tobytes() for i in range(count)]


def decoded_frames(rng: np.random.Generator, user: int, count: int) -> list[bytes]:
    """What the receive path hands the mixer: 20 ms frames of 24 kHz mono s16le."""
    pcm = speaker_signal(rng, user, count, MODEL_FRAME_SAMPLES, 24_000)
    return [pcm[i * MODEL_FRAME_SAMPLES : (i + 1) * MODEL_FRAME_SAMPLES].tobytes() for i in range(count)]


def run_once(frames: list[list[bytes]], model_delta: bytes) -> tuple[float, int]:
    mixer = RoomMixer()
    playback = PlaybackBuffer()
    ticks = len(frames[0])
    attributed = 0
    start = time.process_time()
    for tick in range(ticks):
        for user in range(SPEAKERS):
            mixer.feed(user, frames[user][tick])
        mixer.pull()
        if tick % DELTA_FRAMES == 0:
            playback.push(f"item_{tick // 500}", model_delta)
        playback.read()
        if tick % 100 == 99:  # a user turn every 2 s
            item = f"turn_{tick}"
            mixer.tracker.speech_started(item, (tick - 99) * FRAME_MS)
            attributed += mixer.tracker.speech_stopped(item, (tick + 1) * FRAME_MS) is not None
    return time.process_time() - start, attributed


def decode_cpu_per_frame(decoder: object, packets: list[bytes]) -> float:
    """Best of three: CPU seconds per decoded 20 ms packet."""
    decode = decoder.decode  # type: ignore[attr-defined]
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for packet in packets:
            decode(packet, fec=False)
        best = min(best, (time.process_time() - start) / len(packets))
    return best


def opus_packets(frames: list[bytes], kbps: int = BOT_KBPS) -> list[bytes]:
    from discord import opus

    encoder = opus.Encoder()
    encoder.set_bitrate(kbps)
    return [encoder.encode(frame, DISCORD_FRAME_SAMPLES) for frame in frames]


def dave_group(count: int) -> tuple[davey.DaveSession, list[davey.DaveSession]]:
    """The bot and ``count`` speakers in one real MLS group, joined through an external sender."""
    bot = davey.DaveSession(1, BOT, CHANNEL)
    speakers = [davey.DaveSession(1, 1000 + i, CHANNEL) for i in range(count)]
    form_group(ExternalSender(), CHANNEL, [*speakers, bot])
    return bot, speakers


class View:
    def __init__(self, session: davey.DaveSession | None) -> None:
        self.session = session

    def transport(self) -> tuple[str, bytes]:
        return XCHACHA_MODE, KEY

    def dave(self) -> tuple[davey.DaveSession | None, int]:
        return self.session, 1 if self.session is not None else 0

    def candidate_user_ids(self) -> list[int]:
        return []


def datagrams(
    packets: list[list[bytes]], ticks: int, senders: list[DiscordSender], dave: list[davey.DaveSession] | None
) -> list[list[bytes]]:
    """Per tick, each speaker's datagram: DAVE-encrypted when ``dave`` is given, then sealed."""
    out = []
    for tick in range(ticks):
        row = []
        for user, sender in enumerate(senders):
            opus_packet = packets[user][tick % len(packets[user])]
            payload = bytes(dave[user].encrypt_opus(opus_packet)) if dave is not None else opus_packet
            row.append(sender.packet(payload, extension=None))
        out.append(row)
    return out


def receive_path_once(
    rows: list[list[bytes]], session: davey.DaveSession | None, model_delta: bytes
) -> tuple[float, dict[str, int]]:
    mixer = RoomMixer()
    playback = PlaybackBuffer()
    ssrcs = SsrcMap(own_user_id=BOT)
    for user in range(SPEAKERS):
        ssrcs.bind(100 + user, 1000 + user)
    pipeline = ReceivePipeline(View(session), ssrcs, mixer.feed)
    feed = pipeline.feed
    start = time.process_time()
    for tick, row in enumerate(rows):
        for datagram in row:
            feed(datagram)
        mixer.pull()
        if tick % DELTA_FRAMES == 0:
            playback.push(f"item_{tick // 500}", model_delta)
        playback.read()
    return time.process_time() - start, pipeline.stats.as_dict()


def whole_path(
    report: Report, packets: list[list[bytes]], ticks: int, delta: bytes, label: str
) -> tuple[float, float]:
    """CPU share of real time of the receive path without and with DAVE, for these packets."""
    bot, speakers = dave_group(SPEAKERS)
    senders = [DiscordSender(ssrc=100 + user) for user in range(SPEAKERS)]
    figures: dict[str, float] = {}
    for dave_label, session, dave in (("without DAVE", None, None), ("with DAVE", bot, speakers)):
        best, stats = float("inf"), {}
        for _ in range(3):
            rows = datagrams(packets, ticks, senders, dave)  # fresh nonces every run: DAVE refuses replays
            seconds, stats = receive_path_once(rows, session, delta)
            best = min(best, seconds)
        opened = stats["decrypted"] if session is not None else stats["passthrough"]
        ok = (
            opened == ticks * SPEAKERS and stats["dave_failures"] == 0 and stats["frames"] == ticks * SPEAKERS
        )
        report.check(
            f"{label}: frames opened and decoded {dave_label}", opened, f"= {ticks * SPEAKERS}", ok, "{:.0f}"
        )
        figures[dave_label] = best / SECONDS
        report.info(f"{label}: receive path {dave_label}, per 20 ms", f"{best / ticks * 1e6:.0f} µs")
    dave_cost = (figures["with DAVE"] - figures["without DAVE"]) * SECONDS / (ticks * SPEAKERS)
    report.info(f"{label}: DAVE decrypt per speaker frame", f"{dave_cost * 1e6:.1f} µs")
    report.info(f"{label}: receive path without DAVE / real time", f"{figures['without DAVE'] * 100:.2f}%")
    return figures["without DAVE"], figures["with DAVE"]


def main() -> int:
    report = Report("voice: audio pipeline, 10 speakers")
    rng = np.random.default_rng(7)
    ticks = SECONDS * 1000 // FRAME_MS
    delta = (3000 * np.sin(2 * np.pi * 220 * np.arange(2400) / 24_000)).astype("<i2").tobytes()
    mixed = [decoded_frames(rng, user, ticks) for user in range(SPEAKERS)]
    runs = [run_once(mixed, delta) for _ in range(3)]
    cpu = min(seconds for seconds, _ in runs)
    ratio = cpu / SECONDS
    report.info("audio simulated", f"{SECONDS} s × {SPEAKERS} speakers, best of {len(runs)}")
    report.info("bridge alone, per 20 ms", f"{cpu / ticks * 1e6:.0f} µs")
    report.check("turns attributed", runs[0][1], f"= {ticks // 100}", runs[0][1] == ticks // 100, "{:.0f}")
    report.info("bridge alone (mix, playback) / real time", f"{ratio * 100:.2f}%")
    ensure_opus_loaded()
    from discord import opus

    frames = [speaker_frames(rng, user, DISTINCT_PACKETS) for user in range(SPEAKERS)]
    decode_share: dict[int, float] = {}
    shares: dict[int, float] = {}
    for kbps in (BOT_KBPS, CHANNEL_KBPS):
        label = f"{kbps} kbit/s"
        packets = [opus_packets(frames[user], kbps) for user in range(SPEAKERS)]
        ours = decode_cpu_per_frame(Decoder(), packets[0] * 5)
        theirs = decode_cpu_per_frame(opus.Decoder(), packets[0] * 5)  # type: ignore[no-untyped-call]
        decode_share[kbps] = ours * SPEAKERS / (FRAME_MS / 1000)
        report.info(
            f"{label}: opus decode per speaker frame (libopus to 24 kHz mono, inside the receive path)",
            f"{ours * 1e6:.0f} µs = {decode_share[kbps] * 100:.2f}% for {SPEAKERS} speakers"
            f" (discord.py's Decoder.decode, 48 kHz stereo: {theirs * 1e6:.0f} µs;"
            f" TOC config {packets[0][0][0] >> 3})",
        )
        _, shares[kbps] = whole_path(report, packets, ticks, delta, label)
    report.info(
        f"{CHANNEL_KBPS} kbit/s: receive path with DAVE / real time",
        f"{shares[CHANNEL_KBPS] * 100:.2f}% (decoding alone {decode_share[CHANNEL_KBPS] * 100:.2f}%)",
    )
    report.info(
        "left of the 2% for everything but decoding (RTP, transport, DAVE, mixing, playback)",
        f"{(TARGET - decode_share[BOT_KBPS]) * 100:.2f}% at {BOT_KBPS} kbit/s,"
        f" {(TARGET - decode_share[CHANNEL_KBPS]) * 100:.2f}% at {CHANNEL_KBPS} kbit/s;"
        f" it takes {(shares[BOT_KBPS] - decode_share[BOT_KBPS]) * 100:.2f}%"
        f" / {(shares[CHANNEL_KBPS] - decode_share[CHANNEL_KBPS]) * 100:.2f}%",
    )
    with_dave = shares[BOT_KBPS]
    report.check(
        f"{BOT_KBPS} kbit/s: receive path with DAVE / real time",
        with_dave * 100,
        f"≤ {TARGET * 100:.0f}%",
        with_dave <= TARGET,
        "{:.2f}%",
    )
    return report.exit_code()


if __name__ == "__main__":
    raise SystemExit(main())
