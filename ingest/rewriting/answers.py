"""From an LLM answer to the texts a strategy searches, and the normalization that spots repeats.

Question-form answers (S2, S3, S4; :func:`question_lines`): the answer is split into lines; each line
loses list markers (``1.``, ``2)``, ``(3)``, ``-``, ``*``, ``•``, ``Q1:``, ``Question 2:``) and surrounding
quotes or backticks. A number is a marker only with one or two digits and ``.`` or ``)`` not followed by a
digit, so a question that starts with a year and a colon keeps it ("1984: which party won?" stays whole,
"3.5 million people live where?" too). A *preamble* — a line opening with "Here is/are", "Here's",
"Sure", "Certainly", "Of course", "Okay", "Below is/are" or "The following" — is skipped, unless it
carries a question after a colon on the same line ("Here is a comparison question: Is A older than B?"
gives "Is A older than B?"). A line is *usable* when what remains has at least two words and three
letters and does not end with ``:``. The first ``n`` usable lines are the variants, in answer order;
every other non-empty line is counted (``unusable_line``, preambles included, or ``beyond_n``).

Passage-form answers (HyDE, Query2Doc; :func:`passage_text`): the whole answer, stripped, with a leading
``Passage:`` label removed; empty means no passage.

Counts (``funnel`` reasons, per strategy and seed): ``empty_answer`` (nothing but whitespace),
``no_usable_line`` (text, but no usable line), ``unusable_line``, ``beyond_n``.

:func:`normalize` is the comparison key of the variant filter: casefold, whitespace collapsed, then
trailing ``?``, ``.``, ``!`` and surrounding quotes removed ("Who is X?" and "who is  x" are identical).
"""

from __future__ import annotations

import re
from collections import Counter

_MARKER = re.compile(
    r"^\s*(?:(?:question|q)\s*\d*\s*[:.)]|\(?\d{1,2}\s*[.)](?!\d)|\d{1,2}\s*:(?=\s*\D)|\(\d{1,2}\)|[-*•]+)\s*",
    re.IGNORECASE,
)
_PREAMBLE = re.compile(
    r"^(?:here\s+(?:is|are)|here's|sure|certainly|of\s+course|okay|below\s+(?:is|are)|"
    r"the\s+following)\b",
    re.IGNORECASE,
)
_QUOTES = "\"'`“”‘’"
_PASSAGE_LABEL = re.compile(r"^\s*passage\s*:\s*", re.IGNORECASE)


def clean_line(line: str) -> str:
    """A line without list markers and surrounding quotes (markers may repeat: ``1. - "x"``)."""
    previous = None
    line = line.strip()
    while previous != line:
        previous = line
        line = _MARKER.sub("", line).strip().strip(_QUOTES).strip()
    return line


def strip_preamble(line: str) -> str:
    """A cleaned line without a preamble (module doc): what follows its first colon when it opens with one,
    '' when it is only a preamble (no colon and no question mark), else the line unchanged: "The following
    year, who won the league?" is a question, not a preamble."""
    if not _PREAMBLE.match(line):
        return line
    head, colon, rest = line.partition(":")
    if colon:
        return clean_line(rest)
    return line if "?" in line else ""


def usable(line: str) -> bool:
    return len(line.split()) >= 2 and sum(c.isalpha() for c in line) >= 3 and not line.endswith(":")


def question_lines(answer: str, n: int) -> tuple[list[str], Counter]:
    """The first ``n`` usable lines of ``answer`` and the counts of everything else (module doc).

    >>> question_lines("Here are two:\\n1. Who wrote Dune?\\n2) \\"When was it published?\\"\\n3. Extra one here?", 2)
    (['Who wrote Dune?', 'When was it published?'], Counter({'unusable_line': 1, 'beyond_n': 1}))
    """
    counts: Counter = Counter()
    if not answer.strip():
        counts["empty_answer"] += 1
        return [], counts
    lines: list[str] = []
    for raw in answer.splitlines():
        if not raw.strip():
            continue
        line = strip_preamble(clean_line(raw))
        if not usable(line):
            counts["unusable_line"] += 1
        elif len(lines) < n:
            lines.append(line)
        else:
            counts["beyond_n"] += 1
    if not lines:
        counts["no_usable_line"] += 1
    return lines, counts


def passage_text(answer: str) -> tuple[str, Counter]:
    """The passage of a HyDE / Query2Doc answer ('' and ``empty_answer`` counted when there is none)."""
    text = _PASSAGE_LABEL.sub("", answer.strip(), count=1).strip()
    return text, Counter({"empty_answer": 1} if not text else {})


def normalize(text: str) -> str:
    """Comparison key for identical / duplicate variants (module doc).

    >>> normalize('  "Who wrote  Dune?" ') == normalize("who wrote dune")
    True
    """
    text = " ".join(text.casefold().split()).strip(_QUOTES)
    return text.rstrip("?.! ").strip(_QUOTES).strip()
