"""BERTScore on the ``bert-score`` package, with every setting that changes the number explicit.

The model (a hub name or a local Hugging Face directory), the layer, idf weighting and
baseline rescaling are options; the hash-style description bert-score builds from them
(e.g. ``roberta-large_L17_no-idf_version=...-rescaled``) is returned in ``info["hash"]``.
Values equal ``bert_score.score`` on the same input: several references per prediction take
the best one, idf weights come from the references of the call, rescaling uses bert-score's
shipped baseline for the model and language (or ``baseline_path``). Corpus values are the
means of the per-sample values.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from abduct import AbductError, MetricResult, Settings, Spec
from abduct.kit import validate_inputs
from abduct_metrics._common import SCALE, no_argument, scaled
from abduct_modelkit import HubState, hub_access, hub_cache_dir, hub_file_cached, weights_unavailable

KEYS = ("bertscore_precision", "bertscore_recall", "bertscore_f1")


def _require_weights(model: str, hub: HubState) -> None:
    """A hub name offline loads from the hub cache only; not cached, one line (no retries)."""
    if model.startswith(("/", ".", "~")) and not os.path.isdir(os.path.expanduser(model)):
        raise AbductError(f"bertscore: could not load model '{model}': no such directory")
    if not hub.online and not os.path.isdir(model) and hub_file_cached(str(model), "config.json") is None:
        raise weights_unavailable(f"bertscore model '{model}'", [
            f"a local directory {os.path.abspath(model)}", f"hub {model} in {hub_cache_dir()}"],
            how="bertscore,model=/path/to/model-dir,num_layers=N", reason=hub.reason)


class BertScore:
    """``bertscore``: precision, recall and F1 of greedy token matching in embedding space."""

    def __init__(
        self,
        *,
        model: str = "roberta-large",
        num_layers: int | None = None,
        idf: bool = False,
        rescale_with_baseline: bool = False,
        baseline_path: str | None = None,
        lang: str = "en",
        device: str = "cpu",
        batch_size: int = 64,
    ) -> None:
        with hub_access() as hub:  # before importing bert-score and transformers: fail in seconds
            _require_weights(model, hub)
        import bert_score  # type: ignore[import-untyped]
        from bert_score.utils import model2layers  # type: ignore[import-untyped]

        if num_layers is None:
            if model not in model2layers:
                raise AbductError(
                    f"bertscore: num_layers is required for model '{model}' (bert-score has no tuned layer for it)"
                )
            num_layers = model2layers[model]
        if rescale_with_baseline:
            shipped = os.path.join(os.path.dirname(bert_score.__file__), "rescale_baseline", lang, f"{model}.tsv")
            path = baseline_path or shipped
            if not os.path.isfile(path):
                raise AbductError(
                    f"bertscore: no rescaling baseline for model '{model}' and lang '{lang}' "
                    f"(looked for {path}); pass baseline_path"
                )
        if int(batch_size) < 1:
            raise AbductError("bertscore: batch_size must be at least 1")
        self.batch_size = int(batch_size)
        self.idf = bool(idf)
        with hub_access() as hub:
            _require_weights(model, hub)
            try:
                # nthreads=0: the idf counts in this process. bert-score's default forks a
                # multiprocessing.Pool from a process that runs threads (torch's, tokenizers',
                # tqdm's, the METEOR JVM's reader), and such a fork can hang for ever: seen in
                # the test suite, a pool that never joined. The counts are the same either way.
                self._scorer = bert_score.BERTScorer(
                    model_type=str(model), num_layers=int(num_layers), idf=self.idf, device=device,
                    batch_size=self.batch_size, lang=lang, rescale_with_baseline=bool(rescale_with_baseline),
                    baseline_path=baseline_path, nthreads=0,
                )
            except (OSError, ValueError) as exc:
                raise AbductError(
                    f"bertscore: could not load model '{model}' (a local directory or a model in the "
                    f"Hugging Face cache is needed): {str(exc).splitlines()[0]}"
                ) from exc

    @property
    def hash(self) -> str:
        return str(self._scorer.hash)

    def compute(
        self,
        predictions: Mapping[str, str],
        references: Mapping[str, Sequence[str]],
        questions: Mapping[str, str] | None = None,
    ) -> MetricResult:
        pred, refs, _ = validate_inputs(predictions, references, questions)
        zero = self._empty_scores()
        per_sample = {k: dict(zero) for k in pred}
        # an empty reference scores 0 (raw), so it matters only when it beats every other one
        has_empty_ref = {k for k in pred if any(not r.strip() for r in refs[k])}
        ids = [k for k in pred if pred[k].strip() and any(r.strip() for r in refs[k])]
        empty = [k for k in pred if k not in ids or k in has_empty_ref]
        if empty:
            more = f" (and {len(empty) - 1} more)" if len(empty) > 1 else ""
            warnings.warn(f"bertscore: record '{empty[0]}'{more}: an empty prediction or reference; "
                          "scored as bert-score defines it (raw 0)", stacklevel=2)
        if ids:
            self._score([pred[k] for k in ids], [[r for r in refs[k] if r.strip()] for k in ids], ids, per_sample,
                        idf_sentences=[r for k in pred for r in refs[k]])
        for k in has_empty_ref & set(ids):
            if per_sample[k]["bertscore_f1"] < zero["bertscore_f1"]:
                per_sample[k] = dict(zero)
        corpus = {key: SCALE * float(np.mean([row[key] for row in per_sample.values()])) for key in KEYS}
        return MetricResult(corpus, {k: scaled(row) for k, row in per_sample.items()},
                            {"hash": self.hash, "batch_size": self.batch_size})

    def _empty_scores(self) -> dict[str, float]:
        """bert-score's value for an empty text: raw 0, rescaled with the baseline when asked."""
        if not self._scorer.rescale_with_baseline:
            return dict.fromkeys(KEYS, 0.0)
        base = self._scorer.baseline_vals.double().numpy()
        return {key: float((0.0 - b) / (1.0 - b)) for key, b in zip(KEYS, base)}

    def _count_empty_documents(self, documents: int) -> None:
        """Give the idf weights the document count of every reference, empty ones included
        (bert-score cannot encode those): idf = log((M + 1) / (df + 1)), and an empty document
        holds only [CLS] and [SEP]."""
        table = self._scorer._idf_dict
        counted = [t for t in (self._scorer._tokenizer.cls_token_id, self._scorer._tokenizer.sep_token_id)
                   if t is not None]
        nonempty = round(math.exp(table.default_factory()) - 1)  # the default is log(M' + 1)
        if documents == nonempty:
            return
        old = dict(table)
        table.default_factory = lambda: math.log(documents + 1)
        table.update({k: v + math.log((documents + 1) / (nonempty + 1)) for k, v in old.items()})
        for token in counted:  # each empty document adds one to their document frequency
            df = (nonempty + 1) / math.exp(old.get(token, math.log(nonempty + 1))) - 1 + documents - nonempty
            table[token] = math.log((documents + 1) / (df + 1))

    def _score(self, cands: list[str], ref_groups: list[list[str]], ids: list[str],
               per_sample: dict[str, dict[str, float]], idf_sentences: list[str]) -> None:
        if self.idf:
            # bert_score.score derives idf from the (flattened) references of the call, all of them.
            self._scorer._idf_dict = None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._scorer.compute_idf([t for t in idf_sentences if t.strip()])
            self._count_empty_documents(len(idf_sentences))
        columns = self._columns(cands, ref_groups)
        for i, k in enumerate(ids):
            per_sample[k] = {key: float(col[i]) for key, col in zip(KEYS, columns)}

    def _columns(self, cands: list[str], ref_groups: list[list[str]] | list[str]) -> list[np.ndarray]:
        p, r, f = self._scorer.score(cands, ref_groups, batch_size=self.batch_size)
        return [t.double().numpy() for t in (p, r, f)]

    def pair_scores(self, candidates: Sequence[str], references: Sequence[str]) -> np.ndarray:
        """Precision, recall and F1 (the columns) of each candidate against its one reference,
        as ``bert_score.score(candidates, references)`` gives them (no idf: a pair has no
        corpus to weigh by); an empty candidate or reference scores bert-score's value for an
        empty text (raw 0)."""
        if self.idf:
            raise AbductError("bertscore: pair scores are computed without idf weights")
        if len(candidates) != len(references):
            raise AbductError(f"bertscore: {len(candidates)} candidates for {len(references)} references")
        out = np.tile(np.array([self._empty_scores()[key] for key in KEYS]), (len(candidates), 1))
        keep = [i for i, (c, r) in enumerate(zip(candidates, references)) if c.strip() and r.strip()]
        if keep:
            columns = self._columns([candidates[i] for i in keep], [references[i] for i in keep])
            out[keep] = np.stack(columns, axis=1)
        return out


def make_bertscore(
    spec: Spec,
    settings: Settings,
    *,
    model: str = "roberta-large",
    num_layers: int | None = None,
    idf: bool = False,
    rescale_with_baseline: bool = False,
    baseline_path: Path | None = None,
    lang: str = "en",
    batch_size: int | None = None,
) -> BertScore:
    """``bertscore[,model=...,num_layers=...,idf=...,rescale_with_baseline=...,baseline_path=...,lang=...]``.

    The device is the run's (``--device``); the batch size is the run's (``--batch-size``)
    unless ``batch_size`` is given."""
    no_argument(spec)
    return BertScore(
        model=model, num_layers=num_layers, idf=idf, rescale_with_baseline=rescale_with_baseline,
        baseline_path=None if baseline_path is None else str(baseline_path), lang=lang,
        device=settings.torch_device(), batch_size=settings.batch_size if batch_size is None else batch_size,
    )
