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
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ingest.corpora.docs import StoredDoc
from ingest.llm import LLMCache, LLMRequest, Sampling, load_prompt
from ingest.structure.llm_output import Parsed, answer_violations, parse_answer, repair, rows_for, to_headings
from ingest.structure.segments import SectionRow

MAX_LISTED = 20  # violations listed back to the model in the correction round
STRUCTURE_PROMPT = "induce_structure"
CORRECTION_PROMPT = "induce_correction"


@dataclass(frozen=True)
class InductionResult:
    """``status``: usable | repaired | failed; ``rows`` empty when failed."""

    doc_id: str
    status: str
    rows: list[SectionRow]
    detail: str
    self_corrected: bool = False


def numbered(paragraphs: Sequence[str]) -> str:
    """``[k] paragraph`` lines (k from 1) separated by blank lines."""
    return "\n\n".join(f"[{k}] {p}" for k, p in enumerate(paragraphs, start=1))


def _listing(violations: Sequence[str]) -> str:
    lines = [f"- {v}" for v in violations[:MAX_LISTED]]
    if len(violations) > MAX_LISTED:
        lines.append(f"- ... and {len(violations) - MAX_LISTED} more")
    return "\n".join(lines)


def induce_with_llm(docs: Sequence[StoredDoc], llm: LLMCache, *, max_tokens: int = 4096,
                    temperature: float = 0.0, seed: int | None = None) -> list[InductionResult]:
    """Induce a structure for every document (see module doc); results are in ``docs`` order."""
    ask = load_prompt(STRUCTURE_PROMPT)
    fix = load_prompt(CORRECTION_PROMPT)
    sampling = Sampling(temperature=temperature, max_tokens=max_tokens, seed=llm.seed if seed is None else seed)
    texts = [d.paragraph_texts() for d in docs]
    first = [
        LLMRequest(d.doc_id, ask.key, ({"role": "user", "content": ask.render(n_paragraphs=str(len(t)), paragraphs=numbered(t))},),
                   sampling)
        for d, t in zip(docs, texts)
    ]
    answers = llm.generate(first, label="induce:llm")
    parsed = [parse_answer(a) for a in answers]
    problems = [answer_violations(p, len(t)) for p, t in zip(parsed, texts)]

    retry = [i for i, v in enumerate(problems) if v]
    second = [
        LLMRequest(docs[i].doc_id, fix.key, first[i].messages + (
            {"role": "assistant", "content": answers[i]},
            {"role": "user", "content": fix.render(violations=_listing(problems[i]), n_paragraphs=str(len(texts[i])))},
        ), sampling)
        for i in retry
    ]
    second_answers = dict(zip(retry, llm.generate(second, label="induce:llm correction"))) if second else {}

    results = []
    for i, doc in enumerate(docs):
        if not problems[i]:
            results.append(_finish(doc, to_headings(parsed[i].sections), "usable", "valid first answer"))
            continue
        again = parse_answer(second_answers[i])
        remaining = answer_violations(again, len(texts[i]))
        first_note = f"first answer: {'; '.join(problems[i][:3])}" + (f" (+{len(problems[i]) - 3} more)" if len(problems[i]) > 3 else "")
        if not remaining:
            results.append(_finish(doc, to_headings(again.sections), "usable", f"self-corrected; {first_note}", True))
            continue
        source: Parsed | None = again if again.sections else (parsed[i] if parsed[i].sections else None)
        second_note = f"corrected answer: {'; '.join(remaining[:3])}" + (f" (+{len(remaining) - 3} more)" if len(remaining) > 3 else "")
        if source is None:
            results.append(InductionResult(doc.doc_id, "failed", [], f"no sections to repair; {first_note}; {second_note}"))
            continue
        headings, actions = repair(source.sections, len(texts[i]))
        if not headings:
            results.append(InductionResult(doc.doc_id, "failed", [], f"repair left nothing ({'; '.join(actions)}); {second_note}"))
            continue
        which = "corrected" if source is again else "first"
        results.append(_finish(doc, headings, "repaired",
                               f"repaired {which} answer: {'; '.join(actions) or 'no change needed'}; {second_note}"))
    return results


def _finish(doc: StoredDoc, headings, status: str, detail: str, self_corrected: bool = False) -> InductionResult:
    rows, violations, dropped = rows_for(headings, doc.paragraphs)
    if violations:
        return InductionResult(doc.doc_id, "failed", [], f"tree fails verification: {'; '.join(violations[:5])}")
    if dropped:
        detail += f"; {dropped} empty container heading(s) dropped"
    return InductionResult(doc.doc_id, status, rows, detail, self_corrected)
