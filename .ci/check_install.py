"""Checks of the clean-install step (.ci/clean-install), run with the fresh environment's own Python.

check_install.py snapshot SITE OUT        record every file under SITE (size, mtime) in OUT
check_install.py unchanged SITE BEFORE    fail if a file under SITE was added, removed or changed
check_install.py wheel WHEEL              fail unless the wheel ships the dbt project and the bundled experiments,
                                          and nothing of the checkout that is not the package (tests, benchmarks)
check_install.py tables WAREHOUSE         fail unless the demo run's marts and experiment record are there,
                                          read through the analysts' entry point (ragwh.open_warehouse)
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

#: files the installed tool needs beside its Python packages (warehouse.paths.find_project_root finds them)
SHIPPED = (
    "ragwarehouse/dbt_project.yml",
    "ragwarehouse/profiles.yml",
    "ragwarehouse/seeds/conditions.csv",
    "ragwarehouse/macros/evaluation.sql",
    "ragwarehouse/tests/dbt/chunk_tiling.sql",
    "ragwarehouse/experiments/default.yml",
    "ragwh/experiment/demo/demo.v0.3-format.json",
)


def _snapshot(site: Path) -> dict[str, list[int]]:
    return {
        str(p.relative_to(site)): [p.stat().st_size, p.stat().st_mtime_ns]
        for p in sorted(site.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def main(argv: list[str]) -> int:
    command, *args = argv
    if command == "snapshot":
        Path(args[1]).write_text(json.dumps(_snapshot(Path(args[0]))))
        return 0
    if command == "unchanged":
        before, after = json.loads(Path(args[1]).read_text()), _snapshot(Path(args[0]))
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        if changed:
            print(f"files written into {args[0]}: {', '.join(changed[:10])}", file=sys.stderr)
            return 1
        print(f"nothing written into {args[0]} ({len(after)} files unchanged)")
        return 0
    if command == "wheel":
        names = set(zipfile.ZipFile(args[0]).namelist())
        missing = [n for n in SHIPPED if n not in names]
        stray = sorted(n for n in names if n.startswith(("tests/", "benchmarks/", "ragwarehouse/setup")))
        if missing or stray:
            print(f"{args[0]}: missing {missing}, not to be shipped {stray[:5]}", file=sys.stderr)
            return 1
        print(f"{Path(args[0]).name}: {len(names)} files, the dbt project and experiments included")
        return 0
    if command == "tables":
        from ragwh import open_warehouse

        with open_warehouse(args[0]) as wh:
            record = wh.experiment
            contrasts = wh.contrasts()
            means = wh.condition_means()
            problems = []
            if record.get("status") != "finished" or record.get("name") != "demo":
                problems.append(f"experiment record {record.get('name')!r} has status {record.get('status')!r}")
            if record.get("overrides", {}).get("limit") != 2:
                problems.append(f"the --limit 2 override is not recorded: {record.get('overrides')}")
            if contrasts.filter(contrasts["is_primary"]).height == 0:
                problems.append("no primary-cell contrast")
            if means.height == 0:
                problems.append("condition_means is empty")
            if problems:
                print("; ".join(problems), file=sys.stderr)
                return 1
            print(
                f"warehouse {args[0]}: experiment {record['name']!r} {record['status']}, {contrasts.height} contrast "
                f"rows, {means.height} condition means"
            )
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
