"""The SQL linter renders the models with a copy of dbt_project.yml's setting_defaults (``.sqlfluff``
``lint_vars``): the copy must hold the same settings and values, except ``declared_contrasts``, which holds one
example contrast there so the declared-contrast SQL is rendered and linted."""

from __future__ import annotations

import ast
import configparser

from warehouse.dbt import setting_defaults
from warehouse.paths import PROJECT_ROOT


def test_the_linters_settings_are_dbt_projects_defaults():
    config = configparser.ConfigParser(interpolation=None)
    config.read(PROJECT_ROOT / ".sqlfluff", encoding="utf-8")
    lint = ast.literal_eval(config["sqlfluff:templater:jinja:context"]["lint_vars"])["setting_defaults"]
    defaults = setting_defaults()
    assert set(lint) == set(defaults)
    assert {k: v for k, v in lint.items() if k != "declared_contrasts"} == {
        k: v for k, v in defaults.items() if k != "declared_contrasts"
    }
    assert defaults["declared_contrasts"] == [] and len(lint["declared_contrasts"]) == 1
