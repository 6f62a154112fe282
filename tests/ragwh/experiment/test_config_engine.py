"""``engine``, ``ray:`` and ``max_memory_fraction`` in a chunking config: defaults, parsing, refusals, recorded."""

from __future__ import annotations

import json

import pytest
import yaml

from ingest.retrieval.ray_engine import RaySettings
from ragwh.experiment.config.chunking import ConfigError, parse_config
from ragwh.experiment.identity import resolved_json
from warehouse.paths import PROJECT_ROOT

FILE = PROJECT_ROOT / "x.yml"


def _base() -> dict:
    return yaml.safe_load((PROJECT_ROOT / "experiments" / "cpu.yml").read_text())


def test_default_is_local_and_the_resolved_config_records_the_engine():
    config = parse_config(_base(), FILE)
    assert (config.engine, config.ray, config.max_memory_fraction) == ("local", None, 0.8)
    recorded = json.loads(resolved_json(config))
    assert (recorded["engine"], recorded["ray"], recorded["max_memory_fraction"]) == ("local", None, 0.8)


def test_ray_settings_are_parsed_and_recorded():
    raw = _base() | {
        "engine": "ray",
        "max_memory_fraction": 0.5,
        "ray": {"address": "auto", "num_gpus_per_worker": 1, "batch_size": 128, "concurrency": 4},
    }
    config = parse_config(raw, FILE)
    assert config.ray == RaySettings(address="auto", num_gpus_per_worker=1.0, batch_size=128, concurrency=4)
    assert config.ray.worker_device == "cuda" and config.max_memory_fraction == 0.5
    assert json.loads(resolved_json(config))["ray"]["concurrency"] == 4
    assert parse_config(_base() | {"engine": "ray"}, FILE).ray == RaySettings()  # every key has a default


@pytest.mark.parametrize(
    "extra, key",
    [
        ({"engine": "spark"}, "engine: 'spark' is not one of local, ray"),
        ({"ray": {"batch_size": 8}}, "ray: settings for the Ray engine, but engine is local"),
        ({"engine": "ray", "ray": {"workers": 2}}, "ray.workers: unknown key"),
        ({"engine": "ray", "ray": {"batch_size": 0}}, "ray.batch_size: expected an integer >= 1"),
        ({"engine": "ray", "ray": {"num_gpus_per_worker": -1}}, "ray.num_gpus_per_worker: expected a number >= 0"),
        ({"engine": "ray", "ray": {"address": "auto", "num_cpus": 2}}, "ray.num_cpus: sizes a local instance"),
        ({"max_memory_fraction": 0}, "max_memory_fraction: expected a number > 0"),
        ({"max_memory_fraction": True}, "max_memory_fraction: expected a number"),
    ],
)
def test_bad_engine_settings_name_the_key(extra, key):
    with pytest.raises(ConfigError) as info:
        parse_config(_base() | extra, FILE)
    assert str(info.value).startswith(f"{FILE}: {key}"), str(info.value)


def _rewriting() -> dict:
    return yaml.safe_load((PROJECT_ROOT / "experiments" / "rewriting-hotpotqa.yml").read_text())


def test_a_rewriting_config_takes_the_same_engine_keys():
    from ragwh.experiment.config.rewriting import parse_rewriting_config

    config = parse_rewriting_config(_rewriting(), FILE)
    assert (config.engine, config.ray, config.max_memory_fraction) == ("local", None, 0.8)
    raw = _rewriting() | {
        "engine": "ray",
        "max_memory_fraction": 0.6,
        "ray": {"num_gpus_per_worker": 1, "concurrency": 2},
    }
    config = parse_rewriting_config(raw, FILE)
    assert config.ray == RaySettings(num_gpus_per_worker=1.0, concurrency=2) and config.max_memory_fraction == 0.6
    assert json.loads(resolved_json(config))["engine"] == "ray"
    with pytest.raises(ConfigError, match=r"ray: settings for the Ray engine, but engine is local"):
        parse_rewriting_config(_rewriting() | {"ray": {"concurrency": 2}}, FILE)


@pytest.mark.parametrize(
    "engine, backend, on_ray",
    [("ray", "transformers", True), ("ray", "vllm", True), ("ray", "openai", False), ("local", "transformers", False)],
)
def test_the_llm_runs_on_ray_only_for_an_in_process_backend_under_engine_ray(engine, backend, on_ray, monkeypatch):
    import sys

    from ingest.llm import LLMConfig
    from ingest.llm.ray_generate import RayLLMBackend
    from ragwh.experiment.pipeline.stages import StagePipeline

    monkeypatch.setitem(sys.modules, "vllm", None)  # a driver without vLLM (the workers have it)
    pipeline = StagePipeline.__new__(StagePipeline)  # only the config is read
    settings = RaySettings(num_gpus_per_worker=1) if engine == "ray" else None
    pipeline.config = type("Config", (), {"engine": engine, "ray": settings})()
    chosen = pipeline._ray_backend(LLMConfig(backend=backend, model="some/model"))
    assert isinstance(chosen, RayLLMBackend) if on_ray else chosen is None
