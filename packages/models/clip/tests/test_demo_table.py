"""The demo's tables: the CLIP table's layout does not depend on abduct-t5 (its T5 row is a
second table), and the T5 table shows comparison and generation columns."""

from __future__ import annotations

from abduct_clip._demo import SHOWN, T5_SHOWN, format_table


def _metrics(value: float) -> dict[str, dict[str, float]]:
    return {task: dict.fromkeys(names, value) for task, names in SHOWN.items()}


def test_clip_table_layout() -> None:
    text = format_table({"random": _metrics(1.0), "fine_tuned": _metrics(12.345)})
    lines = text.splitlines()
    assert lines[0].split() == ["model", "retr.p_at_1", "retr.im2txt", "retr.txt2im", "loca.gt_accuracy",
                                "loca.auto_accuracy", "comp.accuracy"]
    assert lines[2].split() == ["random"] + ["1.00"] * 6
    assert lines[3].split() == ["fine_tuned"] + ["12.35"] * 6


def test_t5_table_columns() -> None:
    row = {"sherlock-comparison": {"accuracy": 3.0}, "sherlock-generation": dict.fromkeys(T5_SHOWN["sherlock-generation"], 0.5)}
    text = format_table({"random": row, "t5_fine_tuned": row}, T5_SHOWN)
    assert text.splitlines()[0].split() == ["model", "comp.accuracy", "gene.bleu4", "gene.cider", "gene.rouge_l",
                                            "gene.meteor"]
    only_comparison = format_table({"t5_fine_tuned": {"sherlock-comparison": {"accuracy": 3.0}}},
                                   {"sherlock-comparison": ("accuracy",)})
    assert only_comparison.splitlines()[2].split() == ["t5_fine_tuned", "3.00"]
