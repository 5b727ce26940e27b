"""A stage's records reach ``after=`` and ``finish`` as their request's typed results, made from
the stored JSON records (which resume and merge read unchanged); a ``Custom`` step gets its models,
not the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from abduct import (
    Candidate,
    Choice,
    Choose,
    Chosen,
    Compare,
    Compared,
    Custom,
    Generate,
    Generated,
    GenerationItem,
    GenerationRequest,
    Judge,
    Judged,
    JudgeItem,
    RunModels,
    TwoWay,
    VisualInput,
)
from abduct._run.requests import typed
from abduct._run.runner import Run
from abduct._run.staged import as_line, execute

V = VisualInput("a.png")


def test_each_request_kind_gives_its_typed_record_and_a_line_of_the_same_fields() -> None:
    stored: list[tuple[Any, dict[str, Any], type]] = [
        (Choose([Choice("q", V, ("a", "b"), 1)]),
         {"id": "q", "scores": [0.5, 0.25], "choice": 0, "label": 1, "correct": False}, Chosen),
        (Compare([TwoWay("p", Candidate(V, "a"), Candidate(V, "b"), 0)]),
         {"id": "p", "scores": [1.0, 1.0], "gold": 0, "correct": False}, Compared),
        (Generate([GenerationItem("g", GenerationRequest(V), ("ref",))]),
         {"id": "g", "prediction": "text", "references": ["ref"]}, Generated),
        (Judge([JudgeItem("j", "text", ("ref",))], "{candidate} {references}"),
         {"id": "j", "equivalent": None, "raw": "maybe", "answers": ["maybe"]}, Judged),
    ]
    for request, record, kind in stored:
        [result] = typed(request, [record])
        assert type(result) is kind and result.id == record["id"]
        assert as_line(result) == record  # predictions.jsonl gets the very fields the store kept
    custom = [{"id": "u", "anything": [1, 2]}]
    assert typed(Custom([("u", 1)], lambda models, n: custom), custom) is custom
    assert as_line(custom[0]) is custom[0]


def test_a_custom_step_gets_its_models_and_a_progress_bar_not_the_run(tmp_path: Path) -> None:
    seen: list[Any] = []

    def step(models: RunModels, payload: int) -> list[dict[str, Any]]:
        seen.append(models)
        return [{"id": str(payload), "done": list(models.progress(range(payload), desc="inner"))}]

    run = Run(data_dir=tmp_path, split="val", quiet=True)
    parts = execute(run, "custom", Custom([("2", 2), ("3", 3)], step))
    assert parts == [("2", [{"id": "2", "done": [0, 1]}]), ("3", [{"id": "3", "done": [0, 1, 2]}])]
    models = seen[0]
    assert not isinstance(models, Run) and models.settings == run.settings and models.cache_dir is None
    assert not hasattr(models, "out_dir") and not hasattr(models, "map_units")
