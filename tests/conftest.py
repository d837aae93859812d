"""Shared test setup: pytester for the plugin's end-to-end tests, and tests/support's fixtures."""

pytest_plugins = ["pytester", "tests.support.sim", "tests.support.e2e"]
