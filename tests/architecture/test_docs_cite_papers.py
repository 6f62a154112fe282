"""Comments, docs and messages speak of the project and the papers it reproduces (the chunking ablation,
arXiv 2610.10170; the query-rewriting study, arXiv 2609.05637), never of internal work items."""

from __future__ import annotations

import re

from warehouse.paths import CODE_ROOT

#: "issue 13", "issues 11, 12", "Point 7", "Points 1-2", "defect 3", "work item 4" (not "items 0..3" of a list)
WORK_ITEM = re.compile(r"\b(issues?|points?|defects?|work items?)\s+\d+", re.IGNORECASE)
FOLDERS = (
    "ingest",
    "udfs",
    "warehouse",
    "ragwh",
    "models",
    "macros",
    "seeds",
    "analyses",
    "experiments",
    "docs",
    "benchmarks",
    "tests",
    ".ci",
)
TOP = ("README.md", "dbt_project.yml", "profiles.yml", "pyproject.toml", "setup.py")
SUFFIXES = {".py", ".sql", ".yml", ".yaml", ".md", ".txt", ".csv", ".toml", ""}


def work_item_citations(root=CODE_ROOT) -> list[str]:
    files = [root / t for t in TOP] + [p for f in FOLDERS for p in sorted((root / f).rglob("*"))]
    found = []
    for path in files:
        if not path.is_file() or path.suffix not in SUFFIXES or "__pycache__" in path.parts or path == THIS:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if WORK_ITEM.search(line):
                found.append(f"{path.relative_to(root)}:{n}: {line.strip()[:120]}")
    return found


THIS = CODE_ROOT / "tests" / "architecture" / "test_docs_cite_papers.py"


def test_no_work_item_numbers_in_code_or_docs():
    assert work_item_citations() == []


def test_the_check_finds_each_form(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("fine\n## Reliability (issue 14)\n-- Point 3: how it fails\n")
    (tmp_path / "README.md").write_text("top-50 lists; 3 points of view\n")
    assert work_item_citations(tmp_path) == [
        "docs/a.md:2: ## Reliability (issue 14)",
        "docs/a.md:3: -- Point 3: how it fails",
    ]
