from __future__ import annotations

import subprocess
import sys

import pytest

from abduct import AbductError
from abduct.host import build_registry

NAMES = {"bleu", "meteor", "rouge-l", "cider", "bertscore", "bem", "bertscore-hungarian"}


def test_metrics_are_registered_and_loadable() -> None:
    registry = build_registry()
    found = {c.name: c for c in registry.components("metric") if c.plugin == "metrics"}
    assert set(found) == NAMES
    for component in found.values():
        assert callable(component.registration.load())
    info = next(p for p in registry.plugins if p.name == "metrics")
    assert info.error is None
    # exact-match is the core's now; this plugin must not claim the name too.
    assert registry.get("metric", "exact-match").plugin == "core"


def test_plugin_and_package_imports_stay_light() -> None:
    code = (
        "import sys, abduct_metrics, abduct_metrics.plugin;"
        "from abduct.host import build_registry; build_registry().components('metric');"
        "heavy = [m for m in ('torch', 'transformers', 'bert_score', 'pycocoevalcap') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_options_are_typed_and_unknown_ones_refused() -> None:
    registry = build_registry()
    metric = registry.create("metric", "cider,clean_non_ascii=true")
    assert metric.clean_non_ascii is True
    with pytest.raises(AbductError, match=r"no option 'clean_non_asci'.*did you mean 'clean_non_ascii'"):
        registry.create("metric", "cider,clean_non_asci=true")
    with pytest.raises(AbductError, match="not a boolean"):
        registry.create("metric", "bleu,clean_non_ascii=maybe")
    with pytest.raises(AbductError, match="takes no ':argument'"):
        registry.create("metric", "rouge-l:x")
    with pytest.raises(AbductError, match="option 'model'.*is required"):
        registry.create("metric", "bem")
