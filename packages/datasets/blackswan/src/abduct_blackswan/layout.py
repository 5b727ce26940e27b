"""Where BlackSwan's files are: the three Hugging Face dataset repos and their split files.

``--data DIR`` holds one folder per repo, as ``huggingface-cli download UBC-ViL/BlackSwanSuite-<V>
--repo-type dataset --local-dir DIR/<V>`` leaves it (``DIR/MCQ``, ``DIR/YN``, ``DIR/Gen``), or
is the hub cache, where a repo lives in ``datasets--UBC-ViL--BlackSwanSuite-<V>/snapshots/<commit>/``
(the commit ``refs/main`` names, else the only snapshot). ``DIR`` may also be one repo's folder
itself (it holds ``BlackSwanSuite_<V>_*`` files). The question files lie at the repo's root:
``BlackSwanSuite_<V>_Val.jsonl`` for ``validation`` (the verified name); the test file's name
is not verified, so any one ``*_Test*.jsonl`` or ``*_Test*.json`` (a JSON list) is taken and
several are refused. A missing repo folder is one line naming the download command and the
gating (each repo is gated: accept its terms on the dataset page while logged in).
"""

from __future__ import annotations

from pathlib import Path

from abduct import AbductError
from abduct.kit import require_dir
from abduct.kit.io import hub_snapshot

VARIANTS = ("MCQ", "YN", "Gen")
SPLITS = ("validation", "test")
HUB_OWNER = "UBC-ViL"
SPLIT_TAGS = {"validation": "Val", "test": "Test"}
SUFFIXES = (".jsonl", ".json")


def repo_id(variant: str) -> str:
    return f"{HUB_OWNER}/BlackSwanSuite-{variant}"


def download_hint(variant: str, data_dir: Path) -> str:
    """The commands that fetch one repo into ``data_dir/<variant>``, and the gating."""
    return (f"download it with `huggingface-cli download {repo_id(variant)} --repo-type dataset --local-dir "
            f"{Path(data_dir) / variant}` after accepting the terms on https://huggingface.co/datasets/"
            f"{repo_id(variant)} while logged in (`huggingface-cli login` or HF_TOKEN; a 401/403 means the terms "
            "were not accepted or no token was given)")


def _holds_files(folder: Path, variant: str) -> bool:
    return any(p.is_file() for p in folder.glob(f"BlackSwanSuite_{variant}_*"))


def repo_dir(data_dir: Path, variant: str) -> Path:
    """The folder holding ``variant``'s repo (see the module docstring); one line when there is none."""
    data_dir = require_dir(Path(data_dir), "data directory")
    for folder in (data_dir / variant, data_dir / f"BlackSwanSuite-{variant}"):
        if folder.is_dir():
            return folder
    cache_name = f"datasets--{HUB_OWNER}--BlackSwanSuite-{variant}"
    for cache_repo in (data_dir / cache_name, data_dir / "hub" / cache_name):
        snapshot = hub_snapshot(cache_repo) if cache_repo.is_dir() else None
        if snapshot is not None:
            return snapshot
    if _holds_files(data_dir, variant):
        return data_dir
    raise AbductError(f"BlackSwan {variant}: no folder {data_dir / variant} (nor a hub cache "
                      f"{cache_name}/snapshots/<commit>/ in {data_dir}); {download_hint(variant, data_dir)}")


def _matches(folder: Path, tag: str) -> list[Path]:
    """Files at ``folder``'s root whose name has ``_<tag>`` (any case), JSON Lines or JSON."""
    wanted = f"_{tag.lower()}"
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and p.suffix.lower() in SUFFIXES and wanted in p.stem.lower())


def split_file(folder: Path, variant: str, split: str) -> Path:
    """The question file of ``split`` at the root of ``variant``'s repo ``folder``."""
    if split not in SPLITS:
        raise AbductError(f"BlackSwan has no split '{split}' (splits: {', '.join(SPLITS)})")
    tag = SPLIT_TAGS[split]
    exact = folder / f"BlackSwanSuite_{variant}_{tag}.jsonl"
    if exact.is_file():
        return exact
    found = _matches(folder, tag)
    if len(found) == 1:
        return found[0]
    if not found:
        hidden = " (the test questions' file name is not verified: any *_Test*.jsonl or *_Test*.json is read)" \
            if split == "test" else ""
        raise AbductError(f"BlackSwan {variant}: no {split} file in {folder} (expected {exact.name}){hidden}")
    raise AbductError(f"BlackSwan {variant}: several {split} files in {folder}: {', '.join(p.name for p in found)}; "
                      "keep one")
