"""Every dbt model says what one of its rows is: its yml description opens with its grain ("One row per ..."), as
jaffle-shop's do, so an analyst reading the docs (or `dbt docs`) knows what a count of rows counts."""

from __future__ import annotations

import yaml

from warehouse.paths import PROJECT_ROOT

MODELS = PROJECT_ROOT / "models"


def model_descriptions() -> dict[str, str]:
    """``{model name: description}`` of every model documented under models/."""
    out: dict[str, str] = {}
    for path in sorted(MODELS.rglob("*.yml")):
        for model in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("models") or []:
            out[model["name"]] = " ".join(str(model.get("description") or "").split())
    return out


def test_every_model_file_is_documented():
    files = {p.stem for p in MODELS.rglob("*") if p.suffix in (".sql", ".py")}
    assert len(files) >= 70 and files - set(model_descriptions()) == set()


def test_every_model_description_opens_with_its_grain():
    missing = sorted(name for name, text in model_descriptions().items() if not text.startswith("One row per "))
    assert missing == [], f"{len(missing)} model descriptions do not open with 'One row per ...': {missing}"
