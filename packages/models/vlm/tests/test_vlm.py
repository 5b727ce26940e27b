"""``vlm`` on two tiny architectures built offline (LLaVA and Qwen2-VL, both multi-image):
the core's contracts, scores equal to the model's own loss, and one-line errors."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from abduct import (
    COUNT,
    AbductError,
    Box,
    Decoding,
    Evaluation,
    GenerationRequest,
    Judge,
    JudgeItem,
    Records,
    Region,
    Registration,
    RunInfo,
    Settings,
    Spec,
    Stage,
    VisualInput,
    hookimpl,
)
from abduct.host import EvalConfig, build_registry, load_model, run_evaluation
from abduct_testing import GeneratorContract, ScorerContract, make_images
from abduct_testing.toy import ToyPlugin, write_toy_data
from abduct_vlm._loading import directory_digest
from abduct_vlm._model import VisionLanguageModel, make_vlm

ARCHITECTURES = ("tiny-llava", "tiny-qwen2-vl")
_built: dict[str, VisionLanguageModel] = {}


def tiny(name: str = "tiny-llava", **options: str) -> VisionLanguageModel:
    key = f"{name}{sorted(options.items())}"
    if key not in _built:
        spec = Spec("vlm", name, options=tuple(options.items()))
        _built[key] = build_registry().create("model", spec, Settings(batch_size=4))
    return _built[key]


class TestLlavaGenerator(GeneratorContract):
    def make_generator(self) -> object:
        return tiny("tiny-llava")


class TestQwenGenerator(GeneratorContract):
    def make_generator(self) -> object:
        return tiny("tiny-qwen2-vl")


class TestLlavaScorer(ScorerContract):
    def make_scorer(self) -> object:
        return tiny("tiny-llava")


class TestQwenScorer(ScorerContract):
    def make_scorer(self) -> object:
        return tiny("tiny-qwen2-vl")


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_a_score_is_minus_the_models_own_loss_on_the_answer(name: str, tmp_path: Path) -> None:
    """Our batched, left-padded log-likelihood equals transformers' loss on one unpadded
    example whose labels are the answer tokens only."""
    model = tiny(name)
    paths = make_images(tmp_path, 3)
    visual = VisualInput(str(paths[0]), Region((Box(2, 2, 20, 10),)), context="a wet street",
                         related=(VisualInput(str(paths[1])),))
    others = [VisualInput(str(paths[2]), context="a much longer context than the first one, to force padding")]
    texts = ["it rained recently", "short"]
    ours = model.score([visual, others[0]], texts)

    prompt, answer = model.prompts.scoring(visual, texts[0])
    images = model.images(visual)
    chat = model.chat(prompt, len(images))
    batch = model.processor(text=[chat + answer], images=images, return_tensors="pt")
    labels = batch["input_ids"].clone()
    labels[:, : labels.shape[1] - model._answer_length(chat, answer)] = -100
    with torch.inference_mode():
        loss = model.model(**batch, labels=labels).loss
    assert ours[0] == pytest.approx(-float(loss), abs=1e-4)
    assert model.score([others[0]], texts[1:])[0] == pytest.approx(ours[1], abs=1e-4)


def test_sum_and_mean_and_the_fixed_answer(tmp_path: Path) -> None:
    paths = make_images(tmp_path, 2)
    visual = VisualInput(str(paths[0]), context="clue")
    mean = tiny("tiny-llava").score([visual], ["it rained"])[0]
    total = tiny("tiny-llava", reduce="sum").score([visual], ["it rained"])[0]
    assert total == pytest.approx(mean * len("it rained"), rel=1e-4)  # byte tokens: one per character
    pair = VisualInput(str(paths[0]), related=(VisualInput(str(paths[1])),))
    yes = tiny("tiny-llava").score([pair], [""])[0]
    no = tiny("tiny-llava", answer="no").score([pair], [""])[0]
    assert np.isfinite([yes, no]).all() and yes != no


def test_several_images_and_too_many(tmp_path: Path) -> None:
    paths = make_images(tmp_path, 3)
    triplet = VisualInput(str(paths[0]), related=(VisualInput(str(paths[1])), VisualInput(str(paths[2]))))
    for name in ARCHITECTURES:
        text = tiny(name).generate([GenerationRequest(triplet, "Answer with 1 or 2 only.")], Decoding(max_new_tokens=3),
                                   None)
        assert len(text) == 1 and isinstance(text[0], str)
    swapped = VisualInput(str(paths[0]), related=(VisualInput(str(paths[2])), VisualInput(str(paths[1]))))
    scores = tiny("tiny-qwen2-vl").score([triplet, swapped], ["1", "1"])
    assert scores[0] != scores[1]  # the order of the images reaches the model
    with pytest.raises(AbductError) as err:
        tiny("tiny-llava", max_images="1").score([triplet], ["x"])
    assert str(err.value).startswith("model 'vlm:tiny-llava' takes at most 1 image(s) per prompt, and an input has 3")


def test_sampling_is_seeded_per_request(tmp_path: Path) -> None:
    paths = make_images(tmp_path, 2)
    requests = [GenerationRequest(VisualInput(str(p)), "Describe.") for p in paths]
    sampling = Decoding(max_new_tokens=6, do_sample=True, seed=3)
    model = tiny("tiny-llava")
    assert model.generate(requests, sampling, None) == model.generate(requests[::-1], sampling, None)[::-1]


def test_the_tiny_model_is_built_once_and_loads_like_a_directory(session_cache: Path) -> None:
    built = session_cache / "vlm" / "tiny-llava-v1"
    assert (built / "config.json").is_file()
    digest = directory_digest(built)
    direct = make_vlm(Spec("vlm", str(built)), Settings())
    assert direct.fingerprint.split("|")[2] == digest == tiny("tiny").fingerprint.split("|")[2]


def _fail(spec: str) -> str:
    with pytest.raises(AbductError) as err:
        load_model(spec, Settings(), build_registry())
    message = str(err.value)
    assert "\n" not in message
    return message


def test_bad_models_are_one_line(tmp_path: Path) -> None:
    not_vlm = tmp_path / "t5"
    not_vlm.mkdir()
    (not_vlm / "config.json").write_text(json.dumps({"model_type": "t5", "d_model": 8}))
    assert "is a 't5' model, not an image-text-to-text model" in _fail(f"vlm:{not_vlm}")
    assert "holds no config.json" in _fail(f"vlm:{tmp_path}")
    assert "no such directory" in _fail(f"vlm:{tmp_path}/missing")
    assert "vlm needs an argument" in _fail("vlm")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    assert "cannot read a model configuration" in _fail(f"vlm:{broken}")
    assert "template has an unknown placeholder '{nope}'" in _fail('vlm:tiny,template="{nope}"')


class JudgedToy:
    """Ask the judge whether each toy image's caption is its own (half of them with the image)."""

    default_split = "val"
    dataset = "toy"
    metric_info = {"judged": COUNT, "unparsed": COUNT}
    template = "Candidate: {candidate}\nReferences:\n{references}\nSame explanation? Answer yes or no."

    def plan(self, examples: Sequence[dict[str, Any]], run: RunInfo) -> list[Stage]:
        items = [JudgeItem(it["id"], it["caption"], (it["caption"],), VisualInput(it["image"]) if i % 2 else None)
                 for i, it in enumerate(examples)]
        return [Stage("judge", Judge(items, self.template))]

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        verdicts = list(records["judge"])
        rows = [{"id": v.id, "judged": v.equivalent, "raw": v.raw} for v in verdicts]
        return Evaluation({"judged": len(rows), "unparsed": sum(v.equivalent is None for v in verdicts)}, rows)


def make_judged_toy(spec: Spec, settings: Settings) -> JudgedToy:
    return JudgedToy()


class JudgedToyPlugin:
    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("vlm-judged-toy", "A toy task the judge answers", f"{__name__}:make_judged_toy")


def test_a_local_vlm_can_judge(tmp_path: Path) -> None:
    """``--judge vlm:tiny-llava``: the judge sees the prompt (and the image when given); its random
    answers are counted as parse failures, never guessed."""
    registry = build_registry(extra_plugins=[("toy", ToyPlugin()), ("vlm-judged-toy", JudgedToyPlugin())])
    data = write_toy_data(tmp_path / "data", items=4)
    config = EvalConfig("vlm-judged-toy", "random", data, tmp_path / "out", quiet=True, judge="vlm:tiny-llava",
                        use_cache=False)
    results = run_evaluation(config, registry)
    rows = [json.loads(line) for line in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["judged"] in (True, False, None) and r["raw"] for r in rows)
    judge = results["judge"]
    assert judge["spec"] == "vlm:tiny-llava" and judge["judged"] == 4
    assert judge["parse_failures"] == results["metrics"]["unparsed"] == sum(r["judged"] is None for r in rows)


@pytest.mark.parametrize(("template", "reason"), [
    ("{{ raise_exception('this template takes no images') }}", "this template takes no images"),
    ("{{ messages.__class__.__mro__ }}", "SecurityError"),  # jinja's sandbox
    ("{% for m in messages %}{{ m.content[0].nope() }}{% endfor %}", "UndefinedError"),
    ("{% for m in messages %}", "TemplateSyntaxError"),
])
def test_a_hostile_chat_template_is_one_line_before_any_generation(session_cache: Path, tmp_path: Path,
                                                                   template: str, reason: str) -> None:
    import shutil

    from abduct_vlm._tiny import tiny_directory

    directory = tmp_path / "hostile"
    shutil.copytree(tiny_directory("tiny-llava", session_cache / "vlm"), directory)
    (directory / "chat_template.jinja").write_text(template)
    message = _fail(f"vlm:{directory}")
    assert message.startswith(f"vlm:{directory}: the chat template ({directory / 'chat_template.jinja'}) fails: ")
    assert reason in message
