"""Fixtures: the toy benchmark of the test kit (written once per module), and a private cache."""

from __future__ import annotations

from abduct_testing import data_fixture, private_cache_fixture
from abduct_testing.toy import write_toy_data

toy_data = data_fixture(write_toy_data, "toy_data")
private_cache = private_cache_fixture()
