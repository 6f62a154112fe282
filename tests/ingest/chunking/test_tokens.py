"""Token counts: the MiniLM tokenizer, no special tokens, batched, additive over whitespace-joined parts."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.chunking import tokens
from ingest.chunking.tokens import count_tokens, load_tokenizer, tokenizer_name


def test_default_is_minilm_without_special_tokens():
    assert tokenizer_name() == "all-MiniLM-L6-v2"
    # hand-checked word pieces of the uncased MiniLM vocabulary: 'hello' 'world' '.' -> 3 (no [CLS]/[SEP])
    assert count_tokens(["Hello world.", "", "tokenization"]).tolist() == [3, 0, 2]
    tok = load_tokenizer()
    assert tok.convert_ids_to_tokens(tok("tokenization", add_special_tokens=False)["input_ids"]) == [
        "token",
        "##ization",
    ]


def test_matches_the_tokenizer_and_never_truncates():
    text = "retrieval " * 2000
    tok = load_tokenizer()
    assert count_tokens([text])[0] == 2000 == len(tok(text, add_special_tokens=False)["input_ids"])


def test_batches_agree_with_single_calls(monkeypatch):
    texts = [f"Sentence number {i} about chunk {i % 7}." for i in range(25)]
    whole = count_tokens(texts)
    monkeypatch.setattr(tokens, "BATCH_SIZE", 4)
    assert count_tokens(texts).tolist() == whole.tolist() == [count_tokens([t])[0] for t in texts]
    assert whole.dtype == np.int64


def test_sentence_counts_add_up_for_wordpiece():
    # the chunkers rely on this: joining whitespace-separated parts adds their counts
    parts = ["We use BERT (Devlin et al., 2019).", "Accuracy is 3.5% higher!", "Naïve results, e.g. [12], differ."]
    assert count_tokens([" ".join(parts)])[0] == count_tokens(parts).sum()


def test_unknown_tokenizer_is_a_clear_error():
    from ingest.retrieval.embedders import EmbedderError

    with pytest.raises(EmbedderError, match="neither a registered name"):
        count_tokens(["x"], "/no/such/model/dir")


def test_counts_equal_the_hugging_face_call_on_varied_text():
    texts = [
        "",
        " ",
        "Hello   world.\n\nNew paragraph\twith tabs.",
        "héllo wörld ñ 中文 🙂 Ωμέγα",
        "x" * 300,
        "e-mail: a.b@c.org, URL https://example.org/a?b=1",
        "3.14159 × 10^3 ≈ 3141.59",
        "Don't stop—ever.",
    ]
    tok = load_tokenizer()
    want = [len(ids) for ids in tok(texts, add_special_tokens=False)["input_ids"]]
    assert count_tokens(texts).tolist() == want


def test_a_truncating_user_of_the_shared_tokenizer_changes_no_count():
    tok = load_tokenizer()
    tok.backend_tokenizer.enable_truncation(max_length=8)
    try:
        assert count_tokens(["retrieval " * 50])[0] == 50
    finally:
        tok.backend_tokenizer.no_truncation()


def test_a_text_that_is_not_a_string_is_named():
    with pytest.raises(TypeError, match="text 1 is NoneType, not str"):
        count_tokens(["fine", None])


def test_a_literal_special_token_counts_as_the_hugging_face_call_counts_it():
    # "[SEP]" written in a text is one token for the tokenizer as loaded; the private copy must agree
    # (the flag is not part of the backend's serialized form)
    texts = ["before [SEP] after [CLS] x [MASK]"]
    tok = load_tokenizer()
    assert count_tokens(texts).tolist() == [len(tok(texts[0], add_special_tokens=False)["input_ids"])] == [6]
    tokens._counter.cache_clear()
    tok.split_special_tokens = True  # "[SEP]" as word pieces
    try:
        split = count_tokens(texts)[0]
        assert split == len(tok(texts[0], add_special_tokens=False)["input_ids"]) > 6
    finally:
        tok.split_special_tokens = False
        tokens._counter.cache_clear()


def test_counts_add_at_join_whitespace_on_odd_text():
    # the promise behind summed window counts (tokens.counts_add_at_whitespace): cut after a space, tab,
    # newline or CR, a text counts the sum of its stripped parts, whatever the characters around the cut
    assert tokens.counts_add_at_whitespace()
    rng = np.random.default_rng(7)
    alphabet = list("abcXYZ.,!?…'\"()[]-3é東京ﬁ") + [
        "[SEP]",
        "naïve",
        "\x1c",
        "\x0b",
        "\x85",
        "\u2028",
        "\xa0",
        "\u3000",
        "\u0301",
        " ",
        "\t",
        "\n",
        "\r",
    ]
    texts = ["".join(rng.choice(alphabet, int(rng.integers(5, 60)))) for _ in range(400)]
    left, right, whole = [], [], []
    for text in texts:
        cuts = [i + 1 for i, ch in enumerate(text[:-1]) if ch in tokens.JOIN_WHITESPACE]
        if cuts:
            cut = cuts[int(rng.integers(len(cuts)))]
            left.append(text[:cut].strip()), right.append(text[cut:].strip()), whole.append(text.strip())
    assert len(whole) > 300
    assert count_tokens(whole).tolist() == (count_tokens(left) + count_tokens(right)).tolist()


def test_only_bert_style_tokenizers_promise_additive_counts(monkeypatch):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    def fake(normalizer, pre, model):
        tok = Tokenizer(model)
        tok.normalizer, tok.pre_tokenizer = normalizer, pre
        monkeypatch.setattr(tokens, "_counter", lambda name=None: tok)
        return tokens.counts_add_at_whitespace.__wrapped__(None)

    wordpiece = models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]")
    assert fake(normalizers.BertNormalizer(), pre_tokenizers.BertPreTokenizer(), wordpiece)
    assert not fake(normalizers.BertNormalizer(clean_text=False), pre_tokenizers.BertPreTokenizer(), wordpiece)
    assert not fake(normalizers.BertNormalizer(), pre_tokenizers.ByteLevel(), wordpiece)
    assert not fake(normalizers.BertNormalizer(), pre_tokenizers.BertPreTokenizer(), models.BPE())
    assert not fake(None, pre_tokenizers.Metaspace(), models.Unigram())
    tok = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    tok.normalizer, tok.pre_tokenizer = normalizers.BertNormalizer(), pre_tokenizers.BertPreTokenizer()
    monkeypatch.setattr(tokens, "_counter", lambda name=None: tok)
    tok.add_tokens(["[NOSPACE]"])
    assert tokens.counts_add_at_whitespace.__wrapped__(None)
    tok.add_tokens(["new york"])  # an added token spanning a space could cross a cut
    assert not tokens.counts_add_at_whitespace.__wrapped__(None)
