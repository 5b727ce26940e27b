"""``abduct visualriddles check``: the metadata file's layout and rows, each task's columns, and
every image (missing or unreadable), named by riddle."""

from __future__ import annotations

from pathlib import Path

from abduct import AbductError
from abduct.kit import image_problem, require_dir
from abduct_visualriddles.records import load_riddles


def check_data(data_dir: Path) -> list[str]:
    """One line per problem: the file's first one, what a task cannot read, each bad image."""
    from abduct_visualriddles.judge import judgements
    from abduct_visualriddles.mcq import options

    data_dir = require_dir(Path(data_dir), "data directory")
    try:
        riddles = load_riddles(data_dir)
    except AbductError as exc:
        return [str(exc)]
    problems = []
    for name, read in (("visualriddles-mcq", lambda: [options(r) for r in riddles]),
                       ("visualriddles-judge", lambda: [judgements(riddles, ref) for ref in ("based", "free")])):
        try:
            read()
        except AbductError as exc:  # that task cannot run on this file; the others may
            problems.append(f"{name}: {exc}")
    for riddle in riddles:
        problem = image_problem(Path(riddle.image))
        if problem:
            problems.append(f"riddle {riddle.id}: {problem}")
    return problems
