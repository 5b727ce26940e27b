"""Entry module (``[project.entry-points.abduct]`` in pyproject.toml): registrations only.

Factories are ``"module:attr"`` strings, imported only when a component is used, so listing
plugins stays fast and never imports anything heavy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from abduct import Registration, hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def register_datasets() -> Iterator[Registration]:
    # names are per kind: each task's dataset may share its name
    yield Registration("example-colors", "Colour questions with their right choices (answers.json)",
                       "abduct_plugin_example.data:make_choice_questions")
    yield Registration("example-describe", "Colour questions with their colours' names (colors.json)",
                       "abduct_plugin_example.data:make_named_questions")


@hookimpl
def register_tasks() -> Iterator[Registration]:
    yield Registration("example-colors", "Which colour dominates the image? (4-way choice, accuracy)",
                       "abduct_plugin_example.task:make_colors")
    yield Registration("example-describe", "Name the colour that dominates the image (generation, exact match)",
                       "abduct_plugin_example.task:make_describe")


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration("example-color", "Mean-colour model: scores (dual encoder) and generates colour names",
                       "abduct_plugin_example.model:make_model")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_plugin_example.cli import make_data

    subgroup(cli, "example", "The example plugin's commands.").add_command(make_data)
