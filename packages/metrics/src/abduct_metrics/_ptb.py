"""PTB tokenisation of a whole evaluation in one Java call.

Runs the Stanford PTBTokenizer jar shipped with pycocoevalcap, with pycocoevalcap's flags
and punctuation list, so the tokens equal ``PTBTokenizer().tokenize``. Two differences, both
for robustness: the input file lives in a private temporary directory (pycocoevalcap writes
into its own package directory, which may be read-only), and characters the Java lexer
treats as line breaks are turned into spaces first (pycocoevalcap only replaces ``\\n``; a
``\\r`` there shifts every later sentence onto the wrong id). The output line count is
checked, so a misalignment can never pass silently.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence

from pycocoevalcap.tokenizer import ptbtokenizer  # type: ignore[import-untyped]

from abduct import AbductError
from abduct_metrics.java import require_java

# Line terminators of CoreNLP's PTB lexer.
_LINE_BREAKS = re.compile("\r\n|[\n\r\u2028\u2029\u000b\u000c\u0085]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_PUNCTUATION = frozenset(ptbtokenizer.PUNCTUATIONS)


def clean_non_ascii(text: str) -> str:
    """Every non-ASCII character becomes a space (VAR's pre-processing)."""
    return _NON_ASCII.sub(" ", text)


def ptb_tokenize(sentences: Sequence[str]) -> list[str]:
    """Lowercased PTB tokens joined by spaces, punctuation dropped; one JVM for all."""
    java = require_java()
    if not sentences:
        return []
    jar_dir = os.path.dirname(os.path.abspath(ptbtokenizer.__file__))
    jar = os.path.join(jar_dir, ptbtokenizer.STANFORD_CORENLP_3_4_1_JAR)
    lines = [_LINE_BREAKS.sub(" ", s) for s in sentences]
    with tempfile.TemporaryDirectory(prefix="abduct-ptb-") as tmp:
        source = os.path.join(tmp, "sentences.txt")
        with open(source, "wb") as handle:
            handle.write(("\n".join(lines) + "\n").encode())
        proc = subprocess.run(
            [java, "-cp", jar, "edu.stanford.nlp.process.PTBTokenizer", "-preserveLines", "-lowerCase", source],
            capture_output=True, check=False,
        )
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise AbductError(f"PTB tokenizer failed (exit {proc.returncode}): {detail[-1] if detail else 'no message'}")
    out = proc.stdout.decode()
    if out.endswith("\n"):
        out = out[:-1]
    token_lines = out.split("\n")
    if len(token_lines) != len(lines):
        raise AbductError(f"PTB tokenizer returned {len(token_lines)} lines for {len(lines)} sentences")
    return [" ".join(w for w in line.rstrip().split(" ") if w not in _PUNCTUATION) for line in token_lines]
