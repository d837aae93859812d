"""What tests share across folders: paths and samples, a booted simulator, the shipped suite.

Fixtures live in plugin modules registered by tests/conftest.py (`pytest_plugins`); helpers
and types are imported from here directly. No test imports a conftest.
"""
