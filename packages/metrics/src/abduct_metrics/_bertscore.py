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

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from abduct import AbductError, MetricResult, Settings, Spec
from abduct.kit import HubState, hub_access, hub_cache_dir, hub_file_cached, validate_inputs, weights_unavailable
from abduct_metrics._common import no_argument

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
                self._scorer = bert_score.BERTScorer(
                    model_type=str(model), num_layers=int(num_layers), idf=self.idf, device=device,
                    batch_size=self.batch_size, lang=lang, rescale_with_baseline=bool(rescale_with_baseline),
                    baseline_path=baseline_path,
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
        ids = list(pred)
        cands = [pred[k] for k in ids]
        ref_groups = [refs[k] for k in ids]
        if self.idf:
            # bert_score.score derives idf from the (flattened) references of the call.
            self._scorer._idf_dict = None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._scorer.compute_idf([r for group in ref_groups for r in group])
        p, r, f = self._scorer.score(cands, ref_groups, batch_size=self.batch_size)
        columns = [t.double().numpy() for t in (p, r, f)]
        per_sample = {k: {key: float(col[i]) for key, col in zip(KEYS, columns)} for i, k in enumerate(ids)}
        corpus = {key: float(np.mean(col)) for key, col in zip(KEYS, columns)}
        return MetricResult(corpus, per_sample, {"hash": self.hash, "batch_size": self.batch_size})


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
