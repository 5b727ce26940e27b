"""``setup=captions``: generator-written captions (the paper's third setup).

A captioning model, named by the task option ``captioner=SPEC`` (any model spec that
generates; quote it when it has options: ``captioner="blip2:x,max_new_tokens=30"``), first
writes one caption for each of the three images of a sample, each asked alone with
``CAPTION_PROMPT``; the evaluated model then answers on the text-only setup with those
captions in place of the gold descriptions. The captioning is a ``Custom`` stage named
``captions`` (so an interrupted run resumes), whose step reaches the captioner through
``models.generator_for(spec, role="captioner")``: built once per run, with the run's settings
(device, batch size, seed) and registry, its decoding options from its spec, through its own
``GenerationEngine`` (identical images are captioned once, and when the run keeps a cache — a
model with a fingerprint, without ``--no-cache`` — the captions are cached beside the run's
texts under the captioner's own fingerprint). The stage that answers is planned ``after`` it,
on the captioned samples (``captioned``), and the captions are written into every prediction
record (``captions: [premise, hypothesis1, hypothesis2]``). The captioner is given no text
pool, so ``random`` cannot caption.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, is_dataclass, replace
from typing import Any

from abduct import AbductError, Custom, Generating, GenerationRequest, Records, Request, RunModels, Stage, VisualInput
from abduct.kit import batched
from abduct_nleye.records import NleyeSample, Setup

CAPTION_PROMPT = "Describe this image in one sentence."
CAPTIONS = "captions"  # the captioning stage's name (its units' store keys)


def check_captioner(setup: str, captioner: str | None) -> None:
    """One line when ``setup=captions`` lacks ``captioner`` or another setup is given one."""
    if setup == "captions" and not captioner:
        raise AbductError("setup=captions needs captioner=SPEC (a model that generates, e.g. captioner=blip2:...)")
    if setup != "captions" and captioner:
        raise AbductError(f"captioner= applies only with setup=captions (setup is {setup})")


def caption_request(samples: Sequence[NleyeSample], spec: str) -> Custom[Sequence[NleyeSample]]:
    """The captioning stage's request: ``{id, captions: [premise, h1, h2]}`` per sample, in
    units of 16 samples."""
    built: list[Generating] = []  # the captioner, built by the first unit that runs

    def write(models: RunModels, batch: Sequence[NleyeSample]) -> Records:
        if not built:
            built.append(models.generator_for(spec, role="captioner"))
        requests = [GenerationRequest(VisualInput(path), CAPTION_PROMPT)
                    for s in batch for path in (s.premise_image, *s.hypothesis_images)]
        texts = built[0].generate(requests)
        return [{"id": s.sample_id, "captions": [t.strip() for t in texts[3 * i: 3 * i + 3]]}
                for i, s in enumerate(batch)]

    return Custom([(b[0].sample_id, b) for b in batched(samples, 16)], write)


def caption_map(done: Mapping[str, Records]) -> dict[str, list[str]] | None:
    """``{sample_id: [premise, h1, h2]}`` from the captioning stage's records; None when the
    plan has no captioning stage."""
    if CAPTIONS not in done:
        return None
    return {str(r["id"]): list(r["captions"]) for r in done[CAPTIONS]}


def captioned(samples: Sequence[NleyeSample], captions: Mapping[str, Sequence[str]] | None) -> list[NleyeSample]:
    """The samples that have captions, the captions as their descriptions (in one process all
    of them; a shard of a run, ``--shard``, holds only its own); every sample unchanged when
    ``captions`` is None (no captioning stage)."""
    if captions is None:
        return list(samples)
    return [replace(s, premise_text=captions[s.sample_id][0],
                    hypothesis_texts=(captions[s.sample_id][1], captions[s.sample_id][2]))
            for s in samples if s.sample_id in captions]


def answering(name: str, samples: Sequence[NleyeSample], setup: Setup, captioner: str | None,
              ask: Callable[[Sequence[NleyeSample]], Request]) -> list[Stage]:
    """The stage ``name`` asking ``ask(samples)``; with ``setup=captions`` the captioning stage
    first and ``name`` planned after it, on the captioned samples."""
    if setup != "captions":
        return [Stage(name, ask(samples))]
    assert captioner is not None

    def after(done: Mapping[str, Records]) -> Request:
        return ask(captioned(samples, caption_map(done)))

    return [Stage(CAPTIONS, caption_request(samples, captioner)), Stage(name, after=after)]


def with_captions(records: Sequence[Any], done: Mapping[str, Records]) -> list[dict[str, Any]]:
    """``records`` as prediction lines (a typed record as its fields), with the captions of their
    sample (``setup=captions``) written into each."""
    captions = caption_map(done)
    lines = [asdict(r) if is_dataclass(r) and not isinstance(r, type) else dict(r) for r in records]
    return lines if captions is None else [{**r, "captions": captions[str(r["id"])]} for r in lines]
