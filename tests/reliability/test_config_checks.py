"""The experiment config is checked whole before anything runs: a key given twice, a list entry given
twice, a boolean where a number belongs, and every ``llm:`` value (type, range, unknown key) and
``RAGWH_LLM_*`` variable are one line naming the file and the key -- or the variable -- and the
warehouse is left as it was."""

from __future__ import annotations

import pytest
import yaml

from tests.reliability.cli import one_line, ragwh
from tests.reliability.compare import warehouse_differences
from warehouse.paths import PROJECT_ROOT

REWRITING = PROJECT_ROOT / "experiments" / "demo-rewriting.yml"
CHUNKING = PROJECT_ROOT / "experiments" / "default.yml"


def _write(tmp, source, mutate=None, append: str = ""):
    raw = yaml.safe_load(source.read_text())
    if mutate is not None:
        mutate(raw)
    path = tmp / "exp.yml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False) + append)
    return path


def _rewriting(raw, **values):
    raw["rewriting"].update(values)


def r_key_twice(tmp):
    path = _write(tmp, REWRITING, lambda r: r.pop("reader"), append="reader: {helpers: [Q2D]}\nreader: none\n")
    return path, {}, (f"config error: {path}: not valid YAML at line ", "found key 'reader' twice (first at line ")


def r_seed_twice(tmp):
    path = _write(tmp, REWRITING, lambda r: _rewriting(r, seeds=[42, 123, 42]))
    return path, {}, (f"config error: {path}: rewriting.seeds[2]: 42 is listed twice (first at rewriting.seeds[0])",)


def r_strategy_twice(tmp):
    path = _write(tmp, REWRITING, lambda r: _rewriting(r, strategies=["S1", "S2", "S2"]))
    return (
        path,
        {},
        (f"config error: {path}: rewriting.strategies[2]: 'S2' is listed twice (first at rewriting.strategies[1])",),
    )


def r_band_boolean(tmp):
    path = _write(tmp, REWRITING, lambda r: _rewriting(r, cosine_band=[False, 0.9]))
    return path, {}, (f"config error: {path}: rewriting.cosine_band[0]: expected a number, got False",)


def r_retries_string(tmp):
    path = _write(tmp, REWRITING, lambda r: r["llm"].update(max_retries="2"))
    return path, {}, (f"config error: {path}: llm.max_retries: expected an integer >= 0, got '2'",)


def r_timeout_negative(tmp):
    path = _write(tmp, REWRITING, lambda r: r["llm"].update(timeout_s=-1))
    return path, {}, (f"config error: {path}: llm.timeout_s: expected a number > 0, got -1",)


def r_llm_unknown_key(tmp):
    path = _write(tmp, REWRITING, lambda r: r["llm"].update(temprature=0.2))
    return path, {}, (f"config error: {path}: llm.temprature: unknown key (known: backend, ",)


def r_failed_share_range(tmp):
    path = _write(tmp, REWRITING, lambda r: r["llm"].update(max_failed_share=1.5))
    return path, {}, (f"config error: {path}: llm.max_failed_share: expected a number in [0, 1], got 1.5",)


def r_backend_variable(tmp):
    path = _write(tmp, REWRITING)
    return (
        path,
        {"RAGWH_LLM_BACKEND": "ollama"},
        (
            "config error: environment variable RAGWH_LLM_BACKEND: 'ollama' is not one of openai, vllm, transformers "
            f"(the variable overrides {path})",
        ),
    )


def r_replay_variable(tmp):
    path = _write(tmp, REWRITING)
    return (
        path,
        {"RAGWH_LLM_REPLAY_ONLY": "maybe"},
        ("config error: environment variable RAGWH_LLM_REPLAY_ONLY: 'maybe' is not one of 1, true, yes, on, 0, ",),
    )


def c_key_twice(tmp):
    path = _write(tmp, CHUNKING, append="k: 10\n")
    return path, {}, (f"config error: {path}: not valid YAML at line ", "found key 'k' twice")


def c_condition_twice(tmp):
    path = _write(tmp, CHUNKING, lambda r: r["conditions"].append(r["conditions"][0]))
    return path, {}, (f"config error: {path}: conditions[", "is listed twice (first at conditions[0])")


def c_llm_type(tmp):
    path = _write(tmp, CHUNKING, lambda r: r.update(llm={"backend": "openai", "concurrency": 0}))
    return path, {}, (f"config error: {path}: llm.concurrency: expected an integer >= 1, got 0",)


CASES = [
    r_key_twice,
    r_seed_twice,
    r_strategy_twice,
    r_band_boolean,
    r_retries_string,
    r_timeout_negative,
    r_llm_unknown_key,
    r_failed_share_range,
    r_backend_variable,
    r_replay_variable,
    c_key_twice,
    c_condition_twice,
    c_llm_type,
]


@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__)
def test_a_bad_config_value_is_one_line_naming_file_and_key(case, base, copy_of, tmp_path):
    warehouse = copy_of(base)
    config, env, parts = case(tmp_path)
    result = ragwh("run", "--config", config, "--warehouse", warehouse, env=env)
    assert result.exit_code in (1, 2), result.output
    line = one_line(result)
    assert line.startswith(parts[0]) and all(p in line for p in parts[1:]), line
    assert warehouse_differences(base, warehouse) == {}
