"""Fixtures: the test plugin in the process-wide registry, and a tiny pair dataset."""

from __future__ import annotations

from clip_helpers import install_test_plugin, write_pair_data

from abduct_testing import data_fixture, registry_fixture

test_registry = registry_fixture(install_test_plugin)
pair_data = data_fixture(write_pair_data, "pair_data")
