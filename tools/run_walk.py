"""The walk of one ``abduct eval``: which modules ("rooms") the run passes through, in order.

Runs ``run_evaluation`` (a second time, so that imports and the registry's plugin discovery
are not part of the walk) on the example plugin's ``example-colors`` task with the ``random``
model, ``--dataset example-colors,questions=questions.json`` and ``--limit`` (data written into a
temporary folder), under ``sys.setprofile``. Each Python function's first call (the walk, not how
often a loop goes round it) is mapped to its module; the rooms are the run's own modules
(``abduct._run.*``) and the plugins (each a top-level package ``abduct_*``, one room): the libraries the run
calls (``abduct.kit``, the contract, the engines, the registry) are passages, not rooms.
Consecutive calls in one room collapse into one visit. Printed:

- ``returns``: visits to a room that the walk had already visited and left since (the same count
  over every abduct module, passages included, follows for reference);
- ``plugin entries``: each plugin function entered from outside its own distribution's code
  (task, dataset and model factories, the task's ``plan``/``finish``/``view``, the dataset's
  ``load``/``files``, the model's declared methods, hooks), with how many times;
- ``calls``: how often the run parses a spec (any: the task's, the model's, each ``--dataset``), reads
  the task's traits, and builds the task and its dataset;
- ``unexpected``: the plugin entries that are none of those (must be empty).

``python tools/run_walk.py [--limit N] [--rooms] [--json]``; ``--rooms`` prints the walk itself.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

TASK, DATASET, MODEL = "example-colors", "example-colors", "random"
# What the run may enter a plugin through: the registry's factories and hooks, the task's
# declared methods, the dataset's loading, the model's declared methods.
ALLOWED = {
    "plan", "finish", "view",  # the task
    "load", "files",  # the dataset
    "score", "generate", "describe_fingerprint", "fingerprint",  # a model's declared methods
}
# Done once per run: the task spec parsed, the task's traits read, the task and its dataset built.
COUNTED = ("abduct.contract.spec:Spec.parse", "abduct._declare.traits:task_traits",
           "abduct_plugin_example.task:make_colors", "abduct_plugin_example.data:make_choice_questions")
ALLOWED_PREFIXES = ("make_", "register_", "render_")  # factories and hooks, called by the registry


def _room(frame: FrameType) -> str | None:
    module = frame.f_globals.get("__name__", "")
    top = module.split(".", 1)[0]
    return module if top == "abduct" or top.startswith("abduct_") else None


def _distribution(module: str) -> str:
    return module.split(".", 1)[0]


def _collapsed(rooms: Iterable[str]) -> list[str]:
    out: list[str] = []
    for room in rooms:
        if not out or out[-1] != room:
            out.append(room)
    return out


def _returns(walked: list[str]) -> int:
    seen: set[str] = set()
    returns = 0
    for room in walked:
        returns += room in seen
        seen.add(room)
    return returns


def walk(limit: int = 5) -> dict[str, Any]:
    """The walk's rooms, its returns and the plugin functions it entered."""
    from abduct._run.evaluate import EvalConfig, run_evaluation
    from abduct_plugin_example.data import write_dataset

    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "data", Path(tmp) / "out"
        write_dataset(data, items=max(limit * 2, 8))
        config = EvalConfig(TASK, MODEL, data, out, limit=limit, quiet=True, use_cache=False, ci_resamples=0,
                            datasets=(f"{DATASET},questions=questions.json",))
        run_evaluation(replace(config, out_dir=Path(tmp) / "warm"))  # imports and the registry, outside the walk
        rooms: list[str] = []
        entries: Counter[str] = Counter()
        called: set[Any] = set()
        counted: Counter[str] = Counter()

        def profile(frame: FrameType, event: str, arg: Any) -> None:
            code = frame.f_code
            if event != "call" or code.co_name == "<module>":
                return
            room = _room(frame)
            if room is None:
                return
            if f"{room}:{code.co_qualname}" in COUNTED:
                counted[f"{room}:{code.co_qualname}"] += 1
            if not room.startswith("abduct."):  # plugin code: entered from where?
                caller = frame.f_back
                while caller is not None and _room(caller) is None:  # through pluggy, functools...
                    caller = caller.f_back
                if caller is None or _distribution(_room(caller) or "") != _distribution(room):
                    entries[f"{room}:{code.co_qualname}"] += 1
            if code not in called:  # a function's first call only: the walk, not how often a loop goes round it
                called.add(code)
                rooms.append(room)

        sys.setprofile(profile)
        try:
            results = run_evaluation(config)
        finally:
            sys.setprofile(None)
    walked = _collapsed(r if r.startswith("abduct.") else _distribution(r)
                        for r in rooms if r.startswith("abduct._run") or not r.startswith("abduct."))
    everywhere = _collapsed(rooms)
    unexpected = sorted(e for e in entries
                        if not (e.rsplit(".", 1)[-1] in ALLOWED or e.split(":")[1].startswith(ALLOWED_PREFIXES)))
    return {"visits": len(walked), "rooms": len(set(walked)), "returns": _returns(walked),
            "returns_all_modules": _returns(everywhere), "entries": dict(sorted(entries.items())),
            "unexpected": unexpected, "counted": {name: counted[name] for name in COUNTED}, "walk": walked, "metrics": results["metrics"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--rooms", action="store_true", help="print the walk, one visit a line")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    found = walk(args.limit)
    if args.json:
        print(json.dumps({k: v for k, v in found.items() if k != "walk" or args.rooms}, indent=1))
        return 0
    if args.rooms:
        print("\n".join(found["walk"]))
    print(f"visits {found['visits']}, rooms {found['rooms']}, returns {found['returns']} "
          f"(over every abduct module: {found['returns_all_modules']})")
    print("plugin entries:")
    for entry, count in found["entries"].items():
        print(f"  {count:4d}  {entry}")
    print("calls:", ", ".join(f"{name.split(':')[1]} {count}" for name, count in found["counted"].items()))
    print(f"unexpected: {', '.join(found['unexpected']) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
