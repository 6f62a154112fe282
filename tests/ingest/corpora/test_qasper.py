"""QASPER ingestion: offsets, gold structure, both layouts, question filters, evidence matching,
bad input, atomic and idempotent loads, and the whole shared sample.

The tiny fixture (:func:`papers_v03`) is written by hand in the v0.3 layout; :func:`to_hf` re-nests
it into the allenai/qasper parallel-list layout (a pure re-nesting, as the real HF files are).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ingest.corpora.qasper.load as qasper_module
import warehouse.db as db_module
from ingest.corpora.qasper.load import STAGES, load_qasper
from ingest.corpora.qasper.questions import Answer, is_numeric_answer, query_type
from ingest.corpora.qasper.records import merge_papers, read_papers, split_from_filename
from ingest.corpora.qasper.text import flatten_paper
from ingest.errors import IngestError
from ingest.structure.segments import SectionRow, verify_sections
from warehouse.db import connect

# --------------------------------------------------------------------------- fixture


def ans(ext=(), ff="", yn=None, ev=(), un=False) -> dict:
    return {
        "answer": {
            "unanswerable": un,
            "extractive_spans": list(ext),
            "yes_no": yn,
            "free_form_answer": ff,
            "evidence": list(ev),
            "highlighted_evidence": [],
        },
        "annotation_id": "a",
        "worker_id": "w",
    }


def q(qid: str, *answers: dict, text: str | None = None) -> dict:
    return {
        "question": f"question {qid}?" if text is None else text,
        "question_id": qid,
        "nlp_background": "",
        "topic_background": "",
        "paper_read": "",
        "search_query": "",
        "question_writer": "w",
        "answers": list(answers),
    }


FOX = "The quick brown fox jumps over the lazy dog near the river bank."

P1_TEXT = (
    "A Tiny Paper\n\nAbstract text one.\n\nOpening para.\n\nIntro p1.\n\nIntro p2 with   spaces.\n\nModel p1."
    "\n\nDeep p.\n\nData p1.\n\nData p2.\n\nBlank part p.\n\n" + FOX + "\n\nTable discussion."
)
P1_PARAS = [
    "Abstract text one.",
    "Opening para.",
    "Intro p1.",
    "Intro p2 with   spaces.",
    "Model p1.",
    "Deep p.",
    "Data p1.",
    "Data p2.",
    "Blank part p.",
    FOX,
    "Table discussion.",
]


def papers_v03() -> dict:
    """Three papers: 0000.00001 has no sections, 0000.00002 is the main one, 0000.00003 has no text."""
    main = {
        "title": "A  Tiny\nPaper ",
        "abstract": "Abstract text one.",
        "full_text": [
            {"section_name": None, "paragraphs": ["Opening para."]},
            {"section_name": "Intro", "paragraphs": ["Intro p1.", "  ", "Intro p2 with   spaces. "]},
            {"section_name": "Method ::: Model", "paragraphs": ["Model p1."]},
            {"section_name": "Method ::: Model ::: Deep ::: Deeper ::: Deepest", "paragraphs": ["Deep p."]},
            {"section_name": "Method ::: Data", "paragraphs": ["Data p1.", "Data p2."]},
            {"section_name": "Empty", "paragraphs": [""]},
            {"section_name": " ::: ", "paragraphs": ["Blank part p."]},
            {"section_name": "Results", "paragraphs": [FOX]},
            {"section_name": "Results ::: Table", "paragraphs": ["Table discussion."]},
        ],
        "qas": [
            q("q-exact", ans(ext=["Intro p1"], ev=["Intro p1."]), ans(ff="intro", ev=["Intro p1."])),
            q("q-fuzzy-ws", ans(ff="spaces", ev=["Intro p2 with spaces."])),
            q("q-fuzzy-contain", ans(ext=["Data"], ev=["Data p2"])),
            q("q-fuzzy-ratio", ans(ff="a fox", ev=[FOX.replace("jumps", "jumped")])),
            q("q-section", ans(yn=True, ev=["Method ::: Data", "Results", "method"])),
            q("q-majority", ans(ext=["x"], ev=["Opening para."]), ans(ff="y"), ans(ff="z")),
            q("q-unanswerable", ans(un=True)),
            q("q-no-evidence", ans(ff="no evidence given")),
            q("q-numeric", ans(ff="42", ev=["Data p1."]), ans(ext=["1,234.5"], ev=["Data p1."])),
            q("q-float", ans(ff="see table", ev=["FLOAT SELECTED: Table 1: scores", ""])),
            q("q-unmatched", ans(ff="fox", ev=["quick brown"])),
            q("q-empty", ans(ff="a", ev=["Intro p1."]), text="  "),
            q("q-partial", ans(ext=["Table"], ev=["Table discussion.", "Nowhere to be found at all."])),
            q("q-dup-span", ans(yn=False, ev=["Results", FOX])),
        ],
        "figures_and_tables": [],
    }
    no_sections = {
        "title": "No Sections",
        "abstract": "Only an abstract.",
        "full_text": [],
        "qas": [q("q-ns", ans(ff="x", ev=["Only an abstract."]))],
        "figures_and_tables": [],
    }
    no_text = {
        "title": "No Text",
        "abstract": "",
        "full_text": [{"section_name": "Intro", "paragraphs": ["", " "]}],
        "qas": [q("q-nt", ans(ff="x", ev=["x"]))],
        "figures_and_tables": [],
    }
    return {"0000.00002": main, "0000.00001": no_sections, "0000.00003": no_text}


def to_hf(papers: dict) -> list[dict]:
    """The allenai/qasper layout of v0.3 papers: ``id`` plus parallel lists."""
    out = []
    for pid, p in papers.items():
        out.append(
            {
                "id": pid,
                "title": p["title"],
                "abstract": p["abstract"],
                "full_text": {
                    "section_name": [s["section_name"] for s in p["full_text"]],
                    "paragraphs": [s["paragraphs"] for s in p["full_text"]],
                },
                "qas": {
                    key: [qq[key] for qq in p["qas"]]
                    for key in (
                        "question",
                        "question_id",
                        "nlp_background",
                        "topic_background",
                        "paper_read",
                        "search_query",
                        "question_writer",
                    )
                }
                | {
                    "answers": [
                        {
                            "answer": [a["answer"] for a in qq["answers"]],
                            "annotation_id": [a["annotation_id"] for a in qq["answers"]],
                            "worker_id": [a["worker_id"] for a in qq["answers"]],
                        }
                        for qq in p["qas"]
                    ]
                },
                "figures_and_tables": {"caption": [], "file": []},
            }
        )
    return out


def write_v03(path: Path, papers: dict) -> Path:
    path.write_text(json.dumps(papers, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def write_hf(path: Path, papers: dict) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in to_hf(papers)), encoding="utf-8")
    return path


@pytest.fixture()
def v03_file(tmp_path) -> Path:
    return write_v03(tmp_path / "tiny_train.v0.3.json", papers_v03())


@pytest.fixture()
def hf_file(tmp_path) -> Path:
    return write_hf(tmp_path / "tiny_train.hf.jsonl", papers_v03())


def table_rows(con, table: str, drop: tuple[str, ...] = ()) -> list[tuple]:
    cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall() if r[0] not in drop]
    return con.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY ALL").fetchall()


LOADED = ("documents", "paragraphs", "sections", "queries", "evidence", "funnel", "quarantine")


def funnel(con, stage: str) -> dict[str, int]:
    return dict(con.execute("SELECT reason, n FROM funnel WHERE stage = ?", [stage]).fetchall())


def main_paper(path: Path):
    (paper,) = [p for p in read_papers(path) if p.paper_id == "0000.00002"]
    return paper


# --------------------------------------------------------------------------- text and offsets


def test_flat_text_and_offsets_recorded_while_emitting(v03_file):
    flat = flatten_paper(main_paper(v03_file))
    assert flat.title == "A Tiny Paper"
    assert flat.text == P1_TEXT
    assert [flat.text[s:e] for s, e in flat.para_offsets] == P1_PARAS
    assert flat.para_offsets[:2] == [(14, 32), (34, 47)]  # len("A Tiny Paper") + 2 = 14; 14 + 18 = 32; 32 + 2 = 34
    for (_, e), (s, _) in zip(flat.para_offsets, flat.para_offsets[1:]):
        assert flat.text[e:s] == "\n\n"
    c = flat.counts
    assert (c.entries, c.null_section_name, c.empty_section_name, c.depth_clamped) == (9, 1, 1, 1)
    assert (c.paragraphs_input, c.empty_paragraphs) == (13, 2)


def test_gold_sections_nesting_containers_clamping_and_null_names(con, v03_file):
    load_qasper(con, [v03_file])
    rows = con.execute(
        "SELECT section_idx, parent_idx, level, title, para_start, para_end FROM sections "
        "WHERE doc_id = 'qasper/0000.00002' AND structure = 'gold' ORDER BY section_idx"
    ).fetchall()
    assert rows == [
        (0, None, 1, "Abstract", 0, 0),
        (1, None, 1, "(untitled)", 1, 1),  # section_name null
        (2, None, 1, "Intro", 2, 3),  # the blank paragraph is skipped
        (3, None, 1, "Method", 4, 7),  # container: appears only as a prefix
        (4, 3, 2, "Model", 4, 5),
        (5, 4, 3, "Deep", 5, 5),  # container of the clamped heading
        (6, 5, 4, "Deeper ::: Deepest", 5, 5),  # 5 levels clamped to 4
        (7, 3, 2, "Data", 6, 7),
        # "Empty" owns only an empty paragraph: dropped by build_sections
        (8, None, 1, "(untitled)", 8, 8),  # ' ::: ': blank parts
        (9, 8, 2, "(untitled)", 8, 8),
        (10, None, 1, "Results", 9, 10),
        (11, 10, 2, "Table", 10, 10),
    ]
    text = con.execute("SELECT text FROM documents WHERE doc_id = 'qasper/0000.00002'").fetchone()[0]
    paras = con.execute(
        "SELECT char_start, char_end FROM paragraphs WHERE doc_id = 'qasper/0000.00002' ORDER BY para_idx"
    ).fetchall()
    assert [text[s:e] for s, e in paras] == P1_PARAS
    sql_slices = con.execute(
        "SELECT substring(d.text, p.char_start + 1, p.char_end - p.char_start) FROM paragraphs p "
        "JOIN documents d USING (doc_id) WHERE doc_id = 'qasper/0000.00002' ORDER BY para_idx"
    )
    assert [r[0] for r in sql_slices.fetchall()] == P1_PARAS
    full = con.execute(
        "SELECT section_idx, parent_idx, level, title, para_start, para_end, char_start, char_end "
        "FROM sections WHERE doc_id = 'qasper/0000.00002' ORDER BY section_idx"
    ).fetchall()
    assert verify_sections([SectionRow(*r) for r in full], paras) == []
    assert funnel(con, "section_names") == {
        "input": 9,
        "null_section_name": 1,
        "empty_section_name": 1,
        "depth_clamped": 1,
        "kept": 9,
    }
    assert funnel(con, "headings") == {"input": 13, "no_paragraphs": 1, "kept": 12}
    assert funnel(con, "paragraphs") == {"input": 13, "empty": 2, "kept": 11}


# --------------------------------------------------------------------------- questions and evidence


def test_question_funnel_each_drop_reason(con, v03_file):
    load_qasper(con, [v03_file])
    assert funnel(con, "questions") == {
        "input": 16,
        "paper_quarantined": 2,
        "duplicate_question_id": 0,
        "empty_question": 1,
        "unanswerable": 1,
        "no_evidence": 1,
        "numeric_only": 1,
        "table_figure_evidence_only": 1,
        "evidence_unmatched": 1,
        "kept": 8,
    }
    types = dict(con.execute("SELECT query_id, query_type FROM queries").fetchall())
    assert types == {
        "qasper/q-exact": "extractive",  # extractive vs abstractive tie -> extractive
        "qasper/q-fuzzy-ws": "abstractive",
        "qasper/q-fuzzy-contain": "extractive",
        "qasper/q-fuzzy-ratio": "abstractive",
        "qasper/q-section": "boolean",
        "qasper/q-majority": "abstractive",  # 2 abstractive vs 1 extractive
        "qasper/q-partial": "extractive",
        "qasper/q-dup-span": "boolean",  # yes_no False is still a boolean answer
    }
    for stage, reasons in STAGES.items():
        got = funnel(con, stage)
        assert set(got) == set(reasons)
        if "input" in got and stage != "section_names":
            assert got["input"] == sum(n for r, n in got.items() if r != "input"), stage


def test_each_match_method_and_span(con, v03_file):
    load_qasper(con, [v03_file])
    offsets = dict(
        enumerate(
            con.execute(
                "SELECT char_start, char_end FROM paragraphs WHERE doc_id = 'qasper/0000.00002' ORDER BY para_idx"
            ).fetchall()
        )
    )

    def span(first: int, last: int) -> tuple[int, int]:
        return offsets[first][0], offsets[last][1]

    got = con.execute(
        "SELECT query_id, span_idx, char_start, char_end, match_method FROM evidence ORDER BY query_id, span_idx"
    ).fetchall()
    expected = {
        "qasper/q-dup-span": [(*span(9, 9), "exact")],  # heading + its only paragraph: best method kept
        "qasper/q-exact": [(*span(2, 2), "exact")],
        "qasper/q-fuzzy-contain": [(*span(7, 7), "fuzzy")],  # 'Data p2' inside 'Data p2.'
        "qasper/q-fuzzy-ratio": [(*span(9, 9), "fuzzy")],  # difflib ratio >= 0.9
        "qasper/q-fuzzy-ws": [(*span(3, 3), "fuzzy")],  # whitespace runs collapsed
        "qasper/q-majority": [(*span(1, 1), "exact")],
        "qasper/q-partial": [(*span(10, 10), "exact")],
        # 'method' (case-folded) -> container Method, its subtree 4..7; 'Method ::: Data' -> 6..7;
        # 'Results' -> its own paragraph only, not its child's
        "qasper/q-section": [(*span(4, 7), "section"), (*span(6, 7), "section"), (*span(9, 9), "section")],
    }
    flat = [(qid, k, *s) for qid, spans in sorted(expected.items()) for k, s in enumerate(spans)]
    assert got == flat
    assert funnel(con, "evidence") == {
        "input": 16,
        "duplicate_string": 1,
        "empty": 1,
        "table_figure": 1,
        "unmatched": 2,
        "duplicate_span": 1,
        "kept": 10,
    }
    assert funnel(con, "evidence_match") == {"exact": 4, "fuzzy": 3, "section": 3}
    quarantined = con.execute(
        "SELECT record_id, stage FROM quarantine WHERE stage = 'evidence' ORDER BY ALL"
    ).fetchall()
    assert quarantined == [("q-partial", "evidence"), ("q-unmatched", "evidence")]


def test_query_type_majority_and_tie_order():
    ext, abs_, yes = (
        Answer(False, ("a",), None, "", ()),
        Answer(False, (), None, "b", ()),
        Answer(False, (), True, "", ()),
    )
    assert query_type([ext, abs_, abs_]) == "abstractive"
    assert query_type([yes, yes, ext]) == "boolean"
    assert query_type([yes, abs_]) == "abstractive"
    assert query_type([yes, ext]) == "extractive"
    assert query_type([ext, abs_, yes]) == "extractive"
    with pytest.raises(ValueError):
        query_type([Answer(False, (), None, "", ())])


@pytest.mark.parametrize(
    "spans, free_form, yes_no, numeric",
    [
        ((), "42", None, True),
        (("56,216",), "", None, True),
        ((), " 3% ", None, True),
        ((), "0.6955", None, True),
        ((), "~ 1,000.5 percent", None, True),
        (("$5", "-2"), "", None, True),
        ((), ".5", None, True),
        ((), "3 layers", None, False),
        (("12", "BLEU"), "", None, False),
        ((), "", True, False),
        ((), "1,23", None, False),
        ((), "", None, False),
    ],
)
def test_numeric_only_definition(spans, free_form, yes_no, numeric):
    assert is_numeric_answer(Answer(False, spans, yes_no, free_form, ())) is numeric


# --------------------------------------------------------------------------- layouts and merging


def test_both_layouts_give_identical_tables(tmp_path, v03_file, hf_file):
    tables = {}
    for name, files in {"v03": [v03_file], "hf": [hf_file], "both": [v03_file, hf_file]}.items():
        con = connect(tmp_path / f"{name}.duckdb")
        load_qasper(con, files)
        tables[name] = {t: table_rows(con, t, drop=("source_file",)) for t in LOADED}
        if name == "both":
            assert funnel(con, "records") == {
                "input": 6,
                "duplicate_identical": 3,
                "conflicting_duplicate": 0,
                "kept": 3,
            }
            sources = con.execute("SELECT DISTINCT source_file FROM documents").fetchall()
            assert sources == [(f"{hf_file}; {v03_file}",)]
        con.close()
    for t in LOADED:
        # the funnel's records stage differs by design (3 vs 6 records read)
        v03, hf, both = ([r for r in tables[k][t] if t != "funnel" or r[1] != "records"] for k in ("v03", "hf", "both"))
        assert v03 == hf == both, t
    assert len(tables["v03"]["documents"]) == 1
    assert tables["v03"]["documents"][0][5] == "train"  # split from the file name


def _one_more_paper(path: Path) -> Path:
    """A file with one loadable paper and question besides the fixture's (a load that keeps no paper or
    no question is refused)."""
    return write_v03(
        path,
        {
            "0000.00009": {
                "title": "Another",
                "abstract": "Its abstract.",
                "figures_and_tables": [],
                "full_text": [{"section_name": "Intro", "paragraphs": ["Its text."]}],
                "qas": [q("q-more", ans(ff="x", ev=["Its text."]))],
            }
        },
    )


def test_conflicting_duplicate_is_quarantined(con, tmp_path, v03_file):
    changed = papers_v03()
    changed["0000.00002"]["abstract"] = "A different abstract."
    other = write_hf(tmp_path / "other.jsonl", changed)
    load_qasper(con, [v03_file, other, _one_more_paper(tmp_path / "more.json")])
    assert funnel(con, "records") == {"input": 7, "duplicate_identical": 2, "conflicting_duplicate": 2, "kept": 3}
    rows = con.execute(
        "SELECT source_file, record_id, stage FROM quarantine WHERE stage = 'records' ORDER BY ALL"
    ).fetchall()
    assert rows == sorted([(str(other), "0000.00002", "records"), (str(v03_file), "0000.00002", "records")])
    assert con.execute("SELECT count(*) FROM documents WHERE doc_id = 'qasper/0000.00002'").fetchone()[0] == 0


def test_no_sections_and_empty_text_are_quarantined(con, v03_file):
    load_qasper(con, [v03_file])
    rows = con.execute("SELECT record_id, reason FROM quarantine WHERE stage = 'papers' ORDER BY ALL").fetchall()
    assert rows == [("0000.00001", "no_sections"), ("0000.00003", "empty_text")]
    assert funnel(con, "papers") == {
        "input": 3,
        "beyond_limit": 0,
        "empty_title": 0,
        "no_sections": 1,
        "empty_text": 1,
        "verification_failed": 0,
        "kept": 1,
    }


def test_verification_failure_quarantines_the_paper(con, v03_file, tmp_path, monkeypatch):
    calls = []  # papers are verified in id order: 0000.00002 fails, 0000.00009 passes

    def verify(rows, offsets):
        calls.append(1)
        return ["gap between section 1 and 2"] if len(calls) == 1 else []

    monkeypatch.setattr(qasper_module, "verify_sections", verify)
    load_qasper(con, [v03_file, _one_more_paper(tmp_path / "more.json")])
    assert con.execute("SELECT doc_id FROM documents").fetchall() == [("qasper/0000.00009",)]
    reason = con.execute("SELECT reason FROM quarantine WHERE record_id = '0000.00002'").fetchone()[0]
    assert reason == "verification_failed: gap between section 1 and 2"


def test_duplicate_question_id_across_papers(con, tmp_path):
    papers = papers_v03()
    papers["0000.00003"] = json.loads(json.dumps(papers["0000.00002"]))
    papers["0000.00003"]["title"] = "Copy"
    path = write_v03(tmp_path / "dup.json", papers)
    load_qasper(con, [path])
    assert funnel(con, "questions")["duplicate_question_id"] == 14
    assert con.execute("SELECT count(DISTINCT doc_id) FROM queries").fetchone()[0] == 1


def test_limit_keeps_first_papers_in_id_order(con, v03_file):
    load_qasper(con, [v03_file], corpus="tiny", limit=2)
    assert funnel(con, "papers")["beyond_limit"] == 1
    assert con.execute("SELECT doc_id FROM documents").fetchall() == [("tiny/0000.00002",)]
    assert con.execute("SELECT count(*) FROM queries WHERE NOT starts_with(query_id, 'tiny/')").fetchone()[0] == 0


def test_split_from_filename():
    assert split_from_filename(Path("qasper-dev-v0.3.json")) == "dev"
    assert split_from_filename(Path("qasper_test_more_shared.hf.jsonl")) == "test"
    assert split_from_filename(Path("contest.json")) is None
    assert split_from_filename(Path("train_test.json")) is None


# --------------------------------------------------------------------------- bad input


def test_malformed_json_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"0000.1": {"title": "x",\n "abstract": }}', encoding="utf-8")
    with pytest.raises(IngestError, match=r"bad\.json, record line 2: (malformed|invalid) JSON"):
        read_papers(bad)
    lines = tmp_path / "bad.jsonl"
    good = json.dumps(to_hf(papers_v03())[0])
    lines.write_text(good + "\n" + good[:-5] + "\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r"bad\.jsonl, record line 2: (malformed|invalid) JSON"):
        read_papers(lines)


def test_missing_field_names_paper(tmp_path):
    papers = papers_v03()
    del papers["0000.00002"]["qas"][3]["answers"][0]["answer"]["evidence"]
    with pytest.raises(
        IngestError, match=r"record 0000\.00002: qas\[3\]: answers\[0\]\.answer: missing field 'evidence'"
    ):
        read_papers(write_v03(tmp_path / "missing.json", papers))
    hf = to_hf(papers_v03())
    del hf[1]["title"]
    path = tmp_path / "missing.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in hf), encoding="utf-8")
    with pytest.raises(IngestError, match=r"record line 2 \(paper 0000\.00001\): missing field 'title'"):
        read_papers(path)


def test_wrong_type_and_parallel_length_mismatch(tmp_path):
    papers = papers_v03()
    papers["0000.00002"]["full_text"][1]["paragraphs"] = "not a list"
    with pytest.raises(IngestError, match=r"full_text\[1\]: field 'paragraphs' is str, expected list"):
        read_papers(write_v03(tmp_path / "type.json", papers))
    hf = to_hf(papers_v03())
    hf[0]["full_text"]["paragraphs"].pop()
    path = tmp_path / "len.jsonl"
    path.write_text(json.dumps(hf[0]), encoding="utf-8")
    with pytest.raises(IngestError, match=r"parallel lists section_name\[9\], paragraphs\[8\] differ in length"):
        read_papers(path)


def test_non_utf8_byte_names_file_and_line(tmp_path):
    path = tmp_path / "latin1.jsonl"
    good = json.dumps(to_hf(papers_v03())[0]).encode()
    path.write_bytes(good + b"\n" + good.replace(b"Tiny", b"T\xefny"))
    with pytest.raises(IngestError, match=r"latin1\.jsonl, record line 2: byte 0xef .* not valid UTF-8"):
        read_papers(path)


# --------------------------------------------------------------------------- atomic, idempotent loads


def test_reload_is_idempotent(con, v03_file, hf_file):
    load_qasper(con, [v03_file, hf_file])
    first = {t: table_rows(con, t) for t in LOADED}
    load_qasper(con, [v03_file, hf_file])
    assert {t: table_rows(con, t) for t in LOADED} == first
    load_qasper(con, [v03_file], corpus="other")  # another corpus leaves this one alone
    assert table_rows(con, "queries") != first["queries"]
    assert [r for r in table_rows(con, "queries") if r[2] == "qasper"] == first["queries"]


def test_failed_load_leaves_warehouse_as_it_was(con, v03_file, hf_file, tmp_path, monkeypatch):
    load_qasper(con, [v03_file])
    before = {t: table_rows(con, t) for t in LOADED}
    real = db_module.replace_where  # the shared corpus writer's, where the funnel is written

    def failing(con_, table, *args):
        if table == "funnel":
            raise RuntimeError("disk full")
        return real(con_, table, *args)

    monkeypatch.setattr(db_module, "replace_where", failing)
    with pytest.raises(RuntimeError, match="disk full"):
        load_qasper(con, [hf_file], limit=2)
    assert {t: table_rows(con, t) for t in LOADED} == before
    monkeypatch.undo()
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(IngestError):
        load_qasper(con, [v03_file, bad])
    assert {t: table_rows(con, t) for t in LOADED} == before


def test_cli_prints_summary_and_fails_cleanly(tmp_path, v03_file, hf_file):
    from ragwh.cli import app

    wh = tmp_path / "cli.duckdb"
    result = CliRunner().invoke(
        app, ["ingest", "qasper", str(v03_file), str(hf_file), "--warehouse", str(wh), "--corpus", "tiny"]
    )
    assert result.exit_code == 0, result.output
    assert (
        "numeric_only" in result.output
        and "exact" in result.output
        and "quarantined: evidence 2, papers 2" in result.output
    )
    con = connect(wh)
    assert con.execute("SELECT count(*) FROM queries WHERE corpus = 'tiny'").fetchone()[0] == 8
    con.close()
    bad = tmp_path / "bad.json"
    bad.write_text("[1]", encoding="utf-8")
    result = CliRunner().invoke(app, ["ingest", "qasper", str(bad), "--warehouse", str(wh)])
    assert result.exit_code == 1
    assert "bad.json" in result.output and "warehouse unchanged" in result.output


# --------------------------------------------------------------------------- the real shared sample


def test_all_shared_qasper_papers(con, shared_data):
    files = sorted((shared_data / "qasper").glob("*.json*"))
    assert len(files) == 4
    merged, conflicts, counts = merge_papers(files)
    assert (len(merged), conflicts, counts["duplicate_identical"]) == (255, [], 255)
    summary = load_qasper(con, files)
    assert summary["papers"] == 255
    assert con.execute("SELECT count(*) FROM quarantine").fetchone()[0] == 0
    assert funnel(con, "questions")["input"] == 926  # PROVENANCE.md: 926 questions
    assert funnel(con, "section_names")["null_section_name"] == 1  # paper 1905.07894
    # every structure verifies, re-checked from the loaded tables
    paras: dict[str, list] = {}
    for doc_id, s, e in con.execute(
        "SELECT doc_id, char_start, char_end FROM paragraphs ORDER BY doc_id, para_idx"
    ).fetchall():
        paras.setdefault(doc_id, []).append((s, e))
    secs: dict[str, list] = {}
    for row in con.execute(
        "SELECT doc_id, section_idx, parent_idx, level, title, para_start, para_end, char_start, "
        "char_end FROM sections WHERE structure = 'gold' ORDER BY doc_id, section_idx"
    ).fetchall():
        secs.setdefault(row[0], []).append(SectionRow(*row[1:]))
    assert sorted(secs) == sorted(paras) and len(paras) == 255
    assert {d: verify_sections(secs[d], paras[d]) for d in paras if verify_sections(secs[d], paras[d])} == {}
    # paragraphs are exactly the SQL slices, separated by blank lines, after the title
    assert (
        con.execute("""
        SELECT count(*) FROM (
          SELECT p.*, d.text, d.title,
                 lag(p.char_end) OVER (PARTITION BY p.doc_id ORDER BY p.para_idx) AS prev_end
          FROM paragraphs p JOIN documents d USING (doc_id))
        WHERE substring(text, char_start + 1, char_end - char_start) <> trim(substring(text, char_start + 1, char_end - char_start))
           OR char_end <= char_start
           OR substring(text, coalesce(prev_end, length(title)) + 1, char_start - coalesce(prev_end, length(title))) <> chr(10) || chr(10)
    """).fetchone()[0]
        == 0
    )
    # every evidence span lies within its document and on paragraph boundaries
    assert (
        con.execute("""
        SELECT count(*) FROM evidence e JOIN documents d USING (doc_id)
        WHERE e.char_start < 0 OR e.char_end > length(d.text) OR e.char_start >= e.char_end
           OR e.char_start NOT IN (SELECT char_start FROM paragraphs p WHERE p.doc_id = e.doc_id)
           OR e.char_end NOT IN (SELECT char_end FROM paragraphs p WHERE p.doc_id = e.doc_id)
    """).fetchone()[0]
        == 0
    )
    assert (
        con.execute(
            "SELECT count(*) FROM evidence e LEFT JOIN queries q USING (query_id) "
            "WHERE q.doc_id IS DISTINCT FROM e.doc_id"
        ).fetchone()[0]
        == 0
    )
    assert summary["match_shares"]["exact"] > 0.9


@pytest.mark.parametrize(("name", "content"), [("empty.jsonl", ""), ("blank.jsonl", "\n\n"), ("empty.json", "{}")])
def test_a_file_with_no_papers_is_an_error_and_changes_nothing(con, tmp_path, shared_data, name, content):
    from ingest.errors import IngestError

    load_qasper(con, [shared_data / "qasper" / "qasper_train_sample_shared.hf.jsonl"])
    before = con.execute("SELECT count(*) FROM documents").fetchone()[0]
    empty = tmp_path / name
    empty.write_text(content)
    with pytest.raises(IngestError, match=f"{name}: no QASPER papers found"):
        load_qasper(con, [empty])
    assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == before == 5


def test_reload_without_a_paper_purges_what_hung_off_it(con, shared_data):
    src = shared_data / "qasper" / "qasper_train_sample_shared.hf.jsonl"
    load_qasper(con, [src])
    con.execute("INSERT INTO sections SELECT 'induced:texttiling', * EXCLUDE (structure) FROM sections")
    con.execute("INSERT INTO chunks VALUES ('doc', 'doc|qasper/1909.00694|0', 'qasper/1909.00694', 0, 0, 5, 1, NULL)")
    load_qasper(con, [src], limit=1)
    kept = con.execute("SELECT doc_id FROM documents").fetchall()
    assert con.execute("SELECT DISTINCT doc_id FROM sections ORDER BY 1").fetchall() == kept
    assert (
        con.execute("SELECT count(*) FROM chunks WHERE doc_id NOT IN (SELECT doc_id FROM documents)").fetchone()[0] == 0
    )
