"""YAML read strictly: a mapping that gives one key twice is an error, never "the last one wins".

PyYAML's ``safe_load`` silently keeps the last of two equal keys (``seeds:`` twice reads as the second
list). :func:`load_yaml` raises :class:`yaml.constructor.ConstructorError` instead, with the marks of
both occurrences, so every reader reports it as ``<file>: not valid YAML at line L, column C: ...``.
"""

from __future__ import annotations

from typing import Any

import yaml


class _StrictLoader(yaml.SafeLoader):
    pass


def _mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict:
    loader.flatten_mapping(node)
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the constructor below reports it
            continue
        if first is not None:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping",
                node.start_mark,
                f"found key {key!r} twice (first at line {first.start_mark.line + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, except that a key given twice in one mapping raises."""
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 -- a SafeLoader subclass
