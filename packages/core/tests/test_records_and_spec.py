from pathlib import Path
from typing import Literal

import pytest

from abduct import AbductError, Box, Region, Settings, Spec, VisualInput
from abduct.host import bind_options


def test_iou_hand_computed() -> None:
    a, b = Box(0, 0, 10, 10), Box(5, 0, 10, 10)
    assert a.iou(b) == pytest.approx(50 / 150)
    assert a.iou(a) == 1.0
    assert a.iou(Box(20, 20, 1, 1)) == 0.0
    assert Box(0, 0, 0, 0).iou(Box(0, 0, 0, 0)) == 0.0


def test_region_needs_a_box() -> None:
    with pytest.raises(ValueError):
        Region(())


def test_visual_key_distinguishes_regions_spans_context_and_related() -> None:
    r1, r2 = Region((Box(1, 2, 3, 4),)), Region((Box(1, 2, 3, 5),))
    assert VisualInput("a.jpg", r1).key() != VisualInput("a.jpg", r2).key()
    assert VisualInput("a.jpg", r1).key() == VisualInput("a.jpg", r1).key()
    assert VisualInput.video("a.mp4").key() != VisualInput.video("a.mp4", ((0.0, 1.0),)).key()
    assert VisualInput("a.jpg").key() != VisualInput("a.jpg", context="a clue").key()
    premise = VisualInput("p.png", related=(VisualInput("h1.png"),))
    assert premise.key() != VisualInput("p.png", related=(VisualInput("h2.png"),)).key()
    assert VisualInput("/x/y/VG_100K/1.jpg", r1).key(portable=True) == "VG_100K/1.jpg|1,2,3,4"


def test_inputs_validate_their_parts() -> None:
    with pytest.raises(ValueError, match="video"):
        VisualInput("a.jpg", spans=((0.0, 1.0),))
    with pytest.raises(ValueError, match="span"):
        VisualInput.video("a.mp4", ((2.0, 1.0),))
    with pytest.raises(ValueError, match="needs media"):
        VisualInput(None, Region((Box(0, 0, 1, 1),)))


def test_features_and_without() -> None:
    hypothesis = VisualInput("h.png", Region((Box(0, 0, 2, 2),)), context="a description")
    premise = VisualInput("p.png", context="the premise", related=(hypothesis,))
    assert premise.features() == {"image", "context", "related", "region"}
    assert premise.without(frozenset({"context"})).features() == {"image", "related", "region"}
    text_only = premise.without(frozenset({"image", "related"}))
    assert text_only == VisualInput(None, context="the premise")
    clip = VisualInput.video("v.mp4", ((0.0, 2.5), (3.0, 4.0)))
    assert clip.features() == {"video"} and clip.without(frozenset({"image"})) is clip


@pytest.mark.parametrize(
    "text, expected",
    [
        ("random", Spec("random")),
        ("random:7", Spec("random", "7")),
        ("clip:ViT-B-16@openai", Spec("clip", "ViT-B-16", "openai")),
        ("clip:/path/to/checkpoint.pt", Spec("clip", "/path/to/checkpoint.pt")),
        ("clip:/runs/a@3/ckpt.pt", Spec("clip", "/runs/a@3/ckpt.pt")),
        ("clip@openai", Spec("clip", None, "openai")),
        ("clip:RN50x64@openai", Spec("clip", "RN50x64", "openai")),
        ("clip:tiny@openai,mode=plain,images=pad", Spec("clip", "tiny", "openai", (("mode", "plain"), ("images", "pad")))),
        ("bertscore,num-layers=17", Spec("bertscore", options=(("num_layers", "17"),))),
        ('t5:tiny,prompt="clue: {}, then"', Spec("t5", "tiny", options=(("prompt", "clue: {}, then"),))),
    ],
)
def test_spec_parse(text: str, expected: Spec) -> None:
    assert Spec.parse(text) == expected
    assert Spec.parse(str(Spec.parse(text))) == expected


@pytest.mark.parametrize("bad", ["", ":x", "clip:", "clip:@openai", "clip:tiny,mode", "clip:tiny,=x", 'x,a="b'])
def test_spec_errors(bad: str) -> None:
    with pytest.raises(AbductError):
        Spec.parse(bad)


def test_minus_o_is_a_synonym_and_twice_is_an_error() -> None:
    assert Spec.parse("cider").with_options(["model=x"]) == Spec.parse("cider,model=x")
    with pytest.raises(AbductError, match="twice"):
        Spec.parse("cider,a=1").with_options(["a=2"]).option_dict()


def factory(spec: Spec, settings: Settings, *, beams: int = 1, scale: float = 1.0, greedy: bool = True,
            mode: Literal["a", "b"] = "a", root: Path | None = None, name: str = "x") -> None:
    return None


def test_options_are_typed_by_the_factory_signature() -> None:
    given = {"beams": "4", "scale": "0.5", "greedy": "false", "mode": "b", "root": "none", "name": "7"}
    assert bind_options("model", "m", factory, given) == {
        "beams": 4, "scale": 0.5, "greedy": False, "mode": "b", "root": None, "name": "7"}
    assert bind_options("model", "m", factory, {"root": "/d", "beams": 3}) == {"root": Path("/d"), "beams": 3}


@pytest.mark.parametrize(
    "given, message",
    [
        ({"beam": "2"}, "has no option 'beam'; did you mean 'beams'? (valid: beams=1, scale=1.0"),
        ({"beams": "two"}, "option 'beams': 'two' is not an integer"),
        ({"greedy": "maybe"}, "is not a boolean"),
        ({"mode": "c"}, "'c' is not one of a, b"),
    ],
)
def test_option_errors_name_the_option(given: dict[str, str], message: str) -> None:
    with pytest.raises(AbductError, match="model 'm'") as err:
        bind_options("model", "m", factory, given)
    assert message in str(err.value)


def test_a_factory_with_kwargs_takes_unlisted_options_as_text() -> None:
    def wrapper(spec: Spec, settings: Settings, *, beams: int = 1, **model_args: str) -> None: ...

    def strict(spec: Spec, settings: Settings, *, beams: int = 1) -> None: ...

    given = {"beams": "4", "pretrained": "/models/x", "batch_size": "2"}
    assert bind_options("model", "w", wrapper, given) == {"beams": 4, "pretrained": "/models/x", "batch_size": "2"}
    with pytest.raises(AbductError, match="has no option 'pretrained'"):
        bind_options("model", "s", strict, given)
