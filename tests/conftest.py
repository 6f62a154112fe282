"""Shared fixtures: a fresh warehouse per test and the path of the shared real data; how the suite is spread
over pytest-xdist workers, and a working directory of the session's own for the tool's outputs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Workers share the cores: each one's math libraries get its share of them (set before torch is imported).
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _share = max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, str(_share))

from warehouse.paths import PROJECT_ROOT, WORKDIR_ENV  # noqa: E402

TESTS = Path(__file__).resolve().parent
#: folders whose conftest has a package- or session-scoped warehouse fixture
SHARED_FIXTURE_FOLDERS = (("reliability",), ("models", "rewriting"))


def xdist_scope(nodeid: str) -> str:
    """The unit pytest-xdist hands to one worker: the test file, or the folder (under tests/) when its conftest
    builds a warehouse for the whole folder (package or session scope), so such a fixture is built once."""
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    inner = parts[1:] if parts[:1] == ["tests"] else parts
    for folder in SHARED_FIXTURE_FOLDERS:
        if tuple(inner[: len(folder)]) == folder and len(inner) > len(folder):
            return "/".join(parts[: len(parts) - len(inner) + len(folder)])
    return path


#: seconds a scope took in the last run that ran it (pytest's cache, written by the controller at the end)
SCOPE_SECONDS_KEY = "ragwh/xdist_scope_seconds"
#: scopes that take a minute or more (wall seconds of a run on 2 busy cores), for a first run without pytest's
#: cache: xdist hands out the scopes with the most tests first, so the slowest files, which hold one or two tests,
#: came last and one worker ran them alone at the end while the other idled
SLOW_SCOPES = {
    "tests/reliability": 500,
    "tests/ragwh/experiment/test_demo_llm.py": 250,
    "tests/test_e2e_cpu.py": 130,
    "tests/models/rewriting": 125,
    "tests/ingest/retrieval/test_ray_engine.py": 115,
    "tests/ingest/llm/test_transformers_local.py": 100,
    "tests/ragwh/experiment/test_rewriting_pipeline.py": 85,
    "tests/ingest/llm/test_ray_generate.py": 70,
    "tests/udfs/test_evaluation_dbt.py": 70,
    "tests/ingest/rewriting/test_ray_stage.py": 60,
    "tests/ragwh/experiment/test_demo_rewriting.py": 60,
    "tests/ingest/chunking/test_sentence_windows.py": 50,
    "tests/ingest/llm/test_transformers_cli.py": 45,
}


def scope_order(scopes: list[str], seconds: dict[str, float]) -> list[str]:
    """``scopes`` (in xdist's order: most tests first) longest first, by ``seconds`` (the last run's) or else
    :data:`SLOW_SCOPES`; scopes known to neither keep xdist's order after them. Longest first: the workers
    finish together instead of one waiting on the other's last long file."""

    def estimate(scope: str) -> float:
        return seconds.get(scope, SLOW_SCOPES.get(scope, 0.0))

    return sorted(scopes, key=lambda scope: -estimate(scope))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Scheduling by :func:`xdist_scope` (xdist's own scopes are the module or the class), longest scope first
    (:func:`scope_order`)."""
    from xdist.scheduler import LoadScopeScheduling

    class FileOrSharedFolder(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the first call: the queue holds every scope
                self.ordered = True
                cache = getattr(self.config, "cache", None)
                seconds = cache.get(SCOPE_SECONDS_KEY, {}) if cache is not None else {}
                queue = dict(self.workqueue)
                self.workqueue.clear()
                self.workqueue.update((scope, queue[scope]) for scope in scope_order(list(queue), seconds))
            super()._assign_work_unit(node)

    return FileOrSharedFolder(config, log)


_scope_runs: dict[str, tuple[float, set[str]]] = {}


def pytest_runtest_logreport(report):
    """The controller (or a run without xdist) adds up each scope's seconds (setup, call and teardown)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        seconds, tests = _scope_runs.setdefault(xdist_scope(report.nodeid), (0.0, set()))
        tests.add(report.nodeid)
        _scope_runs[xdist_scope(report.nodeid)] = (seconds + report.duration, tests)


def pytest_sessionfinish(session):
    """Each scope's seconds go to pytest's cache (:func:`scope_order` reads them next time), unless the last
    run that recorded it ran more of its tests (this one selected some)."""
    cache = getattr(session.config, "cache", None)
    if not _scope_runs or cache is None or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    known = cache.get(SCOPE_SECONDS_KEY + "_tests", {})
    seconds = cache.get(SCOPE_SECONDS_KEY, {})
    for scope, (total, tests) in _scope_runs.items():
        if len(tests) >= known.get(scope, 0):
            seconds[scope], known[scope] = round(total, 1), len(tests)
    cache.set(SCOPE_SECONDS_KEY, seconds)
    cache.set(SCOPE_SECONDS_KEY + "_tests", known)


@pytest.fixture(scope="session", autouse=True)
def session_workdir(tmp_path_factory):
    """The tool's outputs (dbt target/ and logs/, reports/, exports/) go to a directory of this session's (of
    this worker's, under xdist), never into the checkout: two workers never share dbt's target directory.
    A test that checks the default (the current directory) unsets it itself."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(WORKDIR_ENV, str(tmp_path_factory.mktemp("workdir")))
        yield


SHARED_DATA = (PROJECT_ROOT.parent / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` from the project root (CI has it too). Missing data is a hard error."""
    if not SHARED_DATA.is_dir():
        raise FileNotFoundError(f"{SHARED_DATA} not found: tests read the real corpora from ../shared/data")
    return SHARED_DATA


@pytest.fixture()
def warehouse_file(tmp_path, monkeypatch) -> Path:
    """A fresh, empty warehouse file; RAGWH_WAREHOUSE points at it for the test's duration."""
    path = tmp_path / "test.duckdb"
    monkeypatch.setenv("RAGWH_WAREHOUSE", str(path))
    return path


@pytest.fixture()
def con(warehouse_file):
    from warehouse.db import connect

    connection = connect(warehouse_file)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def ray_instance():
    """One local Ray instance (2 CPUs) per test module that asks for it; the test skips only when Ray (the optional
    extra) is not installed."""
    from ingest.retrieval.ray_engine import RayEngineError, require_ray

    try:
        ray = require_ray()
    except RayEngineError as exc:
        pytest.skip(f"Ray is not installed (the optional extra): {exc}")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
