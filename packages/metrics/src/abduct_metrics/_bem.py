"""BEM answer equivalence (Bulian et al., 2022) on a BERT classifier in Hugging Face format.

Input: ``[CLS] candidate [SEP] reference [SEP] question [SEP]``. Segment ids are 0/1/2 per
part in the original layout (``segments="original"``, the TF-Hub model) or 0 for
``[CLS] candidate [SEP]`` and 1 for the rest (``segments="pairs"``, the layout of the retrained
PyTorch reproduction, whose tokenizer call is ``text="[CLS] c [SEP]", text_pair="r [SEP] q [SEP]"``).
Score = softmax(logits)[1]; equivalent iff score >= 0.5. As commonly done, exact match (see
``abduct.kit.answers``, the core's) is tried first and BEM runs only when it fails; the sample's
score is the maximum over its references.

Batches are padded to their longest input with an attention mask (the original pads every
input to 512; masked padding does not change the logits beyond float rounding). Inputs longer
than the model's position table lose tokens from their longest part first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast, get_args

from abduct import AbductError, MetricResult, Settings, Spec
from abduct.kit import exact_match, require_dir, validate_inputs
from abduct_metrics._common import SCALE, no_argument

Layout = Literal["original", "pairs"]
LAYOUTS: tuple[str, ...] = get_args(Layout)
THRESHOLD = 0.5


class Bem:
    """``bem``: share of predictions judged equivalent to one of their references."""

    def __init__(
        self,
        *,
        model: str | Path,
        segments: str = "original",
        device: str = "cpu",
        batch_size: int = 32,
    ) -> None:
        if segments not in LAYOUTS:
            raise AbductError(f"bem: segments must be one of {', '.join(LAYOUTS)}, got '{segments}'")
        if int(batch_size) < 1:
            raise AbductError("bem: batch_size must be at least 1")
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        directory = require_dir(Path(model), "BEM model directory")
        self.tokenizer = AutoTokenizer.from_pretrained(str(directory))
        loaded: Any = AutoModelForSequenceClassification.from_pretrained(str(directory))
        self.model: Any = loaded.to(device).eval()
        config = self.model.config
        if config.num_labels != 2:
            raise AbductError(f"bem: {directory} is a {config.num_labels}-label classifier, BEM needs 2")
        needed = 3 if segments == "original" else 2
        if getattr(config, "type_vocab_size", needed) < needed:
            raise AbductError(
                f"bem: the '{segments}' layout uses {needed} segment ids but {directory} has "
                f"type_vocab_size {config.type_vocab_size}; try segments='pairs'"
            )
        self.segments = segments
        self.device = device
        self.batch_size = int(batch_size)
        self.max_length = int(getattr(config, "max_position_embeddings", 512))
        self._torch = torch
        self.description = f"bem:{directory.name}:segments={segments}"

    def encode(self, candidate: str, reference: str, question: str) -> tuple[list[int], list[int]]:
        """Token ids and segment ids of one input, in the selected layout."""
        tok = self.tokenizer
        parts: list[list[int]] = [
            list(cast(list[int], tok.convert_tokens_to_ids(tok.tokenize(text))))
            for text in (candidate, reference, question)
        ]
        budget = self.max_length - 4  # [CLS] and three [SEP]
        while sum(map(len, parts)) > budget:
            longest = max(range(3), key=lambda i: len(parts[i]))
            parts[longest] = parts[longest][:-1]
        cls, sep = tok.cls_token_id, tok.sep_token_id
        ids = [cls, *parts[0], sep, *parts[1], sep, *parts[2], sep]
        first = len(parts[0]) + 2
        second = len(parts[1]) + 1
        third = len(parts[2]) + 1
        if self.segments == "original":
            types = [0] * first + [1] * second + [2] * third
        else:
            types = [0] * first + [1] * (second + third)
        return ids, types

    def probabilities(self, triples: Sequence[tuple[str, str, str]]) -> list[float]:
        """softmax(logits)[1] for each (candidate, reference, question)."""
        torch = self._torch
        out: list[float] = []
        pad = self.tokenizer.pad_token_id or 0
        for start in range(0, len(triples), self.batch_size):
            encoded = [self.encode(*t) for t in triples[start:start + self.batch_size]]
            width = max(len(ids) for ids, _ in encoded)
            ids = torch.tensor([i + [pad] * (width - len(i)) for i, _ in encoded])
            types = torch.tensor([t + [0] * (width - len(t)) for _, t in encoded])
            mask = torch.tensor([[1] * len(i) + [0] * (width - len(i)) for i, _ in encoded])
            with torch.no_grad():
                logits = self.model(input_ids=ids.to(self.device), token_type_ids=types.to(self.device),
                                    attention_mask=mask.to(self.device)).logits
            out.extend(torch.softmax(logits.double(), dim=-1)[:, 1].cpu().tolist())
        return out

    def compute(
        self,
        predictions: Mapping[str, str],
        references: Mapping[str, Sequence[str]],
        questions: Mapping[str, str] | None = None,
    ) -> MetricResult:
        if questions is None:
            raise AbductError("bem needs the questions ({id: question})")
        pred, refs, ques = validate_inputs(predictions, references, questions)
        assert ques is not None
        matched = {k: exact_match(pred[k], refs[k]) for k in pred}
        pending = [(k, (pred[k], ref, ques[k])) for k in pred if not matched[k] for ref in refs[k]]
        probs = self.probabilities([t for _, t in pending])
        best: dict[str, float] = {}
        for (key, _), p in zip(pending, probs):
            best[key] = max(best.get(key, 0.0), p)
        per_sample = {}
        for k in pred:
            score = 1.0 if matched[k] else best[k]
            # bem_score stays the classifier's probability (0-1), which THRESHOLD applies to
            per_sample[k] = {"bem": SCALE * (score >= THRESHOLD), "bem_score": score, "exact_match": SCALE * matched[k]}
        corpus = {"bem": SCALE * (sum(v["bem_score"] >= THRESHOLD for v in per_sample.values()) / len(per_sample))}
        info = {"model": self.description, "threshold": THRESHOLD, "bem_calls": len(pending)}
        return MetricResult(corpus, per_sample, info)


def make_bem(
    spec: Spec,
    settings: Settings,
    *,
    model: Path | None = None,
    segments: Layout = "original",
    batch_size: int | None = None,
) -> Bem:
    """``bem,model=DIR[,segments=original|pairs]``: ``model`` (required) is a local Hugging Face
    directory. The device is the run's (``--device``); the batch size the run's
    (``--batch-size``) unless ``batch_size`` is given."""
    no_argument(spec)
    if model is None:
        raise AbductError("bem: option 'model' (a local Hugging Face BEM directory) is required, "
                          "e.g. bem,model=path/to/bem")
    return Bem(model=model, segments=segments, device=settings.torch_device(),
               batch_size=settings.batch_size if batch_size is None else batch_size)
