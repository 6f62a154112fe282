"""The report's slices section (exploratory): per label, collapsed (<details>), the slice table of every contrast
(the definitions `ragwh export tables` writes: ragwh/experiment/tables/slices.py) and, for the chunking study's
primary cell, each contrast's forest plot by the label's values (ragwh/experiment/slices.py)."""

from __future__ import annotations

import html

import duckdb

from ragwh.experiment.report.data import relation_exists
from ragwh.experiment.report.markup import not_run_note, section, svg


def section_slices(con: duckdb.DuckDBPyConnection, study: str) -> str:
    """The slices of ``study`` ('chunking': contrast_slices in the primary cell; 'rewriting': rewrite_slices on the
    primary metric) as one section, one collapsed block per label."""
    from ragwh.experiment.slices import figure_stem, forest, sliced
    from ragwh.experiment.tables.build import Context, build
    from ragwh.experiment.tables.render import to_html
    from ragwh.experiment.tables.slices import chunking_definitions, rewriting_definitions

    anchor, mart = ("slices", "contrast_slices") if study == "chunking" else ("rw-slices", "rewrite_slices")
    title = "Slices by label (exploratory)" if study == "chunking" else "Rewriting: slices by label (exploratory)"
    what = (
        "Every contrast sliced by each label's values (built-in labels and the analysts' from `ragwh label add`): "
        "mean Δ with the study's bootstrap 95% CI, p and Holm p within the contrast's slices, and the heterogeneity "
        "test of the difference across the values. Not pre-registered: read it as exploration. Click a label to open it."
    )
    definitions = chunking_definitions(con) if study == "chunking" else rewriting_definitions(con)
    if not definitions:
        reason = (
            f"{mart} was not built" if not relation_exists(con, mart) else f"{mart} holds no rows for the primary cell"
        )
        return section(anchor, title, what, not_run_note(reason))
    parts = []
    for definition in definitions:
        label = definition.name.rsplit("slices-", 1)[1]
        body = [f'<p class="what">{html.escape(definition.caption)}</p>']
        for table in build(con, definition, Context()):
            body.append(
                f"<h4>{html.escape(' · '.join(str(v) for v in table.group.values()))}</h4>" + to_html(table, "paper")
            )
        if study == "chunking":
            contrasts = [
                r[0]
                for r in con.execute(
                    "SELECT DISTINCT contrast FROM contrast_slices WHERE is_primary_cell AND label = ? ORDER BY 1",
                    [label],
                ).fetchall()
            ]
            groups = [g for c in contrasts for g in sliced(con, c, label)]
            body += [svg(forest(g), figure_stem(g, len(groups) > len(contrasts))) for g in groups]
        parts.append(f"<details><summary>{html.escape(label)}</summary>{''.join(body)}</details>")
    return section(anchor, title, what, "".join(parts))
