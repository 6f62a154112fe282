"""The demo corpus that ships with the project: ``demo.v0.3-format.json``.

Five short papers in the QASPER v0.3 release layout (``{paper_id: {title, abstract, full_text[{section_name,
paragraphs}], qas[...], figures_and_tables}}``), written for this project (original text, not taken from
any paper), with nested ``' ::: '`` section names, one container section without paragraphs, and 23
questions (extractive, abstractive, boolean and one unanswerable) whose evidence paragraphs are copied
exactly from the papers' paragraphs. It exists so that ``ragwh run`` works offline; the numbers it
produces are demo numbers, not results.

``demo-rewriting.hotpot.json``: the query-rewriting study's demo corpus (``experiments/demo-rewriting.yml``), in
the HotpotQA distractor layout: 30 questions (26 bridge, 4 comparison) about a fictional archipelago, each with
its gold answer and two supporting paragraphs (its qrels), over 36 hand-written paragraphs, plus 13 look-alike
paragraphs per question (390) that share its named entity and wording but not its answer
(``rewriting_corpus.py`` generates them; ``python -m ragwh.experiment.demo.rewriting_corpus`` rewrites the file
reproducibly). With them the dense baseline (all-MiniLM-L6-v2 with MMR) misses 9 of the 30 questions, so rewrites have misses to
rescue. Written for this project. Demo numbers, not results.
"""
