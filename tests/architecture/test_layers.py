"""The layer rule of docs/design.md, one folder per layer: ``ragwh/`` (the CLI and the experiment layer)
imports the stages (``ingest/``), which import storage (``warehouse/``: db, schema, paths, manifest,
dbt); kernels (``udfs/``) import storage at most. No stage or kernel imports ``ragwh``; storage imports
neither a stage nor ``ragwh``."""

from __future__ import annotations

import ast
from pathlib import Path

from warehouse.paths import CODE_ROOT

FORBIDDEN = ("ragwh",)
LOWER_LAYERS = ("ingest", "udfs")


def imported_modules(source: str) -> set[str]:
    """Every module an ``import`` or ``from ... import`` names, anywhere in the file (function-level too).
    ``from ragwh import experiment`` names ``ragwh.experiment``; ``from a.b import c`` names
    ``a.b`` and ``a.b.c`` (c may be a submodule)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def _forbidden(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FORBIDDEN)


def violations(root: Path, packages: tuple[str, ...] = LOWER_LAYERS) -> list[str]:
    """``'<file>: imports <module>'`` for each forbidden module a file under ``packages`` names (sorted;
    of ``a.b`` and ``a.b.c`` from one statement only the shorter is listed)."""
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            bad = sorted(m for m in imported_modules(path.read_text(encoding="utf-8")) if _forbidden(m))
            kept = [m for m in bad if not any(m.startswith(o + ".") for o in bad)]
            found.extend(f"{path.relative_to(root)}: imports {m}" for m in kept)
    return found


def test_stages_and_kernels_never_import_the_experiment_layer():
    assert violations(CODE_ROOT) == []


def test_storage_imports_no_stage_and_no_experiment_module():
    """Everything under ``warehouse/`` is storage: it may import udfs (the plugin), nothing above."""
    for path in sorted((CODE_ROOT / "warehouse").rglob("*.py")):
        bad = sorted(
            m
            for m in imported_modules(path.read_text(encoding="utf-8"))
            if _forbidden(m) or m == "ingest" or m.startswith("ingest.")
        )
        assert bad == [], f"{path.relative_to(CODE_ROOT)} imports {bad}"


def test_the_check_catches_each_form_of_import(tmp_path):
    (tmp_path / "ingest" / "corpora").mkdir(parents=True)
    (tmp_path / "udfs").mkdir()
    forms = {
        "a.py": "import ragwh.experiment.config.chunking\n",
        "b.py": "def f():\n    from ragwh.commands.run import run_command\n",
        "c.py": "from ragwh import experiment\n",
    }
    for name, source in forms.items():
        (tmp_path / "ingest" / "corpora" / name).write_text(source, encoding="utf-8")
    (tmp_path / "udfs" / "ok.py").write_text(
        "from warehouse.db import connect\nimport warehouse.schema\n", encoding="utf-8"
    )
    assert violations(tmp_path) == [
        "ingest/corpora/a.py: imports ragwh.experiment.config.chunking",
        "ingest/corpora/b.py: imports ragwh.commands.run",
        "ingest/corpora/c.py: imports ragwh",
    ]


def test_no_loose_modules_at_the_top_of_ingest():
    loose = sorted(p.name for p in (CODE_ROOT / "ingest").glob("*.py"))
    assert loose == ["__init__.py", "errors.py"]
