"""The suite runs on pytest-xdist workers with one group per test file; a folder whose conftest builds a fixture
for the whole folder (package or session scope) must be one group, or each worker would build it again."""
from __future__ import annotations

import re

from tests.conftest import SHARED_FIXTURE_FOLDERS, TESTS

WIDE_SCOPE = re.compile(r"""@pytest\.fixture\([^)]*scope=["'](package|session)["']""")


def test_every_folder_with_a_folder_wide_fixture_is_one_group():
    folders = {conftest.parent.relative_to(TESTS).parts for conftest in TESTS.rglob("conftest.py")
               if conftest.parent != TESTS and WIDE_SCOPE.search(conftest.read_text(encoding="utf-8"))}
    assert folders == set(SHARED_FIXTURE_FOLDERS)
