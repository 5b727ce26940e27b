"""abduct plugin: text-generation metrics and the ``abduct metric`` command.

Nothing heavy is imported here: factories are ``"module:attr"`` strings loaded on use.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from abduct import Registration, hookimpl

if TYPE_CHECKING:
    import click

METRICS = (
    ("bleu", "BLEU-1..4, corpus level (pycocoevalcap, PTB tokenisation; needs Java)", "abduct_metrics._coco:make_bleu"),
    ("meteor", "METEOR 1.5 (pycocoevalcap; needs Java)", "abduct_metrics._coco:make_meteor"),
    ("rouge-l", "ROUGE-L, beta 1.2 (pycocoevalcap; needs Java for tokenisation)", "abduct_metrics._coco:make_rouge_l"),
    ("cider", "CIDEr-D (pycocoevalcap; needs Java for tokenisation)", "abduct_metrics._coco:make_cider"),
    ("bertscore", "BERTScore P/R/F1 (bert-score; model, layer, idf, rescaling explicit)", "abduct_metrics._bertscore:make_bertscore"),
    ("bem", "BEM answer equivalence after exact match (BERT classifier, local HF directory)", "abduct_metrics._bem:make_bem"),
    ("exact-match", "Exact match after answer normalisation", "abduct_metrics.exact_match:ExactMatch"),
)


@hookimpl
def register_metrics() -> Iterator[Registration]:
    for name, description, factory in METRICS:
        yield Registration(name, description, factory)


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct_metrics.cli import metric_command

    if "metric" not in cli.commands:
        cli.add_command(metric_command)
