"""The fusion-rule registry: ``seeds/fusion_rules.csv``, the one place a fusion rule's name lives.

One row per rule: ``rule`` the stored name (``rewrite_ensembles.rule``), ``input`` what it fuses (``scores``: the
runs' scores as they are; ``ranks``: their ranks; ``normalized``: min-max normalized scores), ``display_name`` what
the report and the paper tables print, ``kernel`` its function in ``udfs/fusion/`` (``file.py::function``),
``ranx_method`` / ``ranx_norm`` ranx's ``fuse`` equivalent (the tests compare with it). The ensemble kernel
(:data:`udfs.ensembles.RULES`), the report and the marts' tests (a relationships test on ``rule``) read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from udfs.metrics.registry import resolve
from warehouse.paths import seed_rows

INPUTS = ("scores", "ranks", "normalized")


@dataclass(frozen=True)
class FusionRule:
    rule: str
    input: str
    display_name: str
    kernel: str
    ranx_method: str
    ranx_norm: str | None
    description: str

    def function(self) -> Callable:
        """The kernel ``udfs/fusion/<file>.py::<function>`` names."""
        return resolve(self.kernel)


@cache
def fusion_rules() -> tuple[FusionRule, ...]:
    """The seed's rows in file order (the order the ensemble kernel computes and the report lists them)."""
    path, rows = seed_rows("fusion_rules")
    out = []
    for n, r in enumerate(rows, 2):
        if not r.get("rule") or r.get("input") not in INPUTS or "::" not in (r.get("kernel") or ""):
            raise ValueError(
                f"{path}: line {n}: rule non-empty, input one of {', '.join(INPUTS)} and kernel "
                f"'file.py::function' are required: {r}"
            )
        out.append(
            FusionRule(
                r["rule"],
                r["input"],
                r["display_name"],
                r["kernel"],
                r["ranx_method"],
                r["ranx_norm"] or None,
                r["description"],
            )
        )
    return tuple(out)
