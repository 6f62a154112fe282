"""The look-alike paragraphs of the rewriting demo corpus (``demo-rewriting.hotpot.json``), written for this project.

The demo's 30 questions and their 36 hand-written paragraphs (a fictional archipelago, two supporting paragraphs
per question) are easy for a dense retriever on their own: with 36 documents every strategy finds a supporting
paragraph in its top 10. The study is about queries the dense baseline misses, so every question also gets
look-alike paragraphs: texts that share its named entity and its wording (the harbour, the pier, the ferries)
but do not hold the answer, the way real distractors share surface words with a multi-hop or comparison question.
They are made from 16 templates (a heritage trail, a society, postcards, a museum model, a folk tale, a lecture
series, a stamp, a mural, a song, a documentary, ...) filled with the question's anchor and key phrases,
:data:`LOOKALIKES` (13) per question, so the baseline ranks some supporting paragraphs below the cut of 10 and a rewrite that words the
question differently can bring them back.

``python -m ragwh.experiment.demo.rewriting_corpus`` rewrites the JSON in place: it keeps each question's
hand-written paragraphs and replaces its look-alikes with freshly generated ones (deterministic, so the file
is reproducible; ``tests/ragwh/experiment/test_demo_rewriting_corpus.py`` checks it is). Demo data, not results.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PATH = Path(__file__).with_name("demo-rewriting.hotpot.json")

LOOKALIKES = 13  # look-alike paragraphs per question

# question id -> (anchor, three key phrases): the anchor is the question's named entity; the phrases its wording
SPECS: dict[str, tuple[str, tuple[str, str, str]]] = {
    "demo-rw-01": (
        "Brisca Harbour",
        ("the ferries at the north pier", "the founders of the island companies", "the harbour's ferry services"),
    ),
    "demo-rw-02": (
        "the Kestrel House",
        ("the lamps designed on the islands", "Edwin Kestrel's daughter", "the first lighthouse lamps"),
    ),
    "demo-rw-03": (
        "the Kestrel Lamp",
        ("the island lighthouses", "the first lamps installed in a lighthouse", "the island where the lamp stands"),
    ),
    "demo-rw-04": (
        "the Dunmore Keepers' Cottage",
        ("the last lighthouse keeper", "the keeper's brother", "the newspaper editors of the islands"),
    ),
    "demo-rw-05": (
        "the Harrow Pell House",
        ("the weekly paper he edited", "the first printed issues", "the years the paper was printed"),
    ),
    "demo-rw-06": (
        "Venn Guitars",
        ("the founder of the workshop", "where the luthiers learned their craft", "the workshop's guitars"),
    ),
    "demo-rw-07": (
        "the eastern marshes",
        ("the observatory on Orlen island", "the astronomers who discovered comets", "the comets seen from the marsh"),
    ),
    "demo-rw-08": (
        "the Stellan Rowe House",
        ("the comet he discovered", "the orbital period of island comets", "the astronomer's discoveries"),
    ),
    "demo-rw-09": (
        "Comet Rowe-3",
        ("the discoverer of the comet", "where astronomers studied mathematics", "the comet's discovery"),
    ),
    "demo-rw-10": (
        "the Marr scale",
        ("the geologist who proposed it", "the mines surveyed on the islands", "the scratch test for stone"),
    ),
    "demo-rw-11": (
        "Greywater Mine",
        ("the surveyor of the mine tunnels", "the college where surveyors taught", "the tunnels of the mine"),
    ),
    "demo-rw-12": ("Ember Bridge", ("the stone of the bridge", "the rank of island stones", "the bridge's sandstone")),
    "demo-rw-13": (
        "the Northwind Railway",
        ("the western terminus of the line", "the designers of its buildings", "the railway's stations"),
    ),
    "demo-rw-14": (
        "Fenwick Station",
        ("the architect of the station", "the libraries designed by architects", "the station's building"),
    ),
    "demo-rw-15": (
        "the Lena Ashby House",
        ("the library she designed", "the book collections held by island libraries", "the architect's buildings"),
    ),
    "demo-rw-16": (
        "the Blue Heron Brewery",
        ("the lake beside the brewery", "the rivers that drain the lakes", "the brewery's water"),
    ),
    "demo-rw-17": (
        "the Blue Heron Brewery",
        ("the founder of the brewery", "the cities the brewers came from", "the brewery's founding"),
    ),
    "demo-rw-18": (
        "the Veldmark Islands",
        ("the terns of the southernmost island", "who counted the terns", "the islands' seabirds"),
    ),
    "demo-rw-19": (
        "Tern Island",
        ("the ornithologist's report", "what the bird report led to", "the report on the tern colonies"),
    ),
    "demo-rw-20": (
        "the Lorne Report",
        ("the author of the report", "the town where the author was born", "the report's findings"),
    ),
    "demo-rw-21": (
        "the Hollin Orchestra",
        ("the conductor of the orchestra", "the festival where the symphony premiered", "the orchestra's symphonies"),
    ),
    "demo-rw-22": (
        "the Symphony of Tides",
        ("the festival where it premiered", "the year the festival began", "the symphony's first performance"),
    ),
    "demo-rw-23": ("Ember Bridge", ("the fort on the hill", "who built the hill fort", "the sandstone of the hill")),
    "demo-rw-24": (
        "the Quarry Hill fort",
        ("the builder of the fort", "the harbour he later managed", "the harbour masters"),
    ),
    "demo-rw-25": (
        "the Edwin Kestrel House",
        ("the company he founded", "the ships that sail to Tern Island", "the company's ships"),
    ),
    "demo-rw-26": (
        "Cobalt Lake",
        ("the river that flows out of the lake", "the bridges that cross the rivers", "the lake's outflow"),
    ),
    "demo-rw-27": (
        "the Tallow Ferry Company",
        ("the Northwind Railway", "the first island ferries", "the company's early years"),
    ),
    "demo-rw-28": (
        "the Saltmarsh Observatory",
        ("the Blue Heron Brewery", "the first telescopes on the islands", "the observatory's early years"),
    ),
    "demo-rw-29": ("the Harrow Pell House", ("Pippa Lorne", "the island journalists", "the Pell family")),
    "demo-rw-30": ("the Marr scale", ("Brisca basalt", "Quarry Hill sandstone", "the hardness of island stone")),
}

# (title, three sentences); {A} the anchor, {a} the anchor without a leading "the", {k0}..{k2} the key phrases
TEMPLATES: tuple[tuple[str, tuple[str, str, str]], ...] = (
    (
        "{a} Heritage Trail",
        (
            "The {a} Heritage Trail is a signposted walk about {k0}.",
            " Boards along the way describe {k1} and {k2}.",
            " The walk starts and ends at {A}.",
        ),
    ),
    (
        "{a} Society",
        (
            "The {a} Society studies {k0}.",
            " Its members collect letters and photographs about {k1} and {k2}.",
            " Its journal on {A} appears twice a year.",
        ),
    ),
    (
        "{a} Postcards",
        (
            "Picture postcards printed around 1910 show {A} and {k0}.",
            " The best-known card is captioned with a line about {k1}.",
            " Collectors of {A} cards also look for views of {k2}.",
        ),
    ),
    (
        "{a} Model",
        (
            "A scale model of {A} in the town museum shows {k0}.",
            " Labels beside it explain {k1} and {k2}.",
            " Schoolchildren built the model of {A} in 1987.",
        ),
    ),
    (
        "{a} Folk Tale",
        (
            "An island tale set at {A} is about {k0}.",
            " Other versions of the tale concern {k1} and {k2}.",
            " A folklorist wrote the stories of {A} down in the 1950s.",
        ),
    ),
    (
        "{a} Lecture Series",
        (
            "The {a} Lecture Series is a set of winter talks about {k0}.",
            " Recent talks covered {k1} and {k2}.",
            " The talks on {A} are recorded for the local radio.",
        ),
    ),
    (
        "{a} Walking Guide",
        (
            "The {a} Walking Guide is a pocket book about {k0}.",
            " Its chapters cover {k1} and {k2}.",
            " It is sold at {A} and at the ferry offices.",
        ),
    ),
    (
        "{a} Quiz Night",
        (
            "The {a} Quiz Night asks teams about {k0}.",
            " Rounds cover {k1} and {k2}.",
            " The prize, a painted oar, shows {A}.",
        ),
    ),
    (
        "{a} Radio Hour",
        (
            "The {a} Radio Hour is a weekly programme about {k0}.",
            " Listeners phone in with memories of {k1} and {k2}.",
            " It has been broadcast from near {A} since 1979.",
        ),
    ),
    (
        "{a} Stamp",
        (
            "A stamp of 1998 shows {A} and {k0}.",
            " Its sheet margin carries notes on {k1} and {k2}.",
            " A second printing of the {a} stamp corrected the colour of the sea.",
        ),
    ),
    (
        "{a} Mural",
        (
            "A mural of {A} in the old fish market shows {k0}.",
            " Other painted scenes show {k1} and {k2}.",
            " Art students restored the {a} mural in 2016.",
        ),
    ),
    (
        "{a} Exhibition",
        (
            "The {a} Exhibition was a summer show about {k0}.",
            " Its rooms were given to {k1} and to {k2}.",
            " About six thousand visitors came to see {A} there.",
        ),
    ),
    (
        "{a} Song",
        (
            "The {a} Song is a ballad about {k0}.",
            " Its verses tell of {k1} and {k2}.",
            " Fishermen still sing it at {A}.",
        ),
    ),
    (
        "{a} School Project",
        (
            "Pupils of Orlen's school prepare a project on {A} and {k0}.",
            " They write about {k1} and draw {k2}.",
            " The best projects on {A} hang in the library.",
        ),
    ),
    (
        "{a} Board Game",
        (
            "The {a} Board Game is a family game about {k0}.",
            " Players race to learn about {k1} and {k2}.",
            " Its board is a map of {A}.",
        ),
    ),
    (
        "{a} Documentary",
        (
            "The {a} Documentary is a short film about {k0}.",
            " It shows {k1} and interviews people about {k2}.",
            " It was filmed at {A} in 1994.",
        ),
    ),
)


def _fill(template: str, anchor: str, phrases: tuple[str, str, str]) -> str:
    bare = anchor[4:] if anchor.startswith("the ") else anchor
    text = template.replace("{A}", anchor).replace("{a}", bare)
    text = text.replace("{k0}", phrases[0]).replace("{k1}", phrases[1]).replace("{k2}", phrases[2])
    lead = len(text) - len(text.lstrip())
    return text[:lead] + text[lead].upper() + text[lead + 1 :]


def lookalikes(n: int = LOOKALIKES) -> dict[str, list[list]]:
    """Each question's look-alike paragraphs, ``{question_id: [[title, [sentences]], ...]}`` (the HotpotQA
    context layout). Questions that share an anchor get distinct titles (a later one's carry " II")."""
    out: dict[str, list[list]] = {}
    seen: set[str] = set()
    for question_id, (anchor, phrases) in SPECS.items():
        start = int(question_id.rsplit("-", 1)[1]) % len(TEMPLATES)
        paragraphs = []
        for i in range(n):
            title, sentences = TEMPLATES[(start + i) % len(TEMPLATES)]
            name = _fill(title, anchor, phrases)
            name = name + " II" if name in seen else name
            seen.add(name)
            paragraphs.append([name, [_fill(s, anchor, phrases) for s in sentences]])
        out[question_id] = paragraphs
    return out


def rebuild(records: list[dict], n: int = LOOKALIKES) -> list[dict]:
    """``records`` with each question's look-alikes replaced: hand-written paragraphs first, in their order."""
    generated = {t for paragraphs in lookalikes(len(TEMPLATES)).values() for t, _ in paragraphs}
    fresh = lookalikes(n)
    out = []
    for rec in records:
        own = [p for p in rec["context"] if p[0] not in generated]
        out.append({**rec, "context": own + fresh[rec["_id"]]})
    return out


def main(argv: list[str]) -> int:
    records = json.loads(PATH.read_text(encoding="utf-8"))
    PATH.write_text(json.dumps(rebuild(records), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
