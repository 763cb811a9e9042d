"""Series of :mod:`bot.metrics` kept in plain Python objects and read when scraped
(docs/architecture.md §15).

A ``prometheus_client`` ``Histogram.observe`` or labelled ``Counter.inc`` takes a lock and walks
several objects; on a play turn, whose work has pushed them out of the CPU's caches, five of
them cost about 4% of a sandbox turn (bench/metrics.py). Here an observation is one ``bisect``
into a tuple and two additions on lists, and a request one dict update; prometheus reads them
through a collector at scrape time. Each tally is written by the event loop alone (an update
is not atomic across threads: a series several threads write, such as the journals' fsyncs on
each sitting's disk thread, stays a prometheus ``Histogram``); a scrape, on the loop too,
copies before reading.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import cast

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString


class Tally:
    """One histogram's buckets (upper bounds, ``le``) and sum."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)  # the last: above every bound (+Inf)
        self.total = [0.0]

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1  # le: a value on a bound is in it
        self.total[0] += value

    def snapshot(self) -> tuple[list[tuple[str, float]], float]:
        """Cumulative buckets as prometheus names them, and the sum."""
        counts, total = list(self.counts), self.total[0]
        buckets: list[tuple[str, float]] = []
        running = 0
        for bound, count in zip((*map(_le, self.bounds), "+Inf"), counts, strict=True):
            running += count
            buckets.append((bound, float(running)))
        return buckets, total


# prometheus_client's own spelling of ``le`` (as its Histogram writes it); unannotated there
_go_string = cast(Callable[[float], str], floatToGoString)


def _le(bound: float) -> str:
    return _go_string(bound)


class TallyHistograms(Collector):
    """A histogram family whose series are :class:`Tally`s, one per value of its one label (or
    a single series without a label)."""

    def __init__(
        self,
        name: str,
        documentation: str,
        bounds: Sequence[float],
        label: str | None = None,
        values: Iterable[str] = (),
    ) -> None:
        self.name, self.documentation, self.label = name, documentation, label
        keys = tuple(values) if label is not None else ("",)
        self.tallies = {key: Tally(bounds) for key in keys}

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(
            self.name, self.documentation, labels=[self.label] if self.label is not None else None
        )
        for key, tally in self.tallies.items():
            buckets, total = tally.snapshot()
            family.add_metric([key] if self.label is not None else [], buckets, total)
        yield family

    def describe(self) -> Iterable[Metric]:
        return ()


class Counts(Collector):
    """A counter family counted in a dict keyed by its labels' values (strings), on the event
    loop. Its labels must come from bounded sets."""

    def __init__(self, name: str, documentation: str, labels: Sequence[str]) -> None:
        self.name, self.documentation, self.labels = name, documentation, list(labels)
        self.counts: dict[tuple[str, ...], int] = {}

    def inc(self, key: tuple[str, ...]) -> None:
        counts = self.counts
        counts[key] = counts.get(key, 0) + 1

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labels)
        for key, count in sorted(list(self.counts.items())):  # list(): one C call, a copy
            family.add_metric(list(key), count)
        yield family

    def describe(self) -> Iterable[Metric]:
        return ()
