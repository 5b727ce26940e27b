"""The ``vlm`` model: any image-text-to-text model transformers loads, through its processor
and chat template.

- **generates** from the prompt (``prompts.Prompts``) and the input's images in order (the
  media, then each related input's: NL-EYE's premise and hypotheses), regions drawn with the
  Sherlock highlight (``abduct_modelkit.drawing``); with ``reasoning_budget=N``, in two phases
  (``_generate_budgeted``): the reasoning for at most N tokens, then the answer for its own
  ``max_new_tokens``;
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
from transformers import StoppingCriteria, StoppingCriteriaList

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
                 reduce: Literal["mean", "sum"] = "mean", name: str = "vlm", decode_timeout: float = 120.0,
                 reasoning_budget: int | None = None, reasoning_tag: str = "think") -> None:
        self.model: Any = loaded.model
        self.processor: Any = loaded.processor
        self.tokenizer: Any = getattr(self.processor, "tokenizer", self.processor)
        self.tokenizer.padding_side = "left"  # every row's last token is at the last position
        self.usage = {"requests": 0, "prompt": 0, "completion": 0, "reasoning": 0}  # generate's tokens (``_count``)
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
        self.reasoning_budget = reasoning_budget  # None: one generation of max_new_tokens (see _generate_budgeted)
        self.reasoning_tag = reasoning_tag
        self.fingerprint = f"{loaded.fingerprint}|{prompts.describe()}|reduce={reduce}|max_images={self.max_images}"
        if reasoning_budget is not None:  # unset: the fingerprints (and cached texts) of before
            self.fingerprint += f"|reasoning_budget={reasoning_budget}|reasoning_tag={reasoning_tag}"

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
        if self.reasoning_budget is not None:
            facts["reasoning"] = {"budget": self.reasoning_budget, "closing": f"</{self.reasoning_tag}>"}
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
        if self.reasoning_budget is not None:
            return self._generate_budgeted(texts, images, batch, kwargs)
        new = self._run(batch, kwargs)
        self._count(batch, new)
        made = [t.strip() for t in self.tokenizer.batch_decode(new, skip_special_tokens=True)]
        return [self._opened_by_template(text, reply) for text, reply in zip(texts, made)]

    def _opened_by_template(self, prompt: str, reply: str) -> str:
        """The reply as the model wrote it after its prompt: a chat template that opens ``<TAG>``
        (Qwen3's, DeepSeek-R1's) leaves the opening tag out of the reply, and a reasoning cut off
        at ``max_new_tokens`` would then read as an answer; with the tag put back, the split
        (``abduct.kit.reasoning``) finds it unfinished."""
        opening = f"<{self.reasoning_tag}>"
        if self.reasoning.mode not in ("auto", "tag") or not prompt.rstrip().endswith(opening):
            return reply
        return reply if reply.startswith(opening) else opening + reply

    def _run(self, batch: Any, kwargs: dict[str, Any]) -> Any:
        """The tokens ``model.generate`` adds after the batch's prompts (finished rows padded)."""
        with torch.inference_mode(), one_thread_if(self._small):
            made = self.model.generate(**batch, **kwargs)
        return made[:, batch["input_ids"].shape[1] :]

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

    def _ids(self, row: Any) -> list[int]:
        """A row of generated tokens as a list, without the padding after its end."""
        ids: list[int] = row.tolist()
        pad = self.tokenizer.pad_token_id
        while ids and ids[-1] == pad:
            ids.pop()
        return ids

    def _generate_budgeted(self, texts: list[str], images: list[list[Image.Image]], batch: Any,
                           kwargs: dict[str, Any]) -> list[str]:
        """``reasoning_budget=N``: the reasoning and the answer get separate limits, as a server's
        thinking budget does (vLLM's ``thinking_token_budget``). Phase 1 generates at most N tokens
        and stops a row at its closing tag ``</TAG>``. Then, per row:

        - the reasoning closed: the answer follows with its own ``max_new_tokens``;
        - N tokens spent inside an open reasoning (the reply began with ``<TAG>``, or the chat
          template opened it): ``</TAG>`` is forced (appended as tokens) and the answer follows
          with its own ``max_new_tokens``;
        - the row ended (end of sequence): its text is final;
        - no reasoning at all: the reply continues to ``max_new_tokens`` tokens in all, as
          without a budget.

        Phase 2 continues each row from its prompt's and phase 1's token ids (not re-read text,
        so nothing is re-tokenised). The ledger counts the prompt once; completion counts every
        token generated (a forced closing tag included), ``reasoning`` the phase-1 tokens of rows
        that reasoned."""
        budget, limit = int(self.reasoning_budget or 0), int(kwargs["max_new_tokens"])
        opening, closing = f"<{self.reasoning_tag}>", f"</{self.reasoning_tag}>"
        closing_ids: list[int] = self.tokenizer(closing, add_special_tokens=False)["input_ids"]
        stop = _Closed(self.tokenizer, closing, start=batch["input_ids"].shape[1], window=2 * len(closing_ids) + 4)
        first = self._run(batch, {**kwargs, "max_new_tokens": budget, "stopping_criteria": StoppingCriteriaList([stop])})
        self._count(batch, first)
        ends = self.model.generation_config.eos_token_id
        ends = set(ends if isinstance(ends, list) else [ends] if ends is not None else [])
        replies: list[list[int]] = []
        more: list[int] = []  # tokens still to generate per row (0: the row is done)
        for text, row in zip(texts, first):
            ids = self._ids(row)
            said = self.tokenizer.decode(ids, skip_special_tokens=False)
            if closing in said:
                more.append(limit)
                self.usage["reasoning"] += len(ids)
            elif len(ids) < budget or (ids and ids[-1] in ends):
                more.append(0)
            elif text.rstrip().endswith(opening) or said.lstrip().startswith(opening):
                self.usage["reasoning"] += len(ids)
                self.usage["completion"] += len(closing_ids)
                ids = ids + closing_ids
                more.append(limit)
            else:  # not reasoning: as one generation of max_new_tokens
                ids = ids[:limit]
                more.append(max(0, limit - budget))
            replies.append(ids)
        for n in sorted(set(more) - {0}):
            rows = [i for i, m in enumerate(more) if m == n]
            added = self._continue([texts[i] for i in rows], [images[i] for i in rows], [replies[i] for i in rows],
                                   {**kwargs, "max_new_tokens": n})
            for i, ids in zip(rows, added):
                replies[i] = replies[i] + ids
                self.usage["completion"] += len(ids)
        return [self.tokenizer.decode(ids, skip_special_tokens=True).strip() for ids in replies]

    def _continue(self, texts: list[str], images: list[list[Image.Image]], prefixes: list[list[int]],
                  kwargs: dict[str, Any]) -> list[list[int]]:
        """What each row generates after its prompt and its ``prefixes`` (token ids), left-padded
        again; tensors with a value per token (Qwen2-VL's ``mm_token_type_ids``) are extended
        with zeros (text)."""
        batch = self._encode(texts, images)
        ids, mask = batch["input_ids"], batch["attention_mask"].bool()
        width = max(int(m.sum()) + len(p) for m, p in zip(mask, prefixes))
        for key in [k for k, v in batch.items() if torch.is_tensor(v) and v.shape == ids.shape]:
            fill = self.tokenizer.pad_token_id if key == "input_ids" else 0
            grown = torch.full((len(prefixes), width), fill, dtype=batch[key].dtype, device=ids.device)
            for j, prefix in enumerate(prefixes):
                tail = prefix if key == "input_ids" else [1] * len(prefix) if key == "attention_mask" else [0] * len(prefix)
                row = torch.cat([batch[key][j][mask[j]], torch.tensor(tail, dtype=grown.dtype, device=ids.device)])
                grown[j, width - len(row) :] = row
            batch[key] = grown
        return [self._ids(row) for row in self._run(batch, kwargs)]

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


class _Closed(StoppingCriteria):
    """Stops a row once its generated text holds ``closing`` (the reasoning's closing tag),
    looking at its last ``window`` tokens."""

    def __init__(self, tokenizer: Any, closing: str, *, start: int, window: int) -> None:
        self.tokenizer, self.closing, self.start, self.window = tokenizer, closing, start, window

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs: Any) -> torch.BoolTensor:
        tails = input_ids[:, self.start :][:, -self.window :]
        said = self.tokenizer.batch_decode(tails, skip_special_tokens=False)
        return torch.tensor([self.closing in text for text in said], dtype=torch.bool, device=input_ids.device)  # type: ignore[return-value]


def make_vlm(spec: Spec, settings: Settings, *, template: str | None = None, score_template: str | None = None,
             answer_template: str | None = None, question: str | None = None, answer: str = "yes",
             score: ScoreMode = "auto", reduce: Literal["mean", "sum"] = "mean",
             max_images: Annotated[int | None, Range(ge=1)] = None, dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto", device_map: str | None = None,
             decode_timeout: Annotated[float, Range(gt=0)] = 120.0, reasoning: str = "auto",
             reasoning_budget: Annotated[int | None, Range(ge=1)] = None) -> VisionLanguageModel:
    """``vlm:DIR|NAME|tiny[,template=...][,score_template=...][,answer_template=...][,question=...]
    [,answer=yes][,score=auto|text|answer][,reduce=mean|sum][,max_images=N][,dtype=auto|float32|bfloat16|float16]
    [,device_map=auto][,decode_timeout=120][,reasoning=auto|none|TAG|REGEX][,reasoning_budget=N]``; ``--batch-size`` rows go through the model at once (see the package README for the templates' defaults)."""
    if spec.tag is not None:
        raise AbductError(f"vlm takes no @tag (got '@{spec.tag}'); name the model as vlm:DIR or vlm:NAME")
    given = {k: v for k, v in (("template", template), ("score_template", score_template),
                               ("answer_template", answer_template), ("question", question)) if v is not None}
    prompts = Prompts(**given, answer=answer, score=score)  # checked before any weight is read
    split = Reasoning.parse(reasoning, str(Spec(spec.name, spec.argument)))
    if reasoning_budget is not None and split.mode not in ("auto", "tag"):
        raise AbductError(f"{Spec(spec.name, spec.argument)}: reasoning_budget needs a closing tag to force: "
                          f"reasoning=auto (<think>) or reasoning=TAG, not reasoning={split}")
    device = "cpu" if device_map is not None else settings.torch_device()
    loaded = load(spec.argument, device=device, dtype=dtype, device_map=device_map)
    made = VisionLanguageModel(loaded, prompts, batch_size=settings.batch_size, max_images=max_images, reduce=reduce,
                               name=str(Spec(spec.name, spec.argument)), decode_timeout=decode_timeout,
                               reasoning_budget=reasoning_budget, reasoning_tag=split.value or "think")
    made.reasoning = split  # read by the generation engine, which splits every reply (abduct.kit.reasoning)
    return made
