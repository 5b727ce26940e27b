"""The clip spec grammar."""

from __future__ import annotations

import pytest

from abduct.errors import AbductError
from abduct.spec import ModelSpec
from abduct_clip.settings import DEFAULT_PROMPT, parse_clip_spec


def parse(text: str):  # type: ignore[no-untyped-def]
    return parse_clip_spec(ModelSpec.parse(text))


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


@pytest.mark.parametrize("bad", ["clip", "clip:tiny,mode=nope", "clip:tiny,colour=red", "clip:tiny,workers=x",
                                 "clip:tiny,prompt=no-slot", "clip:tiny:/a.pt@openai"])
def test_bad_specs_are_user_errors(bad: str) -> None:
    with pytest.raises(AbductError):
        parse(bad)
