"""Java is a system requirement of the COCO caption metrics (PTB tokenizer and METEOR)."""

from __future__ import annotations

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
