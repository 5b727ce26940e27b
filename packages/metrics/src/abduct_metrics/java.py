"""Java is a system requirement of the COCO caption metrics (PTB tokenizer and METEOR)."""

from __future__ import annotations

import re
import shutil

from abduct import AbductError

JAVA_HINT = (
    "install a Java runtime (8 or newer) and put `java` on PATH, e.g. "
    "`apt-get install default-jre-headless`, `conda install -c conda-forge openjdk` "
    "or `brew install openjdk`"
)


def require_java(what: str = "the COCO caption metrics") -> str:
    """The path of ``java``; AbductError saying what to install when it is missing."""
    found = shutil.which("java")
    if found is None:
        raise AbductError(f"{what} need Java, which was not found on PATH: {JAVA_HINT}")
    return found


_STACK_FRAME = re.compile(r"^(at |\.\.\. \d+ more$)")
_THREAD = re.compile(r'^Exception in thread "[^"]*" ')
_FAILURE = re.compile(r"(Error|Exception)\b")


def jvm_said(stderr: bytes | str) -> str:
    """What a failed JVM said, in one line: its error (``java.lang.OutOfMemoryError: Java heap
    space``, ``Error occurred during initialization of VM / Too small maximum heap``) rather than
    the last line of the stack trace after it; the last line when no error is named."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    lines = [_THREAD.sub("", line.strip()) for line in text.splitlines()]
    lines = [line for line in lines if line and not _STACK_FRAME.match(line) and not line.startswith("Picked up ")]
    first = next((i for i, line in enumerate(lines) if _FAILURE.search(line)), None)
    said = " / ".join(lines[first:first + 2] if first is not None else lines[-1:])
    return said if len(said) <= 400 else said[:400] + "..."
