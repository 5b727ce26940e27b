"""The tiny local LLaVA three ways on a synthetic NL-EYE corpus: ``lmms:llava_hf`` through
``abduct eval``, lmms-eval on the exported task, and ``vlm:DIR``.

The tiny model is random, so its head is narrowed to the two answer tokens: the logits of "1"
and "2" are x and -x, every other token's 0, where x projects the last hidden state on the
difference of two requests' hidden states (the final RMSNorm gives them one length, so the two
fall on either side). One new token (max_new_tokens=1 on both sides) is then "1" or "2"
depending on the images."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from abduct.testing import main

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    import torch
    from transformers import AutoProcessor, LlavaForConditionalGeneration

    from abduct_lmms.docs import doc_to_visual
    from abduct_lmms.replay import Source, record
    from abduct_vlm._tiny import tiny_directory

    target = tmp_path_factory.mktemp("models") / "answers-1-or-2"
    shutil.copytree(tiny_directory("tiny", tmp_path_factory.mktemp("tiny")), target)
    model = LlavaForConditionalGeneration.from_pretrained(str(target))
    processor = AutoProcessor.from_pretrained(str(target))
    one, two = (processor.tokenizer.convert_tokens_to_ids(t) for t in ("1", "2"))

    def last_hidden(doc: dict) -> torch.Tensor:
        images = doc_to_visual(doc)
        turn = [{"role": "user", "content": [{"type": "image"}] * len(images) + [{"type": "text", "text": doc["text"]}]}]
        text = processor.apply_chat_template(turn, add_generation_prompt=True, tokenize=False)
        with torch.no_grad():
            out = model(**processor(text=text, images=images, return_tensors="pt"), output_hidden_states=True)
        return out.hidden_states[-1][0, -1]

    _, docs = record(Source("nleye-triplet", corpus))
    head = model.get_output_embeddings().weight
    with torch.no_grad():
        direction = last_hidden(docs[0]) - last_hidden(docs[1])
        head.zero_()
        head[one], head[two] = direction, -direction
    model.save_pretrained(str(target))
    return target


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from abduct_nleye.synth import synthesize

    data = tmp_path_factory.mktemp("nleye") / "data"
    synthesize(data, 12, 0)
    return data


def _eval(spec: str, data: Path, out: Path) -> dict:
    assert main(["eval", "nleye-triplet", "--model", spec, "--data", str(data), "--out", str(out), "--quiet",
                 "--device", "cpu", "--no-cache"]) == 0
    return json.loads((out / "results.json").read_text())


def _outputs(out: Path) -> list[str]:
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    return [text for row in rows for text in row["outputs"]]


def test_lmms_eval_and_abduct_agree(model_dir: Path, corpus: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for key, value in OFFLINE.items():
        monkeypatch.setenv(key, value)
    tasks = tmp_path / "tasks"
    assert main(["export", "lmms-eval", "nleye-triplet", "--data", str(corpus), "--out", str(tasks)]) == 0
    assert capsys.readouterr().out.split() == ["abduct_nleye_triplet"]

    ours = _eval(f"lmms:llava_hf,pretrained={model_dir},max_new_tokens=1", corpus, tmp_path / "lmms")
    plain = _eval(f"vlm:{model_dir},max_new_tokens=1", corpus, tmp_path / "vlm")

    env = {**os.environ, **OFFLINE, "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets")}
    subprocess.run([sys.executable, "-m", "lmms_eval", "--model", "llava_hf", "--model_args",
                    f"pretrained={model_dir},device_map=cpu", "--tasks", "abduct_nleye_triplet", "--include_path",
                    str(tasks), "--device", "cpu", "--batch_size", "1", "--gen_kwargs", "max_new_tokens=1",
                    "--output_path", str(tmp_path / "lmms-eval"), "--log_samples"],
                   env=env, check=True, capture_output=True, text=True)
    [results] = list((tmp_path / "lmms-eval").rglob("*_results.json"))
    [samples] = list((tmp_path / "lmms-eval").rglob("*_samples_abduct_nleye_triplet.jsonl"))
    theirs = json.loads(results.read_text())["results"]["abduct_nleye_triplet"]
    docs = sorted((json.loads(line) for line in samples.read_text().splitlines()), key=lambda d: d["doc_id"])

    # (a) and (b): the same texts for the same requests (the exported documents are in request order)
    predicted = _outputs(tmp_path / "lmms")
    assert [d["filtered_resps"] for d in docs] == predicted
    assert set(predicted) <= {"1", "2"} and len(set(predicted)) == 2  # the narrowed head answers, not always alike
    metrics = ours["metrics"]
    for name in ("consistency_accuracy", "order1_accuracy", "order2_accuracy", "unparseable", "n"):
        assert theirs[f"{name},none"] == pytest.approx(metrics[name]), name
    # (c): vlm: asks in the same words and chat format; only its left padding differs, and every row
    # of this task has the same length, so it agrees exactly
    assert _outputs(tmp_path / "vlm") == predicted
    assert plain["metrics"]["consistency_accuracy"] == pytest.approx(metrics["consistency_accuracy"])
