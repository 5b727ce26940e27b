"""PTB tokenisation of a whole evaluation in one Java call.

Runs the Stanford PTBTokenizer jar shipped with pycocoevalcap, with pycocoevalcap's flags
and punctuation list, so the tokens equal ``PTBTokenizer().tokenize``. Two differences, both
for robustness: the input file lives in a private temporary directory (pycocoevalcap writes
into its own package directory, which may be read-only), and characters the Java lexer
treats as line breaks are turned into spaces first (pycocoevalcap only replaces ``\\n``; a
``\\r`` there shifts every later sentence onto the wrong id). The output line count is
checked, so a misalignment can never pass silently. A line break inside a sentence is read as
a space, with one warning per run.

PTB tokenisation is not idempotent (``:)`` -> ``:-rrb-`` -> ``-rrb-``), so text must be
tokenised exactly once. The tokenizer's output is typed: ``ptb_tokenize`` returns
``PtbTokens`` (a ``str``), and the caption metrics score ``PtbTokens`` as given instead of
tokenising them again. Text known to be tokenizer output from elsewhere (a file) is marked with
``as_tokens``.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import warnings
from collections.abc import Sequence

from pycocoevalcap.tokenizer import ptbtokenizer  # type: ignore[import-untyped]

from abduct import AbductError
from abduct_metrics.java import jvm_said, require_java

# Line terminators of CoreNLP's PTB lexer.
_LINE_BREAKS = re.compile("\r\n|[\n\r\u2028\u2029\u000b\u000c\u0085]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_PUNCTUATION = frozenset(ptbtokenizer.PUNCTUATIONS)


class PtbTokens(str):
    """A sentence that is already PTB tokenizer output (lowercased tokens joined by single
    spaces, punctuation dropped): scored as is, never tokenised again."""

    __slots__ = ()


def as_tokens(text: str) -> PtbTokens:
    """Mark ``text`` as tokenizer output, e.g. tokens read back from a file."""
    return text if isinstance(text, PtbTokens) else PtbTokens(text)


def is_empty(tokens: str) -> bool:
    """Whether a tokenised sentence holds no token (e.g. a sentence of punctuation only)."""
    return not tokens.strip()


LINE_BREAK_WARNING = ("a sentence holds a line break (\\r, \\r\\n, \\x0b, \\x0c, ...): read as a space "
                      "(pycocoevalcap's tokenizer would shift every later sentence onto the wrong id)")


def clean_non_ascii(text: str) -> str:
    """Every non-ASCII character becomes a space (VAR's pre-processing)."""
    return _NON_ASCII.sub(" ", text)


def ptb_tokenize(sentences: Sequence[str]) -> list[PtbTokens]:
    """Lowercased PTB tokens joined by spaces, punctuation dropped; one JVM for all. The lines
    are tokenised in the given order, which matters: PTB reads a lone letter before a period
    (``d.``) as an initial unless the next line starts with a capital."""
    java = require_java()
    if not sentences:
        return []
    jar_dir = os.path.dirname(os.path.abspath(ptbtokenizer.__file__))
    jar = os.path.join(jar_dir, ptbtokenizer.STANFORD_CORENLP_3_4_1_JAR)
    lines = [_LINE_BREAKS.sub(" ", s) for s in sentences]
    if any(line != s and s.replace("\n", " ") != line for line, s in zip(lines, sentences)):
        # one fixed message and location: Python's default filter shows it once per run
        warnings.warn(LINE_BREAK_WARNING, stacklevel=1)
    with tempfile.TemporaryDirectory(prefix="abduct-ptb-") as tmp:
        source = os.path.join(tmp, "sentences.txt")
        with open(source, "wb") as handle:
            handle.write(("\n".join(lines) + "\n").encode())
        proc = subprocess.run(
            [java, "-cp", jar, "edu.stanford.nlp.process.PTBTokenizer", "-preserveLines", "-lowerCase", source],
            capture_output=True, check=False,
        )
    if proc.returncode != 0:
        raise AbductError(f"PTB tokenizer (Java) failed (exit {proc.returncode}): {jvm_said(proc.stderr) or 'no message'}")
    out = proc.stdout.decode()
    if out.endswith("\n"):
        out = out[:-1]
    token_lines = out.split("\n")
    if len(token_lines) != len(lines):
        raise AbductError(f"PTB tokenizer returned {len(token_lines)} lines for {len(lines)} sentences")
    return [PtbTokens(" ".join(w for w in line.rstrip().split(" ") if w not in _PUNCTUATION)) for line in token_lines]
