"""A hand-made flat corpus and a scripted stand-in model for the rewriting tests (never results).

30 documents about made-up towns (some long enough for several 64-token sentence windows), 4 queries
with qrels (5 judged pairs). The scripted model answers by prompt kind and
sampling seed, and plants the bad inputs the stage must count: an empty answer, an answer without a
usable line, a variant identical to the query, a duplicate variant, lines beyond n, an empty passage.
"""

from __future__ import annotations

from ingest.corpora.flat import FlatCorpus, write_flat_corpus
from ingest.llm import LLMRequest

TOWNS = ["Avalon", "Brisk", "Corvin", "Dalby", "Elmore", "Fenwick", "Garrow", "Hollis", "Ivel", "Jarrow"]
TOPICS = ["river", "castle", "market", "harbour", "library", "railway"]
QUERIES = {  # query source id -> text
    "q1": "Which river flows through Avalon?",
    "q2": "When was the castle of Brisk built?",
    "q3": "Who founded the market in Corvin?",
    "q4": "How long is the river of Dalby?",
}


def document(town: str, topic: str, n_sentences: int) -> str:
    base = [
        f"The {topic} of {town} is known across the region.",
        f"Visitors come to {town} to see the {topic} every summer.",
        f"Records of the {topic} in {town} go back many centuries.",
        f"Local guides tell stories about the {topic} and the old families of {town}.",
    ]
    return " ".join(base[k % len(base)] + ("" if k < len(base) else f" Note {k}.") for k in range(n_sentences))


def load_corpus(con, corpus: str = "towns") -> FlatCorpus:
    built = FlatCorpus(corpus)
    for t, town in enumerate(TOWNS):
        for p, topic in enumerate(TOPICS[:3]):
            built.add_document(
                f"{town}-{topic}", f"{town} {topic}", document(town, topic, 3 + (t + p) % 10), "hand-made", None
            )
    gold = {
        "q1": ["Avalon-river"],
        "q2": ["Brisk-castle"],
        "q3": ["Corvin-market", "Corvin-river"],
        "q4": ["Dalby-river"],
    }
    for qid, text in QUERIES.items():
        query_id = built.add_query(qid, text, "hand")
        built.add_answers(query_id, [text.split()[-1].rstrip("?")])
        for doc in gold[qid]:
            built.add_qrel(query_id, f"{corpus}/{doc}", 1)
    write_flat_corpus(con, built)
    return built


def respond(request: LLMRequest) -> str:
    """Scripted answers for the scripted backend (see :func:`answer`)."""
    return answer(request.messages[-1]["content"], request.sampling.seed)


def respond_http(body: dict) -> str:
    """The same answers for the scripted OpenAI-compatible server (tests/ingest/llm/chat_server.py)."""
    return answer([m["content"] for m in body["messages"] if m["role"] == "user"][-1], body["seed"])


def answer(content: str, seed: int) -> str:
    """Answers by prompt kind (recognized from the prompt text), query and sampling seed (module doc)."""
    query = content.rsplit("Question: ", 1)[-1].rsplit("Query: ", 1)[-1].split("\n")[0].strip()
    town = next((t for t in TOWNS if t in query), "Avalon")
    if "sibling questions" in content:
        if "Brisk" in query and seed == 42:
            return ""  # empty answer
        if "Corvin" in query and seed == 42:
            return "Here are some related questions:"  # no usable line
        return (
            f"Here are three:\n1. What is the history of {town}?\n2. {query}\n3. What is the history of {town}?\n"
            f"4. Which families lived in {town} (seed {seed})?"
        )  # identical, duplicate, beyond n
    if "in $n different ways".replace("$n", "3") in content:
        return f"- In which place is the {town} river?\n- {town}: what river runs there (seed {seed})?\n- Name {town}'s river."
    if "comparison question" in content:
        return f"Is the river of {town} longer than the river of Brisk?"
    if content.startswith("Please write a passage to answer the question"):
        return f"Passage: The {town} river is known across the region; visitors come every summer (seed {seed})."
    if content.startswith("Write a passage that answers the given query"):
        if "Dalby" in query:
            return "   "  # empty passage: falls back to the query
        return f"{town} has a long history; records go back many centuries."
    if content.startswith("Answer the question using the passages"):
        return f"Answer: {town}"  # the reader (ingest/rewriting/reader.py): the question's town
    raise AssertionError(f"unexpected prompt {content[:80]!r}")
