"""abduct plugin: registrations only; no torch, transformers or lmms_eval import here."""

from __future__ import annotations

from collections.abc import Iterator

import click

from abduct import Registration, hookimpl


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration(
        "lmms",
        "Any model registered in lmms-eval: lmms:MODEL[,key=value...] with the model's own model_args "
        "(generates; scores where the class implements loglikelihood)",
        "abduct_lmms._model:make_lmms",
    )
    yield Registration(
        "replay",
        "Answers from a file of answers keyed by request (what lmms-eval answered an exported task): replay:FILE",
        "abduct_lmms.replay:make_replay",
    )


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_lmms.cli import export_lmms_eval

    subgroup(cli, "export", "Export abduct's tasks to other evaluation harnesses.").add_command(export_lmms_eval)
