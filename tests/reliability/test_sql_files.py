"""``ragwh sql`` without ``--write`` reaches no file but the warehouse: reading another file (``read_csv``)
or writing one (``COPY ... TO``) is refused in one line that names ``--allow-files``, which permits both."""

from __future__ import annotations

import pytest

from tests.reliability.cli import one_line, ragwh


@pytest.mark.parametrize("query", ["SELECT * FROM read_csv('{secret}')", "COPY (SELECT 1 AS x) TO '{out}'"])
def test_read_only_sql_reaches_no_other_file(query, clean_demo, tmp_path):
    secret, out = tmp_path / "secret.csv", tmp_path / "out.csv"
    secret.write_text("a,b\n1,2\n", encoding="utf-8")
    statement = query.format(secret=secret, out=out)
    result = ragwh("sql", statement, "--warehouse", clean_demo)
    assert result.exit_code == 1
    line = one_line(result)
    assert "file system operations are disabled" in line and "pass --allow-files" in line, line
    assert not out.exists()
    allowed = ragwh("sql", statement, "--warehouse", clean_demo, "--allow-files", "--csv")
    assert allowed.exit_code == 0, allowed.output
    assert out.exists() if "COPY" in query else "1,2" in allowed.output


def test_read_only_sql_still_reads_the_marts(clean_demo):
    result = ragwh("sql", "SELECT count(*) AS n FROM condition_means", "--warehouse", clean_demo, "--csv")
    assert result.exit_code == 0, result.output
    assert int(result.output.splitlines()[1]) > 0
