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
import yaml

from abduct_testing import main

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    import torch
    from transformers import AutoProcessor, LlavaForConditionalGeneration

    from abduct_lmms.docs import doc_to_visual
    from abduct_lmms.export import planned
    from abduct_lmms.replay import Source
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

    _, docs = planned(Source("nleye-triplet", corpus))
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


def _eval(spec: str, data: Path, out: Path, task: str = "nleye-triplet") -> dict:
    assert main(["eval", task, "--model", spec, "--data", str(data), "--out", str(out), "--quiet",
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
    # the token ledger: each answer a request; the prompts' text and the answers in the class's tokenizer
    # (byte-level: a token per byte; each answer is one token, "1" or "2")
    from abduct_lmms.export import planned
    from abduct_lmms.replay import Source

    _, asked = planned(Source("nleye-triplet", corpus))
    assert ours["tokens"]["total"] == {"requests": len(predicted), "cached": 0, "completion": len(predicted),
                                       "prompt": sum(len(d["text"].encode()) for d in asked), "reasoning": 0}
    metrics = ours["metrics"]
    for name in ("consistency_accuracy", "order1_accuracy", "order2_accuracy", "unparsed", "n"):
        assert theirs[f"{name},none"] == pytest.approx(metrics[name]), name
    # (c): vlm: asks in the same words and chat format; only its left padding differs, and every row
    # of this task has the same length, so it agrees exactly
    assert _outputs(tmp_path / "vlm") == predicted
    assert plain["metrics"]["consistency_accuracy"] == pytest.approx(metrics["consistency_accuracy"])


def _lmms_eval(model_dir: Path, tasks: Path, names: list[str], out: Path, *extra: str) -> dict[str, dict]:
    """lmms-eval's own CLI on exported tasks: each task's results."""
    env = {**os.environ, **OFFLINE, "HF_DATASETS_CACHE": str(out / "hf-datasets")}
    done = subprocess.run([sys.executable, "-m", "lmms_eval", "--model", "llava_hf", "--model_args",
                           f"pretrained={model_dir},device_map=cpu", "--tasks", ",".join(names), "--include_path",
                           str(tasks), "--device", "cpu", "--batch_size", "1", "--gen_kwargs", "max_new_tokens=3",
                           "--output_path", str(out), *extra], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    found = list(out.rglob("*_results.json"))
    assert len(found) == 1, (done.stdout + done.stderr)[-4000:]
    return dict(json.loads(found[0].read_text())["results"])


def test_exported_tasks_score_the_same_through_lmms_eval(tmp_path_factory: pytest.TempPathFactory, corpus: Path,
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Three more benchmarks' generation tasks, each scored by its own metrics (NL-EYE's caption
    metrics, WHOOPS!'s BLEU-4/CIDEr with folds, Sherlock's BLEU/METEOR/CIDEr-D/ROUGE-L) through
    lmms-eval with the plain tiny LLaVA, whose short answers differ from image to image."""
    from abduct_vlm._tiny import tiny_directory

    for key, value in OFFLINE.items():
        monkeypatch.setenv(key, value)
    model_dir = tiny_directory("tiny", tmp_path_factory.mktemp("plain"))
    whoops, sherlock = tmp_path / "whoops", tmp_path / "sherlock"
    assert main(["whoops", "synth", "--out", str(whoops), "--images", "6"]) == 0
    assert main(["sherlock", "synth", "--out", str(sherlock), "--images", "10"]) == 0
    tasks = tmp_path / "tasks"
    exported = {"nleye-explanation": corpus, "whoops-captioning": whoops, "sherlock-generation": sherlock}
    capsys.readouterr()
    for task, data in exported.items():
        assert main(["export", "lmms-eval", task, "--data", str(data), "--out", str(tasks)]) == 0
    names = capsys.readouterr().out.split()
    assert names == ["abduct_nleye_explanation", "abduct_whoops_captioning", "abduct_sherlock_generation"]
    assert {json.loads((tasks / n / "source.json").read_text())["kind"] for n in names} == {"generate_until"}
    theirs = _lmms_eval(model_dir, tasks, names, tmp_path / "lmms-eval")
    seen: set[str] = set()
    for (task, data), name in zip(exported.items(), names):
        ours = _eval(f"lmms:llava_hf,pretrained={model_dir},max_new_tokens=3", data, tmp_path / task, task)["metrics"]
        numbers = {k: v for k, v in ours.items() if isinstance(v, int | float) and not isinstance(v, bool)}
        assert numbers and {k: theirs[name][f"{k},none"] for k in numbers} == pytest.approx(numbers), task
        seen |= {json.loads(line)["prediction"] for line in (tmp_path / task / "predictions.jsonl").read_text().splitlines()}
    assert len(seen) > 1  # the answers differ: the comparison is not of one repeated text


def test_a_scoring_task_exports_as_log_likelihoods(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CoSIm's four candidates, one loglikelihood request each, and a replay of lmms-eval's
    answers (minus its loss) through the export's own aggregation hooks."""
    from abduct_cosim.synth import synthesize
    from abduct_lmms.hooks import aggregate, process_results
    from abduct_lmms.replay import Source, replay

    cosim = tmp_path / "cosim"
    synthesize(cosim, 4, 12, 0)
    assert main(["export", "lmms-eval", "cosim", "--data", str(cosim), "--out", str(tmp_path / "tasks")]) == 0
    folder = tmp_path / "tasks" / capsys.readouterr().out.strip()
    assert json.loads((folder / "source.json").read_text())["kind"] == "loglikelihood"
    # lmms-eval's arrows follow the task's declarations: a count is not "higher is better"
    arrows = {m["metric"]: m["higher_is_better"] for m in yaml.safe_load(
        (folder / f"{folder.name}.yaml").read_text().replace("!function", "function"))["metric_list"]}
    assert arrows["accuracy"] is True and arrows["n"] is False
    docs = [json.loads(line) for line in (folder / "docs.jsonl").read_text().splitlines()]
    assert len(docs) == 4 * 12 and all(d["target"] for d in docs)
    items = [process_results(d, [(-float(len(d["target"]) % 7), False)])["accuracy"] for d in docs]
    by_hooks = aggregate(folder / "source.json", items, "accuracy")
    # the same answers, scored by a plain run: the longest-modulo-7 candidate wins each record
    answers = {d["key"]: float(len(d["target"]) % 7) for d in docs}
    assert by_hooks == replay(Source("cosim", cosim), "loglikelihood", answers)["accuracy"]


def test_a_plan_that_waits_on_answers_is_not_exported(corpus: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """NL-EYE with captions: a captioning model writes first, then the texts are scored; lmms-eval
    asks every request up front, so the export is refused in one line and writes nothing."""
    assert main(["export", "lmms-eval", "nleye-pairs,setup=captions,captioner=random", "--data", str(corpus),
                 "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "nleye-pairs" in err and "cannot" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_replay_answers_a_run_from_a_file(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """replay:FILE through the ordinary run: the file's answers give the task's metrics, and a
    request the file lacks is one line."""
    from abduct_lmms.export import planned
    from abduct_lmms.replay import Source, write_answers

    kind, docs = planned(Source("nleye-pairs", corpus))
    assert kind == "loglikelihood"
    first = {d["key"]: float(i % 2) for i, d in enumerate(docs)}  # every first candidate lower: accuracy by gold
    file = write_answers(tmp_path / "answers.json", kind, first)
    results = _eval(f"replay:{file}", corpus, tmp_path / "run", "nleye-pairs")
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert results["metrics"]["accuracy"] == pytest.approx(100 * sum(r["correct"] for r in rows) / len(rows))
    assert all(r["scores"] in ([0.0, 1.0], [1.0, 0.0], [0.0, 0.0], [1.0, 1.0]) for r in rows)
    write_answers(tmp_path / "short.json", kind, dict(list(first.items())[:3]))
    assert main(["eval", "nleye-pairs", "--model", f"replay:{tmp_path / 'short.json'}", "--data", str(corpus),
                 "--out", str(tmp_path / "short"), "--quiet", "--no-cache"]) == 2
    assert "does not answer a request this task asks" in capsys.readouterr().err


def test_a_video_document_names_whole_files_in_order(tmp_path: Path) -> None:
    """A video input becomes its files' paths, the input's then its related inputs', in order (as
    lmms-eval's video tasks return theirs from doc_to_visual); what a path cannot say is named."""
    from abduct import Box, GenerationRequest, Region, VisualInput
    from abduct_lmms.docs import doc_to_visual, generation_doc, inexpressible

    pre, event, post = (str(tmp_path / f"{name}.mp4") for name in ("pre", "event", "post"))
    clips = VisualInput.video(pre, context="What happened?",
                              related=(VisualInput.video(event), VisualInput.video(post)))
    assert inexpressible(clips) is None
    assert doc_to_visual(generation_doc(GenerationRequest(clips, "Answer."))) == [pre, event, post]
    spans = VisualInput.video(pre, related=(VisualInput.video(post, ((0.5, 1.0),)),))
    assert "time spans" in str(inexpressible(spans))
    assert "region" in str(inexpressible(VisualInput(pre, region=Region((Box(0, 0, 4, 4),)), kind="video")))
    assert "images and videos" in str(inexpressible(VisualInput.video(pre, related=(VisualInput(pre + ".png"),))))
    assert "as an image or audio" in str(inexpressible(VisualInput.video(str(tmp_path / "clip.webm"))))
    assert inexpressible(VisualInput(pre + ".png", related=(VisualInput(post + ".png"),))) is None
