"""A hand-made flat corpus and a scripted stand-in model for the rewriting tests (never results).

30 documents about made-up towns (some long enough for several 64-token sentence windows), 4 queries
with qrels, one qrel on a document the corpus lacks. The scripted model answers by prompt kind and
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
    "q4": "How long is the railway of Dalby?",
}


def document(town: str, topic: str, n_sentences: int) -> str:
    base = [f"The {topic} of {town} is known across the region.",
            f"Visitors come to {town} to see the {topic} every summer.",
            f"Records of the {topic} in {town} go back many centuries.",
            f"Local guides tell stories about the {topic} and the old families of {town}."]
    return " ".join(base[k % len(base)] + ("" if k < len(base) else f" Note {k}.") for k in range(n_sentences))


def load_corpus(con, corpus: str = "towns") -> FlatCorpus:
    built = FlatCorpus(corpus)
    for t, town in enumerate(TOWNS):
        for p, topic in enumerate(TOPICS[:3]):
            built.add_document(f"{town}-{topic}", f"{town} {topic}", document(town, topic, 3 + (t + p) % 10),
                               "hand-made", None)
    gold = {"q1": ["Avalon-river"], "q2": ["Brisk-castle"], "q3": ["Corvin-market", "Corvin-river"],
            "q4": ["Dalby-railway"]}  # Dalby-railway is not in the corpus: counted as not indexed
    for qid, text in QUERIES.items():
        query_id = built.add_query(qid, text, "hand")
        built.add_answers(query_id, [text.split()[-1].rstrip("?")])
        for doc in gold[qid]:
            built.add_qrel(query_id, f"{corpus}/{doc}", 1)
    write_flat_corpus(con, built)
    return built


def respond(request: LLMRequest) -> str:
    """Scripted answers by prompt, query and sampling seed (see module doc)."""
    content = request.messages[-1]["content"]
    query = content.rsplit("Question: ", 1)[-1].rsplit("Query: ", 1)[-1].split("\n")[0].strip()
    town = next((t for t in TOWNS if t in query), "Avalon")
    seed = request.sampling.seed
    if request.prompt.startswith("rewrite_neighbor"):
        if "Brisk" in query and seed == 42:
            return ""  # empty answer
        if "Corvin" in query and seed == 42:
            return "Here are some related questions:"  # no usable line
        return (f"Here are three:\n1. What is the history of {town}?\n2. {query}\n3. What is the history of {town}?\n"
                f"4. Which families lived in {town} (seed {seed})?")  # identical, duplicate, beyond n
    if request.prompt.startswith("rewrite_synonym"):
        return f"- In which place is the {town} river?\n- {town}: what river runs there (seed {seed})?\n- Name {town}'s river."
    if request.prompt.startswith("rewrite_comparative"):
        return f"Is the river of {town} longer than the river of Brisk?"
    if request.prompt.startswith("rewrite_hyde"):
        return f"Passage: The {town} river is known across the region; visitors come every summer (seed {seed})."
    if request.prompt.startswith("rewrite_query2doc"):
        if "Dalby" in query:
            return "   "  # empty passage: falls back to the query
        return f"{town} has a long history; records go back many centuries."
    raise AssertionError(f"unexpected prompt {request.prompt}")
