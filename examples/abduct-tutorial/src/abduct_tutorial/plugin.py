"""The entry module: registrations only. A factory is "module:attr", imported on first use."""

from collections.abc import Iterator

from abduct import Registration, hookimpl


@hookimpl
def register_datasets() -> Iterator[Registration]:
    yield Registration("tutorial-light", "Pictures labelled bright or dark", "abduct_tutorial.light:make_dataset")


@hookimpl
def register_tasks() -> Iterator[Registration]:
    yield Registration("tutorial-light", "Bright or dark? Two captions, accuracy", "abduct_tutorial.light:make_task")


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration("tutorial-brightness", "Grey level against a threshold", "abduct_tutorial.model:make_model")
