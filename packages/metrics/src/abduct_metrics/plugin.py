"""abduct plugin: text-generation metrics (``exact-match`` is the core's) and ``abduct metric``.

Registrations only: factories are ``"module:attr"`` strings loaded on use, so nothing heavy
is imported here.
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
    ("bertscore", "BERTScore P/R/F1 (bert-score; model, layer, idf, rescaling explicit)",
     "abduct_metrics._bertscore:make_bertscore"),
    ("bem", "BEM answer equivalence after exact match (BERT classifier, local HF directory)",
     "abduct_metrics._bem:make_bem"),
    ("bertscore-hungarian", "BERTScore of gold vs response sentences matched one to one (BlackSwan; avg and max)",
     "abduct_metrics._set_bertscore:make_bertscore_hungarian"),
)


@hookimpl
def register_metrics() -> Iterator[Registration]:
    for name, description, factory in METRICS:
        yield Registration(name, description, factory)


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct_metrics.cli import metric_cmd

    cli.add_command(metric_cmd)
