"""Where things live: the code, the dbt project, the outputs, the warehouse file, the data directory.

- :data:`CODE_ROOT`: the directory that holds the Python packages (``ingest/``, ``udfs/``, ``warehouse/``,
  ``ragwh/``): the checkout, or ``site-packages`` of an installed wheel.
- :data:`PROJECT_ROOT`: the dbt project (``dbt_project.yml``, ``profiles.yml``, ``models/``, ``seeds/``,
  ``macros/``, ``analyses/``, ``tests/dbt/``) and the bundled ``experiments/``: the checkout's top level,
  or, in an installed wheel, the copy of those files the wheel ships as ``ragwarehouse/`` beside the
  packages (read-only: nothing is ever written there).
- :func:`workdir`: where every output goes (the warehouse file, ``reports/``, ``exports/``, dbt's
  ``target/`` and ``logs/``): ``ragwh --workdir DIR`` / ``$RAGWH_WORKDIR``, else the current directory.

Resolution order for the warehouse file: ``--warehouse FILE`` (passed in), else the
``RAGWH_WAREHOUSE`` environment variable, else ``warehouse/ragwh.duckdb`` under the working
directory. ``profiles.yml`` reads the same variable (and the same default, relative to where dbt
runs), so ``dbt build`` and the CLI share one file.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

CODE_ROOT = Path(__file__).resolve().parent.parent
#: The name of the dbt project's copy inside an installed wheel (the dbt project is named so too).
PACKAGED_PROJECT = "ragwarehouse"
WAREHOUSE_ENV = "RAGWH_WAREHOUSE"
DATA_ENV = "RAGWH_DATA"
WORKDIR_ENV = "RAGWH_WORKDIR"


def find_project_root(code_root: Path = CODE_ROOT) -> Path:
    """The checkout when the packages run from one (``dbt_project.yml`` beside them), else the copy an
    installed wheel ships beside them; an error that says how to repair the install when neither exists."""
    for candidate in (code_root, code_root / PACKAGED_PROJECT):
        if (candidate / "dbt_project.yml").is_file():
            return candidate
    raise RuntimeError(
        f"no dbt project found in {code_root} or {code_root / PACKAGED_PROJECT}: "
        "reinstall the package (pip install ragwarehouse) or run from a checkout"
    )


PROJECT_ROOT = find_project_root()


def seed_rows(name: str) -> tuple[Path, list[dict[str, str]]]:
    """The rows of the dbt seed ``seeds/<name>.csv`` as dicts, in file order, and the file's path (for errors that
    name a line: row ``i`` is line ``i + 2``): the one reader of the registries the code shares with dbt."""
    path = PROJECT_ROOT / "seeds" / f"{name}.csv"
    with open(path, newline="", encoding="utf-8") as handle:
        return path, list(csv.DictReader(handle))


def install_hint(extra: str) -> str:
    """The command that installs the optional extra ``extra`` (``ray``, ``local-llm``, ``vllm``) into this
    installation: the checkout's editable install, or the installed package."""
    if (CODE_ROOT / "pyproject.toml").is_file():
        return f"pip install -e '.[{extra}]' (in {CODE_ROOT})"
    return f"pip install 'ragwarehouse[{extra}]'"


def workdir(explicit: str | os.PathLike | None = None) -> Path:
    """Where outputs go: explicit argument, else $RAGWH_WORKDIR, else the current directory."""
    value = explicit or os.environ.get(WORKDIR_ENV)
    return Path(value).expanduser().resolve() if value else Path.cwd()


def default_warehouse() -> Path:
    """``warehouse/ragwh.duckdb`` under the working directory."""
    return workdir() / "warehouse" / "ragwh.duckdb"


def reports_dir() -> Path:
    """``reports/`` under the working directory (``ragwh run`` and ``ragwh report`` write there)."""
    return workdir() / "reports"


def warehouse_path(explicit: str | os.PathLike | None = None) -> Path:
    """Return the warehouse file: explicit argument, else $RAGWH_WAREHOUSE, else the default."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get(WAREHOUSE_ENV)
    if env:
        return Path(env).expanduser().resolve()
    return default_warehouse()


def data_dir(explicit: str | os.PathLike | None = None) -> Path | None:
    """Return the data directory: explicit argument, else $RAGWH_DATA, else None."""
    value = explicit or os.environ.get(DATA_ENV)
    return Path(value).expanduser().resolve() if value else None
