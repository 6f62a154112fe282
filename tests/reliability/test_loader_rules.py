"""One rule for every loader of both studies: a load that would leave a corpus with no documents or no
queries is refused before it writes (exit 1, one line, every table unchanged); every JSONL file is read
through one checked path (a line that is JSON but not an object is a one-line error naming file and
line; bytes that are not UTF-8 name the file and the offset); records that cannot be used are
quarantined with their reason and counted, never loaded or dropped silently."""

from __future__ import annotations

import copy

import duckdb
import pytest

from tests.reliability.cli import one_line, ragwh
from tests.reliability.compare import warehouse_differences
from tests.reliability.inputs import (
    AMBIGNQ_QUESTIONS,
    BEIR_CORPUS,
    ERB_DOCUMENTS,
    ERB_QUESTIONS,
    HOTPOT_RECORDS,
    demo_papers,
    hotpot_record,
    write_ambignq,
    write_beir,
    write_erb,
    write_hotpot,
    write_lines,
    write_qasper,
)

NOTHING_WRITTEN = "(nothing was written: fix the input, or the options that dropped every record)"


# --- loads that would leave a corpus without queries ----------------------------------------------


def _erb_empty_questions(tmp):
    questions, docs = write_erb(tmp / "erb", questions=[])
    return [
        "enterprise-rag",
        questions,
        "--documents",
        docs,
        "--corpus",
        "erb",
    ], f"{questions}, {docs}: no queries to load into corpus 'erb' (the input holds no questions)"


def _erb_no_judged_document(tmp):
    questions, docs = write_erb(tmp / "erb", questions=[{**q, "expected_doc_ids": ["dsid_zz"]} for q in ERB_QUESTIONS])
    return ["enterprise-rag", questions, "--documents", docs, "--corpus", "erb"], (
        f"{questions}, {docs}: no queries to load into corpus 'erb' (erb_qrels: missing_doc 2; "
        "erb_questions: no_judged_document 2)"
    )


def _ambignq_no_relevant_passage(tmp):
    questions, passages = write_ambignq(
        tmp / "anq",
        questions=[{**q, "annotations": [{"type": "singleAnswer", "answer": ["omega"]}]} for q in AMBIGNQ_QUESTIONS],
    )
    return [
        "ambignq",
        questions,
        "--passages",
        passages,
        "--corpus",
        "anq",
    ], f"{questions}, {passages}: no queries to load into corpus 'anq' (ambignq_questions: no_relevant_passage 2)"


def _beir_no_judged_query(tmp):
    path = write_beir(tmp / "beir_mini", qrels="query-id\tcorpus-id\tscore\n")
    return [
        "beir",
        path,
        "--corpus",
        "mini",
    ], f"{path}: no queries to load into corpus 'mini' (beir_queries: not_in_split 2)"


def _qasper_no_questions(tmp):
    path = write_qasper(tmp / "q.json", {pid: {**p, "qas": []} for pid, p in demo_papers().items()})
    return [
        "qasper",
        path,
        "--corpus",
        "demo",
    ], f"{path}: no queries to load into corpus 'demo' (the input holds no questions)"


def _hotpot_only_blank_questions(tmp):
    path = write_hotpot(tmp / "h.json", [{**r, "question": " \t"} for r in HOTPOT_RECORDS])
    return [
        "hotpotqa",
        path,
        "--corpus",
        "hp",
    ], f"{path}: no documents to load into corpus 'hp' (hotpotqa_questions: empty_question 2)"


REFUSED = [
    _erb_empty_questions,
    _erb_no_judged_document,
    _ambignq_no_relevant_passage,
    _beir_no_judged_query,
    _qasper_no_questions,
    _hotpot_only_blank_questions,
]


@pytest.mark.parametrize("case", REFUSED, ids=lambda f: f.__name__.strip("_"))
def test_a_load_leaving_no_queries_is_refused_and_changes_nothing(case, base_rewriting, copy_of, tmp_path):
    warehouse = copy_of(base_rewriting)
    args, message = case(tmp_path)
    result = ragwh("ingest", *args, "--warehouse", warehouse)
    assert result.exit_code == 1, result.output
    assert one_line(result) == f"ingest {args[0]} failed, warehouse unchanged: {message} {NOTHING_WRITTEN}"
    assert warehouse_differences(base_rewriting, warehouse) == {}


# --- the one checked JSONL path, and files that are not UTF-8 --------------------------------------


def _beir_corpus_list_line(tmp):
    path = write_beir(tmp / "beir_mini", corpus=[BEIR_CORPUS[0], [1, 2], *BEIR_CORPUS[1:]])
    return [
        "beir",
        path,
        "--corpus",
        "mini",
    ], f"{path / 'corpus.jsonl'}, record line 2: expected a JSON object, got a list"


def _ambignq_passages_null_line(tmp):
    questions, passages = write_ambignq(tmp / "anq", passages=[None, *ERB_DOCUMENTS])
    return [
        "ambignq",
        questions,
        "--passages",
        passages,
        "--corpus",
        "anq",
    ], f"{passages}, record line 1: expected a JSON object, got null"


def _erb_questions_list_line(tmp):
    questions, docs = write_erb(tmp / "erb", questions=[ERB_QUESTIONS[0], [1, 2]])
    return [
        "enterprise-rag",
        questions,
        "--documents",
        docs,
        "--corpus",
        "erb",
    ], f"{questions}, record line 2: expected a JSON object, got a list"


def _erb_questions_string_line(tmp):
    questions, docs = write_erb(tmp / "erb", questions=['"just text"', ERB_QUESTIONS[0]])
    return [
        "enterprise-rag",
        questions,
        "--documents",
        docs,
        "--corpus",
        "erb",
    ], f"{questions}, record line 1: expected a JSON object, got a string"


def _qasper_jsonl_null_line(tmp):
    path = write_lines(tmp / "q.jsonl", ["null"])
    return ["qasper", path, "--corpus", "demo"], f"{path}, record line 1: expected a JSON object, got null"


def _ambignq_questions_not_utf8(tmp):
    questions, passages = write_ambignq(tmp / "anq")
    raw = questions.read_bytes()
    at = raw.index(b"Which one")
    questions.write_bytes(raw[:at] + b"\xe9" + raw[at:])
    return [
        "ambignq",
        questions,
        "--passages",
        passages,
        "--corpus",
        "anq",
    ], f"{questions}, record line 1: byte 0xe9 at offset {at} is not valid UTF-8"


def _erb_export_not_utf8(tmp):
    questions, docs = write_erb(tmp / "erb", questions=[{**ERB_QUESTIONS[0], "expected_doc_ids": ["dsid_" + "a" * 32]}])
    (docs / "corpus.jsonl").unlink()
    (docs / f"dsid_{'a' * 32}__note.txt").write_bytes(b"Title\nBody \xff text\n")
    return [
        "enterprise-rag",
        questions,
        "--documents",
        docs,
        "--corpus",
        "erb",
    ], f"{docs / ('dsid_' + 'a' * 32 + '__note.txt')}, record line 2: byte 0xff at offset 11 is not valid UTF-8"


UNREADABLE = [
    _beir_corpus_list_line,
    _ambignq_passages_null_line,
    _erb_questions_list_line,
    _erb_questions_string_line,
    _qasper_jsonl_null_line,
    _ambignq_questions_not_utf8,
    _erb_export_not_utf8,
]


@pytest.mark.parametrize("case", UNREADABLE, ids=lambda f: f.__name__.strip("_"))
def test_an_unreadable_record_is_one_line_naming_file_and_line(case, base_rewriting, copy_of, tmp_path):
    warehouse = copy_of(base_rewriting)
    args, where = case(tmp_path)
    result = ragwh("ingest", *args, "--warehouse", warehouse)
    assert result.exit_code == 1, result.output
    line = one_line(result)
    assert line.startswith(f"ingest {args[0]} failed, warehouse unchanged: {where}"), line
    assert warehouse_differences(base_rewriting, warehouse) == {}


# --- records set aside: quarantined with the reason and counted ------------------------------------


def _rows(warehouse, sql: str, params: list) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def test_blank_hotpotqa_question_and_untitled_paragraph_are_quarantined(base_rewriting, copy_of, tmp_path):
    warehouse = copy_of(base_rewriting)
    records = copy.deepcopy(HOTPOT_RECORDS) + [hotpot_record("h3", "   ", ["Kim", "Lee"])]
    records[1]["context"].append(["", ["A paragraph without a title."]])
    path = write_hotpot(tmp_path / "h.json", records)
    result = ragwh("ingest", "hotpotqa", path, "--corpus", "hp", "--warehouse", warehouse)
    assert result.exit_code == 0, result.output
    assert _rows(warehouse, "SELECT record_id, stage, reason FROM quarantine WHERE corpus = 'hp' ORDER BY ALL", []) == [
        ("'' (question h2)", "hotpotqa_paragraphs", "empty title: a document is named by its title"),
        ("2 (_id 'h3')", "hotpotqa_questions", "the question is empty or whitespace: not loaded, nor its paragraphs"),
    ]
    assert dict(
        _rows(
            warehouse, "SELECT stage || '.' || reason, n FROM funnel WHERE corpus = 'hp' AND reason LIKE 'empty%'", []
        )
    ) == {"hotpotqa_questions.empty_question": 1, "hotpotqa_paragraphs.empty_title": 1}
    assert _rows(warehouse, "SELECT query_id FROM queries WHERE corpus = 'hp' ORDER BY 1", []) == [
        ("hp/h1",),
        ("hp/h2",),
    ]
    assert _rows(warehouse, "SELECT doc_id FROM documents WHERE corpus = 'hp' ORDER BY 1", []) == [
        ("hp/Ada",),
        ("hp/Bob",),
        ("hp/Oslo",),
    ]


def test_a_gold_answer_that_is_not_a_string_is_quarantined_and_counted(base_rewriting, copy_of, tmp_path):
    warehouse = copy_of(base_rewriting)
    questions, docs = write_erb(
        tmp_path / "erb", questions=[{**ERB_QUESTIONS[0], "gold_answer": 42}, {**ERB_QUESTIONS[1], "gold_answer": None}]
    )
    result = ragwh(
        "ingest", "enterprise-rag", questions, "--documents", docs, "--corpus", "erb", "--warehouse", warehouse
    )
    assert result.exit_code == 0, result.output
    assert _rows(
        warehouse, "SELECT source_file, record_id, stage, reason FROM quarantine WHERE corpus = 'erb'", []
    ) == [
        (
            f"{questions}:1",
            "e1",
            "erb_answers",
            "gold_answer is a number, not a string: the query is loaded without a gold answer",
        )
    ]
    assert dict(
        _rows(warehouse, "SELECT reason, n FROM funnel WHERE corpus = 'erb' AND stage = 'erb_answers'", [])
    ) == {"input": 2, "not_a_string": 1, "no_gold_answer": 1}
    assert _rows(warehouse, "SELECT count(*) FROM queries WHERE corpus = 'erb'", []) == [(2,)]
    assert _rows(warehouse, "SELECT count(*) FROM query_answers WHERE starts_with(query_id, 'erb/')", []) == [(0,)]
