"""``setup=captions``: generator-written captions (the paper's third setup).

A captioning model, named by the task option ``captioner=SPEC`` (any model spec that
generates; quote it when it has options: ``captioner="blip2:x,max_new_tokens=30"``), first
writes one caption for each of the three images of a sample, each asked alone with
``CAPTION_PROMPT``; the evaluated model then answers on the text-only setup with those
captions in place of the gold descriptions. The captioner is built with the run's settings
(device, batch size, seed) and registry, its decoding options from its spec, and runs
through its own ``GenerationEngine``: identical images are captioned once, and when the
run keeps a cache (a model with a fingerprint, without ``--no-cache``) the captions are
cached beside the run's texts under the captioner's own fingerprint. The captioning stage
goes through ``run.map_units`` (stage ``captions``), so an interrupted run resumes, and the
captions are written into every prediction record (``captions: [premise, hypothesis1,
hypothesis2]``). The captioner is given no text pool, so ``random`` cannot caption.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from abduct import AbductError, Generating, GenerationRequest, RunContext, VisualInput
from abduct.kit import batched
from abduct_nleye.records import NleyeSample

CAPTION_PROMPT = "Describe this image in one sentence."


def check_captioner(setup: str, captioner: str | None) -> None:
    """One line when ``setup=captions`` lacks ``captioner`` or another setup is given one."""
    if setup == "captions" and not captioner:
        raise AbductError("setup=captions needs captioner=SPEC (a model that generates, e.g. captioner=blip2:...)")
    if setup != "captions" and captioner:
        raise AbductError(f"captioner= applies only with setup=captions (setup is {setup})")


def captioner_engine(run: RunContext, spec: str) -> Generating:
    """The captioner's own generation engine (see the module docstring)."""
    return run.generator_for(spec, role="captioner")


def caption_samples(run: RunContext, samples: Sequence[NleyeSample], spec: str) -> tuple[list[NleyeSample], dict[str, list[str]]]:
    """``samples`` with captions as their descriptions, and ``{sample_id: [premise, h1, h2]}``."""
    engine = captioner_engine(run, spec)

    def write(batch: Sequence[NleyeSample]) -> list[dict[str, Any]]:
        requests = [GenerationRequest(VisualInput(path), CAPTION_PROMPT)
                    for s in batch for path in (s.premise_image, *s.hypothesis_images)]
        texts = engine.generate(requests)
        return [{"id": s.sample_id, "captions": [t.strip() for t in texts[3 * i: 3 * i + 3]]}
                for i, s in enumerate(batch)]

    records = run.map_units("captions", [(b[0].sample_id, b) for b in batched(samples, 16)], write)
    captions = {str(r["id"]): list(r["captions"]) for r in records}
    captioned = [replace(s, premise_text=captions[s.sample_id][0],
                         hypothesis_texts=(captions[s.sample_id][1], captions[s.sample_id][2])) for s in samples]
    return captioned, captions
