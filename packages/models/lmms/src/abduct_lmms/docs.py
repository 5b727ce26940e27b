"""One abduct request as one lmms-eval document, and back.

A document is what both sides hand an lmms-eval model: ``text`` (the request's prompt filled
in by abduct-vlm's default templates, as ``vlm:`` asks it), ``visual`` (the request's input as
JSON, whose images ``doc_to_visual`` renders as ``vlm:`` does: regions drawn, related inputs
in order), ``target`` (the continuation whose log-likelihood is asked, for scoring) and ``key``
(the request's identity, by which lmms-eval's answers are handed back to abduct's scoring).
``lmms:`` and the exported task build their documents with these same functions, so the model
sees the same thing either way.

A video input is handed over as lmms-eval's video tasks hand theirs (``videomme``, ``nextqa``):
``doc_to_visual`` returns the video files' paths, the input's and then each related input's, in
order, and the lmms-eval class samples the frames its own way. So only whole files can be
expressed: ``inexpressible`` names what cannot (time spans, a region on a video, images and
videos in one input, a video file whose extension lmms-eval reads as an image or audio).
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any

from PIL import Image

from abduct import Box, GenerationRequest, Region, VisualInput
from abduct_vlm.images import input_images
from abduct_vlm.prompts import Prompts, visual_parts

PROMPTS = Prompts()
# lmms-eval 0.7.3 (api/task.py, ConfigurableMessagesTask._visual_to_content) sends a chat model a
# path with one of these extensions as an image or as audio, every other path as a video
NOT_READ_AS_VIDEO = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tiff", ".webp",
                     ".wav", ".mp3", ".m4a", ".aac", ".flac", ".ogg", ".opus", ".webm"}


def encode_visual(visual: VisualInput) -> dict[str, Any]:
    return {
        "media": visual.media, "kind": visual.kind, "context": visual.context,
        "region": None if visual.region is None else [[b.left, b.top, b.width, b.height] for b in visual.region.boxes],
        "spans": [list(s) for s in visual.spans], "related": [encode_visual(r) for r in visual.related],
    }


def decode_visual(data: dict[str, Any]) -> VisualInput:
    region = None if data["region"] is None else Region(tuple(Box(*b) for b in data["region"]))
    return VisualInput(media=data["media"], region=region, context=data["context"],
                       spans=tuple((float(s), float(e)) for s, e in data["spans"]),
                       related=tuple(decode_visual(r) for r in data["related"]), kind=data["kind"])


def inexpressible(visual: VisualInput) -> str | None:
    """What of ``visual`` an lmms-eval document cannot carry, in words; None when it can."""
    parts = [p for p in visual_parts(visual) if p.media is not None]
    videos = [p for p in parts if p.kind == "video"]
    if not videos:
        return None
    if len(videos) < len(parts):
        return "images and videos in one input"
    for part in videos:
        if part.spans:
            return "video inputs with time spans (the export hands lmms-eval whole video files)"
        if part.region is not None:
            return "a region on a video"
        if PurePath(part.media or "").suffix.lower() in NOT_READ_AS_VIDEO:
            return f"a video file whose extension lmms-eval reads as an image or audio ({part.media})"
    return None


def request_key(visual: VisualInput, text: str) -> str:
    """The identity of one request: its input and the text asked (prompt, or prompt and continuation)."""
    return f"{visual.key()}\x00{text}"


def generation_doc(request: GenerationRequest) -> dict[str, Any]:
    text = PROMPTS.generation(request.visual, request.prompt)
    return {"key": request_key(request.visual, text), "text": text, "target": "",
            "visual": json.dumps(encode_visual(request.visual))}


def scoring_doc(visual: VisualInput, candidate: str) -> dict[str, Any]:
    prompt, answer = PROMPTS.scoring(visual, candidate)
    return {"key": request_key(visual, f"{prompt}\x00{answer}"), "text": prompt, "target": answer,
            "visual": json.dumps(encode_visual(visual))}


def doc_to_visual(doc: dict[str, Any]) -> list[Image.Image] | list[str]:
    """The images as ``vlm:`` renders them; for a video input, its files' paths in order."""
    visual = decode_visual(json.loads(doc["visual"]))
    if any(p.kind == "video" and p.media is not None for p in visual_parts(visual)):
        return [str(p.media) for p in visual_parts(visual) if p.media is not None]
    return input_images(visual, model="lmms-eval")


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
    return str(doc["text"])


def doc_to_target(doc: dict[str, Any]) -> str:
    return str(doc["target"])
