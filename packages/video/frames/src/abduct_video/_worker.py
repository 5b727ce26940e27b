"""Entry point of a decoding worker: ``python -m abduct_video._worker FD BACKEND THREADS``,
FD being this end of a socket pair to the parent (see :mod:`abduct_video._pool`)."""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection

from abduct_video._pool import _serve


def main(argv: list[str]) -> None:
    fd, backend, threads = argv
    conn = Connection(int(fd))
    conn.send("ready")
    _serve(conn, backend, int(threads))


if __name__ == "__main__":
    main(sys.argv[1:])
