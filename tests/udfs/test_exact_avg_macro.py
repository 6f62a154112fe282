"""macros/exact_avg.sql: the order-free mean, rendered as dbt renders it and run in DuckDB."""

from __future__ import annotations

import itertools
from pathlib import Path

import duckdb
import jinja2
import numpy as np
import pytest

MACRO = Path(__file__).resolve().parents[2] / "macros" / "exact_avg.sql"


def exact_avg(expr: str) -> str:
    return jinja2.Environment().from_string(MACRO.read_text()).module.exact_avg(expr).strip()


def mean_of(con, values, expr="x"):
    con.execute("CREATE OR REPLACE TEMP TABLE t (g INTEGER, i INTEGER, x DOUBLE)")
    con.executemany("INSERT INTO t VALUES (0, ?, ?)", list(enumerate(values)))
    return con.execute(f"SELECT {exact_avg(expr)} FROM t").fetchone()[0]


def test_worked_example_and_nulls():
    con = duckdb.connect()
    assert mean_of(con, [0.25, 0.5, 1.0]) == 1.75 / 3  # the macro's worked example
    assert mean_of(con, [1.0, None, 0.0]) == 0.5  # NULLs ignored, as avg ignores them
    assert mean_of(con, [None, None]) is None
    assert mean_of(con, [0.1, -0.1, 0.3, -0.3]) == 0.0  # exact sums cancel exactly


def test_same_bits_in_every_order_and_close_to_the_float_mean():
    con = duckdb.connect()
    rng = np.random.default_rng(3)
    values = list(rng.uniform(-1, 1, 6))
    got = {mean_of(con, list(p)) for p in itertools.permutations(values)}
    assert len(got) == 1  # 720 orders, one double
    assert got.pop() == pytest.approx(float(np.mean(values)), abs=2.3e-16)


def test_many_groups_match_ordered_avg_within_the_grid():
    con = duckdb.connect()
    con.execute("SELECT setseed(0.5)")
    con.execute("CREATE TEMP TABLE t AS SELECT (i % 1000) AS g, random() AS x FROM range(30000) r(i)")
    worst, n = con.execute(f"""SELECT max(abs(a - b)), count(*) FROM (
        SELECT g, avg(x ORDER BY x) AS a, {exact_avg("x")} AS b FROM t GROUP BY g)""").fetchone()
    assert n == 1000 and worst <= 2**-52
