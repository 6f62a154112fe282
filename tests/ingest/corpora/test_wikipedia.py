"""Wikipedia ingestion: both layouts, filters, topic buckets, the sampling walk, bad input, atomic and
idempotent loads, the CLI, and the whole shared sample (../shared/data/wikipedia)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

import warehouse.db as db_module
from ingest.corpora.wikipedia.load import (
    STAGES,
    build_wikipedia,
    load_wikipedia,
    read_articles,
    select_articles,
    write_wikipedia,
)
from ingest.corpora.wikipedia.records import read_records
from ingest.corpora.wikipedia.topics import BUCKETS, FALLBACK_BUCKET, TOPIC_BUCKETS, sampling_walk, topic_bucket
from ingest.errors import IngestError
from ingest.structure.segments import SectionRow, verify_sections
from tests.ingest.corpora.wiki_fixtures import page, sample_pages, write_jsonl, write_xml
from warehouse.db import connect

TABLE_KEYS = {
    "documents": "doc_id",
    "paragraphs": "doc_id, para_idx",
    "sections": "structure, doc_id, section_idx",
    "funnel": "corpus, stage, reason",
    "quarantine": "corpus, record_id, stage",
    "corpus_meta": "corpus, key",
}


def snapshot(con, drop_source: bool = False) -> dict[str, list[tuple]]:
    """Every table this loader writes, sorted; ``drop_source`` hides the columns naming the file read."""
    out = {}
    for table, key in TABLE_KEYS.items():
        rows = con.execute(f"SELECT * FROM {table} ORDER BY {key}").fetchall()
        cols = [d[0] for d in con.description]
        if drop_source:
            keep = [i for i, c in enumerate(cols) if c != "source_file"]
            rows = [
                tuple(r[i] for i in keep) for r in rows if not (table == "corpus_meta" and r[1].startswith("source_"))
            ]
        out[table] = rows
    return out


def stage(built, name: str) -> dict[str, int]:
    """One funnel stage of a build, every reason listed (zeros included)."""
    return {reason: built.funnel[name][reason] for reason in STAGES[name]}


@pytest.fixture()
def xml_file(tmp_path) -> Path:
    return write_xml(tmp_path / "sample.xml", sample_pages())


@pytest.fixture()
def jsonl_file(tmp_path) -> Path:
    return write_jsonl(tmp_path / "sample.jsonl", sample_pages())


# --------------------------------------------------------------------------- loading the fixture


def test_load_tables_funnel_and_meta(con, xml_file) -> None:
    summary = load_wikipedia(con, xml_file)
    assert con.execute("SELECT doc_id, title, topic_bucket, split FROM documents ORDER BY doc_id").fetchall() == [
        ("wikipedia/10", "Deep Article", "biography", None),
        ("wikipedia/17", "Second Deep", "history/war", None),
        ("wikipedia/18", "Third Deep", "biography", None),
    ]
    f = summary["funnel"]
    assert f["pages"] == {"input": 10, "redirect": 1, "other_namespace": 1, "kept": 8}
    assert f["articles"] == {"input": 8, "empty_document": 1, "verification_failed": 0, "kept": 7}
    assert f["filters"] == {"input": 7, "too_few_words": 2, "too_shallow": 1, "too_few_sections": 1, "kept": 3}
    assert f["filter_failures"] == {"input": 7, "too_few_words": 2, "too_shallow": 2, "too_few_sections": 2}
    assert f["sampling"] == {"input": 3, "over_bucket_cap": 0, "kept": 3}
    for stage, reasons in STAGES.items():  # every stage adds up
        if "kept" in reasons:
            assert f[stage]["input"] == sum(n for r, n in f[stage].items() if r != "input")
    db_funnel = con.execute("SELECT stage, reason, n FROM funnel WHERE corpus = 'wikipedia'").fetchall()
    assert {(s, r): n for s, r, n in db_funnel} == {(s, r): n for s, rs in f.items() for r, n in rs.items()}
    meta = dict(con.execute("SELECT key, value FROM corpus_meta WHERE corpus = 'wikipedia'").fetchall())
    assert meta["sampling_seed"] == "20260710" and meta["bucket_cap"] == "60" and meta["filters"] == "true"
    assert {b: int(meta[f"bucket_size:{b}"]) for b in BUCKETS} == summary["bucket_sizes"]
    assert summary["bucket_sizes"]["biography"] == 2 and summary["bucket_sizes"]["history/war"] == 1
    assert con.execute("SELECT record_id, stage FROM quarantine").fetchall() == [("wikipedia/19", "articles")]
    assert "empty_document" in con.execute("SELECT reason FROM quarantine").fetchone()[0]


def test_loaded_offsets_and_sections_verify(con, xml_file) -> None:
    load_wikipedia(con, xml_file, filters=False)
    docs = dict(con.execute("SELECT doc_id, text FROM documents").fetchall())
    assert len(docs) == 7
    for doc_id, text in docs.items():
        paras = con.execute(
            "SELECT char_start, char_end FROM paragraphs WHERE doc_id = ? ORDER BY para_idx", [doc_id]
        ).fetchall()
        title = con.execute("SELECT title FROM documents WHERE doc_id = ?", [doc_id]).fetchone()[0]
        assert text == title + "\n\n" + "\n\n".join(text[s:e] for s, e in paras)
        rows = [
            SectionRow(*r)
            for r in con.execute(
                "SELECT section_idx, parent_idx, level, title, para_start, para_end, char_start, char_end "
                "FROM sections WHERE doc_id = ? AND structure = 'gold' ORDER BY section_idx",
                [doc_id],
            ).fetchall()
        ]
        assert verify_sections(rows, paras) == []
    deep = con.execute(
        "SELECT level, title FROM sections WHERE doc_id = 'wikipedia/10' ORDER BY section_idx"
    ).fetchall()
    assert deep[:5] == [(1, "Introduction"), (1, "Part 0"), (2, "Part 0 level 2"), (3, "Part 0 level 3"), (1, "Part 1")]
    assert "References" not in {t for _, t in deep}  # {{reflist}} only: dropped, counted
    assert con.execute("SELECT n FROM funnel WHERE stage = 'headings' AND reason = 'no_paragraphs'").fetchone()[0] == 7


def test_no_filters_loads_every_verified_article(con, xml_file) -> None:
    summary = load_wikipedia(con, xml_file, filters=False)
    assert summary["documents"] == 7
    assert summary["funnel"]["filters"] == {
        "input": 7,
        "too_few_words": 0,
        "too_shallow": 0,
        "too_few_sections": 0,
        "kept": 7,
    }
    assert summary["funnel"]["filter_failures"]["too_shallow"] == 2
    assert con.execute("SELECT value FROM corpus_meta WHERE key = 'filters'").fetchone()[0] == "false"


def test_xml_and_jsonl_give_identical_tables(tmp_path, xml_file, jsonl_file) -> None:
    snaps = []
    v11 = write_xml(tmp_path / "v11.xml", sample_pages(), "http://www.mediawiki.org/xml/export-0.11/")
    plain = write_xml(tmp_path / "plain.xml", sample_pages(), None)  # no XML namespace at all
    for name, file in (("a", xml_file), ("b", jsonl_file), ("c", v11), ("d", plain)):
        con = connect(tmp_path / f"{name}.duckdb")
        load_wikipedia(con, file, filters=False)
        snaps.append(snapshot(con, drop_source=True))
        con.close()
    assert snaps[0]["documents"] and all(s == snaps[0] for s in snaps[1:])


def test_reload_is_idempotent_and_replaces(con, xml_file) -> None:
    load_wikipedia(con, xml_file)
    first = snapshot(con)
    load_wikipedia(con, xml_file)
    assert snapshot(con) == first
    load_wikipedia(con, xml_file, filters=False)  # a different selection replaces, never appends
    assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == 7
    load_wikipedia(con, xml_file)
    assert snapshot(con) == first


def test_other_corpora_are_untouched(con, xml_file) -> None:
    load_wikipedia(con, xml_file, corpus="wiki_a")
    before = con.execute("SELECT count(*) FROM documents WHERE corpus = 'wiki_a'").fetchone()[0]
    load_wikipedia(con, xml_file, corpus="wiki_b", filters=False)
    assert con.execute("SELECT count(*) FROM documents WHERE corpus = 'wiki_a'").fetchone()[0] == before == 3
    assert con.execute("SELECT min(doc_id) FROM documents WHERE corpus = 'wiki_b'").fetchone()[0] == "wiki_b/10"
    with pytest.raises(ValueError, match="corpus name"):
        load_wikipedia(con, xml_file, corpus="bad/name")


def test_cap_and_seed_recorded(con, xml_file) -> None:
    summary = load_wikipedia(con, xml_file, filters=False, cap=1, seed=7)
    assert max(summary["bucket_sizes"].values()) == 1
    # fixture buckets without filters: biography 10, 18; history 11, 17; geography 12; science 13; arts 14
    assert summary["funnel"]["sampling"] == {"input": 7, "over_bucket_cap": 2, "kept": 5}
    meta = dict(con.execute("SELECT key, value FROM corpus_meta").fetchall())
    assert (meta["sampling_seed"], meta["bucket_cap"]) == ("7", "1")
    assert sum(int(v) for k, v in meta.items() if k.startswith("bucket_size:")) == 5


# --------------------------------------------------------------------------- buckets and sampling


def test_bucket_table_order_and_fallback() -> None:
    assert [name for name, _ in TOPIC_BUCKETS] == [
        "history/war",
        "biography",
        "science/nature",
        "arts/media",
        "geography/places",
    ]
    assert BUCKETS[-1] == FALLBACK_BUCKET == "other"
    # matches for several buckets: the first in table order wins, whatever the category order
    assert topic_bucket(["Countries in Europe", "1900 births", "Battles of the Somme"]) == "history/war"
    assert topic_bucket(["Novels", "American physicists", "1900 births"]) == "biography"
    assert topic_bucket(["Novels about animals", "Mammals of Africa"]) == "science/nature"
    assert topic_bucket(["Films", "Countries in Africa"]) == "arts/media"
    assert topic_bucket(["Provinces of Canada"]) == "geography/places"
    assert topic_bucket(["Software", "Dwarf planets", "Award winners"]) == "other"  # whole words only
    assert topic_bucket([]) == "other"
    table = [("b", ["births"]), ("w", ["wars"])]
    assert topic_bucket(["Wars", "1900 births"], table) == "b"
    assert topic_bucket(["Wars", "1900 births"], list(reversed(table))) == "w"


def test_sampling_walk_deterministic_and_capped() -> None:
    ids = list(range(100, 160))
    buckets = ["a"] * 30 + ["b"] * 20 + ["c"] * 10
    chosen = sampling_walk(ids, buckets, seed=1, cap=12)
    assert chosen == sorted(chosen)
    by_bucket = {b: sum(1 for i in chosen if buckets[ids.index(i)] == b) for b in "abc"}
    assert by_bucket == {"a": 12, "b": 12, "c": 10}  # min(cap, candidates)
    assert sampling_walk(ids, buckets, seed=1, cap=12) == chosen
    shuffled = list(zip(ids, buckets))
    random.Random(3).shuffle(shuffled)
    assert sampling_walk([i for i, _ in shuffled], [b for _, b in shuffled], seed=1, cap=12) == chosen
    assert sampling_walk(ids, buckets, seed=2, cap=12) != chosen
    assert set(sampling_walk(ids, buckets, seed=2, cap=60)) == set(ids)
    assert sampling_walk(ids, buckets, seed=1, cap=0) == []
    with pytest.raises(ValueError):
        sampling_walk(ids, buckets[:-1], seed=1, cap=1)


def test_sampling_walk_hand_case() -> None:
    import numpy as np

    # sorted ids [10, 20, 30, 40] in buckets [x, y, x, x]; seed 5 walks positions 3, 1, 2, 0:
    # 40 (x: 1st), 20 (y: 1st), 30 (x: 2nd), 10 (x: over the cap of 2, skipped)
    assert np.random.default_rng(5).permutation(4).tolist() == [3, 1, 2, 0]
    assert sampling_walk([30, 10, 20, 40], ["x", "x", "y", "x"], seed=5, cap=2) == [20, 30, 40]
    assert sampling_walk([30, 10, 20, 40], ["x", "x", "y", "x"], seed=5, cap=1) == [20, 40]


# --------------------------------------------------------------------------- bad input


def _xml(tmp_path, body: bytes, name: str = "bad.xml") -> Path:
    path = tmp_path / name
    path.write_bytes(b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">' + body)
    return path


def test_bad_xml(tmp_path) -> None:
    good = b"<page><title>Good</title><ns>0</ns><id>1</id><revision><text>x</text></revision></page>"
    truncated = _xml(tmp_path, good + b"<page><title>Broken</title><ns>0</ns>")
    with pytest.raises(IngestError, match=r"bad\.xml.*after page 'Broken'.*line 1.*malformed XML"):
        read_records(truncated)
    no_id = _xml(tmp_path, b"<page><title>NoId</title><ns>0</ns><revision><text>x</text></revision></page></mediawiki>")
    with pytest.raises(IngestError, match=r"page 'NoId'.*no <id>"):
        read_records(no_id)
    no_text = _xml(tmp_path, b"<page><title>NoText</title><ns>0</ns><id>2</id><revision/></page></mediawiki>")
    with pytest.raises(IngestError, match=r"page 'NoText'.*no <text>"):
        read_records(no_text)
    bad_id = _xml(
        tmp_path,
        b"<page><title>BadId</title><ns>0</ns><id>x1</id><revision><text>x</text></revision></page></mediawiki>",
    )
    with pytest.raises(IngestError, match=r"page 'BadId'.*not a non-negative integer"):
        read_records(bad_id)
    latin1 = _xml(
        tmp_path,
        good + b"<page><title>Caf\xe9</title><ns>0</ns><id>3</id><revision><text>x</text>"
        b"</revision></page></mediawiki>",
    )
    with pytest.raises(IngestError, match=r"bad\.xml.*page 'Good'.*byte \d+.*not valid UTF-8"):
        read_records(latin1)
    with pytest.raises(IngestError, match=r"empty\.xml: no pages found"):
        read_records(_xml(tmp_path, b"<siteinfo/></mediawiki>", name="empty.xml"))
    with pytest.raises(IngestError, match=r"empty\.xml, record before the first page.*malformed XML"):
        read_records(_xml(tmp_path, b"", name="empty.xml"))
    dup = _xml(tmp_path, good + good + b"</mediawiki>")
    with pytest.raises(IngestError, match=r"page id 1 also appears"):
        read_records(dup)


def test_bad_jsonl(tmp_path) -> None:
    ok = json.dumps({"title": "A", "page_id": 1, "wikitext": "x"}).encode()

    def jsonl(*lines: bytes) -> Path:
        path = tmp_path / "bad.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        return path

    with pytest.raises(IngestError, match=r"bad\.jsonl, record line 2: invalid JSON"):
        read_records(jsonl(ok, b'{"title": "B", "page_id": 2, "wikitext": '))
    with pytest.raises(IngestError, match=r"line 3 \(page 'C'\): missing field 'wikitext'"):
        read_records(jsonl(ok, b"", json.dumps({"title": "C", "page_id": 3}).encode()))
    with pytest.raises(IngestError, match=r"line 2: byte 0x[0-9a-f]{2} at offset \d+ is not valid UTF-8"):
        read_records(jsonl(ok, b'{"title": "D\xff", "page_id": 4, "wikitext": "x"}'))
    with pytest.raises(IngestError, match=r"line 1: expected a JSON object"):
        read_records(jsonl(b"[1, 2]"))
    with pytest.raises(IngestError, match=r"line 1 \(page 'E'\).*'page_id'.*not a non-negative integer"):
        read_records(jsonl(json.dumps({"title": "E", "page_id": "e5", "wikitext": "x"}).encode()))
    with pytest.raises(IngestError, match=r"line 2.*page id 1 also appears in line 1"):
        read_records(jsonl(ok, ok))
    with pytest.raises(IngestError, match="unknown file type"):
        read_records(jsonl(ok).rename(tmp_path / "bad.txt"))
    with pytest.raises(IngestError, match=r"bad\.jsonl: no pages found"):
        read_records(jsonl(b"", b"  "))
    with pytest.raises(IngestError, match="file not found"):
        read_records(tmp_path / "missing.xml")


def test_failed_load_leaves_warehouse_unchanged(con, tmp_path, xml_file, monkeypatch) -> None:
    load_wikipedia(con, xml_file)
    before = snapshot(con)
    bad = _xml(tmp_path, b"<page><title>Broken</title>")
    with pytest.raises(IngestError):
        load_wikipedia(con, bad)
    assert snapshot(con) == before

    calls = {"n": 0}
    real = db_module.replace_where  # the shared corpus writer's

    def failing(*args, **kwargs):  # fails after three tables were already replaced
        calls["n"] += 1
        if calls["n"] == 4:
            raise RuntimeError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(db_module, "replace_where", failing)
    with pytest.raises(RuntimeError, match="disk full"):
        load_wikipedia(con, xml_file, filters=False)
    assert calls["n"] == 4
    assert snapshot(con) == before


def test_verification_failure_is_quarantined(tmp_path) -> None:
    pages = [
        page(1, "Fine", [(2, "A"), (3, "B"), (4, "C")], 5),
        {
            "page_id": 2,
            "title": "Untitled heading",
            "ns": 0,
            "redirect": False,
            "wikitext": "Lead.\n== {{anchor|x}} ==\nText.",
        },
    ]
    built = build_wikipedia(write_jsonl(tmp_path / "q.jsonl", pages), filters=False)
    assert built.tables["documents"].column("doc_id").to_pylist() == ["wikipedia/1"]
    q = built.tables["quarantine"].to_pylist()
    assert [(r["record_id"], r["stage"]) for r in q] == [("wikipedia/2", "articles")]
    assert q[0]["reason"].startswith("verification_failed: heading 1: empty title")
    assert "page 'Untitled heading'" in q[0]["reason"]
    assert stage(built, "articles") == {"input": 2, "empty_document": 0, "verification_failed": 1, "kept": 1}


# --------------------------------------------------------------------------- CLI


def test_cli(tmp_path, xml_file) -> None:
    from ragwh.cli import app

    wh = tmp_path / "cli.duckdb"
    result = CliRunner().invoke(
        app,
        [
            "ingest",
            "wikipedia",
            str(xml_file),
            "--no-filters",
            "--cap",
            "1",
            "--seed",
            "7",
            "--corpus",
            "wk",
            "--warehouse",
            str(wh),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "funnel" in result.output and "topic buckets" in result.output
    con = connect(wh)
    assert con.execute("SELECT count(*) FROM documents WHERE corpus = 'wk'").fetchone()[0] == 5
    con.close()
    bad = _xml(tmp_path, b"<page>")
    result = CliRunner().invoke(app, ["ingest", "wikipedia", str(bad), "--warehouse", str(wh)])
    assert result.exit_code == 1 and "warehouse unchanged" in result.output


# --------------------------------------------------------------------------- the real shared sample


@pytest.fixture(scope="module")
def real_reads(shared_data):
    """Both layouts of the shared sample, parsed, normalized and verified once for this module."""
    wiki = shared_data / "wikipedia"
    return {"xml": read_articles(wiki / "enwiki_shared.xml"), "jsonl": read_articles(wiki / "articles_shared.jsonl")}


def test_real_sample_no_filters(con, real_reads) -> None:
    """All 35 articles load with --no-filters: zero violations, zero quarantined, identical for both layouts."""
    xml, jsonl = (select_articles(real_reads[k], filters=False) for k in ("xml", "jsonl"))
    for name in ("documents", "paragraphs", "sections", "funnel", "quarantine"):
        a, b = xml.tables[name], jsonl.tables[name]
        if "source_file" in a.column_names:
            a, b = a.drop_columns(["source_file"]), b.drop_columns(["source_file"])
        assert a.equals(b), name
    assert xml.tables["documents"].num_rows == 35
    assert xml.tables["quarantine"].num_rows == 0
    assert stage(xml, "articles") == {"input": 35, "empty_document": 0, "verification_failed": 0, "kept": 35}
    for c in xml.loaded:
        a = c.article
        assert a.violations == () and verify_sections(list(a.sections), list(a.paragraphs)) == []
        for s, e in a.paragraphs:
            para = a.text[s:e]
            assert para and para == para.strip() and "\n\n" not in para
        for markup in ("{{", "}}", "<ref", "[[", "]]", "'''", "{|", "<!--"):
            assert markup not in a.text, (a.title, markup)
        assert a.sections[0].title == "Introduction" and a.sections[0].level == 1

    write_wikipedia(con, xml)  # and the warehouse holds verified structure
    docs = dict(con.execute("SELECT doc_id, text FROM documents WHERE corpus = 'wikipedia'").fetchall())
    paras: dict[str, list] = {}
    for doc_id, s, e in con.execute(
        "SELECT doc_id, char_start, char_end FROM paragraphs ORDER BY doc_id, para_idx"
    ).fetchall():
        paras.setdefault(doc_id, []).append((s, e))
    sections: dict[str, list] = {}
    for row in con.execute(
        "SELECT doc_id, section_idx, parent_idx, level, title, para_start, para_end, char_start, "
        "char_end FROM sections WHERE structure = 'gold' ORDER BY doc_id, section_idx"
    ).fetchall():
        sections.setdefault(row[0], []).append(SectionRow(*row[1:]))
    assert len(docs) == len(paras) == len(sections) == 35
    assert all(verify_sections(sections[d], paras[d]) == [] for d in docs)


def test_real_sample_default_filters(real_reads) -> None:
    """15 of the 35 pass the default filters; depth drops the rest (Albedo also has too few words)."""
    built = select_articles(real_reads["xml"])
    assert stage(built, "filters") == {
        "input": 35,
        "too_few_words": 1,
        "too_shallow": 19,
        "too_few_sections": 0,
        "kept": 15,
    }
    assert stage(built, "filter_failures") == {
        "input": 35,
        "too_few_words": 1,
        "too_shallow": 20,
        "too_few_sections": 0,
    }
    assert len(built.loaded) == 15 and all(c.article.depth >= 3 for c in built.loaded)
    jsonl = select_articles(real_reads["jsonl"])
    assert [c.record.page_id for c in jsonl.loaded] == [c.record.page_id for c in built.loaded]


def test_real_categories_match_the_jsonl_field(shared_data, real_reads) -> None:
    """The one extraction (used for both layouts) agrees with the JSONL's pre-extracted categories."""
    expected = {}
    for line in (shared_data / "wikipedia" / "articles_shared.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        expected[row["page_id"]] = row["categories"]
    for read in real_reads.values():
        assert {c.record.page_id: list(c.categories) for c in read.candidates} == expected
