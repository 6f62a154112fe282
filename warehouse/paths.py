"""Where things live: the warehouse file, the project root, the data directory.

Resolution order for the warehouse file: ``--warehouse FILE`` (passed in), else the
``RAGWH_WAREHOUSE`` environment variable, else ``warehouse/ragwh.duckdb`` under the project
root. ``profiles.yml`` reads the same variable, so ``dbt build`` and the CLI share one file.
"""
from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WAREHOUSE = PROJECT_ROOT / "warehouse" / "ragwh.duckdb"
WAREHOUSE_ENV = "RAGWH_WAREHOUSE"
DATA_ENV = "RAGWH_DATA"


def warehouse_path(explicit: str | os.PathLike | None = None) -> Path:
    """Return the warehouse file: explicit argument, else $RAGWH_WAREHOUSE, else the default."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get(WAREHOUSE_ENV)
    if env:
        return Path(env).expanduser().resolve()
    return DEFAULT_WAREHOUSE


def data_dir(explicit: str | os.PathLike | None = None) -> Path | None:
    """Return the data directory: explicit argument, else $RAGWH_DATA, else None."""
    value = explicit or os.environ.get(DATA_ENV)
    return Path(value).expanduser().resolve() if value else None
