"""Packaging beyond ``pyproject.toml``: the wheel ships the dbt project as data.

The repository's top level is the dbt project an analyst opens (``dbt_project.yml``, ``profiles.yml``,
``models/``, ``seeds/``, ``macros/``, ``analyses/``, ``tests/dbt/``) plus the bundled ``experiments/``.
An installed ``ragwh`` needs them too, so the wheel carries them as the data-only package
``ragwarehouse/`` (mapped onto the top level; ``warehouse.paths.find_project_root`` finds it beside the
Python packages when there is no checkout). ``include_package_data`` is off: with the package mapped
onto the top level it would pull every file of the source tree in; the lists below are the whole of it.
"""

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    """``ragwarehouse/`` is data only: no Python module of the top level (``setup.py``) goes into it."""

    def find_package_modules(self, package, package_dir):
        return [] if package == "ragwarehouse" else super().find_package_modules(package, package_dir)


#: The dbt project and the bundled experiments, relative to the top level.
PROJECT_FILES = [
    "dbt_project.yml",
    "profiles.yml",
    "models/**/*.sql",
    "models/**/*.py",
    "models/**/*.yml",
    "seeds/*.csv",
    "seeds/*.yml",
    "macros/*.sql",
    "analyses/*.sql",
    "tests/dbt/*.sql",
    "experiments/*.yml",
]
#: Data files inside the Python packages: prompts, JSON schemas, the demo corpora.
CODE_DATA = ["*.yml", "*.yaml", "*.txt", "*.json", "*.md", "prompts/*"]

setup(
    packages=find_packages(include=["ingest*", "udfs*", "warehouse*", "ragwh*"]) + ["ragwarehouse"],
    package_dir={"ragwarehouse": "."},
    package_data={"": CODE_DATA, "ragwarehouse": PROJECT_FILES},
    exclude_package_data={"ragwarehouse": ["*.md"]},
    include_package_data=False,
    cmdclass={"build_py": BuildPy},
)
