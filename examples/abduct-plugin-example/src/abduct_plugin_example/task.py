"""The example-colors task: multiple choice scored by the argmax, ties to the first choice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from abduct import Evaluation, VisualInput
from abduct.errors import DataError
from abduct.io import read_json
from abduct.runner import Run
from abduct_plugin_example.data import ANSWERS, QUESTIONS, Question, load_questions


def _answer_key(path: Path) -> dict[str, int]:
    key = read_json(path, "answer key")
    if not isinstance(key, dict):
        raise DataError("expected a JSON object {id: choice index}", file=path)
    for qid, label in key.items():
        if not isinstance(label, int):
            raise DataError("answer must be an integer choice index", file=path, record=qid)
    return key


def accuracy(predicted: dict[str, int], key: dict[str, int]) -> float:
    return 100.0 * float(np.mean([predicted[q] == key[q] for q in key])) if key else 0.0


class ColorTask:
    default_split = "test"

    def evaluate(self, model: object, run: Run) -> Evaluation:
        engine = run.require_engine()
        questions = run.apply_limit(load_questions(run.data_dir))
        key = _answer_key(run.data_dir / ANSWERS)

        def answer(batch: list[Question]) -> list[dict[str, Any]]:
            columns = sorted({c for q in batch for c in q.choices})
            scores = engine.score_matrix([VisualInput(str(q.image)) for q in batch], columns)
            records = []
            for row, q in zip(scores, batch):
                choice_scores = [float(row[columns.index(c)]) for c in q.choices]
                records.append({"id": q.qid, "scores": choice_scores, "choice": int(np.argmax(choice_scores))})
            return records

        batches = [questions[i : i + 8] for i in range(0, len(questions), 8)]
        records = run.map_units("questions", [(b[0].qid, b) for b in batches], answer)
        predicted = {r["id"]: r["choice"] for r in records}
        metrics = {"accuracy": accuracy(predicted, {q: key[q] for q in predicted}), "n": len(records)}
        return Evaluation(metrics, records, data_files=[run.data_dir / QUESTIONS, run.data_dir / ANSWERS])

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        key = _answer_key(answer_key)
        preds = read_json(predictions, "predictions")
        if not isinstance(preds, dict):
            raise DataError("expected a JSON object {id: choice index}", file=predictions)
        for qid in key:
            if not isinstance(preds.get(qid), int):
                raise DataError("missing or not an integer choice", file=predictions, record=qid)
        unknown = sorted(set(preds) - set(key))
        if unknown:
            raise DataError("id not in the answer key", file=predictions, record=unknown[0])
        return {"accuracy": accuracy(preds, key)}
