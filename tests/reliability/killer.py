"""``python -m tests.reliability.killer SPEC [COMMIT_TEXTS] -- RAGWH ARGS...``: run ``ragwh`` and
kill the process with SIGKILL (kill -9: no cleanup, no rollback) at a chosen point.

``SPEC`` is ``FUNCTION[>FUNCTION...]:N``: the process kills itself inside the N-th warehouse
transaction opened while every ``FUNCTION`` is on the call stack (``embed_texts>store_embeddings``:
the embedding job's own vector commits), after the transaction's writes and just before its COMMIT
(the worst moment: everything written, nothing committed). ``COMMIT_TEXTS`` overrides
``ingest.retrieval.embed.COMMIT_TEXTS`` so that a tiny corpus commits more than once. The patch is
installed before any module that opens transactions is imported, so every caller gets it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

import warehouse.db as db


def install(functions: set[str], nth: int) -> None:
    original = db.transaction
    seen = [0]

    @contextlib.contextmanager
    def transaction(con):
        frame, on_stack = sys._getframe(1), set()
        while frame is not None:
            on_stack.add(frame.f_code.co_name)
            frame = frame.f_back
        inside = functions <= on_stack
        with original(con):
            yield con
            if inside:
                seen[0] += 1
                if seen[0] == nth:
                    sys.stdout.flush()
                    os.kill(os.getpid(), signal.SIGKILL)

    db.transaction = transaction


def main(argv: list[str]) -> None:
    split = argv.index("--")
    spec, options, args = argv[0], argv[1:split], argv[split + 1 :]
    functions, nth = spec.rsplit(":", 1)
    install(set(functions.split(">")), int(nth))
    if options:
        import ingest.retrieval.embed as embed

        embed.COMMIT_TEXTS = int(options[0])
    from ragwh.cli import app

    app(args, prog_name="ragwh")


if __name__ == "__main__":
    main(sys.argv[1:])
