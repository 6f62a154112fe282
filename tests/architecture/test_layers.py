"""The layer rule of docs/design.md: stages (``ingest/``) and kernels (``udfs/``) import storage
(``warehouse.db``, ``schema``, ``paths``, ``manifest``, ``dbt``), never the experiment layer
(``warehouse.experiment``) or the CLI (``warehouse.commands``, ``warehouse.cli``)."""
from __future__ import annotations

import ast
from pathlib import Path

from warehouse.paths import PROJECT_ROOT

FORBIDDEN = ("warehouse.experiment", "warehouse.commands", "warehouse.cli")
LOWER_LAYERS = ("ingest", "udfs")


def imported_modules(source: str) -> set[str]:
    """Every module an ``import`` or ``from ... import`` names, anywhere in the file (function-level too).
    ``from warehouse import experiment`` names ``warehouse.experiment``; ``from a.b import c`` names
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
    assert violations(PROJECT_ROOT) == []


def test_storage_imports_no_stage_and_no_experiment_module():
    """``warehouse/*.py`` but the CLI entry point is storage: it may import udfs (the plugin), nothing above."""
    for path in sorted((PROJECT_ROOT / "warehouse").glob("*.py")):
        if path.name == "cli.py":
            continue
        bad = sorted(m for m in imported_modules(path.read_text(encoding="utf-8"))
                     if _forbidden(m) or m == "ingest" or m.startswith("ingest."))
        assert bad == [], f"{path.relative_to(PROJECT_ROOT)} imports {bad}"


def test_the_check_catches_each_form_of_import(tmp_path):
    (tmp_path / "ingest" / "corpora").mkdir(parents=True)
    (tmp_path / "udfs").mkdir()
    (tmp_path / "ingest" / "corpora" / "bad.py").write_text(
        "import warehouse.experiment.config\n"
        "def f():\n    from warehouse.commands.run import run_command\n"
        "from warehouse import experiment\n", encoding="utf-8")
    (tmp_path / "udfs" / "ok.py").write_text("from warehouse.db import connect\nimport warehouse.schema\n", encoding="utf-8")
    assert violations(tmp_path) == [
        "ingest/corpora/bad.py: imports warehouse.commands.run",
        "ingest/corpora/bad.py: imports warehouse.experiment",
    ]


def test_no_loose_modules_at_the_top_of_ingest():
    loose = sorted(p.name for p in (PROJECT_ROOT / "ingest").glob("*.py"))
    assert loose == ["__init__.py", "errors.py"]
