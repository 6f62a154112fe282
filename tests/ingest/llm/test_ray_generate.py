"""Generation on Ray actors writes the local engine's ``llm_calls`` rows: the transformers backend (greedy) with a
tiny random-weight Llama that carries the packaged SmolLM2 tokenizer and chat template (a test stand-in, never results),
on one local Ray instance (2 CPUs); the actors live across the cache's calls; the rows are the same when an earlier
run already stored part of the answers and a worker of two dies mid-block. The tests that need Ray skip only when
it is not installed."""

from __future__ import annotations

import pytest

from ingest.llm import LLMCache, LLMConfig, LLMError, LLMRequest, Sampling, make_backend
from ingest.llm.backend import Completion, LLMBackend
from ingest.llm.ray_generate import RayLLMBackend, decode_request, encode_request
from ingest.retrieval.ray_engine import FAULT_ENV, RaySettings
from warehouse.db import connect

SETTINGS = RaySettings(concurrency=1)
QUESTIONS = [
    "What is the capital of France?",
    "Name a prime number.",
    "What colour is the sky?",
    "Who wrote Hamlet?",
    "How many legs has a spider?",
    "What is two plus two?",
]
COLUMNS = (
    "cache_key, model, prompt_name, prompt_version, item_id, request_json, response_text, backend, "
    "prompt_tokens, completion_tokens, finish_reason"
)


def _requests() -> list[LLMRequest]:  # 6 requests: blocks of 2
    return [
        LLMRequest(f"q{i}", "test_prompt.v1", ({"role": "user", "content": q},), Sampling(max_tokens=6, seed=7))
        for i, q in enumerate(QUESTIONS)
    ]


def _rows(con) -> list[tuple]:
    return con.execute(f"SELECT {COLUMNS} FROM llm_calls ORDER BY cache_key").fetchall()


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> LLMConfig:
    """A tiny random-weight Llama (seed 0) saved with SmolLM2's tokenizer and chat template."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    folder = tmp_path_factory.mktemp("tiny-llm")
    tokenizer = make_backend(LLMConfig(backend="transformers")).tokenizer
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    LlamaForCausalLM(
        LlamaConfig(
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            vocab_size=len(tokenizer),
            eos_token_id=tokenizer.eos_token_id,
            bos_token_id=tokenizer.bos_token_id,
        )
    ).save_pretrained(folder)
    return LLMConfig(
        backend="transformers", model=str(folder), commit_every=2, transformers={"threads": 1, "batch_size": 2}
    )


@pytest.fixture(scope="module")
def local(config) -> LLMBackend:
    return make_backend(config)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, config, local):
    """The local engine's rows: the backend in this process, one ``generate`` call per block of 2."""
    con = connect(tmp_path_factory.mktemp("local") / "w.duckdb")
    LLMCache(con, local, commit_every=config.commit_every, progress=False).generate(_requests())
    rows = _rows(con)
    con.close()
    assert len(rows) == 6 and {r[7] for r in rows} == {"transformers"}
    return rows


def _ray_cache(con, config, backend) -> LLMCache:
    return LLMCache(con, backend, commit_every=config.commit_every, progress=False)


def test_ray_actors_write_the_local_rows_and_live_across_calls(ray_instance, tmp_path, config, reference):
    con = connect(tmp_path / "w.duckdb")
    backend = RayLLMBackend(config, RaySettings(concurrency=1))
    assert (backend.name, backend.model, backend.config.transformers["device"]) == ("transformers", config.model, "cpu")
    cache = _ray_cache(con, config, backend)
    first = cache.generate(_requests()[:3])  # blocks of 2 and 1
    answers = cache.generate(_requests())  # 3 cached, 3 more: blocks of 2 and 1
    assert answers[:3] == first and (cache.calls, cache.hits) == (6, 3)
    assert _rows(con) == reference and answers == [r[6] for r in sorted(reference, key=lambda r: int(r[4][1:]))]
    assert backend.answered_blocks() == [4]  # one actor (one model load) answered both calls
    backend.close()
    assert backend._actors is None
    again = _ray_cache(con, config, RayLLMBackend(config, SETTINGS))
    assert again.generate(_requests()) == answers and (again.calls, again.hits) == (0, 6)
    assert again.backend._actors is None  # nothing to generate: no actor was started


def test_a_rerun_asks_only_for_the_missing_answers_and_survives_a_killed_worker(
    ray_instance, tmp_path, monkeypatch, config, local, reference
):
    con = connect(tmp_path / "w.duckdb")
    # the first block was committed by a run that then died (here: the local engine, whose rows are the same)
    LLMCache(con, local, commit_every=config.commit_every, progress=False).generate(_requests()[:2])
    marker = tmp_path / "killed"
    monkeypatch.setenv(FAULT_ENV, str(marker))
    backend = RayLLMBackend(config, RaySettings(concurrency=2))
    cache = _ray_cache(con, config, backend)
    cache.generate(_requests())  # blocks 2 and 3 on two actors; one dies at its first block and is restarted
    assert marker.read_text(encoding="utf-8").startswith("killed worker")  # a worker did die mid-block
    assert (cache.hits, cache.calls) == (2, 4)
    assert _rows(con) == reference
    assert sorted(backend.answered_blocks()) == [1, 1]
    backend.close()


def test_a_backend_error_on_a_worker_is_raised_as_itself_naming_the_item(ray_instance, tmp_path, config):
    long = LLMRequest(
        "too-long", "test_prompt.v1", ({"role": "user", "content": "word " * 3000},), Sampling(max_tokens=6)
    )
    backend = RayLLMBackend(config, SETTINGS)
    with pytest.raises(LLMError, match="too-long") as info:
        backend.generate([long])
    assert "\n" not in str(info.value) and "ray::" not in str(info.value)  # one line, not the worker's traceback
    backend.close()


def test_requests_travel_to_the_workers_unchanged():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    for r in (
        *_requests(),
        LLMRequest("x", "p.v2", ({"role": "system", "content": "é"},), Sampling(0.7, 0.9, 5, 3), schema),
    ):
        back = decode_request(encode_request(r))
        assert back == r and back.canonical_json("m") == r.canonical_json("m")  # so the cache key is the same


def test_a_server_backend_stays_on_the_driver():
    with pytest.raises(LLMError, match="runs on the driver, not on Ray"):
        RayLLMBackend(LLMConfig(backend="openai", model="m"), SETTINGS)


def test_vllm_on_ray_needs_its_gpus_per_actor_and_a_driver_without_vllm_names_the_configured_model(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError, as on a CPU head node
    gpu = RaySettings(num_gpus_per_worker=1)
    backend = RayLLMBackend(LLMConfig(backend="vllm", model="Qwen/Qwen2.5-7B-Instruct", api_key="secret"), gpu)
    assert (backend.name, backend.model, backend.context_window(), backend.config.api_key) == (
        "vllm",
        "Qwen/Qwen2.5-7B-Instruct",
        None,
        None,
    )  # the key never travels to the workers
    with pytest.raises(LLMError, match="no LLM model configured"):
        RayLLMBackend(LLMConfig(backend="vllm"), gpu)
    with pytest.raises(LLMError, match=r"needs 1 GPU\(s\) per actor .* ray.num_gpus_per_worker is 0"):
        RayLLMBackend(LLMConfig(backend="vllm", model="m"), SETTINGS)
    with pytest.raises(LLMError, match=r"needs 2 GPU\(s\) per actor \(vllm.tensor_parallel_size 2\)"):
        RayLLMBackend(LLMConfig(backend="vllm", model="m", vllm={"tensor_parallel_size": 2}), gpu)


def test_a_named_transformers_device_is_kept_for_the_workers():
    config = LLMConfig(backend="transformers", model="m", transformers={"device": "cpu", "dtype": "bfloat16"})
    on_gpus = RayLLMBackend(config, RaySettings(num_gpus_per_worker=1))
    assert on_gpus.config.transformers == {"device": "cpu", "dtype": "bfloat16"}
    auto = RayLLMBackend(LLMConfig(backend="transformers", model="m"), RaySettings(num_gpus_per_worker=1))
    assert auto.config.transformers == {"device": "cuda"}


class _ShortBackend(LLMBackend):
    """Answers the first block only, then stops (an engine that lost a block)."""

    name, model = "short", "short-model"

    def generate(self, requests):
        return [Completion("an answer?") for _ in requests]

    def generate_blocks(self, blocks):
        yield self.generate(blocks[0])


def test_the_cache_refuses_an_engine_that_answers_fewer_blocks_and_keeps_the_answered_ones(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    cache = LLMCache(con, _ShortBackend(), commit_every=4, progress=False)
    with pytest.raises(LLMError, match="answered 1 of 2 blocks"):
        cache.generate(_requests())
    assert con.execute("SELECT count(*) FROM llm_calls").fetchall()[0][0] == 4
