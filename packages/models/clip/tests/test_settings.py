"""The clip spec: MODEL[@TAG] in the spec, options typed by the core from the factory's
signature, one-line errors for bad values."""

from __future__ import annotations

import pytest

from abduct import AbductError
from abduct.host import build_registry, options_of
from abduct_clip._train import settings_of_model as parse
from abduct_clip.factory import make_clip
from abduct_clip.settings import DEFAULT_PROMPT, OPTION_DEFAULTS


def test_architectures_tags_and_files() -> None:
    s = parse("clip:ViT-B-16@openai")
    assert (s.arch, s.pretrained, s.checkpoint) == ("ViT-B-16", "openai", None)
    assert parse("clip:tiny").open_clip_arch == "abduct-tiny"
    s = parse("clip:/ckpt/run@3/best.pt")
    assert (s.arch, s.checkpoint) == (None, "/ckpt/run@3/best.pt")
    s = parse("clip:RN50x64-quickgelu:/ckpt/sherlock.pt")
    assert (s.arch, s.checkpoint) == ("RN50x64-quickgelu", "/ckpt/sherlock.pt")
    assert parse("clip:weights.safetensors").checkpoint == "weights.safetensors"


def test_options() -> None:
    s = parse("clip:tiny,mode=region,images=pad,prefix=inference,workers=0")
    assert (s.mode, s.images, s.prefix, s.num_workers) == ("region", "pad", "inference", 0)
    assert s.explicit == {"mode", "images", "prefix", "workers"}
    assert s.format_text("it rained") == "inference: it rained"
    s = parse("clip:ViT-B-16@openai,mode=plain,prompt=default")
    assert (s.pretrained, s.mode, s.prompt) == ("openai", "plain", DEFAULT_PROMPT)
    assert s.format_text("it rained") == "an image suggesting that it rained"
    s = parse('clip:tiny,prompt="a photo, where {}",mode=highlight')
    assert s.prompt == "a photo, where {}" and s.explicit == {"prompt", "mode"}
    assert parse("clip:tiny").explicit == frozenset()


def test_factory_options_are_typed() -> None:
    options = options_of(make_clip)
    assert list(options) == ["mode", "images", "prefix", "prompt", "workers"]
    assert options["workers"].default == -1 and options["mode"].default == "highlight"
    assert options["workers"].annotation is int  # typed: the factory's annotations all resolve
    # the factory's defaults are the settings record's: the options are declared once
    assert {name: option.default for name, option in options.items()} == OPTION_DEFAULTS


@pytest.mark.parametrize(("bad", "message"), [
    ("clip", "clip needs a model"),
    ("clip:tiny,mode=nope", "'nope' is not one of highlight, plain, position, region, context"),
    ("clip:tiny,images=square", "'square' is not one of widescreen, center, pad"),
    ("clip:tiny,prefix=answer", "'answer' is not one of none, inference, clue"),
    ("clip:tiny,colour=red", "has no option 'colour'"),
    ("clip:tiny,workers=x", "'x' is not an integer"),
    ("clip:tiny,prompt=no-slot", "must contain {}"),
    ("clip:tiny:/a.pt@openai", "either a pretrained @tag or a checkpoint file"),
])
def test_bad_specs_are_one_line_user_errors(bad: str, message: str) -> None:
    registry = build_registry()
    with pytest.raises(AbductError) as caught:
        registry.create("model", bad)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_training_takes_clip_models_only() -> None:
    with pytest.raises(AbductError, match="must be a clip model"):
        parse("random")
