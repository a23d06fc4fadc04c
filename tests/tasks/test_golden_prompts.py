"""Golden prompts: the sha256 of one prompt per family x haystack, counted with the estimate and with the
packaged Gemma 3 tokenizer. Determinism is a feature: the same recipe must give the same bytes on any
machine. Any change to a generator's output fails here until GENERATOR_VERSION is bumped and the new
prompts are pinned under the new version (old versions' rows stay, as a record of what they built)."""

from __future__ import annotations

import pytest

from ctxprobe.tasks import GENERATOR_VERSION
from ctxprobe.tasks.build import builder_for, token_counter

GOLDEN: dict[str, dict[tuple[str, str, str], str]] = {
    "2": {
        ('estimate', 'niah', 'prose'): "1c3ab858b909aa0c7c6327bb3694515f",
        ('estimate', 'niah', 'code'): "037c21410c9a423f2eb4c02c0aa9d91b",
        ('estimate', 'niah', 'legal'): "afbb8b7260fd6813d7b1452f77540d17",
        ('estimate', 'niah', 'noise'): "c805274c688ba181fe9124bb68729db9",
        ('estimate', 'recall', 'prose'): "8c722d4c394583eafa9e44f4719625b9",
        ('estimate', 'recall', 'code'): "bc1cfcf1f3243441ca85a4fd25d354a8",
        ('estimate', 'recall', 'legal'): "6ae28b449c7145d562a3d4627803ad0d",
        ('estimate', 'recall', 'noise'): "399590893d0ccfac4fea0739ede93d82",
        ('estimate', 'multihop', 'prose'): "3d8a83293bc86a556b3be40498ec22a1",
        ('estimate', 'multihop', 'code'): "0184f899030aa92974b06cab077dc422",
        ('estimate', 'multihop', 'legal'): "573123f91928fa60feb35643fe91ef4c",
        ('estimate', 'multihop', 'noise'): "11d11a4fe9f252624b6a4c34569f739d",
        ('local:gemma3-270m', 'niah', 'prose'): "80b6695d807876ff63266654761f56c9",
        ('local:gemma3-270m', 'niah', 'code'): "d597809531dd3e96c894c7809fe3e318",
        ('local:gemma3-270m', 'niah', 'legal'): "dca259ae14677a5ba3701f25a561eff0",
        ('local:gemma3-270m', 'niah', 'noise'): "f419c56453ebae5845c3ae7d59d9a6ad",
        ('local:gemma3-270m', 'recall', 'prose'): "b2e8c5ccac3962a2df315e6692235c20",
        ('local:gemma3-270m', 'recall', 'code'): "dcda5150c2898382a42caffcf6c18f02",
        ('local:gemma3-270m', 'recall', 'legal'): "c4112e41dba3063f4e7af25587185a47",
        ('local:gemma3-270m', 'recall', 'noise'): "cd70b5f47ffb0fd129112e9139e53337",
        ('local:gemma3-270m', 'multihop', 'prose'): "d4a73a2d6c91202fc6b85d673ffebedc",
        ('local:gemma3-270m', 'multihop', 'code'): "223a40402532162947862975429ce53d",
        ('local:gemma3-270m', 'multihop', 'legal'): "3c73b4ff18ea0f45de4499c2b6889326",
        ('local:gemma3-270m', 'multihop', 'noise'): "197c92b9791052ae92ef8af0805ca6b4",
    },
}


@pytest.mark.parametrize("key", sorted(GOLDEN["2"]))
def test_prompt_bytes_are_pinned_for_this_generator_version(key: tuple[str, str, str]) -> None:
    pinned = GOLDEN.get(GENERATOR_VERSION)
    assert pinned is not None, f"generator version {GENERATOR_VERSION} has no golden prompts: pin them here"
    counter, family, haystack = key
    builder = builder_for(token_counter(counter))
    recipe = builder.recipe(family=family, haystack=haystack, context_tokens=2048, depth=40.0, seed=7)
    assert builder.build(recipe).prompt_sha256[:32] == pinned[key], (
        f"{family} on {haystack} ({counter}) builds other bytes than generator version {GENERATOR_VERSION} did: "
        "if the change is meant, bump GENERATOR_VERSION in tasks/__init__.py and pin the new prompts")

