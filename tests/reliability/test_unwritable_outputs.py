"""``ragwh export tables`` into a place it cannot write (``--out`` a regular file, or a path under one) is one
line naming the path and what to pass instead, exit 1, no traceback."""

from __future__ import annotations

import pytest

from tests.reliability.cli import one_line, ragwh


@pytest.mark.parametrize("under", [False, True])
def test_export_tables_into_a_file_is_one_line(under, clean_demo, tmp_path):
    blocker = tmp_path / "tables.txt"
    blocker.write_text("not a directory\n", encoding="utf-8")
    out = blocker / "tables" if under else blocker
    result = ragwh("export", "tables", "--out", out, "--warehouse", clean_demo)
    assert result.exit_code == 1
    assert one_line(result) == (
        f"export failed: cannot write {out}: {blocker} is a file, not a directory: pass --out "
        "with a directory you can write to"
    )
    assert blocker.read_text(encoding="utf-8") == "not a directory\n"


def test_export_tables_into_a_folder_it_may_not_write_is_one_line(clean_demo, tmp_path, monkeypatch):
    """A read-only folder (EACCES; simulated: this suite may run as root, which writes anywhere)."""
    import ragwh.experiment.tables as tables

    out = tmp_path / "locked" / "tables"

    def refuse(con, config, directory, **_):
        raise PermissionError(13, "Permission denied", str(directory))

    monkeypatch.setattr(tables, "export_tables", refuse)
    result = ragwh("export", "tables", "--out", out, "--warehouse", clean_demo)
    assert result.exit_code == 1
    assert one_line(result) == (
        f"export failed: cannot write {out}: permission denied: pass --out with a directory you can write to"
    )
