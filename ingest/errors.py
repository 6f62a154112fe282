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


def _reasons(funnel: dict[str, dict[str, int]]) -> str:
    """Every non-zero count of ``funnel`` (stage -> reason -> n) other than ``input`` and ``kept``."""
    return "; ".join(
        f"{stage}: " + ", ".join(f"{r} {n}" for r, n in counts.items() if n and r not in ("input", "kept"))
        for stage, counts in funnel.items()
        if any(n and r not in ("input", "kept") for r, n in counts.items())
    )


NOTHING_WRITTEN = "nothing was written: fix the input, or the options that dropped every record"


def no_documents(files: list[str], corpus: str, funnel: dict[str, dict[str, int]]) -> IngestError:
    """The error for a load that would leave ``corpus`` without documents (every record dropped,
    quarantined or beyond a limit). Loaders raise it before they write, so the corpus keeps what
    it had. ``funnel`` (stage -> reason -> n) gives the reasons: every non-zero count other than
    ``input`` and ``kept``."""
    return IngestError(
        ", ".join(files) or f"corpus {corpus}",
        None,
        f"no documents to load into corpus {corpus!r} ({_reasons(funnel) or 'the input holds no records'})",
        NOTHING_WRITTEN,
    )


def no_queries(files: list[str], corpus: str, funnel: dict[str, dict[str, int]]) -> IngestError:
    """The error for a load that would leave ``corpus`` with documents but no queries (every question
    dropped, unjudged or quarantined): the same rule as :func:`no_documents`, for loaders whose source
    holds the queries (every loader but Wikipedia, whose queries a later stage generates). Raised before
    anything is written, so the corpus keeps its queries, qrels and answers."""
    return IngestError(
        ", ".join(files) or f"corpus {corpus}",
        None,
        f"no queries to load into corpus {corpus!r} ({_reasons(funnel) or 'the input holds no questions'})",
        NOTHING_WRITTEN,
    )
