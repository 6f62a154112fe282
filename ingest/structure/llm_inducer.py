"""LLM structure induction: ask, verify, one self-correction round, then a deterministic repair.

Per document (all documents go through each round as one cached batch):

1. The model sees the body paragraphs numbered ``[1] .. [n]`` (headings are not part of the body
   text, and the document title is not shown) with ``prompts/induce_structure.v<N>.txt``.
2. The answer is parsed and checked (:mod:`ingest.structure.llm_output`: schema problems and
   :func:`ingest.structure.segments.flat_violations`). A clean answer is ``usable`` ("first answer").
3. Otherwise the conversation continues with ``prompts/induce_correction.v<N>.txt`` listing the
   specific violations (at most ``MAX_LISTED``); a clean second answer is ``usable``
   ("self-corrected").
4. Otherwise the last answer that parsed with at least one section (second, else first) is
   repaired (:func:`ingest.structure.llm_output.repair`) -> ``repaired``, with the actions taken;
   an answer with no usable JSON or an empty list in both rounds is ``failed``.

Every resulting tree is built with :func:`ingest.structure.segments.build_sections` and must pass
:func:`ingest.structure.segments.verify_sections`; a tree that does not is ``failed`` with its violations.

Structured output (``structured``, the ``llm.structured`` setting; :mod:`ingest.llm.structured`): both
rounds send the prompt's JSON schema (``prompts/induce_structure.v<N>.schema.json``,
``induce_correction.v<N>.schema.json``) filled for the paragraphs shown (levels 1-4, paragraph numbers
``1..k``, at most ``k`` sections, titles of 1-80 characters), and the backend decodes under it. The schema
cannot state that sections tile the document, so steps 2-4 run as they are. Each result records whether
its requests were structured, whether its first answer was schema-valid (checked against the same
schema in both modes) and its ``outcome``: ``legal_as_returned`` | ``legal_after_correction`` |
``repaired`` | ``failed``.

Long documents and cut answers: when the model's context window is known (a local model) and the
whole numbered document plus ``max_tokens`` does not fit, the model is shown the first ``k``
paragraphs that do (:func:`ingest.llm.fit.fit_count`); the answer is checked against those ``k``, and
the unseen paragraphs ``k+1..n`` are appended to the last section (``truncated_to = k``, said in the
detail). A correction conversation that would not fit the window is not sent: the document goes to
the repair step (``correction_skipped``). An answer cut at ``max_tokens`` (finish reason ``length``)
is usually broken JSON and takes the same correct -> repair path; ``cut_answers`` counts them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from ingest.corpora.docs import StoredDoc
from ingest.llm import LLMCache, LLMRequest, Sampling, load_prompt
from ingest.llm import structured as structured_output
from ingest.llm.fit import fit_count
from ingest.structure.llm_output import (
    Parsed,
    answer_violations,
    parse_answer,
    repair,
    rows_for,
    schema_valid,
    to_headings,
)
from ingest.structure.segments import Heading, SectionRow

MAX_LISTED = 20  # violations listed back to the model in the correction round
STRUCTURE_PROMPT = "induce_structure"
CORRECTION_PROMPT = "induce_correction"


@dataclass(frozen=True)
class InductionResult:
    """``status``: usable | repaired | failed; ``rows`` empty when failed. ``truncated_to``: paragraphs
    shown when the document did not fit the model's context (None: all); ``cut_answers``: answers cut
    at max_tokens (0..2); ``correction_skipped``: the correction round did not fit the window.
    ``structured``: every request of the document was generated under its schema (None: no request
    was made); ``schema_valid``: the first answer satisfies the schema (None: no answer)."""

    doc_id: str
    status: str
    rows: list[SectionRow]
    detail: str
    self_corrected: bool = False
    truncated_to: int | None = None
    cut_answers: int = 0
    correction_skipped: bool = False
    structured: bool | None = None
    schema_valid: bool | None = None

    @property
    def outcome(self) -> str:
        """``legal_as_returned`` | ``legal_after_correction`` | ``repaired`` | ``failed``."""
        if self.status == "usable":
            return "legal_after_correction" if self.self_corrected else "legal_as_returned"
        return self.status


def numbered(paragraphs: Sequence[str]) -> str:
    """``[k] paragraph`` lines (k from 1) separated by blank lines."""
    return "\n\n".join(f"[{k}] {p}" for k, p in enumerate(paragraphs, start=1))


def _listing(violations: Sequence[str]) -> str:
    lines = [f"- {v}" for v in violations[:MAX_LISTED]]
    if len(violations) > MAX_LISTED:
        lines.append(f"- ... and {len(violations) - MAX_LISTED} more")
    return "\n".join(lines)


def _note(label: str, problems: Sequence[str]) -> str:
    return f"{label}: {'; '.join(problems[:3])}" + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else "")


def induce_with_llm(
    docs: Sequence[StoredDoc],
    llm: LLMCache,
    *,
    max_tokens: int = 4096,
    temperature: float = 0.0,
    seed: int | None = None,
    structured: bool | None = None,
) -> list[InductionResult]:
    """Induce a structure for every document (see module doc); results are in ``docs`` order.
    ``structured``: the ``llm.structured`` setting (None: where the backend can enforce a schema)."""
    ask = load_prompt(STRUCTURE_PROMPT)
    fix = load_prompt(CORRECTION_PROMPT)
    sampling = Sampling(temperature=temperature, max_tokens=max_tokens, seed=llm.seed if seed is None else seed)
    send_schema = structured_output.wanted(llm, structured)

    def first_messages(paragraphs: Sequence[str]) -> tuple[dict, ...]:
        return (
            {"role": "user", "content": ask.render(n_paragraphs=str(len(paragraphs)), paragraphs=numbered(paragraphs))},
        )

    full = [d.paragraph_texts() for d in docs]
    shown = [fit_count(llm, len(t), lambda k, t=t: first_messages(t[:k]), max_tokens) for t in full]
    texts = [t[:k] for t, k in zip(full, shown)]
    todo = [i for i, k in enumerate(shown) if k > 0]
    schemas = {i: ask.schema(n_paragraphs=len(texts[i])) for i in todo}
    first = {
        i: LLMRequest(docs[i].doc_id, ask.key, first_messages(texts[i]), sampling, schemas[i] if send_schema else None)
        for i in todo
    }
    completions, first_structured = structured_output.complete(llm, [first[i] for i in todo], "induce:llm")
    answers = dict(zip(todo, completions))
    parsed = {i: parse_answer(answers[i].text) for i in todo}
    problems = {i: answer_violations(parsed[i], len(texts[i])) for i in todo}

    conversations = {
        i: first[i].messages
        + (
            {"role": "assistant", "content": answers[i].text},
            {"role": "user", "content": fix.render(violations=_listing(problems[i]), n_paragraphs=str(len(texts[i])))},
        )
        for i in todo
        if problems[i]
    }
    skipped = {i for i, m in conversations.items() if not llm.fits(m, max_tokens)}
    retry = [i for i in conversations if i not in skipped]
    second = [
        LLMRequest(
            docs[i].doc_id,
            fix.key,
            conversations[i],
            sampling,
            fix.schema(n_paragraphs=len(texts[i])) if first_structured else None,
        )
        for i in retry
    ]
    completions, second_structured = structured_output.complete(llm, second, "induce:llm correction")
    second_answers = dict(zip(retry, completions))

    results = []
    for i, doc in enumerate(docs):
        if i not in answers:
            results.append(
                InductionResult(
                    doc.doc_id,
                    "failed",
                    [],
                    "not even the first paragraph fits the model's context window",
                    truncated_to=0,
                )
            )
            continue
        cut = int(answers[i].cut) + int(i in second_answers and second_answers[i].cut)
        result = _judge(doc, len(texts[i]), parsed[i], problems[i], second_answers.get(i), i in skipped)
        if shown[i] < len(full[i]):
            result = replace(
                result,
                truncated_to=shown[i],
                detail=result.detail
                + (
                    f"; the document did not fit the model's context: the model saw paragraphs 1..{shown[i]} of "
                    f"{len(full[i])}" + (", the rest was appended to the last section" if result.rows else "")
                ),
            )
        if cut:
            result = replace(result, detail=result.detail + f"; {cut} answer(s) cut at max_tokens ({max_tokens})")
        was_structured = first_structured and (i not in second_answers or second_structured)
        results.append(
            replace(
                result, cut_answers=cut, structured=was_structured, schema_valid=schema_valid(parsed[i], schemas[i])
            )
        )
    return results


def _judge(doc: StoredDoc, n_shown: int, parsed: Parsed, problems: list[str], second, skipped: bool) -> InductionResult:
    """The status of one document from its first answer and (if any) its corrected answer."""
    if not problems:
        return _finish(doc, n_shown, to_headings(parsed.sections), "usable", "valid first answer")
    first_note = _note("first answer", problems)
    if skipped:
        again, remaining = Parsed(None, []), []
        second_note = "correction round skipped: the conversation does not fit the model's context window"
    else:
        again = parse_answer(second.text)
        remaining = answer_violations(again, n_shown)
        if not remaining:
            return _finish(doc, n_shown, to_headings(again.sections), "usable", f"self-corrected; {first_note}", True)
        second_note = _note("corrected answer", remaining)
    source: Parsed | None = again if again.sections else (parsed if parsed.sections else None)
    if source is None:
        return InductionResult(
            doc.doc_id, "failed", [], f"no sections to repair; {first_note}; {second_note}", correction_skipped=skipped
        )
    headings, actions = repair(source.sections, n_shown)
    if not headings:
        return InductionResult(
            doc.doc_id,
            "failed",
            [],
            f"repair left nothing ({'; '.join(actions)}); {second_note}",
            correction_skipped=skipped,
        )
    which = "corrected" if source is again else "first"
    result = _finish(
        doc,
        n_shown,
        headings,
        "repaired",
        f"repaired {which} answer: {'; '.join(actions) or 'no change needed'}; {second_note}",
    )
    return replace(result, correction_skipped=skipped)


def _finish(
    doc: StoredDoc, n_shown: int, headings: list[Heading], status: str, detail: str, self_corrected: bool = False
) -> InductionResult:
    """Rows of ``headings`` (which tile the first ``n_shown`` paragraphs; the unseen rest goes to the
    last heading that owns paragraphs), verified."""
    unseen = len(doc.paragraphs) - n_shown
    if unseen:
        last = max(k for k, h in enumerate(headings) if h.n_paragraphs > 0)
        headings = [
            replace(h, n_paragraphs=h.n_paragraphs + unseen) if k == last else h for k, h in enumerate(headings)
        ]
    rows, violations, dropped = rows_for(headings, doc.paragraphs)
    if violations:
        return InductionResult(doc.doc_id, "failed", [], f"tree fails verification: {'; '.join(violations[:5])}")
    if dropped:
        detail += f"; {dropped} empty container heading(s) dropped"
    return InductionResult(doc.doc_id, status, rows, detail, self_corrected)
