"""The ``lmms`` model: a class from lmms-eval's registry, called with lmms-eval ``Instance``s.

Each call of ``generate``/``score`` becomes one ``generate_until``/``loglikelihood`` call of the
class on all the requests abduct hands it (abduct's ``--batch-size`` groups calls; the class
batches inside them as it always does, by its own ``batch_size`` model argument). Documents are
``docs``'s, served to the class through its ``task_dict`` as lmms-eval's evaluator does, in the
shape the class asks: a chat class (``is_simple = False``, what ``lmms-eval --model NAME``
picks) takes messages built by lmms-eval's own task code, a simple class ``doc_to_visual``.

``usage``, the token ledger the run reads (``abduct._engine.tokens``): each generated answer is a
request; where the class exposes its ``tokenizer`` (lmms-eval's classes mostly do), the prompt's
text and the answer are counted in its tokens. The class builds its chat prompt and image tokens
inside ``generate_until``, out of sight, so ``prompt`` counts the request's text only and
``completion`` the answer as returned (re-tokenised: special tokens such as the end of sequence
are not in it).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from abduct import AbductError, Decoding, GenerationRequest, Settings, Spec, TextPool, VisualInput
from abduct.kit import install_command
from abduct.kit.reasoning import Reasoning
from abduct_lmms.docs import doc_to_target, doc_to_text, doc_to_visual, generation_doc, scoring_doc
from abduct_lmms.hooks import answer_of
from abduct_lmms.replay import ACCEPTS

TASK, SPLIT = "abduct", "test"


def _messages(doc: dict[str, Any]) -> Any:
    """The user turn lmms-eval's task code builds from doc_to_visual and doc_to_text (so
    ``lmms:`` and ``lmms-eval`` on an exported task give a chat class the same messages)."""
    from lmms_eval.api.task import ConfigurableMessagesTask

    return ConfigurableMessagesTask._build_user_turn(doc_to_visual(doc), doc_to_text(doc))


def implements(cls: type, method: str) -> bool:
    """True when ``cls`` overrides ``method`` of lmms-eval's base class with more than a
    ``raise NotImplementedError`` (the way generate-only classes decline log-likelihood)."""
    from lmms_eval.api.model import lmms

    own = getattr(cls, method, None)
    if own is None or own is getattr(lmms, method, None):
        return False
    try:
        body = [line.strip() for line in inspect.getsource(own).splitlines()[1:]]
    except (OSError, TypeError):
        return True
    code = [line for line in body if line and not line.startswith(("#", '"""', "'''"))]
    return not (len(code) <= 2 and any(line.startswith("raise NotImplementedError") for line in code))


class LmmsModel:
    """Generates through ``generate_until`` (see the module docstring)."""

    accepts = ACCEPTS
    reasoning = Reasoning("auto")  # reasoning=: how the generation engine splits each reply

    def __init__(self, lm: Any, name: str, fingerprint: str) -> None:
        self.lm = lm
        self.name = name
        self.class_name = type(lm).__name__
        self.fingerprint = fingerprint
        self.usage = {"requests": 0, "prompt": 0, "completion": 0}  # generate's (see the module docstring)

    def _count(self, prompts: Sequence[str], answers: Sequence[str]) -> None:
        self.usage["requests"] += len(answers)
        try:
            tokenizer = getattr(self.lm, "tokenizer", None)  # a property on most classes; some raise
        except Exception:
            tokenizer = None
        if not callable(tokenizer):
            return  # requests only
        for key, texts in (("prompt", prompts), ("completion", answers)):
            self.usage[key] += sum(len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts)

    def _instances(self, kind: str, docs: list[dict[str, Any]], gen_kwargs: dict[str, Any] | None) -> list[Any]:
        from lmms_eval.api.instance import Instance

        self.lm.task_dict = {TASK: {SPLIT: docs}}
        out = []
        for i, doc in enumerate(docs):
            if kind == "loglikelihood":
                args: tuple[Any, ...] = (doc["text"], doc_to_target(doc), doc_to_visual, i, TASK, SPLIT)
            elif self.lm.is_simple:
                args = (doc["text"], dict(gen_kwargs or {}), doc_to_visual, i, TASK, SPLIT)
            else:
                args = (doc["text"], _messages, dict(gen_kwargs or {}), i, TASK, SPLIT)
            out.append(Instance(request_type=kind, arguments=args, idx=0,
                                metadata={"task": TASK, "doc_id": i, "repeats": 1}))
        return out

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        docs = [generation_doc(r) for r in requests]
        gen_kwargs = {"max_new_tokens": decoding.max_new_tokens, "num_beams": decoding.num_beams,
                      "do_sample": decoding.do_sample, "temperature": decoding.temperature if decoding.do_sample else 0}
        if decoding.do_sample:
            gen_kwargs["top_p"] = decoding.top_p
        made = self.lm.generate_until(self._instances("generate_until", docs, gen_kwargs))
        answers: list[str] = [answer_of("generate_until", m) for m in made]
        self._count([d["text"] for d in docs], answers)
        return answers


class LmmsScoringModel(LmmsModel):
    """Also scores: the log-likelihood of the candidate as the answer (``loglikelihood``)."""

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        if len(visuals) != len(texts):
            raise ValueError("score() needs as many visuals as texts")
        docs = [scoring_doc(v, t) for v, t in zip(visuals, texts)]
        try:
            made = self.lm.loglikelihood(self._instances("loglikelihood", docs, None))
        except NotImplementedError:
            raise AbductError(f"lmms-eval model class {self.class_name} ('{self.name}') does not score "
                              "(no loglikelihood); use it on a task that generates") from None
        return np.array([answer_of("loglikelihood", m) for m in made], dtype=np.float64)


def make_lmms(spec: Spec, settings: Settings, *, reasoning: str = "auto", **model_args: str) -> LmmsModel:
    """``lmms:MODEL[,reasoning=auto|none|TAG|REGEX][,key=value...]``: the lmms-eval model MODEL
    (``llava_hf``, ``qwen2_vl``, ...) built with its own model_args (``pretrained=DIR``,
    ``batch_size=1``, ...), on ``--device`` unless ``device=`` is given; ``reasoning=`` is
    abduct's own (``abduct.kit.reasoning``), not passed to lmms-eval."""
    if spec.tag is not None:
        raise AbductError(f"lmms takes no @tag (got '@{spec.tag}'); name the model as lmms:MODEL")
    if not spec.argument:
        raise AbductError("lmms needs an lmms-eval model name: lmms:MODEL[,key=value...] (e.g. lmms:llava_hf,pretrained=DIR)")
    split = Reasoning.parse(reasoning, str(spec))
    try:
        from lmms_eval import models
    except ImportError as exc:  # a declared dependency, but an environment can lack it or break it
        raise AbductError(f"lmms:{spec.argument} needs lmms-eval, which cannot be imported here ({exc}); "
                          f"{install_command('abduct-lmms')}") from None

    if spec.argument not in models.list_available_models(include_aliases=True):
        raise AbductError(f"lmms-eval has no model '{spec.argument}' (see lmms_eval.models.list_available_models())")
    try:
        cls = models.get_model(spec.argument)
    except ImportError as exc:
        raise AbductError(f"lmms-eval model '{spec.argument}' cannot be imported here: {exc}") from None
    args = {"device": settings.torch_device(), **model_args}
    if "device_map" in inspect.signature(cls.__init__).parameters and "device_map" not in args:
        args["device_map"] = args["device"]  # some classes default to "", which transformers 5 refuses
    arg_string = ",".join(f"{k}={v}" for k, v in args.items())
    lm = cls.create_from_arg_string(arg_string)
    fingerprint = f"lmms|{spec.argument}|{cls.__module__}.{cls.__name__}|{arg_string}"
    made = LmmsScoringModel if implements(cls, "loglikelihood") else LmmsModel
    model = made(lm, str(spec), fingerprint)
    model.reasoning = split
    return model
