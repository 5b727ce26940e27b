from __future__ import annotations

import subprocess
import sys

from abduct.plugins import build_registry

NAMES = {"bleu", "meteor", "rouge-l", "cider", "bertscore", "bem", "exact-match"}


def test_metrics_are_registered_and_loadable() -> None:
    registry = build_registry()
    found = {c.name: c for c in registry.components("metric") if c.plugin == "metrics"}
    assert set(found) == NAMES
    for component in found.values():
        assert callable(component.registration.load())


def test_plugin_and_package_imports_stay_light() -> None:
    code = (
        "import sys, abduct_metrics, abduct_metrics.plugin, abduct_metrics.cli;"
        "from abduct.plugins import build_registry; build_registry().components('metric');"
        "heavy = [m for m in ('torch', 'transformers', 'bert_score', 'pycocoevalcap') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_exact_match_through_the_registry() -> None:
    metric = build_registry().create("metric", "exact-match")
    assert metric.compute({"x": "The Cat"}, {"x": ["cat"]}).corpus == {"exact_match": 1.0}
