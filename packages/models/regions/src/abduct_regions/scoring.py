"""The scorer both cross-encoders are: one forward pass per (visual, text) pair.

A family (``lxmert``, ``uniter``) gives a torch module taking BERT-style text inputs and
padded visual tokens and returning one score per pair, plus its position kind (4-d or 7-d
boxes); this module does everything around it: visual tokens from the ``RegionFeaturizer``,
the text as ``[CLS] context [SEP] text [SEP]`` (Sherlock: the clue, then the inference; CoSIm:
question [SEP] response [SEP] change, then the choice), padding, batching, the device.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from abduct import AbductError, DataError, VisualInput
from abduct.kit import read_json
from abduct_modelkit import is_small_on_cpu, one_thread_if
from abduct_regions.featurizer import SIZE_LIMITS, FeatureSettings, RegionFeaturizer, VisualTokens
from abduct_regions.positions import PositionKind, box_positions

TOKEN_MEMO = 200_000  # tokenised (context, text) pairs kept in memory
SETTINGS_FILE = "abduct_regions.json"  # a checkpoint directory's feature and text settings


class PairNet(Protocol):
    """A family's module: one score per row of the batch."""

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor,
                 visual_feats: torch.Tensor, visual_pos: torch.Tensor, visual_mask: torch.Tensor) -> torch.Tensor: ...


@dataclass(frozen=True)
class InputSettings:
    """Everything besides the weights that decides what a cross-encoder computes."""

    features: FeatureSettings = FeatureSettings()
    max_text: int = 128

    def describe(self) -> str:
        return f"{self.features.describe()}|max_text={self.max_text}"

    def save(self, directory: Path) -> None:
        (Path(directory) / SETTINGS_FILE).write_text(json.dumps({**asdict(self.features), "max_text": self.max_text}))

    @classmethod
    def load(cls, directory: Path, default: InputSettings, text_positions: int | None = None) -> InputSettings:
        """The settings ``directory`` records, or ``default``; ``max_text`` may not exceed the
        network's ``text_positions`` (a longer text would index past its position table; the
        default is cut to fit)."""
        path = Path(directory) / SETTINGS_FILE
        if not path.is_file():
            return default if text_positions is None else replace(default, max_text=min(default.max_text, text_positions))
        values = read_json(path, "abduct-regions settings file")
        if not isinstance(values, dict):
            raise DataError(f"is a JSON {type(values).__name__}, expected an object", file=path)
        limits = {**SIZE_LIMITS, "max_text": text_positions}
        for key, limit in limits.items():  # a text "600" would break much later, a huge one allocate it
            value = values.get(key, 1)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise DataError(f"is {value!r}, expected a positive integer", file=path, field=key)
            if limit is not None and value > limit:
                raise DataError(f"is {value}, at most {limit} "
                                f"{'(the text positions the weights hold)' if key == 'max_text' else 'allowed'}",
                                file=path, field=key)
        try:
            max_text = int(values.pop("max_text", default.max_text))
            return cls(FeatureSettings(**values), max_text)
        except (ValueError, TypeError) as exc:
            raise AbductError(f"{path}: not an abduct-regions settings file ({exc})") from None

    def with_options(self, max_text: int | None = None, **features: Any) -> InputSettings:
        """These settings with the options a user gave (None: keep)."""
        given = {k: v for k, v in features.items() if v is not None}
        return InputSettings(replace(self.features, **given), self.max_text if max_text is None else max_text)


def weights_digest(module: torch.nn.Module) -> str:
    digest = hashlib.blake2b(digest_size=12)
    for name, tensor in sorted(module.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def pad_tokens(tokens: Sequence[VisualTokens], kind: PositionKind) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Features ``[B, N, D]``, positions ``[B, N, P]`` and a 0/1 mask ``[B, N]`` (N: the longest)."""
    longest = max(len(t.features) for t in tokens)
    dim = tokens[0].features.shape[1]
    feats = np.zeros((len(tokens), longest, dim), dtype=np.float32)
    pos = np.zeros((len(tokens), longest, 4 if kind == "lxmert" else 7), dtype=np.float32)
    mask = np.zeros((len(tokens), longest), dtype=np.float32)
    for i, t in enumerate(tokens):
        n = len(t.features)
        feats[i, :n], pos[i, :n], mask[i, :n] = t.features, box_positions(t.boxes, kind), 1.0
    return torch.from_numpy(feats), torch.from_numpy(pos), torch.from_numpy(mask)


class CrossEncoderScorer:
    """Plausibility of ``texts[i]`` given ``visuals[i]`` from the family's module ``net``."""

    accepts = frozenset({"image", "region", "context"})
    needs = frozenset({"image"})

    def __init__(self, name: str, net: torch.nn.Module, tokenizer: Any, inputs: InputSettings,
                 position_kind: PositionKind, *, device: str = "cpu", batch_size: int = 64, seed: int = 0,
                 cache_dir: Path | None = None, source: str = "") -> None:
        self.name, self.net, self.tokenizer, self.inputs = name, net, tokenizer, inputs
        self.position_kind: PositionKind = position_kind
        self.device = torch.device(device)
        self.net.to(self.device).eval()
        self.batch_size = max(1, batch_size)
        self.featurizer = RegionFeaturizer(inputs.features, seed=seed, device=device, cache_dir=cache_dir)
        self.source = source
        self.passes = 0  # pairs run through the network (what a cascade saves)
        self._tokens: dict[tuple[str | None, str], tuple[list[int], list[int]]] = {}

    @property
    def fingerprint(self) -> str:
        """The model's identity now (weights included: training changes it)."""
        return f"{self.name}|weights={weights_digest(self.net)}|{self.inputs.describe()}|{self.featurizer.fingerprint}"

    def _encoded(self, contexts: Sequence[str | None], texts: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """(token ids, token types) of each pair, each distinct pair tokenised once (a retrieval
        row repeats its clue with every inference; tokenising was a quarter of scoring time)."""
        todo = list(dict.fromkeys(k for k in zip(contexts, texts) if k not in self._tokens))
        if todo:
            if len(self._tokens) + len(todo) > TOKEN_MEMO:
                self._tokens.clear()
            with_context = [k for k in todo if k[0] is not None]
            alone = [k for k in todo if k[0] is None]
            limits = {"truncation": True, "max_length": self.inputs.max_text}
            for keys, encoded in (
                (with_context, self.tokenizer([c for c, _ in with_context], [t for _, t in with_context], **limits)
                 if with_context else None),
                (alone, self.tokenizer([t for _, t in alone], **limits) if alone else None),
            ):
                if encoded is None:
                    continue
                types = encoded.get("token_type_ids") or [[0] * len(ids) for ids in encoded["input_ids"]]
                for key, ids, kinds in zip(keys, encoded["input_ids"], types):
                    self._tokens[key] = (list(ids), list(kinds))
        return [self._tokens[k] for k in zip(contexts, texts)]

    def batch(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> dict[str, torch.Tensor]:
        """The network's inputs for the pairs, on the device (also what the trainer feeds)."""
        encoded = self._encoded([v.context for v in visuals], texts)
        longest = max(len(ids) for ids, _ in encoded)
        pad = int(self.tokenizer.pad_token_id or 0)
        input_ids = torch.full((len(encoded), longest), pad, dtype=torch.long)
        token_types = torch.zeros((len(encoded), longest), dtype=torch.long)
        attention = torch.zeros((len(encoded), longest), dtype=torch.long)
        for i, (ids, kinds) in enumerate(encoded):
            input_ids[i, : len(ids)] = torch.tensor(ids)
            token_types[i, : len(ids)] = torch.tensor(kinds)
            attention[i, : len(ids)] = 1
        feats, pos, mask = pad_tokens(self.featurizer.tokens(visuals), self.position_kind)
        out = {"input_ids": input_ids, "attention_mask": attention, "token_type_ids": token_types,
               "visual_feats": feats, "visual_pos": pos, "visual_mask": mask}
        return {k: v.to(self.device) for k, v in out.items()}

    def forward(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> torch.Tensor:
        """Scores with gradients (training)."""
        self.passes += len(texts)
        scores: torch.Tensor = self.net(**self.batch(visuals, texts))
        return scores

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        if len(visuals) != len(texts):
            raise ValueError("score() needs as many visuals as texts")
        out = np.empty(len(texts), dtype=np.float64)
        self.net.eval()
        with torch.inference_mode(), one_thread_if(is_small_on_cpu(self.net, self.device)):
            for start in range(0, len(texts), self.batch_size):
                stop = start + self.batch_size
                out[start:stop] = self.forward(visuals[start:stop], texts[start:stop]).float().cpu().numpy()
        return out
