"""The installed tool: the wheel built from this tree, installed into a fresh virtual environment outside
the checkout, runs a demo experiment from a working directory of its own, finds the dbt project and the
bundled experiments it ships, and writes its outputs there and nothing into its ``site-packages``.

Kept cheap: the fresh environment borrows this environment's installed dependencies through a ``.pth``
line (nothing is downloaded or reinstalled), the wheel is installed with ``--no-deps``, and the demo is
the bundled default cut to two papers, one contrast and its two conditions."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import duckdb
import yaml

from warehouse.paths import CODE_ROOT

#: Not part of the source tree a wheel is built from (outputs, environments, caches).
IGNORED = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                 "target", "logs", "reports", "exports", "*.duckdb", "*.duckdb.wal", "*.duckdb.ann")


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def _clean_env() -> dict[str, str]:
    """The environment without anything that points Python or the tool at the checkout."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "RAGWH_WAREHOUSE", "RAGWH_WORKDIR", "RAGWH_DATA", "VIRTUAL_ENV")}


def test_the_wheel_installed_outside_the_checkout_runs_the_demo(tmp_path):
    source = tmp_path / "source"
    shutil.copytree(CODE_ROOT, source, ignore=IGNORED)
    pip = [sys.executable, "-m", "pip"]
    subprocess.run([*pip, "wheel", str(source), "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "dist")],
                   check=True, cwd=tmp_path)
    wheel = next((tmp_path / "dist").glob("ragwarehouse-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for shipped in ("ragwarehouse/dbt_project.yml", "ragwarehouse/profiles.yml", "ragwarehouse/seeds/conditions.csv",
                    "ragwarehouse/macros/evaluation.sql", "ragwarehouse/tests/dbt/chunk_tiling.sql",
                    "ragwarehouse/experiments/default.yml", "ragwh/experiment/demo/demo.v0.3-format.json"):
        assert shipped in names, shipped
    assert not any(n.startswith(("tests/", "benchmarks/", "ragwarehouse/setup")) for n in names)

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())
    borrowed = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    (site / "borrowed-dependencies.pth").write_text("".join(f"{p}\n" for p in borrowed))
    subprocess.run([*pip, "--python", str(python), "install", "-q", "--no-deps", str(wheel)], check=True, env=_clean_env())
    packaged = site / "ragwarehouse"

    work = tmp_path / "work"
    work.mkdir()
    raw = yaml.safe_load((packaged / "experiments" / "default.yml").read_text())
    raw.update(name="tiny", limit=2, conditions=["A3", "P"], contrasts=["C2"], bootstrap={"B": 200, "seed": 1})
    (work / "tiny.yml").write_text(yaml.safe_dump(raw))
    where = subprocess.run([python, "-c", "from warehouse.paths import PROJECT_ROOT; print(PROJECT_ROOT)"], cwd=work,
                           check=True, capture_output=True, text=True, env=_clean_env()).stdout.strip()
    assert Path(where) == packaged

    before = _snapshot(site)
    run = subprocess.run([env_dir / "bin" / "ragwh", "run", "--config", "tiny.yml"], cwd=work, capture_output=True,
                         text=True, env=_clean_env())
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert _snapshot(site) == before  # nothing written into site-packages (no dbt target, log, cache, report)
    for output in ("warehouse/ragwh.duckdb", "reports/tiny.html", "target/manifest.json", "logs/dbt.log"):
        assert (work / output).is_file(), output
    con = duckdb.connect(str(work / "warehouse" / "ragwh.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT contrast, n_queries FROM contrasts WHERE is_primary").fetchall() == [("C2", 8)]
    finally:
        con.close()
