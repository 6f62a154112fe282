"""LLM induction: parsing, validation, the self-correction round and the deterministic repair."""

from __future__ import annotations

import json

import pytest

from ingest.corpora.docs import StoredDoc
from ingest.llm import LLMCache
from ingest.llm.scripted import ScriptedBackend
from ingest.structure.llm_inducer import induce_with_llm, numbered
from ingest.structure.llm_output import RawSection, answer_violations, parse_answer, repair, rows_for, to_headings
from ingest.structure.segments import Heading


def answer(*sections: tuple[str, int, int, int]) -> str:
    return json.dumps(
        {"sections": [{"title": t, "level": lv, "first_paragraph": a, "last_paragraph": b} for t, lv, a, b in sections]}
    )


def offsets(n: int) -> list[tuple[int, int]]:
    return [(10 * k, 10 * k + 8) for k in range(n)]


def repaired(sections, n):
    headings, actions = repair(parse_answer(answer(*sections)).sections, n)
    rows, problems, _ = rows_for(headings, offsets(n))
    assert problems == []
    return headings, actions


# --- parsing ---------------------------------------------------------------------------------------------


def test_parse_tolerates_prose_and_code_fences():
    body = answer(("Intro", 1, 1, 2), ("Method", 1, 3, 4))
    for text in (body, f"Sure! Here it is:\n```json\n{body}\n```\nHope this helps {{not json}}.", f"{{broken {body}"):
        parsed = parse_answer(text)
        assert parsed.problems == []
        assert parsed.sections == [RawSection("Intro", 1, 1, 2), RawSection("Method", 1, 3, 4)]


def test_parse_keeps_the_complete_entries_of_a_cut_answer():
    body = answer(("Intro", 1, 1, 2), ("Method", 1, 3, 4), ("Results", 1, 5, 9))
    cut = body[: body.index('"Results"') + 12]  # cut inside the third entry, as at max_tokens
    parsed = parse_answer("```json\n" + cut)
    assert parsed.sections == [RawSection("Intro", 1, 1, 2), RawSection("Method", 1, 3, 4)]
    assert parsed.problems == ["the answer's JSON never closes (cut off?): 2 complete section(s) read"]
    assert "the answer's JSON never closes" in answer_violations(parsed, 9)[0]
    headings, _ = repair(parsed.sections, 9)  # the repair closes the gap to the end
    assert headings == [Heading(1, "Intro", 2), Heading(1, "Method", 7)]
    assert parse_answer('{"sections": [').sections is None and parse_answer('{"sections": [{"tit').sections is None


def test_parse_reports_not_json_and_schema_problems():
    assert parse_answer("I think the document has three sections.").sections is None
    assert parse_answer('{"sections": "none"}').problems == ['"sections" is a str, not a list']
    parsed = parse_answer(
        '{"sections": [{"title": "", "level": "2", "first_paragraph": 1.0, "last_paragraph": "x"}, 7]}'
    )
    assert parsed.sections == [RawSection("", 2, 1, None), RawSection("", None, None, None)]
    assert parsed.problems == [
        "section 1: missing or empty title",
        "section 1: last_paragraph missing or not an integer ('x')",
        "section 2: not an object",
    ]


@pytest.mark.parametrize(
    "sections, expected",
    [
        (
            [("A", 1, 1, 3), ("B", 1, 3, 5)],
            "section 2: overlap, paragraphs 3..3 already belong to the previous section",
        ),
        ([("A", 1, 1, 2), ("B", 1, 4, 5)], "section 2: gap, paragraphs 3..3 belong to no section"),
        ([("A", 1, 1, 2), ("B", 3, 3, 5)], "section 2: level jumps from 1 to 3 (may rise by at most one)"),
        ([("A", 1, 1, 2), ("B", 1, 3, 9)], "section 2: paragraphs 3..9 invalid (must satisfy 1 <= first <= last <= 5)"),
        ([("A", 2, 1, 5)], "section 1: first section has level 2, must be 1"),
        ([], "no sections returned"),
    ],
)
def test_violations_are_specific(sections, expected):
    assert expected in answer_violations(parse_answer(answer(*sections)), 5)


def test_valid_answer_has_no_violations_and_builds_a_verified_tree():
    parsed = parse_answer(answer(("Intro", 1, 1, 2), ("Method", 1, 3, 3), ("Data", 2, 4, 4), ("Model", 2, 5, 6)))
    assert answer_violations(parsed, 6) == []
    rows, problems, dropped = rows_for(to_headings(parsed.sections), offsets(6))
    assert problems == [] and dropped == 0
    assert [(r.title, r.level, r.parent_idx, r.para_start, r.para_end) for r in rows] == [
        ("Intro", 1, None, 0, 1),
        ("Method", 1, None, 2, 5),
        ("Data", 2, 1, 3, 3),
        ("Model", 2, 1, 4, 5),
    ]


# --- repair ----------------------------------------------------------------------------------------------


def test_repair_overlap_truncates_the_earlier_section():
    headings, actions = repaired([("A", 1, 1, 3), ("B", 1, 3, 5)], 5)
    assert headings == [Heading(1, "A", 2), Heading(1, "B", 3)]
    assert actions == ["section 1: overlap resolved, 1..3 -> 1..2"]


def test_repair_subtree_spans_become_intro_plus_children():
    headings, _ = repaired([("Parent", 1, 1, 6), ("Kid1", 2, 3, 4), ("Kid2", 2, 5, 6)], 6)
    assert headings == [Heading(1, "Parent", 2), Heading(2, "Kid1", 2), Heading(2, "Kid2", 2)]


def test_repair_parent_with_same_start_as_child_becomes_container():
    headings, actions = repaired([("Parent", 1, 1, 4), ("Kid", 2, 1, 2), ("Kid2", 2, 3, 4)], 4)
    assert headings == [Heading(1, "Parent", 0), Heading(2, "Kid", 2), Heading(2, "Kid2", 2)]
    assert "section 1: overlap resolved, 1..4 -> no own paragraphs" in actions


def test_repair_closes_gaps_at_start_middle_and_end():
    headings, actions = repaired([("A", 1, 2, 3), ("B", 1, 6, 7)], 9)
    assert headings == [Heading(1, "A", 5), Heading(1, "B", 4)]
    assert actions == [
        "gap closed: section 1 extended to start at paragraph 1",
        "gap closed: paragraphs 4..5 given to section 1",
        "gap closed: section 2 extended to end at paragraph 9",
    ]


def test_repair_flattens_level_jumps():
    headings, actions = repaired([("A", 2, 1, 1), ("B", 4, 2, 2), ("C", 3, 3, 3), ("D", 1, 4, 4), ("E", 7, 5, 5)], 5)
    assert [h.level for h in headings] == [1, 2, 3, 1, 2]
    assert "section 5: level 7 -> 2" in actions


def test_repair_clamps_out_of_range_and_swaps_reversed():
    headings, actions = repaired([("A", 1, 0, 2), ("B", 1, 5, 3), ("C", 1, 6, 12)], 8)
    assert headings == [Heading(1, "A", 2), Heading(1, "B", 3), Heading(1, "C", 3)]
    assert "section 1: clamped 0..2 to 1..2" in actions
    assert "section 2: swapped reversed range 5..3" in actions
    assert "section 3: clamped 6..12 to 6..8" in actions


def test_repair_sorts_and_drops_swallowed_sections():
    headings, actions = repaired([("B", 1, 4, 6), ("A", 1, 1, 3), ("A2", 1, 2, 3)], 6)
    assert headings == [Heading(1, "A", 1), Heading(1, "A2", 2), Heading(1, "B", 3)]
    assert "reordered sections by first paragraph" in actions
    headings, actions = repaired([("A", 1, 1, 6), ("Dup", 1, 1, 6)], 6)
    assert headings == [Heading(1, "Dup", 6)] and "dropped section 1: covers no paragraph" in actions


def test_repair_fills_missing_fields_and_gives_up_on_nothing():
    sections = [RawSection("", None, 1, 2), RawSection("B", 1, None, 4), RawSection("C", None, 3, 4)]
    headings, actions = repair(sections, 4)
    assert headings == [Heading(1, "Section 1", 2), Heading(1, "C", 2)]
    assert "dropped section 2: no paragraph range" in actions
    assert repair([RawSection("A", 1, None, None)], 4)[0] == []
    assert repair([], 4)[0] == []


# --- the inducer with a scripted backend (self-correction round) -----------------------------------------


def make_doc(doc_id: str, n: int) -> StoredDoc:
    text = "T\n\n" + "\n\n".join(f"para {doc_id} {k}" for k in range(n))
    offs, pos = [], 3
    for k in range(n):
        p = f"para {doc_id} {k}"
        offs.append((pos, pos + len(p)))
        pos += len(p) + 2
    return StoredDoc(doc_id, "t", "T", text, "file.json", offs)


def test_inducer_first_answer_self_correction_repair_and_failure(con):
    script = {
        "d/ok": [answer(("A", 1, 1, 2), ("B", 1, 3, 4))],
        "d/fix": [answer(("A", 1, 1, 3), ("B", 1, 3, 4)), answer(("A", 1, 1, 2), ("B", 2, 3, 4))],
        "d/rep": [
            answer(("A", 1, 1, 3), ("B", 3, 3, 4)),
            "```json\n" + answer(("A", 1, 1, 3), ("B", 3, 3, 4)) + "\n```",
        ],
        "d/bad": ["I cannot do that.", '{"sections": []}'],
    }

    def respond(r):
        return script[r.item_id][len(r.messages) // 2]  # 1 message -> first answer, 3 -> correction

    backend = ScriptedBackend(respond)
    docs = [make_doc(d, 4) for d in script]
    results = {r.doc_id: r for r in induce_with_llm(docs, LLMCache(con, backend, progress=False))}
    assert {d: r.status for d, r in results.items()} == {
        "d/ok": "usable",
        "d/fix": "usable",
        "d/rep": "repaired",
        "d/bad": "failed",
    }
    assert results["d/fix"].self_corrected and not results["d/ok"].self_corrected
    assert [(r.title, r.level, r.para_start, r.para_end) for r in results["d/rep"].rows] == [
        ("A", 1, 0, 3),
        ("B", 2, 2, 3),
    ]
    assert "section 1: overlap resolved" in results["d/rep"].detail
    assert results["d/bad"].rows == [] and "no sections to repair" in results["d/bad"].detail

    first_prompt = next(r for r in backend.requests if r.item_id == "d/ok").messages[0]["content"]
    assert numbered(["para d/ok 0", "para d/ok 1", "para d/ok 2", "para d/ok 3"]) in first_prompt
    assert "[1] para d/ok 0\n\n[2] para d/ok 1" in first_prompt and "numbered from 1 to 4" in first_prompt
    correction = next(r for r in backend.requests if r.item_id == "d/fix" and len(r.messages) == 3)
    assert correction.prompt == "induce_correction.v1"
    assert correction.messages[1] == {"role": "assistant", "content": script["d/fix"][0]}
    assert (
        "- section 2: overlap, paragraphs 3..3 already belong to the previous section"
        in correction.messages[2]["content"]
    )
    assert sum(1 for r in backend.requests if r.item_id == "d/ok") == 1  # no correction for a valid answer


class WindowedScripted(ScriptedBackend):
    """A scripted backend with a context window; a prompt's tokens are its whitespace words (a test
    stand-in for a local model's tokenizer)."""

    def __init__(self, respond, window: int):
        super().__init__(respond)
        self.window = window

    def context_window(self) -> int:
        return self.window

    def prompt_tokens(self, messages) -> int:
        return sum(len(m["content"].split()) for m in messages)


def test_a_document_longer_than_the_window_is_shown_in_part_and_its_tail_appended(con):
    from ingest.llm import Completion

    seen = []

    def respond(r):
        seen.append(r)
        n = int(r.messages[0]["content"].split("numbered from 1 to ")[1].split(".")[0])
        if r.item_id == "d/cut":  # cut at max_tokens: broken JSON, and the correction would not fit the window
            return Completion('{"sections": [{"title": "A", "level": 1, "first_paragraph": 1, "last', "length")
        return answer(("A", 1, 1, 2), ("B", 1, 3, n))

    docs = [make_doc("d/long", 40), make_doc("d/short", 4), make_doc("d/cut", 40)]
    llm = LLMCache(con, WindowedScripted(respond, window=330), progress=False)
    results = {r.doc_id: r for r in induce_with_llm(docs, llm, max_tokens=50)}
    long, short, cut = results["d/long"], results["d/short"], results["d/cut"]
    shown = long.truncated_to
    assert 4 < shown < 40 and short.truncated_to is None
    asked = next(r for r in seen if r.item_id == "d/long")
    assert f"[{shown}] para d/long {shown - 1}" in asked.messages[0]["content"]
    assert f"[{shown + 1}]" not in asked.messages[0]["content"]
    assert (
        llm.backend.prompt_tokens(asked.messages) + 50
        <= 330
        < llm.backend.prompt_tokens(induce_prompt_with(docs[0], shown + 1)) + 50
    )
    assert long.status == "usable" and [(r.title, r.para_start, r.para_end) for r in long.rows] == [
        ("A", 0, 1),
        ("B", 2, 39),
    ]
    assert f"saw paragraphs 1..{shown} of 40" in long.detail
    assert (cut.cut_answers, cut.correction_skipped, cut.status) == (1, True, "failed")
    assert "cut at max_tokens" in cut.detail and "correction round skipped" in cut.detail
    assert sum(r.item_id == "d/cut" for r in seen) == 1  # the correction was not sent


def induce_prompt_with(doc, k):
    from ingest.llm import load_prompt

    paras = doc.paragraph_texts()[:k]
    return (
        {
            "role": "user",
            "content": load_prompt("induce_structure").render(n_paragraphs=str(k), paragraphs=numbered(paras)),
        },
    )


# --- structured output: the schema sent per document, and what is recorded ----------------------------------


def test_structured_requests_carry_each_documents_schema_and_results_record_it(con):
    script = {
        "d/ok": [answer(("A", 1, 1, 2), ("B", 1, 3, 4))],
        "d/fix": [answer(("A", 1, 1, 3), ("B", 1, 3, 4)), answer(("A", 1, 1, 2), ("B", 2, 3, 4))],
        "d/rep": [
            '{"sections": [{"title": "A", "level": "1", "first_paragraph": 1, "last_paragraph": 5}]}',
            '{"sections": [{"title": "A", "level": 1, "first_paragraph": 2, "last_paragraph": 6}]}',
        ],
        "d/bad": ["I cannot do that.", '{"sections": []}'],
    }
    sizes = {"d/ok": 4, "d/fix": 4, "d/rep": 6, "d/bad": 3}
    backend = ScriptedBackend(lambda r: script[r.item_id][len(r.messages) // 2], structured=True)
    docs = [make_doc(d, n) for d, n in sizes.items()]
    results = {r.doc_id: r for r in induce_with_llm(docs, LLMCache(con, backend, progress=False))}
    for r in backend.requests:
        n = sizes[r.item_id]
        sections = r.schema["properties"]["sections"]
        assert sections["maxItems"] == n and sections["items"]["properties"]["last_paragraph"]["maximum"] == n
        assert sections["items"]["properties"]["level"] == {"type": "integer", "minimum": 1, "maximum": 4}
    assert {r.prompt for r in backend.requests if len(r.messages) == 3} == {"induce_correction.v1"}
    got = {d: (r.outcome, r.structured, r.schema_valid) for d, r in results.items()}
    assert got == {
        "d/ok": ("legal_as_returned", True, True),
        "d/fix": ("legal_after_correction", True, True),
        "d/rep": ("repaired", True, False),  # level "1" is a string: parsed, but not schema-valid
        "d/bad": ("failed", True, False),
    }


def test_free_text_requests_carry_no_schema_and_are_checked_against_it_all_the_same(con):
    backend = ScriptedBackend(lambda r: answer(("A", 1, 1, 2), ("B", 5, 3, 4)), structured=True)
    llm = LLMCache(con, backend, progress=False)
    (result,) = induce_with_llm([make_doc("d/x", 4)], llm, structured=False)
    assert all(r.schema is None for r in backend.requests) and len(backend.requests) == 2
    assert (result.outcome, result.structured, result.schema_valid) == ("repaired", False, False)  # level 5 > 4
    plain = ScriptedBackend(lambda r: answer(("A", 1, 1, 4)))  # a backend without structured output: auto is off
    (result,) = induce_with_llm([make_doc("d/y", 4)], LLMCache(con, plain, progress=False))
    assert (result.outcome, result.structured, result.schema_valid) == ("legal_as_returned", False, True)
    assert plain.requests[0].schema is None


def test_a_truncated_documents_schema_bounds_the_paragraphs_shown(con):
    seen = []

    def respond(r):
        seen.append(r)
        return answer(("A", 1, 1, 2))

    backend = WindowedScripted(respond, window=330)
    backend.structured = True
    (result,) = induce_with_llm([make_doc("d/long", 40)], LLMCache(con, backend, progress=False), max_tokens=50)
    shown = result.truncated_to
    assert 4 < shown < 40 and seen[0].schema["properties"]["sections"]["maxItems"] == shown
