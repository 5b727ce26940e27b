"""What ``samples.html`` shows of a WHOOPS! record: the image, its commonsense category, and
per task what the model produced beside what it is judged against: the generated caption,
explanation or answer beside the references (with the judge's verdict and the proxy metrics
where present, x100 as results.json gives their means), or, for matching, the detailed and the
under-specified caption with their scores."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from abduct.kit import scored_texts
from abduct_whoops.dataset import WhoopsExample

VERDICTS = {True: "equivalent", False: "not equivalent", None: "unparsed"}


class WhoopsView:
    """A WHOOPS! task's ``view``: the record's image found among the run's examples by its
    ``image_id``."""

    generated = "output"  # what the model generates, for the labels

    def view(self, record: Mapping[str, Any], examples: Mapping[str, Any]) -> dict[str, Any] | None:
        example = examples.get(str(record.get("image_id")))
        if not isinstance(example, WhoopsExample):
            return None
        image = example.image
        view: dict[str, Any] = {"id": str(record.get("id") or image.image_id),  # captioning's records: one an image
                                "images": [{"path": image.path, "caption": image.image_id}],
                                "category": image.commonsense_category, "fields": {}}
        scores = record.get("scores")
        if isinstance(scores, list) and len(scores) == 2 and "#" in str(record.get("id")):  # matching
            under = image.crowd_underspecified_captions[int(str(record["id"]).rsplit("#", 1)[1])]
            view["texts"] = scored_texts(["detailed caption", "under-specified caption"],
                                         [image.selected_caption, under], scores, 0)
            view["correct"], view["margin"] = scores[0] > scores[1], scores[0] - scores[1]
            return view
        if "prediction" not in record:
            return None
        texts = [{"label": "question", "text": str(record["question"])}] if "question" in record else []
        texts.append({"label": f"generated {self.generated}", "text": str(record["prediction"])})
        references = record.get("references") or ([record["answer"]] if "answer" in record else [])
        texts += [{"label": f"reference {k + 1}", "text": str(text)} for k, text in enumerate(references)]
        view["texts"] = texts
        if "judge" in record:
            view["fields"]["verdict"] = VERDICTS.get(record["judge"], str(record["judge"]))
            view["correct"] = record["judge"] if isinstance(record["judge"], bool) else None
            if record.get("judge_raw"):
                texts.append({"label": "judge's answer", "text": str(record["judge_raw"])})
        metrics = record.get("metrics") or {}  # x100 already, as every text metric; shown in the record's place
        view["fields"].update({k: round(v, 2) for k, v in metrics.items() if isinstance(v, float)},
                              **({"metrics": None} if metrics else {}))
        return view
