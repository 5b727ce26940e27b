"""Every registered factory of every first-party package and both examples imports with
DeprecationWarning as an error: nothing a plugin or the core registers leans on a deprecated API
(numpy's, torch's, or ours)."""

from __future__ import annotations

import json
import subprocess
import sys

# In a fresh interpreter started with -W error::DeprecationWarning, so that a warning at import
# time (which an earlier import in this process would have used up) fails the import.
PROBE = """
import importlib, json
from abduct.host import get_registry
registry = get_registry()
failed, count = {}, 0
for kind in ("dataset", "task", "model", "metric", "demo"):
    for component in registry.components(kind):
        count += 1
        try:
            component.registration.load()
        except Exception as exc:  # DeprecationWarning raised as an error, or any other failure
            failed[f"{kind} {component.name} ({component.registration.factory})"] = f"{type(exc).__name__}: {exc}"
plugins = sorted(p.name for p in registry.plugins if p.error is None)
print(json.dumps({"count": count, "failed": failed, "plugins": plugins}))
"""


def test_every_registered_factory_imports_with_deprecation_warnings_as_errors() -> None:
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", PROBE],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["failed"] == {}
    assert {"core", "sherlock", "tutorial", "example"} <= set(found["plugins"]), found["plugins"]
    assert found["count"] > 50
