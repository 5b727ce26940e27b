"""abduct_modelkit.TrainingRun, the skeleton every trainer shares, driven by a trainer without
torch whose "model" is a number: the folder, the log, checkpoints, the best value and resuming
behave as the trainers' kill-and-resume tests rely on."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from abduct import AbductError
from abduct.kit import Ranks
from abduct_modelkit import TrainConfig, TrainingRun
from abduct_modelkit.training import LOG


@dataclass
class CountConfig(TrainConfig):
    steps: int = 5
    every: int = 2
    log_every: int = 2
    quiet: bool = True

    resume_keys = ("lr", "seed")


class CountTrainer:
    """Adds the step to its weight each step; the loss is the weight; validation measures
    ``scores[step]``; the checkpoint is JSON."""

    def __init__(self, config: CountConfig, scores: dict[int, float] | None = None, ranks: Ranks | None = None) -> None:
        self.config, self.weight, self.scores, self.saved = config, 0.0, scores or {}, []
        self.run = TrainingRun("count", config, total=config.steps, last="last.json",
                               signature=config.resume_settings(), ranks=ranks or Ranks())

    def step(self, at: int) -> float:
        self.weight += at
        return self.weight

    def write(self, value: float, is_best: bool) -> None:
        self.saved.append((self.run.step, is_best))
        state = {"step": self.run.step, "weight": self.weight, "best": self.run.best, "history": self.run.history,
                 "signature": self.run.signature}
        (self.config.out_dir / "last.json").write_text(json.dumps(state))
        if is_best:
            (self.config.out_dir / "best.json").write_text(json.dumps({"value": value}))

    def validate(self) -> None:
        self.run.validate("score", lambda: self.scores.get(self.run.step, 0.0),
                          (self.config.out_dir / "best.json").is_file, self.write)

    def train(self) -> None:
        run = self.run
        run.start()
        last = self.config.out_dir / "last.json"
        if last.is_file():
            state = json.loads(last.read_text())

            def restore() -> int:
                self.weight, run.best, run.history = state["weight"], state["best"], state["history"]
                return int(state["step"])

            run.resume(last, state["signature"], restore)
        run.train(range(run.step, run.total), self.step, self.validate, every=self.config.every)


def _log(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / LOG).read_text().splitlines()]


def test_a_run_logs_mean_losses_and_checkpoints_every_n_steps_and_at_the_last(tmp_path: Path) -> None:
    trainer = CountTrainer(CountConfig(tmp_path, tmp_path / "out"), scores={2: 5.0, 4: 3.0, 5: 7.0})
    trainer.train()
    rows = _log(tmp_path / "out")
    losses = [(r["step"], r["loss"]) for r in rows if "loss" in r]
    assert losses == [(2, (0 + 1) / 2), (4, (3 + 6) / 2), (5, 10.0)]  # weights 0, 1, 3, 6, 10
    assert all(r["steps_per_s"] > 0 for r in rows if "loss" in r)
    assert [(r["step"], r["score"]) for r in rows if "score" in r] == [(2, 5.0), (4, 3.0), (5, 7.0)]
    assert trainer.saved == [(2, True), (4, False), (5, True)]  # best: the highest so far
    assert trainer.run.best == 7.0 and not trainer.run.resumed


def test_lower_is_better_keeps_the_lowest_and_a_missing_best_is_written(tmp_path: Path) -> None:
    config = CountConfig(tmp_path, tmp_path / "out")
    trainer = CountTrainer(config, scores={2: 5.0, 4: 3.0, 5: 7.0})
    trainer.run = TrainingRun("count", config, total=5, last="last.json", signature={}, lower_is_better=True,
                              ranks=Ranks())
    trainer.train()
    assert trainer.saved == [(2, True), (4, True), (5, False)] and trainer.run.best == 3.0
    (config.out_dir / "best.json").unlink()
    trainer.run.step, trainer.scores[6] = 6, 9.0
    trainer.validate()  # worse than 3.0, but there is no best any more
    assert trainer.saved[-1] == (6, True) and trainer.run.best == 3.0


def test_a_killed_run_resumes_to_the_uninterrupted_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = CountTrainer(CountConfig(tmp_path, tmp_path / "whole"), scores={2: 1.0, 4: 2.0})
    whole.train()
    killed = CountTrainer(CountConfig(tmp_path, tmp_path / "killed", steps=3), scores={2: 1.0, 4: 2.0})
    killed.train()  # stands for a kill after step 3: its checkpoint is at step 2, its log has step 3's row
    state = json.loads((tmp_path / "killed" / "last.json").read_text())
    (tmp_path / "killed" / "last.json").write_text(json.dumps({**state, "step": 2, "weight": 1.0,
                                                                "history": state["history"][:1]}))
    resumed = CountTrainer(CountConfig(tmp_path, tmp_path / "killed", quiet=False), scores={2: 1.0, 4: 2.0})
    resumed.train()
    assert f"[train count] resuming from {tmp_path / 'killed' / 'last.json'} at step 2" in capsys.readouterr().err
    assert resumed.run.resumed and resumed.weight == whole.weight == 10.0
    assert resumed.run.history == whole.run.history
    def timeless(out: Path) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k != "steps_per_s"} for r in _log(out)]

    assert timeless(tmp_path / "killed") == timeless(tmp_path / "whole")  # step 3's rows dropped, none twice


def test_resuming_with_other_settings_is_refused(tmp_path: Path) -> None:
    CountTrainer(CountConfig(tmp_path, tmp_path / "out")).train()
    with pytest.raises(AbductError, match="written by a run with other settings"):
        CountTrainer(CountConfig(tmp_path, tmp_path / "out", lr=0.5)).train()
    CountTrainer(CountConfig(tmp_path, tmp_path / "out", batch_size=7)).train()  # not a resume key


def test_a_run_without_steps_still_checkpoints_and_a_finished_one_does_not_again(tmp_path: Path) -> None:
    empty = CountTrainer(CountConfig(tmp_path, tmp_path / "empty", steps=0))
    empty.train()
    assert empty.saved == [(0, True)]
    again = CountTrainer(CountConfig(tmp_path, tmp_path / "empty", steps=0))
    again.train()
    assert again.run.resumed and again.saved == []


def test_other_ranks_neither_make_the_folder_nor_log_nor_write(tmp_path: Path) -> None:
    trainer = CountTrainer(CountConfig(tmp_path, tmp_path / "out"), ranks=Ranks(1, 1))  # world 1: no barrier
    trainer.train()
    assert not (tmp_path / "out").exists() and trainer.saved == [] and trainer.run.step == 5


def test_a_config_signs_only_its_resume_keys() -> None:
    config = CountConfig(Path("d"), Path("o"), lr=0.25, seed=3, batch_size=9)
    assert config.resume_settings() == {"lr": 0.25, "seed": 3}
