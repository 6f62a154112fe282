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
    raw = _base() | {"engine": "ray", "max_memory_fraction": 0.5,
                     "ray": {"address": "auto", "num_gpus_per_worker": 1, "batch_size": 128, "concurrency": 4}}
    config = parse_config(raw, FILE)
    assert config.ray == RaySettings(address="auto", num_gpus_per_worker=1.0, batch_size=128, concurrency=4)
    assert config.ray.worker_device == "cuda" and config.max_memory_fraction == 0.5
    assert json.loads(resolved_json(config))["ray"]["concurrency"] == 4
    assert parse_config(_base() | {"engine": "ray"}, FILE).ray == RaySettings()  # every key has a default


@pytest.mark.parametrize("extra, key", [
    ({"engine": "spark"}, "engine: 'spark' is not one of local, ray"),
    ({"ray": {"batch_size": 8}}, "ray: settings for the Ray engine, but engine is local"),
    ({"engine": "ray", "ray": {"workers": 2}}, "ray.workers: unknown key"),
    ({"engine": "ray", "ray": {"batch_size": 0}}, "ray.batch_size: expected an integer >= 1"),
    ({"engine": "ray", "ray": {"num_gpus_per_worker": -1}}, "ray.num_gpus_per_worker: expected a number >= 0"),
    ({"engine": "ray", "ray": {"address": "auto", "num_cpus": 2}}, "ray.num_cpus: sizes a local instance"),
    ({"max_memory_fraction": 0}, "max_memory_fraction: expected a number > 0"),
    ({"max_memory_fraction": True}, "max_memory_fraction: expected a number"),
])
def test_bad_engine_settings_name_the_key(extra, key):
    with pytest.raises(ConfigError) as info:
        parse_config(_base() | extra, FILE)
    assert str(info.value).startswith(f"{FILE}: {key}"), str(info.value)
