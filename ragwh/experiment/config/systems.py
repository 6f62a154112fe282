"""The first-stage systems of a chunking experiment and the contrasts it declares between them.

``retrievers`` (default ``[dense]``; ``[dense, bm25]`` adds BM25 over every flat condition's texts) with
``bm25:`` settings (:class:`ingest.retrieval.bm25.BM25Settings`), and ``contrasts:`` entries given as
mappings ``{name, treatment, control}`` whose arms are ``CONDITION`` or ``CONDITION@SYSTEM``
(:class:`DeclaredContrast`; dbt var ``declared_contrasts``). Parsed here for
:func:`ragwh.experiment.config.chunking.parse_config`, errors through its reader (file and dotted key).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

RETRIEVERS = ("dense", "bm25")


@dataclass(frozen=True)
class DeclaredContrast:
    """A contrast the config declares beside the seed's: arms ``CONDITION`` or ``CONDITION@SYSTEM``."""

    name: str
    treatment: str
    control: str

    @staticmethod
    def split(arm: str) -> tuple[str, str | None]:
        condition, _, system = arm.partition("@")
        return condition, system or None

    def var(self) -> dict:
        """The row of dbt var ``declared_contrasts``."""
        (t, ts), (c, cs) = self.split(self.treatment), self.split(self.control)
        return {"contrast": self.name, "treatment": t, "treatment_system": ts, "control": c, "control_system": cs}


def declared_contrast(r, raw: dict, key: str, conditions: list[str], taken: list[str]) -> DeclaredContrast:
    """A declared contrast ``{name, treatment, control}``: arms ``CONDITION[@SYSTEM]`` over configured conditions
    (``r``: the config's reader, which names the file and key in errors)."""
    raw = r.mapping(raw, key, {"name", "treatment", "control"})
    for req in ("name", "treatment", "control"):
        if req not in raw:
            raise r.fail(f"{key}.{req}", "required key missing")
    name = r.string(raw["name"], f"{key}.name")
    if name in taken:
        raise r.fail(f"{key}.name", f"{name!r} is already a contrast's name")
    arms = []
    for side in ("treatment", "control"):
        arm = r.string(raw[side], f"{key}.{side}")
        condition, system = DeclaredContrast.split(arm)
        r.choice(condition, f"{key}.{side}", conditions)
        if system is not None and (not system.strip() or any(ch.isspace() for ch in system)):
            raise r.fail(f"{key}.{side}", f"system {system!r}: expected CONDITION or CONDITION@SYSTEM")
        arms.append(arm)
    if arms[0] == arms[1]:
        raise r.fail(key, f"treatment and control are the same arm {arms[0]!r}")
    return DeclaredContrast(name, *arms)


def bm25_settings(r, raw: Any, wanted: bool):
    """The ``bm25:`` settings (only with ``bm25`` among the retrievers)."""
    from ingest.retrieval.bm25 import BM25Settings

    if raw is not None and not wanted:
        raise r.fail("bm25", "BM25 settings given but 'bm25' is not among the retrievers")
    if not wanted:
        return None
    raw = r.mapping(raw or {}, "bm25", {f.name for f in dataclasses.fields(BM25Settings)})
    for key in ("k1", "b"):
        if key in raw and (isinstance(raw[key], bool) or not isinstance(raw[key], (int, float))):
            raise r.fail(f"bm25.{key}", f"expected a number, got {raw[key]!r}")
    try:
        return BM25Settings(**{k: (float(v) if k in ("k1", "b") else v) for k, v in raw.items()})
    except (TypeError, ValueError) as exc:
        raise r.fail("bm25", str(exc)) from None
