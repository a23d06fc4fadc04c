"""`import-lm-eval` takes the sample logs of all 13 RULER tasks. Each log here is written in lm-eval's log
shape (as in the captured `niah_single_1` log) around a doc made by lm-eval's own RULER code for that task
(with a word tokenizer; QA on the SQuAD / HotpotQA fixtures), answered right or with a trap, and scored by
RULER's `string_match_all` as lm-eval does; the import must score each by ctxprobe and keep RULER's score."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ctxprobe.evals.lmeval.importer import import_lm_eval
from ctxprobe.evals.lmeval.ruler import SUBSTRING
from tests.tasks.test_ruler_qa_parity import official_json
from tests.tasks.word_tokenizer import WordTokenizer

ESSAY = (
    "The harbour was quiet in the early morning. Nobody could remember who had first painted the boats. "
    "Every net in the village has its place, and the fishermen mend each one slowly. "
) * 60
NIAH = {  # lm-eval task -> (haystack type, key type, value type, num_needle_k, num_needle_v, num_needle_q)
    "niah_single_1": ("repeat", "words", "numbers", 1, 1, 1),
    "niah_single_2": ("essay", "words", "numbers", 1, 1, 1),
    "niah_single_3": ("essay", "words", "uuids", 1, 1, 1),
    "niah_multikey_1": ("essay", "words", "numbers", 4, 1, 1),
    "niah_multikey_2": ("needle", "words", "numbers", 1, 1, 1),
    "niah_multikey_3": ("needle", "uuids", "uuids", 1, 1, 1),
    "niah_multivalue": ("essay", "words", "numbers", 1, 4, 1),
    "niah_multiquery": ("essay", "words", "numbers", 4, 1, 4),
}
DELIMITER = {"ruler_cwe": "\n\n"}


def ruler_doc(task: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    random.seed(1)
    np.random.seed(1)
    tokenizer = WordTokenizer()
    if task in NIAH:
        prepare = pytest.importorskip("lm_eval.tasks.ruler.prepare_niah")
        niah_utils = pytest.importorskip("lm_eval.tasks.ruler.niah_utils")
        monkeypatch.setattr(
            prepare, "cached_sent_tokenize", lambda text: [s.strip() for s in re.findall(r"[^.]+\.", text)]
        )
        kind, key, value, k, v, q = NIAH[task]
        haystack = ESSAY.split() if kind == "essay" else prepare.get_haystack(type_haystack=kind)
        return prepare.generate_samples(
            haystack,
            TOKENIZER=tokenizer,
            max_seq_length=600,
            type_haystack=kind,
            type_needle_k=key,
            type_needle_v=value,
            template=niah_utils.TEMPLATE,
            num_samples=1,
            num_needle_k=k,
            num_needle_v=v,
            num_needle_q=q,
        )[0]
    if task == "ruler_vt":
        vt = pytest.importorskip("lm_eval.tasks.ruler.vt_utils")
        return vt.sys_vartrack_w_noise_random(tokenizer=tokenizer, num_samples=1, max_seq_length=600)[0]
    if task == "ruler_cwe":
        cwe = pytest.importorskip("lm_eval.tasks.ruler.cwe_utils")
        return cwe.sys_word_pair_random(num_samples=1, max_seq_length=600, tokenizer=tokenizer)[0]
    if task == "ruler_fwe":
        fwe = pytest.importorskip("lm_eval.tasks.ruler.fwe_utils")
        return fwe.sys_kwext(tokenizer=tokenizer, max_seq_length=600, num_samples=1)[0]
    qa_utils = pytest.importorskip("lm_eval.tasks.ruler.qa_utils")
    name = "squad" if task == "ruler_qa_squad" else "hotpotqa"
    monkeypatch.setattr(qa_utils, "download_json", lambda url: official_json(name))
    read = qa_utils.read_squad if name == "squad" else qa_utils.read_hotpotqa
    qas, docs = read.__wrapped__(url=f"fixture:{name}")
    return qa_utils.generate_samples(tokenizer, docs, qas, max_seq_length=600, num_samples=1)[0]


TASKS = [*NIAH, "ruler_vt", "ruler_cwe", "ruler_fwe", "ruler_qa_squad", "ruler_qa_hotpot"]


def string_match_all(output: str, answers: list[str]) -> float:
    """RULER's score, written again: the fraction of answers found in the output, any case."""
    return sum(a.lower() in output.lower() for a in answers) / len(answers)


def write_log(folder: Path, task: str, doc: dict[str, Any], outputs: list[str]) -> None:
    rows = []
    for doc_id, output in enumerate(outputs):
        sent = doc["input"] + DELIMITER.get(task, " ") + doc["gen_prefix"]
        rows.append(
            {
                "doc_id": doc_id,
                "doc": doc,
                "target": str(doc["outputs"]),
                "arguments": {"gen_args_0": {"arg_0": sent, "arg_1": {"max_gen_toks": 64}}},
                "resps": [[output]],
                "filtered_resps": [output],
                "filter": "none",
                "metrics": ["600"],
                "prompt_hash": "0" * 64,
                "600": string_match_all(output, doc["outputs"]),
            }
        )
    (folder / f"samples_{task}_2026-12-01T10-00-00.000000.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )


def test_all_thirteen_ruler_task_logs_import_with_both_scores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    expected: dict[tuple[str, int], tuple[bool, float]] = {}
    for task in TASKS:
        doc = ruler_doc(task, monkeypatch)
        answers = [str(a) for a in doc["outputs"]]
        right = " " + ", ".join(answers) + "."
        trap = " 1" + answers[0] + "."  # a longer token holding the first answer: RULER counts it
        write_log(logs, task, doc, [right, trap])
        expected[(task, 0)] = (True, 1.0)
        expected[(task, 1)] = (False, string_match_all(trap, answers))
    result = import_lm_eval([logs], results_dir=tmp_path / "results")
    assert result.ruler_docs == len(result.records) == 2 * 13
    seen = {}
    for record in result.records:
        task = record.sample.recipe.params["task"]
        assert record.sample.recipe.family == "ruler" and record.sample.recipe.context_tokens == 600
        seen[(task, record.sample.recipe.seed)] = (
            bool(record.score and record.score.correct),
            record.reference_scores[SUBSTRING],
        )
        if task.startswith("niah") or task == "ruler_vt":
            assert record.sample.needles  # found in the haystack
        kinds = {"ruler_qa_squad": "any", "ruler_qa_hotpot": "any"}
        assert record.sample.expected.kind == kinds.get(
            task, "value" if len(record.sample.expected.answers) == 1 else "values"
        )
    assert seen == expected
