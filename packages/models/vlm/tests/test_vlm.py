"""``vlm`` on two tiny architectures built offline (LLaVA and Qwen2-VL, both multi-image):
the core's contracts, scores equal to the model's own loss, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from abduct import AbductError, Box, Decoding, GenerationRequest, Region, Settings, Spec, VisualInput
from abduct.host import build_registry, load_model
from abduct_testing import GeneratorContract, ScorerContract, make_images
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


def test_a_local_vlm_can_judge(tmp_path: Path) -> None:
    """``--judge vlm:DIR``: the judge sees the prompt (and the images when given); its random
    answers are counted as parse failures, never guessed."""
    from abduct import JudgeItem
    from abduct.host import EQUIVALENCE_TEMPLATE, GenerationEngine, JudgeEngine, parse_verdict

    model = tiny("tiny-llava")
    engine = GenerationEngine(model, decoding=Decoding(max_new_tokens=4), quiet=True)
    judge = JudgeEngine(engine, "vlm:tiny", model.fingerprint)
    image = make_images(tmp_path, 1)[0]
    items = [JudgeItem("a", "it rained", ("the street is wet",)),
             JudgeItem("b", "someone cooks", ("dinner is ready", "a meal"), VisualInput(str(image)))]
    verdicts = judge.judge(items, EQUIVALENCE_TEMPLATE, stage="judge")
    assert [v.equivalent for v in verdicts] == [parse_verdict(v.raw) for v in verdicts]
    assert judge.describe()["parse_failures"] == sum(v.equivalent is None for v in verdicts)
    assert engine.calls == 1


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
