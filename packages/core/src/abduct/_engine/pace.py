"""What a stage says while it runs: units done, the model's requests done of about how many, their
rate, the answers read from a cache, and the time left. On a terminal a bar whose text is renewed
every second; in a log (stderr not a terminal) one plain line every ``EVERY`` seconds and one at
the end of a stage that wrote any; nothing under ``--quiet``.

The requests come from the token ledger (``ModelCalls.live``: a served model counts each answer as
it arrives, so the figures move within a unit too). How many there will be is estimated from the
units done (requests per unit so far, times the units to do), or, before the first unit ends,
from what the engines were given to compute."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tqdm.auto import tqdm

from abduct._engine.tokens import Tokens
from abduct.kit.progress_bars import _terminal

EVERY = 5.0  # seconds between two lines in a log
REFRESH = 1.0  # seconds between two renewals of a terminal's bar


@dataclass
class Pace:
    """A stage's figures: ``ledger()`` the tokens its models spent so far (live), ``planned()`` the
    items their engines were given to compute so far."""

    stage: str
    todo: int
    ledger: Callable[[], Tokens]
    planned: Callable[[], int]
    units: int = 0

    def __post_init__(self) -> None:
        self.started = time.monotonic()
        self.before = self.ledger()
        self.planned_before = self.planned()
        self.by_units = 0  # requests answered when the last unit ended

    def unit_ended(self) -> None:
        self.units += 1
        spent = self.ledger().minus(self.before)
        self.by_units = spent.requests + spent.cached

    def line(self) -> str:
        """``3/12 units, 96/~384 requests, 12.5/s, 10 cached, about 23 s left``."""
        spent = self.ledger().minus(self.before)
        seconds = max(time.monotonic() - self.started, 1e-9)
        answered = spent.requests + spent.cached
        if self.units:
            expected = max(answered, round(self.by_units / self.units * self.todo))
        else:  # within the first unit: what the engines were handed (cache hits apart) so far
            expected = max(answered, self.planned() - self.planned_before + spent.cached)
        parts = [f"{self.units}/{self.todo} units", f"{answered:,}/~{expected:,} requests" if expected > answered
                 else f"{answered:,} requests", f"{spent.requests / seconds:.1f}/s", f"{spent.cached:,} cached"]
        if self.units == self.todo:
            parts.append(f"{duration(seconds)} in all")
        elif answered and expected > answered:
            parts.append(f"about {duration(seconds * (expected - answered) / answered)} left")
        elif self.units:
            parts.append(f"about {duration(seconds * (self.todo - self.units) / self.units)} left")
        return ", ".join(parts)


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@contextmanager
def paced(pace: Pace, quiet: bool) -> Iterator[Callable[[], None]]:
    """A stage's progress while within; gives the function to call when a unit ends."""
    if quiet:
        yield lambda: None
        return
    stop = threading.Event()
    lock = threading.Lock()
    bar = tqdm(total=pace.todo, desc=pace.stage, unit="unit", leave=False, dynamic_ncols=True) if _terminal() else None
    wrote = [False]

    def show() -> None:
        with lock:
            if bar is not None:
                bar.set_postfix_str(pace.line(), refresh=True)
            else:
                print(f"{pace.stage}: {pace.line()}", file=sys.stderr, flush=True)
                wrote[0] = True

    def tick() -> None:
        while not stop.wait(REFRESH if bar is not None else EVERY):
            show()

    def unit_done() -> None:
        pace.unit_ended()
        if bar is not None:
            with lock:
                bar.update(1)

    ticker = threading.Thread(target=tick, name=f"progress {pace.stage}", daemon=True)
    ticker.start()
    try:
        yield unit_done
    finally:
        stop.set()
        ticker.join()
        if bar is not None:
            bar.close()
        elif wrote[0]:
            show()  # the last line: what the stage did in all
