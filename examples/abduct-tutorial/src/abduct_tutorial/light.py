"""The benchmark: a folder of pictures and labels.json, {"picture.png": "bright" or "dark"}."""

from pathlib import Path

from abduct import COUNT, AbductError, DataError, Evaluation, RunContext, Settings, Spec, VisualInput, percent
from abduct.kit import Choice, accuracy, multiple_choice, read_json

LABELS = "labels.json"
CLASSES = ("bright", "dark")


class LightDataset:
    def load(self, data_dir: Path, split: str) -> dict[str, str]:
        path = data_dir / LABELS
        labels = read_json(path, "labels file")  # missing or not JSON: one line naming the file
        if not isinstance(labels, dict):
            raise DataError("expected a JSON object {picture: label}", file=path)
        for name, label in labels.items():
            if label not in CLASSES:
                raise DataError(f"label must be one of {CLASSES}", file=path, record=name)
            if not (data_dir / name).is_file():
                raise DataError("picture not found", file=path, record=name)
        return dict(labels)

    def check(self, data_dir: Path) -> list[str]:
        try:
            return [] if self.load(data_dir, "test") else ["no pictures"]
        except DataError as problem:
            return [str(problem)]


class LightTask:
    default_split = "test"
    metric_info = {"accuracy": percent(chance=50.0), "n": COUNT}  # which way is better; chance

    def evaluate(self, run: RunContext) -> Evaluation:
        labels = run.dataset("tutorial-light").load(run.data_dir, run.split)
        captions = tuple(f"a {label} picture" for label in CLASSES)
        items = [Choice(name, VisualInput(str(run.data_dir / name)), captions, CLASSES.index(labels[name]))
                 for name in run.apply_limit(sorted(labels), "pictures")]
        records = multiple_choice(run, "pictures", items)  # the model scores both captions
        return Evaluation({"accuracy": accuracy(records), "n": len(records)}, records, data_files=[run.data_dir / LABELS])

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        raise AbductError("tutorial-light has no official predictions format; run it with abduct eval")


def make_dataset(spec: Spec, settings: Settings) -> LightDataset:
    return LightDataset()


def make_task(spec: Spec, settings: Settings) -> LightTask:
    return LightTask()
