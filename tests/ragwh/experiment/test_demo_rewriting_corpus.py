"""The rewriting demo corpus is what its generator writes: the hand-written paragraphs plus the look-alikes of
``ragwh/experiment/demo/rewriting_corpus.py``, reproducibly (rerunning the generator changes no byte)."""

from __future__ import annotations

import json

from ragwh.experiment.demo import rewriting_corpus


def _records():
    return json.loads(rewriting_corpus.PATH.read_text(encoding="utf-8"))


def test_the_shipped_corpus_is_the_generators_output():
    records = _records()
    rebuilt = json.dumps(rewriting_corpus.rebuild(records), indent=1, ensure_ascii=False) + "\n"
    assert rebuilt == rewriting_corpus.PATH.read_text(encoding="utf-8")


def test_every_question_has_its_lookalikes_and_no_title_means_two_texts():
    records = _records()
    assert len(records) == len(rewriting_corpus.SPECS) == 30
    texts: dict[str, str] = {}
    for rec in records:
        titles = [t for t, _ in rec["context"]]
        gold = {t for t, _ in rec["supporting_facts"]}
        assert gold <= set(titles[: len(titles) - rewriting_corpus.LOOKALIKES]), rec["_id"]
        lookalikes = titles[-rewriting_corpus.LOOKALIKES :]
        anchor = rewriting_corpus.SPECS[rec["_id"]][0].removeprefix("the ")
        assert all(anchor.lower() in t.lower() for t in lookalikes), rec["_id"]
        assert not gold & set(lookalikes)
        for title, sentences in rec["context"]:
            assert texts.setdefault(title, "".join(sentences)) == "".join(sentences), title
    assert len(texts) == 36 + 30 * rewriting_corpus.LOOKALIKES
    # a bridge question's look-alikes never hold its answer (a comparison's answer is one of the entities it names)
    for rec in (r for r in records if r["type"] == "bridge"):
        for title, sentences in rec["context"][-rewriting_corpus.LOOKALIKES :]:
            assert rec["answer"].lower() not in "".join(sentences).lower(), (rec["_id"], title)
