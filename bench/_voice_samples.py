"""The far side's stamps joined to the bot's (``bench/_voice_probes.py``): one sample per
frame, delta, barge-in and glance, each split into its stages (milliseconds)."""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from _voice_probes import BYTES_PER_MS, Packet, Probes, Push, Stamp

ROOM_STAGES = ("UDP → decoded", "decoded → on the loop", "on the loop → pulled", "pulled → append written")
MODEL_STAGES = ("delta → handled", "handled → queued", "queued → read by the player", "read → on UDP")
BARGE_STAGES = ("speech_started → handled", "handled → playback cleared", "speech_started → truncate written")
GLANCE_STAGES = ("call → handled", "handled → output written", "output → picture written")


@dataclass
class Figure:
    """One latency figure: per sample its total and its stages, as wall-clock time (``raw``)
    and as what the bridge adds (``added``: the run-queue waits of the stages' threads taken
    out), in ms."""

    raw: list[float] = field(default_factory=list)
    added: list[float] = field(default_factory=list)
    stages: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    stages_raw: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    far: list[float] = field(default_factory=list)  # to arrival at the far side (wall clock)
    extra: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    uncertain: int = 0  # samples left out: the far side lost the CPU while it sent

    def add(self, stages: list[tuple[str, float, float]], total: tuple[float, float] | None = None) -> None:
        """Stages as (name, raw, added); the total is their sum unless given."""
        for name, raw, added in stages:
            self.stages_raw[name].append(raw)
            self.stages[name].append(added)
        raw_total, added_total = total or (sum(r for _, r, _ in stages), sum(a for _, _, a in stages))
        self.raw.append(raw_total)
        self.added.append(added_total)

    def merge(self, other: Figure) -> None:
        self.raw += other.raw
        self.added += other.added
        self.far += other.far
        self.uncertain += other.uncertain
        for name, values in other.stages.items():
            self.stages[name] += values
            self.stages_raw[name] += other.stages_raw[name]
        for name, values in other.extra.items():
            self.extra[name] += values


def ms(seconds: float) -> float:
    return seconds * 1000.0


UNCERTAIN_S = 0.001  # a send on the far side that took longer: it lost the CPU in the middle
FAR_LATE_S = 0.005  # a frame that waited for another sent this much later behind its schedule


def sent_at(before: float, after: float, fig: Figure) -> float | None:
    """When the far side's bytes reached the bot: just before its send, unless the send took
    so long that the moment is uncertain (then the sample is left out, and counted)."""
    if after - before > UNCERTAIN_S:
        fig.uncertain += 1
        return None
    return before


@dataclass
class Joined:
    room: Figure
    model: Figure
    barge: Figure
    glance: Figure
    problems: list[str]


class Joiner:
    """Joins one block's far-side stamps to the probes' (which hold everything since start)."""

    def __init__(self, probes: Probes, hold_bytes: int) -> None:
        self.p = probes
        self.hold = hold_bytes
        self._ends: list[int] = []  # each packet's end in the byte count: never decreasing
        self._pull_of: dict[tuple[int, int], int] = {}
        self._pulls_seen = 0
        self._append_of_pull: list[int] = []
        self._appends_seen = 0

    def stage(self, name: str, since: float, end: Stamp) -> tuple[str, float, float]:
        raw = ms(end.at - since)
        return name, raw, max(0.0, raw - ms(self.p.threads.machine(since, end)))

    def join(self, stamps: dict[str, Any]) -> Joined:
        problems: list[str] = []
        self._ends = [q.end for q in self.p.packets]
        arrivals: dict[str, list[tuple[float, Any]]] = defaultdict(list)
        for kind, at, data in stamps["arrivals"]:
            arrivals[kind].append((at, data))
        return Joined(
            self._room(stamps["udp_sent"], arrivals["append"], problems),
            self._model(stamps["deltas"], problems),
            self._barge(stamps["speech"], arrivals["truncate"], problems),
            self._glance(stamps["calls"], arrivals["image"], problems),
            problems,
        )

    # -- room → model ------------------------------------------------------------------------------
    def _index(self) -> None:
        for _stamp, mixed in self.p.pulls[self._pulls_seen :]:
            for frame in mixed:
                self._pull_of[frame] = self._pulls_seen
            self._pulls_seen += 1
        for _stamp, frames in self.p.appends[self._appends_seen :]:
            self._append_of_pull += [self._appends_seen] * frames
            self._appends_seen += 1

    def _room(self, udp_sent: list[Any], appended: list[tuple[float, Any]], problems: list[str]) -> Figure:
        self._index()
        p, fig = self.p, Figure()
        far_at = {index: at for at, (index, _bytes) in appended}
        late = {(user, index): behind for user, index, _b, _a, behind in udp_sent}
        waited_for = self._waited_for(late)
        dropped = set(p.dropped)
        missing = 0
        for user, index, before, after, behind in udp_sent:
            sent = sent_at(before, after, fig)
            if sent is None:
                continue
            if (user, index) in dropped:
                fig.extra["frames dropped by the mixer (backlog over its cap)"].append(1.0)
                continue
            decoded, fed = p.decoded.get(user, []), p.fed.get(user, [])
            pull = self._pull_of.get((user, index))
            if (
                index >= len(decoded)
                or index >= len(fed)
                or pull is None
                or pull >= len(self._append_of_pull)
            ):
                missing += 1
                continue
            if waited_for[pull] - behind > FAR_LATE_S:
                fig.extra["frames left out: they waited for a frame the far side sent late"].append(1.0)
                continue
            append = self._append_of_pull[pull]
            got, on_loop, pulled, written = decoded[index], fed[index], p.pulls[pull][0], p.appends[append][0]
            fig.add(
                [
                    self.stage(ROOM_STAGES[0], sent, got),
                    self.stage(ROOM_STAGES[1], got.at, on_loop),
                    self.stage(ROOM_STAGES[2], on_loop.at, pulled),
                    self.stage(ROOM_STAGES[3], pulled.at, written),
                ]
            )
            if append in far_at:
                fig.far.append(ms(far_at[append] - sent))
        if missing:
            problems.append(f"{missing} of {len(udp_sent)} room packets never reached an append")
        return fig

    def _waited_for(self, late: dict[tuple[int, int], float]) -> dict[int, float]:
        """Per pull, how late the far side sent the latest frame the pull waited for: its own
        frames, and the next frame of each speaker of the pull before who is not in it (the
        pull waited for it until the clock gave up)."""
        out: dict[int, float] = {}
        last: dict[int, int] = {}  # per speaker, the number of their frame in the latest pull
        previous: set[int] = set()
        for number, (_stamp, mixed) in enumerate(self.p.pulls):
            users = {user for user, _ in mixed}
            awaited = [late.get(frame, 0.0) for frame in mixed]
            awaited += [late.get((user, last[user] + 1), 0.0) for user in previous - users if user in last]
            out[number] = max(awaited, default=0.0)
            for user, index in mixed:
                last[user] = index
            previous = users
        return out

    # -- model → room ------------------------------------------------------------------------------
    def _first_packet(self, start: int, after_seq: int) -> Packet | None:
        """The first packet whose frame carries byte ``start`` onwards, unless the buffer was
        cleared before it was read."""
        packets = self.p.packets
        i = bisect.bisect_right(self._ends, start)
        while i < len(packets) and (not packets[i].audio or packets[i].seq < after_seq):
            i += 1
        if i == len(packets):
            return None
        packet = packets[i]
        cleared = any(after_seq < seq < packet.seq for _, seq in self.p.clears)
        return None if cleared else packet

    def _model(self, deltas: list[Any], problems: list[str]) -> Figure:
        fig = Figure()
        pushes = {(q.item, q.index): q for q in self.p.pushes}
        handled: dict[tuple[str, int], Stamp] = {}
        counts: dict[str, int] = defaultdict(int)
        for got, kind, item in self.p.handled:
            if kind == "response.output_audio.delta":
                handled[(item, counts[item])] = got
                counts[item] += 1
        for item, index, (before, after), _pcm in deltas:
            sent = sent_at(before, after, fig)
            if sent is None:
                continue
            push: Push | None = pushes.get((item, index))
            if push is None or push.end <= push.start:
                continue  # talked over before it came: never queued
            packet = self._first_packet(push.start + self.hold, push.seq)
            if packet is None:
                continue  # cleared before it was played (barge-in)
            if push.queued_before:
                fig.extra["queued behind his own audio (ms)"].append(push.queued_before / BYTES_PER_MS)
                continue
            got = handled.get((item, index), push.entered)
            fig.add(
                [
                    self.stage(MODEL_STAGES[0], sent, got),
                    self.stage(MODEL_STAGES[1], got.at, push.left),
                    self.stage(MODEL_STAGES[2], push.left.at, packet.read),
                    self.stage(MODEL_STAGES[3], packet.read.at, packet.sent),
                ]
            )
        if not fig.raw:
            problems.append("no model delta reached the room")
        return fig

    # -- barge-in ------------------------------------------------------------------------------------
    def _barge(self, speech: list[Any], truncates: list[tuple[float, Any]], problems: list[str]) -> Figure:
        p, fig = self.p, Figure()
        starts = {key: got for got, kind, key in p.handled if kind == "input_audio_buffer.speech_started"}
        truncate_sent = [sent for sent, kind, _ in p.sends if kind == "conversation.item.truncate"]
        far = {item: (at, end_ms) for at, (item, end_ms) in truncates}
        for (before, after), item, speech_item in speech:
            sent = sent_at(before, after, fig)
            if sent is None:
                continue
            got = starts.get(speech_item)
            clear = next((c for c in p.clears if got is not None and c[0].at >= got.at), None)
            written = next((s for s in truncate_sent if got is not None and s.at >= got.at), None)
            if got is None or clear is None or written is None or item not in far:
                problems.append(f"barge-in on {item}: no clear or no truncate")
                continue
            cleared, clear_seq = clear
            audio = [q for q in p.packets if q.audio and q.seq < clear_seq]
            last = audio[-1].sent.at if audio else sent
            stages = [
                self.stage(BARGE_STAGES[0], sent, got),
                self.stage(BARGE_STAGES[1], got.at, cleared),
                self.stage(BARGE_STAGES[2], sent, written),
            ]
            waited = sum(raw - added for _, raw, added in stages[:2])  # the neighbours' part of the delay
            raw = max(0.0, ms(last - sent))
            fig.add(stages, (raw, max(0.0, raw - waited)))
            fig.extra["last audio packet − speech_started, raw (ms)"].append(ms(last - sent))
            fig.extra["|truncate audio_end_ms − audio sent on UDP| (ms)"].append(
                abs(far[item][1] - self._sent_ms(item, clear_seq))
            )
        return fig

    def _sent_ms(self, item: str, clear_seq: int) -> int:
        """Milliseconds of ``item``'s own audio in packets that left before the clear."""
        ranges = [(q.start, q.end) for q in self.p.pushes if q.item == item and q.seq < clear_seq]
        if not ranges:
            return 0
        packets = self.p.packets
        sent = 0
        for i in range(bisect.bisect_right(self._ends, ranges[0][0]), len(packets)):
            packet = packets[i]
            if packet.seq >= clear_seq:
                break
            if not packet.audio:
                continue
            for start, end in ranges:
                sent += max(0, min(end, packet.end) - max(start, packet.start))
        received = sum(end - start for start, end in ranges) / BYTES_PER_MS
        return int(max(0.0, min((sent - self.hold) / BYTES_PER_MS, received)))

    # -- glance ----------------------------------------------------------------------------------------
    def _glance(self, calls: list[Any], images: list[tuple[float, Any]], problems: list[str]) -> Figure:
        p, fig = self.p, Figure()
        got = {key: s for s, kind, key in p.handled if kind == "response.function_call_arguments.done"}
        outputs = {key: s for s, kind, key in p.sends if kind == "tool:function_call_output"}
        pictures = [s for s, kind, _ in p.sends if kind == "tool:image"]
        far = [at for at, _ in images]
        for number, ((before, after), call_id) in enumerate(calls):
            sent = sent_at(before, after, fig)
            if sent is None:
                continue
            handled, output = got.get(call_id), outputs.get(call_id)
            picture = next((s for s in pictures if output is not None and s.at >= output.at), None)
            if handled is None or output is None or picture is None:
                problems.append(f"glance {call_id}: no picture sent")
                continue
            fig.add(
                [
                    self.stage(GLANCE_STAGES[0], sent, handled),
                    self.stage(GLANCE_STAGES[1], handled.at, output),
                    self.stage(GLANCE_STAGES[2], output.at, picture),
                ]
            )
            if len(far) == len(calls):  # the far side's arrivals, in the order the calls went out
                fig.far.append(ms(far[number] - sent))
        return fig
