"""Paper tables: LaTeX that compiles (pdflatex when installed, else its structure), CSV that reads back as the
mart's numbers, Markdown, the demo label in captions, marks and bold."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess

import pytest

from ragwh.experiment.config.chunking import load_config
from ragwh.experiment.tables import export_tables
from ragwh.experiment.tables.render import latex_escape
from ragwh.experiment.tables.spec import marks_for
from tests.ragwh.experiment.test_report import _fill_marts


def check_latex(path) -> None:
    """Compile with pdflatex when it is installed (.ci/run installs it); check the structure either way:
    balanced environments, booktabs rules, every row as many cells as the tabular has columns."""
    text = "".join(p.read_text() for p in sorted(path.parent.glob("*.tex")))
    for env in ("table", "tabular", "document"):
        assert text.count(r"\begin{" + env) == text.count(r"\end{" + env), env
    for table in re.findall(r"\\begin\{tabular\}\{([lr]+)\}(.*?)\\end\{tabular\}", text, re.S):
        cols, body = len(table[0]), table[1]
        assert r"\toprule" in body and r"\midrule" in body and r"\bottomrule" in body
        for row in re.findall(r"^(.*)\\\\$", body, re.M):
            assert row.count("&") == cols - 1, row
    pdflatex = shutil.which("pdflatex")
    if pdflatex:
        done = subprocess.run(
            [pdflatex, "-interaction=nonstopmode", "-halt-on-error", path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout[-2000:]
        assert (path.parent / "tables.pdf").stat().st_size > 1000


def test_chunking_tables_in_every_format(con, tmp_path):
    _fill_marts(con)
    result = export_tables(con, load_config(None), tmp_path)
    names = sorted(p.name for p in result.files)
    assert names == [
        "chunking-table1.csv",
        "chunking-table1.md",
        "chunking-table1.tex",
        "chunking-table2.csv",
        "chunking-table2.md",
        "chunking-table2.tex",
        "tables.tex",
    ]
    table1 = (tmp_path / "chunking-table1.tex").read_text()
    assert r"\toprule" in table1 and "DEMO NUMBERS, NOT RESULTS" in table1  # the demo config's label in the caption
    assert r"C2 & A3 $-$ P & 20 & 5 & +0.031 & [+0.010, +0.052] & 0.012 & 0.41 \\" in table1
    table2 = (tmp_path / "chunking-table2.tex").read_text()
    assert r"\textbf{0.610 [0.560, 0.660]}" in table2  # P, the best condition of the cov-nDCG@10 column
    md = (tmp_path / "chunking-table2.md").read_text().splitlines()
    assert md[2].startswith("| condition | n queries | n docs | cov-nDCG@10 |") and len(md) == 4 + 12
    check_latex(tmp_path / "tables.tex")


def test_table1_names_the_contrasts_that_did_not_run(con, tmp_path):
    _fill_marts(con)
    export_tables(
        con,
        load_config(None),
        tmp_path,
        formats=("latex", "markdown"),
        not_run={"C1": "A1 needs an LLM backend", "A1": "no LLM", "C9": "not pre-registered"},
    )
    table1 = (tmp_path / "chunking-table1.tex").read_text()
    assert r"Not in this table: C1 (A3 $-$ A1): A1 needs an LLM backend. DEMO NUMBERS" in table1
    assert "C9" not in table1 and "no LLM" not in table1  # only pre-registered contrasts, only in Table 1
    assert "Not in this table" not in (tmp_path / "chunking-table2.tex").read_text()
    export_tables(con, load_config(None), tmp_path / "all", formats=("latex",))  # every contrast ran: no note
    assert "Not in this table" not in (tmp_path / "all" / "chunking-table1.tex").read_text()


def test_csv_reads_back_as_the_marts_numbers(con, tmp_path):
    _fill_marts(con)
    export_tables(con, load_config(None), tmp_path, formats=["csv"])
    with open(tmp_path / "chunking-table2.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    mart = {(r[3], r[4]): r for r in con.execute("SELECT * FROM condition_means").fetchall()}
    assert len(rows) == len(mart) == 12 * 7
    for r in rows:
        m = mart[(r["condition"], r["metric"])]
        assert (float(r["mean_value"]), float(r["ci_low"]), float(r["ci_high"]), int(r["n_queries"])) == (
            m[7],
            m[9],
            m[10],
            m[5],
        )
    with open(tmp_path / "chunking-table1.csv", newline="") as handle:
        first = next(csv.DictReader(handle))
    assert (first["contrast"], float(first["mean_delta"]), float(first["p_holm"])) == ("C2", 0.031, 0.012)


def test_nothing_to_write_says_why(con, tmp_path):
    result = export_tables(con, load_config(None), tmp_path)
    assert result.files == [] and result.skipped == {
        "chunking-table1": "contrasts was not built",
        "chunking-table2": "condition_means was not built",
    }


def test_marks_and_escaping():
    assert [marks_for(p) for p in (0.0005, 0.001, 0.009, 0.049, 0.05, None)] == ["***", "**", "**", "*", "", ""]
    assert latex_escape("A3 − P_1 & 5% ± Δ") == r"A3 $-$ P\_1 \& 5\% $\pm$ $\Delta$"
    assert latex_escape("café") == "caf?"


@pytest.mark.parametrize("fmt", ["pdf", "svg"])
def test_figures_as_files(con, tmp_path, fmt):
    _fill_marts(con)
    result = export_tables(con, load_config(None), tmp_path / "t", formats=["csv"], figures=tmp_path / "f")
    names = sorted(p.name for p in result.figures if p.suffix == f".{fmt}")
    assert names == [
        f"chunking-budget-demo-all-minilm-l6-v2.{fmt}",
        f"chunking-dose-demo-all-minilm-l6-v2.{fmt}",
        f"chunking-forest.{fmt}",
        f"chunking-funnel.{fmt}",
        f"chunking-sizes.{fmt}",
    ]
    head = (tmp_path / "f" / f"chunking-forest.{fmt}").read_bytes()[:200]
    assert head.startswith(b"%PDF") if fmt == "pdf" else b"<svg" in head or b"<?xml" in head
