"""QASPER questions: which are kept, their ``query_type``, and their evidence spans in the flat text.

Filters, applied in this order; the first that applies is the question's drop reason:

1. ``empty_question`` -- the question text is blank.
2. ``unanswerable`` -- no *answering* annotation. An annotation answers when ``unanswerable`` is
   false and it carries an answer (extractive spans, a free-form answer or a yes/no). Only
   answering annotations are used below ("the kept answers").
3. ``no_evidence`` -- no kept answer lists any evidence string.
4. ``numeric_only`` -- every kept answer is numeric (:func:`is_numeric_answer`).
5. ``table_figure_evidence_only`` -- every evidence string is blank or a table/figure reference
   (starts with ``FLOAT SELECTED``), so nothing can be located in the text.
6. ``evidence_unmatched`` -- none of the remaining evidence strings maps to the text.

``query_type`` (:func:`query_type`): each kept answer is typed as in the official QASPER evaluator
(extractive spans -> ``extractive``, else a free-form answer -> ``abstractive``, else a yes/no ->
``boolean``); the question takes the majority type, ties broken in the fixed order extractive >
abstractive > boolean.

Evidence mapping (:func:`match_evidence`), per distinct evidence string (outer whitespace stripped;
duplicates across annotators counted once) -- the first method that succeeds gives the span:

* ``exact`` -- the string equals a paragraph (the first such paragraph in document order);
* ``fuzzy`` -- after collapsing whitespace runs to one space, (a) it equals a paragraph, or (b) one
  contains the other and the shorter covers >= :data:`CONTAIN_MIN_COVERAGE` of the longer's
  characters (a truncated paragraph; the guard stops a one-word string matching any paragraph that
  happens to contain it), or (c) ``difflib.SequenceMatcher(None, e, p, autojunk=False).ratio()``
  ``>=`` :data:`FUZZY_MIN_RATIO` -- the best paragraph wins, ties to the earliest;
* ``section`` -- the string (whitespace-collapsed, case-folded) names a section: it equals a
  heading's full ``" ::: "`` path, or else a heading's own title (the first such heading in
  pre-order). Annotators select headings as evidence (e.g. ``"Experiments ::: Data"``); the span is
  that section's own paragraphs (those before its first child), or its whole subtree when it owns
  none (a container).

Strings matching nowhere are counted ``unmatched`` and quarantined. Identical spans from different
strings (typically a heading and its only paragraph, both selected) are kept once
(``duplicate_span``) with the best method (exact > fuzzy > section); spans are ordered by
``(char_start, char_end)``.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from ingest.corpora.qasper.records import Answer, Question
from ingest.structure.segments import SectionRow

FLOAT_MARKER = "FLOAT SELECTED"
FUZZY_MIN_RATIO = 0.9
CONTAIN_MIN_COVERAGE = 0.5
TYPE_ORDER = ("extractive", "abstractive", "boolean")
METHOD_RANK = {"exact": 0, "fuzzy": 1, "section": 2}
QUESTION_REASONS = (
    "empty_question",
    "unanswerable",
    "no_evidence",
    "numeric_only",
    "table_figure_evidence_only",
    "evidence_unmatched",
)

_NUMBER = re.compile(
    r"[+\-\u2212\u00b1~\u2248<>]?\s*[$\u20ac\u00a3]?\s*"  # optional sign/approximation and currency
    r"(?:\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)"  # 12 / 1,234 / 0.5 / .5 / 1,234.5
    r"\s*(?:%|percent)?"  # optional percent
)


def is_numeric_answer(answer: Answer) -> bool:
    """True when the answer is a bare number.

    The answer text is its extractive spans when it has any (then *every* span must be a number),
    else its free-form answer; a yes/no answer is never numeric. A number, after stripping outer
    whitespace, fully matches: optional sign or approximation (``+ - − ± ~ ≈ < >``), optional
    currency (``$ € £``), digits with optional thousands commas and decimals (or ``.5``), optional
    ``%`` / ``percent``. ``"56,216"``, ``"3%"``, ``"0.6955"`` are numbers; ``"3 layers"`` is not.
    """
    if answer.extractive_spans:
        return all(_NUMBER.fullmatch(s.strip()) for s in answer.extractive_spans)
    if answer.free_form_answer.strip():
        return _NUMBER.fullmatch(answer.free_form_answer.strip()) is not None
    return False


def answer_type(answer: Answer) -> str | None:
    """``extractive`` / ``abstractive`` / ``boolean`` as in the QASPER evaluator; None = no answer."""
    if answer.extractive_spans:
        return "extractive"
    if answer.free_form_answer.strip():
        return "abstractive"
    if answer.yes_no is not None:
        return "boolean"
    return None


def query_type(answers: Sequence[Answer]) -> str:
    """Majority :func:`answer_type` of ``answers``; ties -> the first of :data:`TYPE_ORDER`."""
    votes = Counter(t for a in answers if (t := answer_type(a)) is not None)
    if not votes:
        raise ValueError("query_type needs at least one answering annotation")
    return max(TYPE_ORDER, key=lambda t: (votes[t], -TYPE_ORDER.index(t)))


@dataclass(frozen=True)
class Span:
    char_start: int
    char_end: int
    match_method: str  # exact | fuzzy | section


@dataclass
class QuestionOutcome:
    """What happened to one question: ``reason`` None means kept (with ``query_type`` and ``spans``).

    ``evidence_counts`` covers the evidence strings of questions that reached matching:
    input, duplicate_string, table_figure, empty, unmatched, duplicate_span, kept.
    ``unmatched`` lists the strings that matched nowhere (for the quarantine)."""

    reason: str | None
    query_type: str | None = None
    spans: tuple[Span, ...] = ()
    evidence_counts: Counter | None = None
    unmatched: tuple[str, ...] = ()


class EvidenceMatcher:
    """Maps evidence strings of one document to spans (see the module docstring for the rules)."""

    def __init__(
        self, text: str, para_offsets: Sequence[tuple[int, int]], rows: Sequence[SectionRow], row_paths: Sequence[str]
    ):
        self.offsets = list(para_offsets)
        self.paras = [text[s:e] for s, e in self.offsets]
        self.exact: dict[str, int] = {}
        for i, p in enumerate(self.paras):
            self.exact.setdefault(p, i)
        self.normalized = [_collapse(p) for p in self.paras]
        self.sections: dict[str, tuple[int, int]] = {}
        for key_of in (lambda r, path: path, lambda r, path: r.title):
            for row, path in zip(rows, row_paths):
                self.sections.setdefault(_collapse(key_of(row, path)).casefold(), _own_range(row, rows))

    def match(self, evidence: str) -> Span | None:
        """The span of one evidence string (outer whitespace already stripped), or None."""
        idx = self.exact.get(evidence)
        if idx is not None:
            return Span(*self.offsets[idx], "exact")
        idx = self._fuzzy(_collapse(evidence))
        if idx is not None:
            return Span(*self.offsets[idx], "fuzzy")
        rng = self.sections.get(_collapse(evidence).casefold())
        if rng is not None:
            return Span(self.offsets[rng[0]][0], self.offsets[rng[1]][1], "section")
        return None

    def _fuzzy(self, e: str) -> int | None:
        for i, p in enumerate(self.normalized):
            if p == e:
                return i
        for i, p in enumerate(self.normalized):
            short, long_ = (e, p) if len(e) <= len(p) else (p, e)
            if short and short in long_ and len(short) >= CONTAIN_MIN_COVERAGE * len(long_):
                return i
        best, best_ratio = None, FUZZY_MIN_RATIO
        for i, p in enumerate(self.normalized):
            sm = difflib.SequenceMatcher(None, e, p, autojunk=False)
            if sm.real_quick_ratio() < best_ratio or sm.quick_ratio() < best_ratio:
                continue
            ratio = sm.ratio()
            if ratio >= best_ratio and (best is None or ratio > best_ratio):
                best, best_ratio = i, ratio
        return best


def judge_question(question: Question, matcher: EvidenceMatcher) -> QuestionOutcome:
    """Apply the filters of the module docstring to one question and map its evidence."""
    if not question.text.strip():
        return QuestionOutcome("empty_question")
    kept = [a for a in question.answers if not a.unanswerable and answer_type(a) is not None]
    if not kept:
        return QuestionOutcome("unanswerable")
    strings = [e for a in kept for e in a.evidence]
    if not strings:
        return QuestionOutcome("no_evidence")
    if all(is_numeric_answer(a) for a in kept):
        return QuestionOutcome("numeric_only")
    counts: Counter = Counter(input=len(strings))
    seen: set[str] = set()
    candidates: list[str] = []
    for raw in strings:
        e = raw.strip()
        if e in seen:
            counts["duplicate_string"] += 1
            continue
        seen.add(e)
        if not e:
            counts["empty"] += 1
        elif e.startswith(FLOAT_MARKER):
            counts["table_figure"] += 1
        else:
            candidates.append(e)
    if not candidates:
        return QuestionOutcome("table_figure_evidence_only", evidence_counts=counts)
    spans: dict[tuple[int, int], Span] = {}
    unmatched: list[str] = []
    for e in candidates:
        span = matcher.match(e)
        if span is None:
            counts["unmatched"] += 1
            unmatched.append(e)
            continue
        key = (span.char_start, span.char_end)
        if key in spans:
            counts["duplicate_span"] += 1
            if METHOD_RANK[span.match_method] < METHOD_RANK[spans[key].match_method]:
                spans[key] = span
        else:
            spans[key] = span
    counts["kept"] = len(spans)
    if not spans:
        return QuestionOutcome("evidence_unmatched", evidence_counts=counts, unmatched=tuple(unmatched))
    ordered = tuple(spans[k] for k in sorted(spans))
    return QuestionOutcome(None, query_type(kept), ordered, counts, tuple(unmatched))


def _collapse(s: str) -> str:
    return " ".join(s.split())


def _own_range(row: SectionRow, rows: Sequence[SectionRow]) -> tuple[int, int]:
    """Inclusive paragraph range of ``row``'s own segment, or its subtree when it owns none."""
    first_child = next((r for r in rows if r.parent_idx == row.section_idx), None)
    if first_child is None or first_child.para_start == row.para_start:
        return row.para_start, row.para_end
    return row.para_start, first_child.para_start - 1
