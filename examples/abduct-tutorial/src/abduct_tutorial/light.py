"""The benchmark: a folder of pictures and labels.json, {"picture.png": "bright" or "dark"}."""

from collections.abc import Mapping, Sequence
from pathlib import Path

from abduct import Choice, Choose, DataError, Evaluation, Records, RunInfo, Settings, Spec, Stage, VisualInput, percent
from abduct.kit import accuracy, read_json

LABELS, CLASSES = "labels.json", ("bright", "dark")


class LightDataset:
    def load(self, data_dir: Path, split: str) -> list[dict[str, str]]:
        labels = read_json(data_dir / LABELS, "labels file")  # missing or not JSON: one line naming the file
        if not isinstance(labels, dict):
            raise DataError("expected a JSON object {picture: label}", file=data_dir / LABELS)
        for name, label in labels.items():
            if label not in CLASSES:
                raise DataError(f"label must be one of {CLASSES}", file=data_dir / LABELS, record=name)
            if not (data_dir / name).is_file():
                raise DataError("picture not found", file=data_dir / LABELS, record=name)
        return [{"id": name, "image": str(data_dir / name), "label": labels[name]} for name in sorted(labels)]

    def files(self, data_dir: Path, split: str) -> list[Path]:
        return [data_dir / LABELS]  # what results.json hashes

    def check(self, data_dir: Path) -> list[str]:
        try:
            return [] if self.load(data_dir, "test") else ["no pictures"]
        except DataError as problem:
            return [str(problem)]


class LightTask:
    default_split = "test"
    dataset = "tutorial-light"  # the runner loads its pictures and applies --limit
    metric_info = {"accuracy": percent(chance=50.0)}  # a percentage, higher is better, chance 50

    def plan(self, pictures: Sequence[dict[str, str]], run: RunInfo) -> list[Stage]:
        captions = tuple(f"a {label} picture" for label in CLASSES)
        items = [Choice(p["id"], VisualInput(p["image"]), captions, CLASSES.index(p["label"])) for p in pictures]
        return [Stage("pictures", Choose(items))]  # the model scores both captions of each picture

    def finish(self, pictures: Sequence[dict[str, str]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        return Evaluation({"accuracy": accuracy(records["pictures"])}, records["pictures"])  # metrics, records


def make_dataset(spec: Spec, settings: Settings) -> LightDataset:
    return LightDataset()


def make_task(spec: Spec, settings: Settings) -> LightTask:
    return LightTask()
