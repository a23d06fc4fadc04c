"""YAML as ctxprobe reads it from the user (a suite file, a `--params` value): `yaml.safe_load`, except that a
key given twice in one mapping is refused. PyYAML keeps the last of two equal keys without a word, so
`lengths: [1k]` followed later by `lengths: [128k]` would run another plan than the one the reader of the file
sees first."""

from __future__ import annotations

from typing import Any

import yaml


class DuplicateKey(yaml.constructor.ConstructorError):
    """A mapping that holds one key twice (its line and key in the message)."""


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader whose mappings refuse a key seen before in the same mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                continue  # the base class says what is wrong with an unhashable key
            if key in seen:
                raise DuplicateKey(
                    None,
                    None,
                    f"the key {key!r} is given twice (lines {seen[key] + 1} and {key_node.start_mark.line + 1})",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """`text` parsed as YAML; raises `yaml.YAMLError` (a `DuplicateKey` for a key given twice)."""
    return yaml.load(text, Loader=_StrictLoader)
