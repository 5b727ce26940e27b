"""Plugin code kept in its place: what it prints goes to stderr (``--json`` stays valid JSON on
stdout), an import that blocks is given up after a time limit, and whatever a plugin raises
(``SystemExit`` included) becomes one line naming it, never the end of the command."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

from abduct.contract.errors import AbductError, PluginError

T = TypeVar("T")

TIMEOUT_VARIABLE = "ABDUCT_PLUGIN_IMPORT_TIMEOUT"
DEFAULT_IMPORT_TIMEOUT = 60.0  # seconds: a plugin importing torch from a cold network disk can take tens


def describe(exc: BaseException) -> str:
    """``Type: message``, first line only."""
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return text[0] if text else type(exc).__name__


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """What plugin code prints goes to stderr while it runs: stdout is the command's output."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


def import_timeout() -> float:
    """The time limit for importing one plugin (``ABDUCT_PLUGIN_IMPORT_TIMEOUT`` seconds; 0 or
    less: no limit); a value that is not a number is refused in one line."""
    text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_IMPORT_TIMEOUT
    try:
        return float(text)
    except ValueError:
        raise AbductError(f"{TIMEOUT_VARIABLE}={text!r} is not a number of seconds") from None


class ImportTimedOut(Exception):
    """A plugin's import did not finish within the time limit."""


def load_in_time(load: Callable[[], T], timeout: float) -> T:
    """``load()`` (a plugin's import) in a daemon thread, given up after ``timeout`` seconds.
    Python's imports lock each module on its own, so the rest of the command imports what it needs
    while the blocked thread waits, and the process exits without waiting for it. Anything the
    import raises, ``SystemExit`` included, is raised here; Ctrl-C in the main thread stops the wait."""
    if timeout <= 0:
        return load()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(load())
        except BaseException as exc:  # noqa: BLE001 (a thread's exception is handed to the caller)
            failure.append(exc)

    thread = threading.Thread(target=target, name="abduct-plugin-import", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise ImportTimedOut(f"its import did not finish within {timeout:g} s ({TIMEOUT_VARIABLE})")
    if failure:
        raise failure[0]
    return outcome[0]


def plugin_call(who: str, what: str, call: Callable[[], T]) -> T:
    """``call()``, plugin code, with its prints on stderr. An ``AbductError`` (the user's input,
    said by the plugin), an ``OSError`` (the file system's, said with its path) and Ctrl-C pass as
    they are; anything else it raises, ``SystemExit`` included, is one line naming ``who`` and ``what``."""
    try:
        with stdout_to_stderr():
            return call()
    except (AbductError, OSError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 (a plugin's fault is reported, never a traceback)
        raise PluginError(f"{who}: {what} raised {describe(exc)}") from exc
