"""The synthetic world's vocabulary: scenes (image backgrounds), objects (shapes in boxes)
and how clues and inferences are phrased.

The regularities a model can learn: the clue names what is drawn in the region (colour and
shape); the inference depends on the object *and* on the scene around it (who would use
that object there), plus the object's colour and side of the image, so inference texts are
nearly unique within a retrieval chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class Scene:
    name: str
    colors: tuple[RGB, RGB]
    pattern: str  # how the two colours are laid out
    actor: str  # who is around in this scene


SCENES = (
    Scene("beach", ((135, 206, 235), (238, 214, 175)), "horizon", "a sunbather"),
    Scene("snowfield", ((248, 248, 252), (190, 200, 215)), "dots", "a skier"),
    Scene("forest", ((30, 95, 40), (90, 60, 30)), "vstripes", "a hiker"),
    Scene("night street", ((18, 18, 48), (240, 210, 60)), "lamps", "a late commuter"),
    Scene("kitchen", ((235, 225, 200), (170, 120, 80)), "checker", "the cook"),
    Scene("office", ((200, 200, 205), (90, 110, 140)), "grid", "an office worker"),
    Scene("swimming pool", ((60, 190, 200), (250, 250, 250)), "waves", "a swimmer"),
    Scene("farm", ((170, 190, 60), (120, 80, 40)), "hstripes", "the farmer"),
)


@dataclass(frozen=True)
class ObjectKind:
    name: str
    plural: str
    shape: str
    verb: str  # what the scene's actor did with it


OBJECTS = (
    ObjectKind("umbrella", "umbrellas", "umbrella", "left"),
    ObjectKind("ball", "balls", "circle", "was playing with"),
    ObjectKind("bottle", "bottles", "bottle", "drank from"),
    ObjectKind("dog", "dogs", "dog", "is walking"),
    ObjectKind("car", "cars", "car", "drove"),
    ObjectKind("book", "books", "book", "was reading"),
    ObjectKind("cup", "cups", "cup", "was drinking from"),
    ObjectKind("bag", "bags", "bag", "forgot"),
)

COLORS: dict[str, RGB] = {
    "red": (220, 30, 30),
    "blue": (30, 60, 220),
    "yellow": (250, 220, 20),
    "green": (30, 180, 60),
    "white": (255, 255, 255),
    "black": (10, 10, 10),
    "purple": (140, 40, 170),
    "orange": (250, 140, 20),
}


def side_of(center_x: float, width: float) -> str:
    third = center_x / width
    return "on the left" if third < 1 / 3 else ("in the middle" if third < 2 / 3 else "on the right")


def clue_text(obj: ObjectKind, color: str, count: int) -> str:
    if count == 0:
        return f"a tiny {color} speck"
    if count == 1:
        return f"a {color} {obj.name}"
    return f"two {color} {obj.plural}"


def inference_text(scene: Scene, obj: ObjectKind, color: str, side: str, count: int) -> str:
    """A function of (object, scene) plus the region's colour and side."""
    if count == 0:
        return f"{scene.actor} dropped something {color} {side}"
    thing = f"the {color} {obj.name}" if count == 1 else f"the two {color} {obj.plural}"
    return f"{scene.actor} {obj.verb} {thing} {side}"
