"""The experiment a ``ragwh run`` records in its warehouse, and the check that a report is about it.

Each run inserts an ``experiments`` row when it starts (the resolved config as JSON and its sha256,
the YAML mapping as read with the command-line overrides applied, project version, git commit,
package versions, precision, device) and sets it to ``finished`` or ``failed`` when it ends; before
dbt runs it stores the settings the marts read (``experiment_settings``: :func:`study_settings`), so a
bare ``dbt build`` rebuilds what the run built. :func:`check_config` refuses a report whose config is
not the experiment the warehouse holds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import duckdb
import yaml

from warehouse import identity as store
from warehouse.paths import PROJECT_ROOT

#: the settings (dbt_project.yml setting_defaults) a chunking run fixes; every other one is the rewriting study's
CHUNKING_SETTINGS = (
    "inducer",
    "bootstrap_b",
    "bootstrap_seed",
    "primary_metric",
    "primary_embedder",
    "primary_reranker",
    "k",
    "declared_contrasts",
)
#: the packages whose versions a run records
PACKAGES = ("duckdb", "dbt-core", "dbt-duckdb", "torch", "sentence-transformers", "transformers")


class IdentityError(ValueError):
    """A config that is not the experiment the warehouse holds (one line: both, and what to do)."""


def study_of(config: Any) -> str:
    from ragwh.experiment.config.rewriting import RewritingConfig

    return "rewriting" if isinstance(config, RewritingConfig) else "chunking"


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name != "source_file"}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


def resolved_json(config: Any) -> str:
    """The validated config (every default filled in) as canonical JSON; where it was read from is not part of it."""
    return json.dumps({"study": study_of(config), **_plain(config)}, sort_keys=True, default=str)


def config_hash(config: Any) -> str:
    return hashlib.sha256(resolved_json(config).encode()).hexdigest()


def project_version() -> str:
    from ragwh import __version__

    return __version__


def git_commit() -> str | None:
    """HEAD of the checkout the code runs from ('-dirty' with uncommitted changes); None outside git."""
    if not (PROJECT_ROOT / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(PROJECT_ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(PROJECT_ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "")


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def device() -> str:
    try:
        import torch
    except ImportError:
        return "cpu"
    return f"cuda ({torch.cuda.get_device_name(0)})" if torch.cuda.is_available() else "cpu"


def study_settings(config: Any, chunking_vars: dict[str, Any] | None = None) -> dict[str, Any]:
    """The settings a run of ``config`` stores: a chunking run its :data:`CHUNKING_SETTINGS`
    (``chunking_vars``: the pipeline's, with the stored model names), a rewriting run every other
    setting (the config's values over dbt_project.yml's defaults)."""
    from warehouse.dbt import setting_defaults

    defaults = setting_defaults()
    if study_of(config) == "chunking":
        return {k: (chunking_vars or {})[k] for k in CHUNKING_SETTINGS}
    return {**{k: v for k, v in defaults.items() if k not in CHUNKING_SETTINGS}, **config.dbt_vars()}


def record_start(
    con: duckdb.DuckDBPyConnection,
    config: Any,
    overrides: dict[str, Any],
    settings: dict[str, Any],
    computed_precision: str,
) -> int:
    """Insert the run's 'running' experiments row, store its settings; returns the experiment id."""
    from ragwh.experiment.config.overrides import apply_overrides

    source = apply_overrides(yaml.safe_load(Path(config.source_file).read_text(encoding="utf-8")), overrides)
    row = {
        "name": config.name,
        "study": study_of(config),
        "config_file": str(config.source_file),
        "config_json": resolved_json(config),
        "config_hash": config_hash(config),
        "source_json": json.dumps(source, sort_keys=True, default=str),
        "overrides_json": json.dumps({k: v for k, v in overrides.items() if v is not None}, sort_keys=True),
        "project_version": project_version(),
        "git_commit": git_commit(),
        "packages_json": json.dumps(package_versions(), sort_keys=True),
        "precision": f"{config.precision} -> {computed_precision}",
        "device": device(),
    }
    experiment_id = store.start_experiment(con, row)
    store.write_settings(con, settings, row["study"], experiment_id)
    return experiment_id


def describe(row: dict[str, Any]) -> str:
    return f"{row['study']} experiment {row['name']!r} (run #{row['experiment_id']}, {row['started_at']:%Y-%m-%d %H:%M}, {row['status']})"


def check_config(con: duckdb.DuckDBPyConnection, config: Any, warehouse: Path) -> dict[str, Any] | None:
    """The experiments row ``config`` is (the last run of its study); :class:`IdentityError` when the
    warehouse holds another experiment, or ``config`` differs from the one its run used (after
    re-applying that run's command-line overrides). None when the warehouse records no experiment
    (built by single commands)."""
    study = study_of(config)
    row = store.latest_experiment(con, study)
    if row is None:
        other = store.latest_experiment(con)
        if other is None:
            return None
        raise IdentityError(
            f"warehouse {warehouse} holds {describe(other)}, no {study} experiment: --config "
            f"{config.source_file} is {study} experiment {config.name!r}; omit --config to report "
            f"{other['name']!r}, or pass the warehouse {config.name!r} was built into"
        )
    if row["name"] != config.name:
        raise IdentityError(
            f"warehouse {warehouse} holds {describe(row)}, not {config.name!r} (--config "
            f"{config.source_file}): omit --config to report {row['name']!r}, or pass the warehouse "
            f"{config.name!r} was built into"
        )
    from ragwh.experiment.config.rewriting import load_experiment

    again = load_experiment(config.source_file, json.loads(row["overrides_json"]))
    if config_hash(again) != row["config_hash"]:
        ran, given = json.loads(row["config_json"]), json.loads(resolved_json(again))
        keys = sorted(k for k in set(ran) | set(given) if ran.get(k) != given.get(k))
        raise IdentityError(
            f"--config {config.source_file} differs from the config {describe(row)} ran with in "
            f"{warehouse} (in {', '.join(keys)}): rerun `ragwh run --config {config.source_file} "
            f"--warehouse {warehouse}` (unchanged stages are skipped), or omit --config to report "
            "the recorded one"
        )
    return row


def recorded_config(con: duckdb.DuckDBPyConnection, warehouse: Path, study: str | None = None) -> tuple[Any, dict]:
    """The config of the warehouse's last experiment (of ``study``), re-validated from the mapping it
    recorded, and its row; :class:`IdentityError` when none is recorded."""
    from ragwh.experiment.config.chunking import parse_config
    from ragwh.experiment.config.rewriting import parse_rewriting_config

    row = store.latest_experiment(con, study)
    if row is None:
        raise IdentityError(
            f"warehouse {warehouse} records no experiment (no `ragwh run` built it): pass the "
            "config it was built with (--config FILE), or run one (`ragwh run --config FILE "
            f"--warehouse {warehouse}`)"
        )
    parse = parse_rewriting_config if row["study"] == "rewriting" else parse_config
    return parse(json.loads(row["source_json"]), Path(row["config_file"])), row
