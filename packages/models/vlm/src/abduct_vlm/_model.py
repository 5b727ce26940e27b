"""The ``vlm`` model: any image-text-to-text model transformers loads, through its processor
and chat template.

- **generates** from the prompt (``prompts.Prompts``) and the input's images in order (the
  media, then each related input's: NL-EYE's premise and hypotheses), regions drawn with the
  Sherlock highlight (``abduct_modelkit.drawing``);
- **scores** a candidate by its log-likelihood as the model's answer (mean over its tokens,
  or the sum), or the log-likelihood of a fixed answer such as "yes" (``score=answer``, and
  whenever the candidate is no text but the images).

Batches are left-padded, so every row's answer ends at the last position: scoring keeps only
the logits of the answer tokens (``logits_to_keep``). ``torch.inference_mode`` throughout;
bf16 weights on GPU; ``device_map`` for models larger than one GPU.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
import torch
from PIL import Image

from abduct import AbductError, Decoding, GenerationRequest, Range, Settings, Spec, TextPool, VisualInput
from abduct.kit.reasoning import Reasoning
from abduct_modelkit import is_small_on_cpu, one_thread_if, torch_seeded
from abduct_vlm._loading import Loaded, chat_prompt, first_line, load
from abduct_vlm.images import input_images
from abduct_vlm.prompts import Prompts, ScoreMode

# Architectures whose processors take one image per prompt.
SINGLE_IMAGE = {"blip-2", "instructblip", "paligemma", "pix2struct", "git", "kosmos-2", "fuyu"}
VIDEO_FRAMES = 8


def video_available() -> bool:
    return importlib.util.find_spec("abduct_video") is not None


# The image processor's settings that decide the pixels a model sees (Qwen2-VL's pixel bounds,
# LLaVA's shortest edge and crop, LLaVA-NeXT's grid), as transformers names them.
IMAGE_RULE = ("do_resize", "size", "crop_size", "do_center_crop", "min_pixels", "max_pixels", "patch_size",
              "merge_size", "image_grid_pinpoints", "do_pad")


def image_processor_facts(processor: Any) -> dict[str, Any]:
    """The image processor's class and its resize rule (``IMAGE_RULE``), unset values left out."""
    images = getattr(processor, "image_processor", None)
    if images is None:
        return {}
    facts: dict[str, Any] = {"processor": type(images).__name__}
    for name in IMAGE_RULE:
        value = _plain(getattr(images, name, None))
        if value is not None and value != {}:
            facts[name] = value
    resample = getattr(images, "resample", None)
    if isinstance(resample, int):
        facts["resample"] = Image.Resampling(resample).name.lower()
    return facts


def _plain(value: Any) -> Any:
    """A processor setting as JSON values: a SizeDict or dict without its unset entries."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    items = value.items() if hasattr(value, "items") else vars(value).items() if hasattr(value, "__dict__") else None
    if items is None:
        return str(value)
    return {str(k): _plain(v) for k, v in items if v is not None}


class VisionLanguageModel:
    """A generating and scoring VLM (see the module docstring)."""

    reasoning = Reasoning("auto")  # reasoning=: how the generation engine splits each reply

    def __init__(self, loaded: Loaded, prompts: Prompts, *, batch_size: int = 8, max_images: int | None = None,
                 reduce: Literal["mean", "sum"] = "mean", name: str = "vlm", decode_timeout: float = 120.0) -> None:
        self.model: Any = loaded.model
        self.processor: Any = loaded.processor
        self.tokenizer: Any = getattr(self.processor, "tokenizer", self.processor)
        self.tokenizer.padding_side = "left"  # every row's last token is at the last position
        self.usage = {"requests": 0, "prompt": 0, "completion": 0}  # generate's tokens (``_count``)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.device = next(self.model.parameters()).device
        self.dtype = next(self.model.parameters()).dtype
        self._small = is_small_on_cpu(self.model, self.device)  # one CPU thread for vlm:tiny
        self.prompts = prompts
        self.batch_size = max(1, int(batch_size))
        self.max_images = max_images if max_images is not None else (1 if loaded.model_type in SINGLE_IMAGE else None)
        self.reduce = reduce
        self.name = name
        self.accepts = frozenset({"image", "region", "context", "related"} | ({"video"} if video_available() else set()))
        self._keep_logits = "logits_to_keep" in inspect.signature(self.model.forward).parameters
        self._sampler: Any = None
        self.decode_timeout = decode_timeout
        self.fingerprint = f"{loaded.fingerprint}|{prompts.describe()}|reduce={reduce}|max_images={self.max_images}"

    # -- inputs ------------------------------------------------------------------------------
    def images(self, visual: VisualInput) -> list[Image.Image]:
        """The images of ``visual`` in order, each region drawn; a video gives its frames."""
        return input_images(visual, model=self.name, max_images=self.max_images,
                            frames=self._frames if video_available() else None)

    def _frames(self, part: VisualInput) -> list[Image.Image]:
        """``VIDEO_FRAMES`` frames sampled uniformly from each of the part's spans (the whole
        video when it has none), decoded by abduct-video in a worker process: a video that
        stalls the decoder for ``decode_timeout`` seconds is a VideoError, never a hung run."""
        if self._sampler is None:
            video = importlib.import_module("abduct_video")
            backend = "decord" if importlib.util.find_spec("decord") is not None else "pyav"
            self._sampler = video.FrameSampler(video.SamplingSettings(frames_per_span=VIDEO_FRAMES),
                                               backend=backend, workers=1, timeout=self.decode_timeout)
        clips = self._sampler.frames(VisualInput.video(str(part.media), part.spans))
        return [Image.fromarray(frame) for clip in clips for frame in clip]

    def describe_inputs(self) -> dict[str, Any]:
        """What shaped the inputs (results.json's ``model.inputs``): the processor's image rule and,
        once a video was decoded, how its frames were sampled and by which backend."""
        facts: dict[str, Any] = {"image": {**image_processor_facts(self.processor), "max_images": self.max_images}}
        if self._sampler is not None:
            settings = self._sampler.settings
            facts["video"] = {"frames_per_clip": settings.frames_per_span, "sampling": settings.mode,
                              "frame_size": settings.size if settings.size is not None else "as decoded",
                              "decode_backend": self._sampler.backend}
        return facts

    def chat(self, text: str, images: int) -> str:
        """The model's own chat format for one user turn: ``images`` images, then ``text``."""
        try:
            return chat_prompt(self.processor, text, images)
        except Exception as exc:  # checked at load; an input the probe did not cover can still trip it
            raise AbductError(f"model '{self.name}': the chat template fails on an input with {images} image(s): "
                              f"{first_line(exc)}") from None

    def _encode(self, texts: list[str], images: list[list[Image.Image]]) -> Any:
        flat = [image for row in images for image in row]
        batch = self.processor(text=texts, images=flat or None, padding=True, return_tensors="pt")
        return batch.to(self.device, dtype=self.dtype) if flat else batch.to(self.device)

    # -- generation --------------------------------------------------------------------------
    def _generation_kwargs(self, decoding: Decoding) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"max_new_tokens": decoding.max_new_tokens, "num_beams": decoding.num_beams,
                                  "do_sample": decoding.do_sample, "pad_token_id": self.tokenizer.pad_token_id}
        if decoding.do_sample:
            kwargs.update(temperature=decoding.temperature, top_p=decoding.top_p, top_k=0)
        return kwargs

    def _generate(self, texts: list[str], images: list[list[Image.Image]], kwargs: dict[str, Any]) -> list[str]:
        batch = self._encode(texts, images)
        with torch.inference_mode(), one_thread_if(self._small):
            made = self.model.generate(**batch, **kwargs)
        new = made[:, batch["input_ids"].shape[1] :]
        self._count(batch, new)
        return [t.strip() for t in self.tokenizer.batch_decode(new, skip_special_tokens=True)]

    def _count(self, batch: Any, new: Any) -> None:
        """The token ledger (read as ``usage`` by the run): the prompt's tokens, padding left out,
        and the tokens generated up to the padding that follows an ended row."""
        mask = batch.get("attention_mask")
        prompt = int(mask.sum()) if mask is not None else int(batch["input_ids"].numel())
        pad = getattr(self.tokenizer, "pad_token_id", None)
        completion = int((new != pad).sum()) if pad is not None else int(new.numel())
        self.usage["requests"] += int(new.shape[0])
        self.usage["prompt"] += prompt
        self.usage["completion"] += completion

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        """Greedy and beam search run in batches of ``batch_size`` (left padding is masked, so a
        text does not depend on its batch); sampling runs one request at a time, seeded by
        ``decoding.seed_for``."""
        images = [self.images(r.visual) for r in requests]
        texts = [self.chat(self.prompts.generation(r.visual, r.prompt), len(im)) for r, im in zip(requests, images)]
        kwargs = self._generation_kwargs(decoding)
        out: list[str] = []
        if not decoding.do_sample:
            for s in range(0, len(texts), self.batch_size):
                out += self._generate(texts[s : s + self.batch_size], images[s : s + self.batch_size], kwargs)
            return out
        for request, text, image in zip(requests, texts, images):
            with torch_seeded(decoding.seed_for(f"{request.visual.key(portable=True)}\x00{request.prompt or ''}")):
                out += self._generate([text], [image], kwargs)
        return out

    # -- scoring -----------------------------------------------------------------------------
    def _answer_length(self, prompt: str, answer: str) -> int:
        """Tokens the answer adds after the prompt (counted on the joined text, as the model sees it)."""
        whole = self.tokenizer(prompt + answer, add_special_tokens=False)["input_ids"]
        head = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        return max(1, len(whole) - len(head))

    def _log_likelihoods(self, prompts: list[str], answers: list[str], images: list[list[Image.Image]]) -> np.ndarray:
        lengths = [self._answer_length(p, a) for p, a in zip(prompts, answers)]
        batch = self._encode([p + a for p, a in zip(prompts, answers)], images)
        ids = batch["input_ids"]
        keep = max(lengths) + 1
        extra = {"logits_to_keep": keep} if self._keep_logits else {}
        with torch.inference_mode(), one_thread_if(self._small):
            logits = self.model(**batch, **extra).logits[:, -keep:-1].float()
        targets = ids[:, -keep + 1 :]
        logp = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        positions = torch.arange(keep - 1, device=logp.device)
        counts = torch.tensor(lengths, device=logp.device)
        mask = positions.unsqueeze(0) >= (keep - 1 - counts).unsqueeze(1)  # the last n_i positions of row i
        total = (logp * mask).sum(dim=1)
        values = total / counts if self.reduce == "mean" else total
        return np.asarray(values.double().cpu().numpy())

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        if len(visuals) != len(texts):
            raise ValueError("score() needs as many visuals as texts")
        images = [self.images(v) for v in visuals]
        asked = [self.prompts.scoring(v, t) for v, t in zip(visuals, texts)]
        prompts = [self.chat(prompt, len(im)) for (prompt, _), im in zip(asked, images)]
        answers = [answer for _, answer in asked]
        out = np.zeros(len(texts), dtype=np.float64)
        for s in range(0, len(texts), self.batch_size):
            part = slice(s, s + self.batch_size)
            out[part] = self._log_likelihoods(prompts[part], answers[part], images[part])
        return out


def make_vlm(spec: Spec, settings: Settings, *, template: str | None = None, score_template: str | None = None,
             answer_template: str | None = None, question: str | None = None, answer: str = "yes",
             score: ScoreMode = "auto", reduce: Literal["mean", "sum"] = "mean",
             max_images: Annotated[int | None, Range(ge=1)] = None, dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto", device_map: str | None = None,
             decode_timeout: Annotated[float, Range(gt=0)] = 120.0, reasoning: str = "auto") -> VisionLanguageModel:
    """``vlm:DIR|NAME|tiny[,template=...][,score_template=...][,answer_template=...][,question=...]
    [,answer=yes][,score=auto|text|answer][,reduce=mean|sum][,max_images=N][,dtype=auto|float32|bfloat16|float16]
    [,device_map=auto][,decode_timeout=120][,reasoning=auto|none|TAG|REGEX]``; ``--batch-size`` rows go through the model at once (see the package README for the templates' defaults)."""
    if spec.tag is not None:
        raise AbductError(f"vlm takes no @tag (got '@{spec.tag}'); name the model as vlm:DIR or vlm:NAME")
    given = {k: v for k, v in (("template", template), ("score_template", score_template),
                               ("answer_template", answer_template), ("question", question)) if v is not None}
    prompts = Prompts(**given, answer=answer, score=score)  # checked before any weight is read
    split = Reasoning.parse(reasoning, str(Spec(spec.name, spec.argument)))
    device = "cpu" if device_map is not None else settings.torch_device()
    loaded = load(spec.argument, device=device, dtype=dtype, device_map=device_map)
    made = VisionLanguageModel(loaded, prompts, batch_size=settings.batch_size, max_images=max_images, reduce=reduce,
                               name=str(Spec(spec.name, spec.argument)), decode_timeout=decode_timeout)
    made.reasoning = split  # read by the generation engine, which splits every reply (abduct.kit.reasoning)
    return made
