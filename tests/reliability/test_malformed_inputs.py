"""Malformed inputs across the loaders (QASPER, Wikipedia, BEIR, HotpotQA) and the experiment
config: each gives one line naming the file and the record (line, paper, page or key) and what is
wrong, exits non-zero, and leaves every table of a warehouse holding all four kinds of corpus as it
was. Records that can be set aside instead are quarantined with their reason while the rest loads."""

from __future__ import annotations

import copy
import json

import duckdb
import pytest
import yaml

from tests.ingest.corpora.wiki_fixtures import sample_pages, write_xml
from tests.reliability.cli import one_line, ragwh
from tests.reliability.compare import warehouse_differences
from tests.reliability.inputs import (
    BEIR_CORPUS,
    BEIR_QRELS,
    BEIR_QUERIES,
    HOTPOT_RECORDS,
    demo_papers,
    hotpot_record,
    write_beir,
    write_hotpot,
    write_qasper,
    write_wiki,
)
from warehouse.paths import PROJECT_ROOT

LATIN1 = b"\xe9"  # 'e' with an acute accent in latin-1: not UTF-8


def _insert_byte(path, before: bytes):
    raw = path.read_bytes()
    at = raw.index(before)
    path.write_bytes(raw[:at] + LATIN1 + raw[at:])
    return raw[:at].count(b"\n") + 1, at


# --- QASPER (corpus 'demo') -------------------------------------------------------------------------


def q_non_utf8(tmp):
    path = write_qasper(tmp / "q.json", demo_papers())
    line, at = _insert_byte(path, b"Battery-powered")
    return [
        "qasper",
        path,
        "--corpus",
        "demo",
    ], f"{path}, record line {line}: byte 0xe9 at offset {at} is not valid UTF-8"


def q_truncated(tmp):
    path = tmp / "q.json"
    path.write_text(json.dumps(demo_papers(), indent=1)[:5000])
    return ["qasper", path, "--corpus", "demo"], f"{path}, record line "  # then the line and "malformed JSON"


def q_missing_title(tmp):
    papers = demo_papers()
    del papers["demo.0003"]["title"]
    path = write_qasper(tmp / "q.json", papers)
    return ["qasper", path, "--corpus", "demo"], f"{path}, record demo.0003: missing field 'title'"


def q_wrong_type(tmp):
    papers = demo_papers()
    papers["demo.0002"]["full_text"][1]["paragraphs"] = "one string, not a list"
    path = write_qasper(tmp / "q.json", papers)
    return ["qasper", path, "--corpus", "demo"], (
        f"{path}, record demo.0002: full_text[1]: field 'paragraphs' is str, expected list"
    )


def q_parallel_lists(tmp):
    path = tmp / "q.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "p1",
                "title": "T",
                "abstract": "A",
                "qas": [],
                "full_text": {"section_name": ["a", "b"], "paragraphs": [["x"]]},
            }
        )
        + "\n"
    )
    return ["qasper", path, "--corpus", "demo"], (
        f"{path}, record line 1 (paper p1): full_text: parallel lists section_name[2], paragraphs[1] differ in length"
    )


def q_no_papers(tmp):
    path = tmp / "q.json"
    path.write_text("{}")
    return ["qasper", path, "--corpus", "demo"], f"{path}: no QASPER papers found"


# --- Wikipedia (corpus 'wiki') ----------------------------------------------------------------------


def w_non_utf8(tmp):
    path = write_xml(tmp / "w.xml", sample_pages())
    _, at = _insert_byte(path, b"Second Deep</title>")  # named after the last page title read before it
    return [
        "wikipedia",
        path,
        "--corpus",
        "wiki",
    ], f"{path}, record page 'Talk:Deep Article', byte {at}: not valid UTF-8"


def w_truncated_xml(tmp):
    path = write_xml(tmp / "w.xml", sample_pages())
    path.write_bytes(path.read_bytes()[:3000])
    return ["wikipedia", path, "--corpus", "wiki"], f"{path}, record after page 'Deep Article' (line "


def w_bad_jsonl_line(tmp):
    path = write_wiki(tmp / "w.jsonl")
    lines = path.read_text().splitlines()
    lines[1] = lines[1][:40]
    path.write_text("\n".join(lines) + "\n")
    return ["wikipedia", path, "--corpus", "wiki"], f"{path}, record line 2: invalid JSON"


def w_missing_wikitext(tmp):
    path = tmp / "w.jsonl"
    path.write_text(json.dumps({"title": "Alone", "page_id": 5}) + "\n")
    return ["wikipedia", path, "--corpus", "wiki"], f"{path}, record line 1 (page 'Alone'): missing field 'wikitext'"


def w_duplicate_page(tmp):
    pages = sample_pages()
    pages.append({**pages[0], "title": "Copy"})
    path = write_wiki(tmp / "w.jsonl", pages)
    return ["wikipedia", path, "--corpus", "wiki"], (
        f"{path}, record line {len(pages)} (page 'Copy'): page id 10 also appears in line 1 (page 'Deep Article')"
    )


def w_negative_page_id(tmp):
    path = tmp / "w.jsonl"
    path.write_text(json.dumps({"title": "Neg", "page_id": -4, "wikitext": "x"}) + "\n")
    return [
        "wikipedia",
        path,
        "--corpus",
        "wiki",
    ], f"{path}, record line 1 (page 'Neg'): field 'page_id' is negative (-4)"


# --- BEIR (corpus 'mini') ---------------------------------------------------------------------------


def b_non_utf8(tmp):
    folder = write_beir(tmp / "b")
    line, at = _insert_byte(folder / "corpus.jsonl", b"Delta")
    return ["beir", folder, "--corpus", "mini"], (
        f"{folder / 'corpus.jsonl'}, record line {line}: byte 0xe9 at offset {at} is not valid UTF-8"
    )


def b_invalid_json(tmp):
    folder = write_beir(tmp / "b")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "alpha?"}\n{"_id": "q2", "te\n')
    return ["beir", folder, "--corpus", "mini"], f"{folder / 'queries.jsonl'}, record line 2: invalid JSON"


def b_missing_id(tmp):
    folder = write_beir(tmp / "b", corpus=[*BEIR_CORPUS, {"title": "No id", "text": "Text."}])
    return ["beir", folder, "--corpus", "mini"], (
        f"{folder / 'corpus.jsonl'}, record line 4: missing or non-string field(s) ['_id']"
    )


def b_duplicate_doc(tmp):
    folder = write_beir(tmp / "b", corpus=[*BEIR_CORPUS, BEIR_CORPUS[0]])
    return [
        "beir",
        folder,
        "--corpus",
        "mini",
    ], f"{folder / 'corpus.jsonl'}, record line 4: duplicate document _id 'd1'"


def b_unknown_doc(tmp):
    folder = write_beir(tmp / "b", qrels=BEIR_QRELS + "q2\td9\t1\n")
    return ["beir", folder, "--corpus", "mini"], (
        f"{folder / 'qrels' / 'test.tsv'}, record line 4: corpus-id 'd9' is not in corpus.jsonl"
    )


def b_qrels_fields(tmp):
    folder = write_beir(tmp / "b", qrels=BEIR_QRELS + "q2 d2 1\n")
    return ["beir", folder, "--corpus", "mini"], (
        f"{folder / 'qrels' / 'test.tsv'}, record line 4: expected 3 tab-separated fields, got 1"
    )


def b_score_not_int(tmp):
    folder = write_beir(tmp / "b", qrels=BEIR_QRELS.replace("q2\td3\t1", "q2\td3\thigh"))
    return ["beir", folder, "--corpus", "mini"], f"{folder / 'qrels' / 'test.tsv'}, record line 3: score 'high'"


def b_missing_split(tmp):
    folder = write_beir(tmp / "b")
    return [
        "beir",
        folder,
        "--corpus",
        "mini",
        "--split",
        "dev",
    ], f"{folder / 'qrels' / 'dev.tsv'}: qrels file not found"


# --- HotpotQA (corpus 'hp') -------------------------------------------------------------------------


def h_non_utf8(tmp):
    path = write_hotpot(tmp / "h.json")
    line, at = _insert_byte(path, b"Oslo is")
    return [
        "hotpotqa",
        path,
        "--corpus",
        "hp",
    ], f"{path}, record line {line}: byte 0xe9 at offset {at} is not valid UTF-8"


def h_invalid_json(tmp):
    path = tmp / "h.json"
    path.write_text(json.dumps(HOTPOT_RECORDS, indent=1)[:-3])
    return ["hotpotqa", path, "--corpus", "hp"], f"{path}, record line "


def h_not_a_list(tmp):
    path = tmp / "h.json"
    path.write_text(json.dumps({"data": HOTPOT_RECORDS}))
    return ["hotpotqa", path, "--corpus", "hp"], f"{path}: expected a JSON list of questions"


def h_missing_question(tmp):
    broken = copy.deepcopy(HOTPOT_RECORDS)
    del broken[1]["question"]
    path = write_hotpot(tmp / "h.json", broken)
    return ["hotpotqa", path, "--corpus", "hp"], f"{path}, record 1 (_id 'h2'): missing or non-string field 'question'"


def h_fact_not_in_context(tmp):
    broken = copy.deepcopy(HOTPOT_RECORDS)
    broken[0]["supporting_facts"] = [["Nowhere", 0]]
    path = write_hotpot(tmp / "h.json", broken)
    return ["hotpotqa", path, "--corpus", "hp"], (
        f"{path}, record 0 (_id 'h1'): supporting-fact titles ['Nowhere'] are not among its context titles"
    )


def h_duplicate_id(tmp):
    path = write_hotpot(tmp / "h.json", [*HOTPOT_RECORDS, HOTPOT_RECORDS[0]])
    return ["hotpotqa", path, "--corpus", "hp"], f"{path}, record 2 (_id 'h1'): duplicate _id"


LOADER_CASES = [
    q_non_utf8,
    q_truncated,
    q_missing_title,
    q_wrong_type,
    q_parallel_lists,
    q_no_papers,
    w_non_utf8,
    w_truncated_xml,
    w_bad_jsonl_line,
    w_missing_wikitext,
    w_duplicate_page,
    w_negative_page_id,
    b_non_utf8,
    b_invalid_json,
    b_missing_id,
    b_duplicate_doc,
    b_unknown_doc,
    b_qrels_fields,
    b_score_not_int,
    b_missing_split,
    h_non_utf8,
    h_invalid_json,
    h_not_a_list,
    h_missing_question,
    h_fact_not_in_context,
    h_duplicate_id,
]


@pytest.mark.parametrize("case", LOADER_CASES, ids=lambda f: f.__name__)
def test_malformed_input_is_one_line_naming_file_and_record_and_changes_nothing(case, base, copy_of, tmp_path):
    warehouse = copy_of(base)
    args, where = case(tmp_path)
    result = ragwh("ingest", *args, "--warehouse", warehouse)
    assert result.exit_code == 1
    line = one_line(result)
    assert line.startswith(f"ingest {args[0]} failed, warehouse unchanged: {where}"), line
    assert warehouse_differences(base, warehouse) == {}


# --- the experiment config (ragwh run --config) ----------------------------------------------------


def _config(tmp, mutate=None, text: str | None = None):
    path = tmp / "exp.yml"
    if text is None:
        raw = yaml.safe_load((PROJECT_ROOT / "experiments" / "default.yml").read_text())
        mutate(raw)
        text = yaml.safe_dump(raw)
    path.write_text(text)
    return path


def c_yaml_syntax(tmp):
    path = _config(tmp, text="name: demo\ncorpora: [unclosed\n")
    return (
        path,
        f"config error: {path}: not valid YAML at line 3, column 1: expected ',' or ']', but got '<stream end>'",
    )


def c_unknown_key(tmp):
    path = _config(tmp, lambda r: r["bootstrap"].update(replicates=5))
    return path, f"config error: {path}: bootstrap.replicates: unknown key (allowed: B, seed)"


def c_unknown_metric(tmp):
    path = _config(tmp, lambda r: r["primary"].update(metric="ndcg@10"))
    return path, f"config error: {path}: primary.metric: 'ndcg@10' is not one of cov-nDCG@10, "


def c_unknown_embedder(tmp):
    path = _config(tmp, lambda r: r["embedders"].append({"model": "/no/such/model"}))
    return path, f"config error: {path}: embedders[1].model: embedder '/no/such/model' is neither a registered name"


def c_contrast_arm(tmp):
    path = _config(tmp, lambda r: r.update(conditions=[c for c in r["conditions"] if c != "P"]))
    return path, f"config error: {path}: contrasts[0]: C2 compares A3 - P but P is not in conditions"


def c_wrong_type(tmp):
    path = _config(tmp, lambda r: r.update(k="fifty"))
    return path, f"config error: {path}: k: expected an integer >= 1, got 'fifty'"


def c_missing_source(tmp):
    path = _config(tmp, lambda r: r.update(demo=False))
    (tmp / "data").mkdir()
    return (
        path,
        f"run failed: {path}: corpora[demo].sources: file(s) not found: {tmp / 'data' / 'demo.v0.3-format.json'}",
    )


CONFIG_CASES = [
    c_yaml_syntax,
    c_unknown_key,
    c_unknown_metric,
    c_unknown_embedder,
    c_contrast_arm,
    c_wrong_type,
    c_missing_source,
]


@pytest.mark.parametrize("case", CONFIG_CASES, ids=lambda f: f.__name__)
def test_bad_config_is_one_line_naming_file_and_key_and_changes_nothing(case, base, copy_of, tmp_path):
    warehouse = copy_of(base)
    config, start = case(tmp_path)
    result = ragwh("run", "--config", config, "--data", tmp_path / "data", "--warehouse", warehouse)
    assert result.exit_code in (1, 2)
    line = one_line(result)
    assert line.startswith(start), line
    assert warehouse_differences(base, warehouse) == {}


# --- records set aside: quarantined with their reason, the rest loads --------------------------------


def _quarantine(warehouse, corpus: str) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(
            "SELECT source_file, record_id, stage, reason FROM quarantine WHERE corpus = ? ORDER BY ALL", [corpus]
        ).fetchall()
    finally:
        con.close()


def test_set_aside_records_are_quarantined_with_their_reason(base, copy_of, tmp_path):
    warehouse = copy_of(base)
    papers = demo_papers()
    papers["demo.0005"]["full_text"] = []
    qasper = write_qasper(tmp_path / "q.json", papers)
    beir = write_beir(
        tmp_path / "b", corpus=[*BEIR_CORPUS, {"_id": "d4", "title": "Blank", "text": " "}], queries=BEIR_QUERIES
    )
    hotpot = write_hotpot(
        tmp_path / "h.json",
        [
            *HOTPOT_RECORDS,
            hotpot_record("h3", "Who is Bob?", ["Bob", "Eve"])
            | {"context": [["Bob", ["Bob is someone else."]], ["Eve", ["Eve."]]]},
        ],
    )
    wiki = write_wiki(tmp_path / "w.jsonl")
    for args in (
        ["qasper", qasper, "--corpus", "demo"],
        ["beir", beir, "--corpus", "mini"],
        ["hotpotqa", hotpot, "--corpus", "hp"],
        ["wikipedia", wiki, "--corpus", "wiki"],
    ):
        result = ragwh("ingest", *args, "--warehouse", warehouse)
        assert result.exit_code == 0, result.output
    assert ("papers", "no_sections") in {(s, r) for _, _, s, r in _quarantine(warehouse, "demo")}
    assert (str(qasper), "demo.0005", "papers", "no_sections") in _quarantine(warehouse, "demo")
    assert _quarantine(warehouse, "mini") == [(str(beir / "corpus.jsonl"), "d4", "beir_documents", "empty text")]
    assert _quarantine(warehouse, "hp") == [
        (
            str(hotpot),
            "Bob (question h3)",
            "hotpotqa_paragraphs",
            "same title as an earlier paragraph with a different text; the first is kept",
        )
    ]
    assert [(r, s) for _, r, s, _ in _quarantine(warehouse, "wiki")] == [("wiki/19", "articles")]
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        counts = dict(con.execute("SELECT corpus, count(*) FROM documents GROUP BY 1").fetchall())
    finally:
        con.close()
    assert counts == {"demo": 4, "mini": 3, "hp": 4, "wiki": 3}
