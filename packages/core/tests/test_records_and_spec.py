import pytest

from abduct import AbductError, Box, ModelSpec, Region, VisualInput


def test_iou_hand_computed() -> None:
    a, b = Box(0, 0, 10, 10), Box(5, 0, 10, 10)
    assert a.iou(b) == pytest.approx(50 / 150)
    assert a.iou(a) == 1.0
    assert a.iou(Box(20, 20, 1, 1)) == 0.0
    assert Box(0, 0, 0, 0).iou(Box(0, 0, 0, 0)) == 0.0


def test_region_needs_a_box() -> None:
    with pytest.raises(ValueError):
        Region(())


def test_visual_key_distinguishes_regions() -> None:
    r1, r2 = Region((Box(1, 2, 3, 4),)), Region((Box(1, 2, 3, 5),))
    assert VisualInput("a.jpg", r1).key() != VisualInput("a.jpg", r2).key()
    assert VisualInput("a.jpg", r1).key() == VisualInput("a.jpg", r1).key()
    assert VisualInput("a.jpg").key() != VisualInput("a.jpg", span=(0.0, 1.0)).key()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("random", ModelSpec("random")),
        ("random:7", ModelSpec("random", "7")),
        ("clip:ViT-B-16@openai", ModelSpec("clip", "ViT-B-16", "openai")),
        ("clip:/path/to/checkpoint.pt", ModelSpec("clip", "/path/to/checkpoint.pt")),
        ("clip:/runs/a@3/ckpt.pt", ModelSpec("clip", "/runs/a@3/ckpt.pt")),
        ("clip@openai", ModelSpec("clip", None, "openai")),
        ("clip:RN50x64@openai", ModelSpec("clip", "RN50x64", "openai")),
    ],
)
def test_spec_parse(text: str, expected: ModelSpec) -> None:
    assert ModelSpec.parse(text) == expected
    assert str(ModelSpec.parse(text)) == text


@pytest.mark.parametrize("bad", ["", ":x", "clip:", "clip:@openai"])
def test_spec_errors(bad: str) -> None:
    with pytest.raises(AbductError):
        ModelSpec.parse(bad)
