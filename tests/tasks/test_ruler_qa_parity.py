"""RULER parity for `qa` (RULER's `qa_1` on SQuAD, `qa_2` on HotpotQA): the fixtures hold rows with the
datasets' own fields (HF's SQuAD and HotpotQA rows; no hub at test time). lm-eval's `qa_utils` reads the same
rows, converted here to the JSON it downloads (`read_squad`, `read_hotpotqa` with the download replaced), so
the documents and questions ctxprobe reads must be RULER's. The prompts are compared with the documents cut
out: the instruction, the `Document {i}:` numbering and blank lines, the question and the answer prefix must
be equal, every document one of the dataset's, and the gold ones among them."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.families.qa_data import load_qa
from tests.tasks.word_tokenizer import WordTokenizer

FIXTURES = Path(__file__).parent / "fixtures" / "qa"
DOCUMENT = re.compile(r"Document (\d+):\n(.*?)(?=\n\nDocument \d+:\n|\n\nAnswer the question based)", re.S)


def official_json(name: str) -> object:
    """The fixture as the file RULER downloads: SQuAD's nested JSON, HotpotQA's list with [title, sentences]."""
    rows = json.loads((FIXTURES / f"{name}.json").read_text())
    if name == "hotpotqa":
        return [
            {**r, "context": [[t, s] for t, s in zip(r["context"]["title"], r["context"]["sentences"])]} for r in rows
        ]
    articles: dict[str, dict[str, dict]] = {}
    for r in rows:
        paragraphs = articles.setdefault(r["title"], {})
        p = paragraphs.setdefault(r["context"], {"context": r["context"], "qas": []})
        p["qas"].append(
            {
                "question": r["question"],
                "is_impossible": not r["answers"]["text"],
                "answers": [{"text": t} for t in r["answers"]["text"]],
            }
        )
    return {"data": [{"title": t, "paragraphs": list(ps.values())} for t, ps in articles.items()]}


def rulers_data(name: str, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    qa_utils = pytest.importorskip("lm_eval.tasks.ruler.qa_utils", reason="lm-eval's ruler extra is not installed")
    monkeypatch.setattr(qa_utils, "download_json", lambda url: official_json(name))
    read = qa_utils.read_squad if name == "squad" else qa_utils.read_hotpotqa
    return qa_utils, read.__wrapped__(url=f"fixture:{name}")


@pytest.mark.parametrize("name", ["squad", "hotpotqa"])
def test_the_dataset_reads_as_rulers_documents_and_questions(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _, (qas, docs) = rulers_data(name, monkeypatch)
    ours = load_qa(f"hf:{FIXTURES / f'{name}.json'}")
    assert list(ours.documents) == docs
    assert [(q.query, list(q.answers), list(q.gold), list(q.more)) for q in ours.questions] == [
        (q["query"], q["outputs"], q["context"], q.get("more_context", [])) for q in qas
    ]


def frame_of(prompt: str, docs: set[str]) -> tuple[str, list[str]]:
    """The prompt with each document replaced by DOC (checked to be one of the dataset's), and the documents."""
    found = DOCUMENT.findall(prompt)
    assert [int(i) for i, _ in found] == list(range(1, len(found) + 1)) and found
    assert all(text in docs for _, text in found)
    masked = DOCUMENT.sub(lambda m: f"Document {m.group(1)}:\nDOC", prompt)
    masked = re.sub(r"(Document \d+:\nDOC\n\n)+", "DOCUMENTS", masked)
    return re.sub(r"Question: .*", "Question: QUESTION", masked), [text for _, text in found]


@pytest.mark.parametrize("name", ["squad", "hotpotqa"])
def test_qa_ruler_template_matches_lm_evals_ruler_qa_prompt(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    qa_utils, (qas, docs) = rulers_data(name, monkeypatch)
    random.seed(9)
    [doc] = qa_utils.generate_samples(WordTokenizer(), docs, qas, max_seq_length=700, num_samples=1)
    ruler_prompt = doc["input"] + " " + doc["gen_prefix"]  # lm-eval joins them with the target delimiter " "
    builder = builder_for(token_counter("estimate"))
    # The dataset is named by a path relative to the fixtures' folder: the recipe (and so the sample it draws)
    # is then the same wherever the repository is checked out.
    monkeypatch.chdir(FIXTURES)
    recipe = builder.recipe(
        family="qa",
        params={"dataset": f"hf:{name}.json", "template": "ruler", "length_convention": "ruler"},
        context_tokens=1024,
        seed=1,
    )
    sample = builder.build(recipe)
    ruler_frame, _ = frame_of(ruler_prompt, set(docs))
    ours_frame, ours_docs = frame_of(sample.prompt, set(docs))
    assert ours_frame == ruler_frame
    question = next(
        q
        for q in load_qa(f"hf:{FIXTURES / f'{name}.json'}").questions
        if sample.prompt.endswith(f"Question: {q.query} Answer:")
    )
    assert list(question.answers) == sample.expected.answers
    assert all(docs[i] in ours_docs for i in question.gold)  # the gold documents are always there
    assert len(ours_docs) > len(question.gold)  # with distractors
    assert 1024 - 32 - 40 <= sample.planned_tokens <= 1024 - 32


def test_qa_scores_any_of_the_answers_exactly() -> None:
    from ctxprobe.evals.scoring.score import score_sample

    builder = builder_for(token_counter("estimate"))
    recipe = builder.recipe(
        family="qa", params={"dataset": f"hf:{FIXTURES / 'squad.json'}"}, context_tokens=1024, seed=3
    )
    sample = builder.build(recipe).model_copy(
        update={"expected": builder.build(recipe).expected.model_copy(update={"answers": ["Lina Sorel", "Sorel"]})}
    )
    assert score_sample(sample, " Sorel").correct
    assert score_sample(sample, " Lina Sorel.").correct
    assert not score_sample(sample, " Maren Holt").correct


def test_qa_without_a_dataset_is_a_one_line_user_error() -> None:
    from ctxprobe.tasks.errors import UserError

    builder = builder_for(token_counter("estimate"))
    with pytest.raises(UserError, match="--qa hf:PATH"):
        builder.build(builder.recipe(family="qa", context_tokens=1024))


def test_a_dataset_without_qa_fields_is_a_one_line_user_error(tmp_path: Path) -> None:
    from ctxprobe.tasks.errors import UserError

    path = tmp_path / "rows.json"
    path.write_text(json.dumps([{"text": "no question here"}]))
    with pytest.raises(UserError, match="SQuAD's fields"):
        load_qa(f"hf:{path}")
    with pytest.raises(UserError, match="no such file"):
        load_qa(f"hf:{tmp_path / 'missing.parquet'}")
