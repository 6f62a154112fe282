"""dbt over a small hand-made warehouse: staging tests, int_condition_chunks/int_condition_texts (exact texts,
A-family only where induced structure exists, A1 only with LLM contexts), and the singular tests
chunk_tiling / condition_coverage actually failing on corrupted chunks. Three dbt invocations."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import duckdb
import numpy as np
import pytest

from ingest.structure.segments import Heading
from tests.ingest.chunking.chunk_docs import insert_doc, random_paragraph
from warehouse.db import connect
from warehouse.paths import PROJECT_ROOT

SELECT = ["--select", "+tag:conditions", "staging", "--indirect-selection", "cautious"]


def dbt(args: list[str], work: Path):
    """One dbt invocation from the project root; target/ and logs/ go to ``work`` (shared by the tests of
    this module so that dbt's partial parsing is reused), never into the checkout."""
    from dbt.cli.main import dbtRunner

    return dbtRunner().invoke(
        args
        + [
            "--profiles-dir",
            ".",
            "--project-dir",
            ".",
            "--target-path",
            str(work / "target"),
            "--log-path",
            str(work / "logs"),
            "--quiet",
        ]
    )


def statuses(result) -> dict[str, str]:
    return {r.node.name: str(r.status) for r in result.result.results}


@pytest.fixture()
def at_root(monkeypatch):
    monkeypatch.chdir(PROJECT_ROOT)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("dbt")


def test_empty_warehouse_builds_green(warehouse_file, work, at_root):
    connect(warehouse_file).close()
    result = dbt(["build", *SELECT], work)
    assert result.success, statuses(result)
    with duckdb.connect(str(warehouse_file)) as con:
        assert con.execute("SELECT count(*) FROM int_condition_texts").fetchone()[0] == 0


def test_condition_texts_are_exact(warehouse_file, work, at_root):
    from ingest.chunking.stage import chunk_corpus

    rng = np.random.default_rng(4)
    con = connect(warehouse_file)
    paras = [random_paragraph(rng) for _ in range(7)]
    paras[0] = "\u00a0" + paras[0] + "\u2009"  # edge whitespace Python's strip() removes: SQL must agree
    insert_doc(
        con,
        "demo/a",
        "Paper A",
        [(1, "Intro", paras[:2]), (1, "Method", []), (2, "Data", paras[2:5]), (2, "Model", paras[5:])],
        extra_structures={"induced:texttiling": [Heading(1, "Seg 1", 3), Heading(1, "Seg 2", 4)]},
    )
    insert_doc(con, "demo/b", "Paper B", [(1, "Intro", paras[1:3]), (1, "Results", paras[3:6])])
    insert_doc(con, "other/c", "Paper C", [(1, "Only", paras[:4])], corpus="other")
    chunk_corpus(con, show_progress=False)
    fixed_a = [
        r[0]
        for r in con.execute("SELECT chunk_id FROM chunks WHERE chunkset = 'fixed' AND doc_id = 'demo/a'").fetchall()
    ]
    con.executemany(
        "INSERT INTO chunk_prefixes VALUES ('fixed', ?, 'llm_context', 0, ?, 3)",
        [[c, f"Context of {c}.\n\n"] for c in fixed_a],
    )
    docs = dict(con.execute("SELECT doc_id, text FROM documents").fetchall())
    chunks = {
        r[0]: r[1:]
        for r in con.execute(
            "SELECT chunk_id, chunkset, doc_id, char_start, char_end, content_tokens FROM chunks"
        ).fetchall()
    }
    prefixes = {
        (c, k, d): (p, t)
        for c, k, d, p, t in con.execute(
            "SELECT chunk_id, prefix_kind, depth, prefix, prefix_tokens FROM chunk_prefixes"
        ).fetchall()
    }
    con.close()

    result = dbt(["build", *SELECT], work)
    assert result.success, statuses(result)

    # expected rows, computed in Python from the seed and the loaded tables
    expected = {}
    with open(PROJECT_ROOT / "seeds" / "conditions.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            structure = {"induced": "induced:texttiling"}.get(row["structure"], row["structure"])
            chunkset = f"structural:{structure}" if row["chunking"] == "structural" else row["chunking"]
            for chunk_id, (cs, doc_id, start, end, tokens) in chunks.items():
                if cs != chunkset:
                    continue
                if row["prefix_kind"] == "none":
                    prefix, ptokens = "", 0
                elif (chunk_id, row["prefix_kind"], int(row["prefix_depth"])) in prefixes:
                    prefix, ptokens = prefixes[(chunk_id, row["prefix_kind"], int(row["prefix_depth"]))]
                else:
                    continue
                text = prefix + docs[doc_id][start:end].strip()
                expected[(row["condition"], chunk_id)] = (
                    doc_id.split("/")[0],
                    doc_id,
                    cs,
                    start,
                    end,
                    text,
                    hashlib.sha256(text.encode()).hexdigest(),
                    tokens,
                    ptokens,
                    False,
                )
            if row["chunking"] != "structural":
                continue
            # one corpus per run: a document of a corpus holding the chunkset that lacks it is
            # indexed with its fixed windows, without prefix
            having = {d for cs, d, *_ in chunks.values() if cs == chunkset}
            corpora = {d.split("/")[0] for d in having}
            for chunk_id, (cs, doc_id, start, end, tokens) in chunks.items():
                if cs == "fixed" and doc_id not in having and doc_id.split("/")[0] in corpora:
                    text = docs[doc_id][start:end].strip()
                    expected[(row["condition"], chunk_id)] = (
                        doc_id.split("/")[0],
                        doc_id,
                        cs,
                        start,
                        end,
                        text,
                        hashlib.sha256(text.encode()).hexdigest(),
                        tokens,
                        0,
                        True,
                    )
    with duckdb.connect(str(warehouse_file)) as con:
        got = {
            (r[0], r[2]): (r[1], *r[3:])
            for r in con.execute(
                "SELECT condition, corpus, chunk_id, doc_id, chunkset, char_start, char_end, text, text_hash, "
                "content_tokens, prefix_tokens, is_fallback FROM int_condition_texts"
            ).fetchall()
        }
        index = {
            r[:2]: r[2:]
            for r in con.execute("SELECT corpus, condition, n_docs, n_fallback_docs FROM condition_index").fetchall()
        }
    assert got == expected
    per_condition = {}
    for condition, chunk_id in got:
        per_condition.setdefault(condition, set()).add(chunks[chunk_id][1])
    # the A-family holds every document of the corpus with induced structure (demo/b
    # without it through its fixed windows), not only demo/a; A1 only where contexts exist; gold for all
    assert per_condition["A2"] == per_condition["A3"] == per_condition["P"] == {"demo/a", "demo/b"}
    assert {c for (c, k), v in got.items() if v[-1] and chunks[k][1] == "demo/b"} == {
        "A2",
        "A3-d1",
        "A3-d2",
        "A3",
        "A4",
        "P",
    }
    assert index[("demo", "A3")] == (2, 1) and index[("demo", "G3")] == (2, 0) and ("other", "A3") not in index
    assert per_condition["A1"] == {"demo/a"}
    assert per_condition["G3"] == per_condition["A0"] == per_condition["DOC"] == {"demo/a", "demo/b", "other/c"}
    g3_texts = [v[5] for (condition, _), v in got.items() if condition == "G3"]
    assert any(t.startswith("[Paper A › Method › Data]\n\n") for t in g3_texts)
    assert any(t.startswith("[Paper C › Only]\n\n") for t in g3_texts)

    # corrupt: a gap in one chunkset and a partially covered A1 document -> both singular tests fail
    with duckdb.connect(str(warehouse_file)) as con:
        con.execute(
            "UPDATE chunks SET char_start = char_start + 1 WHERE chunkset = 'structural:gold' "
            "AND doc_id = 'demo/b' AND chunk_idx = 1"
        )
        con.execute("DELETE FROM chunk_prefixes WHERE chunk_id = ?", [fixed_a[0]])
    result = dbt(["build", "--select", "int_condition_chunks", "chunk_tiling", "condition_coverage"], work)
    assert not result.success
    status = statuses(result)
    assert status["chunk_tiling"] == "fail" and status["condition_coverage"] == "fail"
