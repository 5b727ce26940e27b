"""Entry point of a decoding worker: ``python -m abduct_video._worker FD BACKEND THREADS ARENA...``.

FD is this end of a socket pair to the parent; each ARENA is a shared-memory file of the
parent's to write frames into (mapped here, then unlinked by the parent)."""

from __future__ import annotations

import mmap
import sys
from multiprocessing.connection import Connection

from abduct_video._pool import _serve


def main(argv: list[str]) -> None:
    fd, backend, threads, *arena_paths = argv
    conn = Connection(int(fd))
    arenas = []
    for path in arena_paths:
        with open(path, "r+b") as handle:
            arenas.append(mmap.mmap(handle.fileno(), 0))
    conn.send("ready")
    _serve(conn, backend, int(threads), arenas)


if __name__ == "__main__":
    main(sys.argv[1:])
