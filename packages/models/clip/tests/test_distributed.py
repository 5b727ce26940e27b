"""Two gloo processes on the CPU compute the same loss and gradients as one process on the
same global batch: embeddings are gathered with gradients and gradients averaged."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from clip_helpers import make_examples

from abduct_clip._encode import image_features, text_features
from abduct_clip._loading import build
from abduct_clip._train import Example, StepBatches, average_gradients, contrastive_loss, current_ranks
from abduct_clip.settings import ClipSettings

GLOBAL_BATCH = 8


def _loss_and_grads(examples: list[Example]) -> tuple[float, dict[str, torch.Tensor]]:
    """One training step's loss and averaged gradients for this process's slice."""
    torch.set_num_threads(1)
    loaded = build(ClipSettings(arch="tiny", workers=0), seed=0)
    batches = StepBatches(
        examples, loaded.preprocess, loaded.settings, batch_size=GLOBAL_BATCH, first_step=0, last_step=1,
        seed=0, multitask=True, augment=True, ranks=current_ranks(),
    )
    views, owner, texts = batches[0]  # type: ignore[misc]
    model = loaded.model.train()
    images = image_features(model, views, owner, len(texts))
    embedded = text_features(model, loaded.tokenizer(texts))
    loss = contrastive_loss(images, embedded, model.logit_scale)
    loss.backward()
    average_gradients(model)
    return float(loss.detach()), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def _worker(rank: int, world: int, port: int, examples: list[Example], out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        loss, grads = _loss_and_grads(examples)
        torch.save({"loss": loss, "grads": grads}, f"{out}/rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_processes_equal_one_process_on_the_global_batch(tmp_path: Path) -> None:
    visuals = make_examples(tmp_path / "images", count=12)
    examples = [Example(v, f"inference number {i}", f"clue number {i}") for i, v in enumerate(visuals)]
    single_loss, single_grads = _loss_and_grads(examples)

    # two real processes, forked: they start with open_clip imported (spawned ones import it again, ~11 s each)
    mp.start_processes(_worker, args=(2, _free_port(), examples, str(tmp_path)), nprocs=2, join=True,
                       start_method="fork")
    results = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in range(2)]
    for result in results:
        assert abs(result["loss"] - single_loss) < 1e-5
        assert set(result["grads"]) == set(single_grads)
        for name, grad in single_grads.items():
            torch.testing.assert_close(result["grads"][name], grad, rtol=1e-4, atol=1e-6, msg=name)
    # the check has teeth: the gradients are not all zero and both halves of the batch matter
    assert any(g.abs().sum() > 0 for g in single_grads.values())


def test_each_rank_sees_its_own_slice_of_the_global_batch(tmp_path: Path) -> None:
    from abduct_clip._train import Ranks

    visuals = make_examples(tmp_path / "images", count=12)
    examples = [Example(v, f"inference {i}") for i, v in enumerate(visuals)]
    loaded = build(ClipSettings(arch="tiny", workers=0), seed=0)

    def texts(ranks: Ranks) -> list[str]:
        batches = StepBatches(examples, loaded.preprocess, loaded.settings, batch_size=GLOBAL_BATCH,
                              first_step=0, last_step=3, seed=0, multitask=False, augment=False, ranks=ranks)
        return [t for step in range(3) for t in batches[step][2]]

    whole = texts(Ranks(0, 1))
    halves = [texts(Ranks(0, 2)), texts(Ranks(1, 2))]
    per_step = [halves[0][s * 4 : s * 4 + 4] + halves[1][s * 4 : s * 4 + 4] for s in range(3)]
    assert [t for step in per_step for t in step] == whole
