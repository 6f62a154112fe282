"""The one error type loaders raise for bad input: it always names the file and the record."""
from __future__ import annotations


class IngestError(ValueError):
    """Bad input that cannot be quarantined: ``file``, ``record`` and what to do next are in the message."""

    def __init__(self, file: str, record: str | None, problem: str, hint: str | None = None):
        where = f"{file}" + (f", record {record}" if record is not None else "")
        message = f"{where}: {problem}"
        if hint:
            message += f" ({hint})"
        super().__init__(message)
        self.file, self.record, self.problem = file, record, problem
