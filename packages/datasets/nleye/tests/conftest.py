from __future__ import annotations

import csv
from pathlib import Path

import pytest

from abduct_nleye.synth import synthesize

HEADER = ["sample_id", "premise_description", "hypothesis1_description", "hypothesis2_description", "label",
          "gold_explanation", "reasoning_category", "domain", "time_direction", "time_duration", "extra_url"]


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthesize(tmp_path_factory.mktemp("nleye") / "data", samples=18, seed=0)


def write_csv(path: Path, rows: list[list[str]], header: list[str] = HEADER, bom: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def row(sid: str, gold: str, category: str = "physical", direction: str = "forward") -> list[str]:
    return [sid, "p", "h one", "h two", gold, "because", category, "indoor", direction, "short", "http://x"]
