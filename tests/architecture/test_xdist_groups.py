"""The suite runs on pytest-xdist workers, one test file per worker at a time; a folder whose conftest builds a
fixture for the whole folder (package or session scope) goes to one worker whole, or each worker would build it
again (tests/conftest.py)."""

from __future__ import annotations

import re

from tests.conftest import SHARED_FIXTURE_FOLDERS, TESTS, xdist_scope

WIDE_SCOPE = re.compile(r"""@pytest\.fixture\([^)]*scope=["'](package|session)["']""")


def test_every_folder_with_a_folder_wide_fixture_is_one_scope():
    folders = {
        conftest.parent.relative_to(TESTS).parts
        for conftest in TESTS.rglob("conftest.py")
        if conftest.parent != TESTS and WIDE_SCOPE.search(conftest.read_text(encoding="utf-8"))
    }
    assert folders == set(SHARED_FIXTURE_FOLDERS)


def test_scopes_are_files_except_the_shared_folders():
    assert xdist_scope("tests/reliability/test_kill.py::test_a[x-1]") == "tests/reliability"
    assert xdist_scope("tests/models/rewriting/test_router.py::test_tau") == "tests/models/rewriting"
    assert xdist_scope("tests/models/test_other.py::test_b") == "tests/models/test_other.py"
    assert xdist_scope("tests/test_e2e_cpu.py::test_c") == "tests/test_e2e_cpu.py"
    assert xdist_scope("tests/ingest/rewriting/test_stage.py::T::test_d") == "tests/ingest/rewriting/test_stage.py"


def test_the_slow_scopes_exist_and_go_first():
    from tests.conftest import SLOW_SCOPES, scope_order

    for scope in SLOW_SCOPES:  # a renamed file would silently lose its place at the front
        assert (TESTS.parent / scope).exists(), scope
        assert xdist_scope(f"{scope}/test_x.py::test_y" if not scope.endswith(".py") else f"{scope}::test_y") == scope
    # longest first: the last run's seconds, else SLOW_SCOPES; the rest keep xdist's order (most tests first)
    assert scope_order(["tests/a.py", "tests/test_e2e_cpu.py", "tests/b.py", "tests/reliability"], {}) == [
        "tests/reliability",
        "tests/test_e2e_cpu.py",
        "tests/a.py",
        "tests/b.py",
    ]
    assert scope_order(["tests/a.py", "tests/test_e2e_cpu.py", "tests/b.py"], {"tests/b.py": 500.0}) == [
        "tests/b.py",
        "tests/test_e2e_cpu.py",
        "tests/a.py",
    ]
