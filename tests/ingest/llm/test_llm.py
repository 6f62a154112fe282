"""LLM layer: config, cache (keys, resume, replay-only), the HTTP backend against a real local server,
the vLLM adapter, and the scripted test backend."""

from __future__ import annotations

import json
import sys
import types

import pytest

from ingest.llm import (
    Completion,
    LLMCache,
    LLMCacheMiss,
    LLMConfig,
    LLMError,
    LLMRequest,
    Sampling,
    as_llm,
    cache_key,
    load_llm_config,
    load_prompt,
    make_backend,
    open_llm,
)
from ingest.llm.openai_http import OpenAIHTTPBackend
from ingest.llm.scripted import ScriptedBackend
from tests.ingest.llm.chat_server import ChatServer, last_user_message


def req(item: str, text: str = "hello", seed: int = 1, prompt: str = "test_prompt.v1") -> LLMRequest:
    return LLMRequest(item, prompt, ({"role": "user", "content": text},), Sampling(seed=seed))


def echo(r: LLMRequest) -> str:
    return "answer to " + r.messages[-1]["content"]


# --- config ---------------------------------------------------------------------------------------------


def test_config_env_overrides_experiment_config(tmp_path):
    path = tmp_path / "exp.yml"
    path.write_text("name: x\nllm:\n  backend: openai\n  model: from-config\n  concurrency: 3\n  seed: 7\n")
    cfg = load_llm_config(
        path,
        env={"RAGWH_LLM_MODEL": "from-env", "RAGWH_LLM_API_KEY": "sk-secret", "RAGWH_LLM_BASE_URL": "http://h:1/v1"},
    )
    assert (cfg.model, cfg.concurrency, cfg.seed, cfg.base_url, cfg.api_key) == (
        "from-env",
        3,
        7,
        "http://h:1/v1",
        "sk-secret",
    )
    assert "sk-secret" not in repr(cfg)
    assert load_llm_config({}, env={"RAGWH_LLM_BACKEND": "vllm", "RAGWH_LLM_REPLAY_ONLY": "1"}).replay_only is True


def test_config_rejects_api_key_unknown_keys_and_bad_backend():
    with pytest.raises(ValueError, match="RAGWH_LLM_API_KEY"):
        load_llm_config({"api_key": "x"}, env={})
    with pytest.raises(ValueError, match=r"llm\.temprature: unknown key"):
        load_llm_config({"temprature": 1}, env={})
    with pytest.raises(ValueError, match="llm.backend: none"):
        load_llm_config({"backend": "none"}, env={})
    with pytest.raises(ValueError, match="openai, vllm, transformers"):
        load_llm_config({}, env={"RAGWH_LLM_BACKEND": "ollama"})
    with pytest.raises(ValueError, match=r"^environment variable RAGWH_LLM_BACKEND: 'ollama' is not one of"):
        load_llm_config({}, env={"RAGWH_LLM_BACKEND": "ollama"})
    with pytest.raises(ValueError, match=r"^llm\.max_retries: expected an integer >= 0, got '2'$"):
        load_llm_config({"max_retries": "2"}, env={})
    with pytest.raises(ValueError, match=r"^llm\.timeout_s: expected a number > 0, got -1$"):
        load_llm_config({"timeout_s": -1}, env={})
    with pytest.raises(ValueError, match=r"^llm\.concurrency: expected an integer >= 1, got True$"):
        load_llm_config({"concurrency": True}, env={})
    with pytest.raises(ValueError, match=r"^environment variable RAGWH_LLM_REPLAY_ONLY: 'maybe' is not one of"):
        load_llm_config({}, env={"RAGWH_LLM_REPLAY_ONLY": "maybe"})


def test_prompts_are_versioned_files():
    p = load_prompt("contextual_chunk")
    assert p.key == "contextual_chunk.v1"
    text = p.render(document="Doc with $dollar and {braces}", chunk="the chunk")
    assert "Doc with $dollar and {braces}" in text and "<chunk>\nthe chunk\n</chunk>" in text
    with pytest.raises(FileNotFoundError, match="versions"):
        load_prompt("contextual_chunk", 99)
    with pytest.raises(KeyError):
        p.render(document="only one")


# --- cache ----------------------------------------------------------------------------------------------


def test_cache_key_covers_model_messages_sampling_seed_and_prompt_version():
    base = cache_key("m", req("a"))
    assert cache_key("m", req("other-item")) == base  # the item id names the call, it does not change the answer
    assert (
        len(
            {
                base,
                cache_key("m2", req("a")),
                cache_key("m", req("a", text="x")),
                cache_key("m", req("a", seed=2)),
                cache_key("m", req("a", prompt="test_prompt.v2")),
            }
        )
        == 5
    )
    payload = json.loads(req("a").canonical_json("m"))
    assert payload == {
        "model": "m",
        "messages": [{"role": "user", "content": "hello"}],
        "prompt": "test_prompt.v1",
        "sampling": {"temperature": 0.0, "top_p": 1.0, "max_tokens": 1024, "seed": 1},
    }
    import hashlib

    assert base == hashlib.sha256(req("a").canonical_json("m").encode()).hexdigest()


SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 3}}, "required": ["n"]}


def structured_req(item: str, text: str = "hello", schema: dict = SCHEMA) -> LLMRequest:
    return LLMRequest(item, "test_prompt.v1", ({"role": "user", "content": text},), Sampling(seed=1), schema)


def test_a_free_text_key_is_what_it_was_before_structured_output_and_a_schema_joins_the_key():
    # the key of this free-text request as computed before requests could carry a schema: caches stay valid
    assert cache_key("m", req("a")) == "0163cfdc13f0e2f51ec6ea633ed90298ae1e6c89ba7bc37d0699f006e4df55cc"
    assert "schema" not in json.loads(req("a").canonical_json("m"))
    structured = structured_req("a")
    assert json.loads(structured.canonical_json("m"))["schema"] == SCHEMA
    other = structured_req("a", schema={**SCHEMA, "properties": {"n": {"type": "integer", "maximum": 4}}})
    assert len({cache_key("m", req("a")), cache_key("m", structured), cache_key("m", other)}) == 3
    assert cache_key("m", structured.without_schema()) == cache_key("m", req("a"))


def test_a_structured_prompt_fills_its_schema_per_request():
    prompt = load_prompt("induce_structure")
    schema = prompt.schema(n_paragraphs=7)
    sections = schema["properties"]["sections"]
    item = sections["items"]["properties"]
    assert (sections["minItems"], sections["maxItems"]) == (1, 7)
    assert (item["level"]["minimum"], item["level"]["maximum"]) == (1, 4)
    assert all((item[k]["minimum"], item[k]["maximum"]) == (1, 7) for k in ("first_paragraph", "last_paragraph"))
    assert list(item) == ["title", "level", "first_paragraph", "last_paragraph"]  # the order answers are written in
    assert load_prompt("induce_correction").schema(n_paragraphs=7) == schema
    assert prompt.schema_template["properties"]["sections"]["maxItems"] == "$n_paragraphs"  # the file is untouched
    with pytest.raises(KeyError, match=r"induce_structure.v1 needs a value for \$n_paragraphs"):
        prompt.schema()
    assert load_prompt("contextual_chunk").schema() is None and load_prompt("query_paraphrase").schema() is None


def test_config_structured_setting_and_its_environment_variable(tmp_path):
    assert load_llm_config({}, env={}).structured is None
    assert load_llm_config({"structured": False}, env={}).structured is False
    assert load_llm_config({"structured": "auto"}, env={}).structured is None
    assert load_llm_config({"structured": False}, env={"RAGWH_LLM_STRUCTURED": "1"}).structured is True
    assert load_llm_config({"structured": True}, env={"RAGWH_LLM_STRUCTURED": "auto"}).structured is None
    assert load_llm_config({}, env={"RAGWH_LLM_STRUCTURED": "0"}).structured is False
    with pytest.raises(ValueError, match=r"llm\.structured: expected true, false, auto or null"):
        load_llm_config({"structured": "yes"}, env={})


def test_cache_rerun_makes_zero_calls_and_dedupes(con):
    backend = ScriptedBackend(echo)
    llm = LLMCache(con, backend, progress=False)
    requests = [req("a", "x"), req("b", "y"), req("c", "x")]  # a and c are the same call
    assert llm.generate(requests) == ["answer to x", "answer to y", "answer to x"]
    assert (len(backend.requests), llm.calls, llm.hits) == (2, 2, 0)
    again = LLMCache(con, ScriptedBackend(lambda r: "DIFFERENT"), model=backend.model, progress=False)
    assert again.generate(requests) == ["answer to x", "answer to y", "answer to x"]
    assert (again.calls, again.hits) == (0, 3)
    rows = con.execute(
        "SELECT item_id, prompt_name, prompt_version, backend, request_json FROM llm_calls ORDER BY item_id"
    ).fetchall()
    assert [r[:4] for r in rows] == [("a", "test_prompt", "1", "scripted"), ("b", "test_prompt", "1", "scripted")]
    assert json.loads(rows[0][4])["messages"][0]["content"] == "x"


def test_interrupted_stage_resumes_with_only_missing_calls(con):
    calls = []

    def flaky(r: LLMRequest) -> str:
        calls.append(r.item_id)
        if r.item_id == "i5":
            raise RuntimeError("server went away")
        return r.item_id.upper()

    requests = [req(f"i{k}", f"text {k}") for k in range(8)]
    with pytest.raises(RuntimeError):
        LLMCache(con, ScriptedBackend(flaky), commit_every=2, progress=False).generate(requests)
    assert con.execute("SELECT count(*) FROM llm_calls").fetchall()[0][0] == 4  # batches i0-i1, i2-i3 committed
    calls.clear()
    resumed = LLMCache(con, ScriptedBackend(lambda r: r.item_id.upper()), commit_every=2, progress=False)
    assert resumed.generate(requests) == [f"I{k}" for k in range(8)]
    assert (resumed.calls, resumed.hits) == (4, 4)


def test_replay_only_answers_from_cache_and_names_the_missing_item(con):
    LLMCache(con, ScriptedBackend(echo), progress=False).generate([req("doc/1", "x")])
    replay = LLMCache(con, None, model="scripted-test-model", replay_only=True, progress=False)
    assert replay.generate([req("doc/1", "x")]) == ["answer to x"]
    with pytest.raises(LLMCacheMiss, match=r"1 request\(s\) not in llm_calls, first: doc/2 \(test_prompt.v1\)"):
        replay.generate([req("doc/1", "x"), req("doc/2", "new")])
    with pytest.raises(ValueError, match="needs a backend"):
        LLMCache(con, None, model="m")


def test_open_llm_replay_only_needs_no_backend(con):
    cfg = LLMConfig(model="some-model", replay_only=True)
    llm = open_llm(con, config=cfg, progress=False)
    assert llm.backend is None and llm.backend_name == "replay"
    assert as_llm(con, llm) is llm
    with pytest.raises(LLMCacheMiss):
        llm.generate([req("x")])


# --- HTTP backend against a real server --------------------------------------------------------------------


def http_config(server: ChatServer, **kw) -> LLMConfig:
    base = dict(
        model="test-model",
        base_url=server.base_url,
        timeout_s=2.0,
        max_retries=2,
        backoff_s=0.01,
        concurrency=4,
        api_key="sk-test-secret",
    )
    base.update(kw)
    return LLMConfig(**base)


def test_http_backend_sends_openai_requests(con):
    with ChatServer(lambda body: "re: " + last_user_message(body)) as server:
        backend = make_backend(http_config(server))
        assert isinstance(backend, OpenAIHTTPBackend)
        out = backend.generate([req("a", "one", seed=5), req("b", "two")])
        backend.close()
    assert out == [Completion("re: one", "stop"), Completion("re: two", "stop")]
    first = next(b for b in server.bodies if b["messages"][0]["content"] == "one")
    assert first == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "one"}],
        "temperature": 0.0,
        "top_p": 1.0,
        "max_tokens": 1024,
        "seed": 5,
    }
    assert all(h["Authorization"] == "Bearer sk-test-secret" for h in server.headers)


def test_http_retries_a_500_then_succeeds(con):
    with ChatServer(lambda body: "ok") as server:
        server.plan = [500]
        sleeps = []
        backend = OpenAIHTTPBackend(http_config(server, backoff_s=0.5), sleep=sleeps.append)
        assert [c.text for c in backend.generate([req("a")])] == ["ok"]
    assert server.n_requests == 2
    assert sleeps == [0.5]


def test_http_gives_up_after_retries_with_backoff(con):
    with ChatServer(lambda body: "never") as server:
        server.plan = [503, 502, 500, 500]
        sleeps = []
        backend = OpenAIHTTPBackend(
            http_config(server, max_retries=2, backoff_s=1.0, backoff_max_s=1.5), sleep=sleeps.append
        )
        with pytest.raises(LLMError, match=r"failed for item a .* after 3 attempts: HTTP 500"):
            backend.generate([req("a")])
    assert server.n_requests == 3
    assert sleeps == [1.0, 1.5]  # 1 * 2**0, then 1 * 2**1 capped at 1.5


def test_http_client_error_is_not_retried(con):
    with ChatServer(lambda body: "x") as server:
        server.plan = [400]
        with pytest.raises(LLMError, match="rejected item a .*HTTP 400"):
            OpenAIHTTPBackend(http_config(server)).generate([req("a")])
    assert server.n_requests == 1


def test_http_timeout_is_retried_then_fails(con):
    with ChatServer(lambda body: "slow but fine") as server:
        server.plan = [1.0]  # first answer comes after 1 s, the client waits 0.3 s
        backend = OpenAIHTTPBackend(http_config(server, timeout_s=0.3, max_retries=1))
        assert [c.text for c in backend.generate([req("a")])] == ["slow but fine"]
        assert server.n_requests == 2
        server.plan = [1.0, 1.0]
        with pytest.raises(LLMError, match="ReadTimeout"):
            backend.generate([req("b")])


def test_http_connection_error_is_retried(con):
    cfg = LLMConfig(model="m", base_url="http://127.0.0.1:9/v1", timeout_s=0.5, max_retries=1, backoff_s=0.01)
    with pytest.raises(LLMError, match=r"after 2 attempts: Connect"):
        OpenAIHTTPBackend(cfg).generate([req("a")])


def test_http_concurrency_is_limited(con):
    with ChatServer(lambda body: "x", delay_s=0.05) as server:
        OpenAIHTTPBackend(http_config(server, concurrency=3)).generate([req(f"i{k}", f"t{k}") for k in range(12)])
    assert server.n_requests == 12
    assert 2 <= server.max_in_flight <= 3


def test_http_bad_payload_is_a_clear_error(con):
    with ChatServer(lambda body: None) as server:  # content null
        with pytest.raises(LLMError, match="non-text content"):
            OpenAIHTTPBackend(http_config(server)).generate([req("a")])


def test_http_usage_and_cut_answers_are_stored_and_replayed(con):
    """usage -> prompt/completion tokens, finish_reason 'length' -> a cut answer, known again from the cache."""

    def respond(body):
        if last_user_message(body) == "long":
            return {
                "content": "a cut ans",
                "finish_reason": "length",
                "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16},
            }
        return {"content": "", "finish_reason": "eos"}  # empty, no usage: counts are NULL

    with ChatServer(respond) as server:
        llm = open_llm(con, config=http_config(server), progress=False)
        out = llm.complete([req("a", "long"), req("b", "short")])
    assert out == [Completion("a cut ans", "length", 12, 4), Completion("", "stop", None, None)]
    assert (llm.cut, llm.empty) == (1, 1)
    assert con.execute(
        "SELECT item_id, finish_reason, prompt_tokens, completion_tokens FROM llm_calls ORDER BY 1"
    ).fetchall() == [("a", "length", 12, 4)]  # the empty answer is a failed call, never cached
    assert con.execute("SELECT item_id, reason, response_text FROM llm_failures").fetchall() == [("b", "empty", "")]
    assert llm.failed == 1
    replay = LLMCache(con, None, model="test-model", replay_only=True, progress=False)
    assert replay.complete([req("a", "long")]) == [out[0]] and replay.cut == 1


def test_http_cache_second_run_sends_nothing(con):
    with ChatServer(lambda body: "re: " + last_user_message(body)) as server:
        cfg = http_config(server)
        requests = [req(f"i{k}", f"t{k}") for k in range(5)]
        first = open_llm(con, config=cfg, progress=False).generate(requests)
        assert server.n_requests == 5
        second_llm = open_llm(con, config=cfg, progress=False)
        assert second_llm.generate(requests) == first
        assert server.n_requests == 5 and second_llm.calls == 0 and second_llm.hits == 5
    stored = " ".join(r[0] for r in con.execute("SELECT request_json || backend FROM llm_calls").fetchall())
    assert "sk-test-secret" not in stored


# --- vLLM adapter ---------------------------------------------------------------------------------------


def test_vllm_backend_needs_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    with pytest.raises(LLMError, match=r"pip install -e '\.\[vllm\]'"):
        make_backend(LLMConfig(backend="vllm", model="m"))


def _vllm_stand_in(monkeypatch, **params_classes):
    """vLLM's module shape (SamplingParams, and in vllm.sampling_params the structured-output parameter
    class(es) given) with an engine that records how it was built and what it was asked: answer k is
    ``gen <last message>``, k + 3 tokens long, cut at max_tokens for every answer after the first."""
    seen = {}

    class SamplingParams:
        def __init__(self, **kw):
            self.kw = kw

    class LLM:
        def __init__(self, model, **kw):
            seen["init"] = (model, kw)

        def chat(self, conversations, sampling_params, use_tqdm):
            seen["chat"] = (conversations, [p.kw for p in sampling_params])
            seen["params"] = seen["chat"][1]
            return [
                types.SimpleNamespace(
                    prompt_token_ids=[1] * (10 + k),
                    outputs=[
                        types.SimpleNamespace(
                            text=f"gen {c[-1]['content']}",
                            token_ids=[5] * (3 + k),
                            finish_reason="length" if k else "stop",
                        )
                    ],
                )
                for k, c in enumerate(conversations)
            ]

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(LLM=LLM, SamplingParams=SamplingParams))
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", types.SimpleNamespace(**params_classes))
    return seen


def test_vllm_backend_batches_chat_with_per_request_sampling(monkeypatch):
    """The adapter against a stand-in module with vLLM's API shape (LLM.chat, SamplingParams,
    RequestOutput.outputs[0].text): checks what is passed, not what a model says."""
    seen = _vllm_stand_in(monkeypatch)
    backend = make_backend(LLMConfig(backend="vllm", model="google/gemma", seed=11, vllm={"max_model_len": 8192}))
    out = backend.generate(
        [
            req("a", "p1", seed=3),
            LLMRequest(
                "b",
                "t.v1",
                ({"role": "user", "content": "p2"},),
                Sampling(temperature=0.7, top_p=0.9, max_tokens=50, seed=4),
            ),
        ]
    )
    assert out == [Completion("gen p1", "stop", 10, 3), Completion("gen p2", "length", 11, 4)]
    assert seen["init"] == ("google/gemma", {"seed": 11, "max_model_len": 8192})
    assert seen["chat"][0] == [[{"role": "user", "content": "p1"}], [{"role": "user", "content": "p2"}]]
    assert seen["chat"][1] == [
        {"temperature": 0.0, "top_p": 1.0, "max_tokens": 1024, "seed": 3},
        {"temperature": 0.7, "top_p": 0.9, "max_tokens": 50, "seed": 4},
    ]


# --- structured output: when schemas are sent, fallback to free text --------------------------------------


def test_schemas_are_sent_where_the_backend_enforces_them(con):
    from ingest.llm import structured

    plain, able = ScriptedBackend(echo), ScriptedBackend(echo, structured=True)
    assert structured.wanted(LLMCache(con, able, progress=False), None) is True
    assert structured.wanted(LLMCache(con, plain, progress=False), None) is False
    assert structured.wanted(LLMCache(con, able, progress=False), False) is False
    with pytest.raises(LLMError, match="llm.structured is true but backend scripted has no structured output"):
        structured.wanted(LLMCache(con, plain, progress=False), True)
    replay = LLMCache(con, None, model="m", replay_only=True, progress=False)
    assert structured.wanted(replay, None) is True and structured.wanted(replay, False) is False


def test_replay_only_falls_back_to_the_free_text_answers_of_a_run_that_had_no_structured_output(con, caplog):
    from ingest.llm import structured

    LLMCache(con, ScriptedBackend(echo), progress=False).complete([req("a", "x")])  # a free-text run
    replay = LLMCache(con, None, model="scripted-test-model", replay_only=True, progress=False)
    with caplog.at_level("WARNING"):
        answers, enforced = structured.complete(replay, [structured_req("a", "x")], "test")
    assert [a.text for a in answers] == ["answer to x"] and enforced is False
    assert "replaying the free-text answers" in caplog.text
    with pytest.raises(LLMCacheMiss, match=r"first: b \(test_prompt.v1\)"):  # neither stored: the structured miss
        structured.complete(replay, [structured_req("b", "new")], "test")
    answers, enforced = structured.complete(replay, [req("a", "x")], "test")  # no schema: not structured
    assert enforced is False


# --- structured output on the HTTP backend -----------------------------------------------------------------


def test_http_backend_sends_the_schema_as_response_format(con):
    with ChatServer(lambda body: '{"n": 2}') as server:
        llm = open_llm(con, config=http_config(server), progress=False)
        from ingest.llm import structured

        answers, enforced = structured.complete(llm, [structured_req("a", "one")], "test")
    assert [a.text for a in answers] == ['{"n": 2}'] and enforced is True
    (body,) = server.bodies
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "test_prompt", "schema": SCHEMA, "strict": True},
    }
    stored = json.loads(con.execute("SELECT request_json FROM llm_calls").fetchone()[0])
    assert stored["schema"] == SCHEMA  # the stored request says what was enforced


def test_http_server_refusing_the_schema_falls_back_to_free_text_with_one_warning(con, caplog):
    from ingest.llm import structured

    def respond(body):
        return '{"n": 1}'

    with ChatServer(respond) as server:
        server.plan = [400]  # the first request (with response_format) is refused
        llm = open_llm(con, config=http_config(server, concurrency=1), progress=False)
        with caplog.at_level("WARNING"):
            answers, enforced = structured.complete(llm, [structured_req("a", "one")], "induce:test")
        assert enforced is False and [a.text for a in answers] == ['{"n": 1}']
        assert [("response_format" in b) for b in server.bodies] == [True, False]
        warnings = [r for r in caplog.records if r.levelname == "WARNING" and "structured output refused" in r.message]
        assert len(warnings) == 1 and "\n" not in warnings[0].getMessage() and "HTTP 400" in warnings[0].getMessage()
        # the answer is stored under the free-text key, so it is never taken for a structured one
        assert con.execute("SELECT cache_key FROM llm_calls").fetchall() == [
            (cache_key("test-model", req("a", "one")),)
        ]
        # later structured requests are refused without being sent, and fall back at once
        answers, enforced = structured.complete(llm, [structured_req("b", "two")], "induce:test")
        assert enforced is False and len(server.bodies) == 3 and "response_format" not in server.bodies[-1]


class _Params:
    def __init__(self, **kw):
        self.kw = kw

    def __eq__(self, other):
        return type(self) is type(other) and self.kw == other.kw


class StructuredOutputsParams(_Params):
    pass


class GuidedDecodingParams(_Params):
    pass


def test_vllm_backend_puts_the_schema_in_structured_outputs(monkeypatch):
    seen = _vllm_stand_in(
        monkeypatch, StructuredOutputsParams=StructuredOutputsParams, GuidedDecodingParams=GuidedDecodingParams
    )
    backend = make_backend(LLMConfig(backend="vllm", model="google/gemma"))
    assert backend.schema_unsupported() is None
    backend.generate([structured_req("a"), req("b")])
    assert seen["params"] == [
        {
            "temperature": 0.0,
            "top_p": 1.0,
            "max_tokens": 1024,
            "seed": 1,
            "structured_outputs": StructuredOutputsParams(json=SCHEMA),
        },
        {"temperature": 0.0, "top_p": 1.0, "max_tokens": 1024, "seed": 1},
    ]


def test_vllm_backend_uses_guided_decoding_on_older_releases_and_says_when_it_has_neither(monkeypatch, con):
    from ingest.llm import structured

    seen = _vllm_stand_in(monkeypatch, GuidedDecodingParams=GuidedDecodingParams)
    make_backend(LLMConfig(backend="vllm", model="m")).generate([structured_req("a")])
    assert seen["params"][0]["guided_decoding"] == GuidedDecodingParams(json=SCHEMA)
    _vllm_stand_in(monkeypatch)
    backend = make_backend(LLMConfig(backend="vllm", model="m"))
    assert "no structured outputs" in backend.schema_unsupported()
    llm = LLMCache(con, backend, progress=False)
    assert structured.wanted(llm, None) is False
    with pytest.raises(LLMError, match="llm.structured is true but this vLLM has no structured outputs"):
        structured.wanted(llm, True)
    with pytest.raises(LLMError, match="item a .*no structured outputs"):
        backend.generate([structured_req("a")])
