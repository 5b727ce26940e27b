"""Entry point of a decoding worker: ``python -m abduct_video._worker FD BACKEND THREADS AREA...``,
FD being this end of a socket pair to the parent and each AREA a shared-memory file of the
parent's to carry frames (see :mod:`abduct_video._pool`)."""

from __future__ import annotations

import os
import sys
from multiprocessing.connection import Connection

from abduct_video._pool import _Area, _serve


def main(argv: list[str]) -> None:
    fd, backend, threads, *area_paths = argv
    conn = Connection(int(fd))
    try:
        areas = [_Area(os.open(path, os.O_RDWR)) for path in area_paths]
    except FileNotFoundError:
        # the parent stopped while this worker was starting (Ctrl-C, an error) and removed its
        # areas: nothing to serve, and nothing to report on a terminal the parent has left
        sys.exit(0)
    conn.send("ready")
    _serve(conn, backend, int(threads), areas)


if __name__ == "__main__":
    main(sys.argv[1:])
