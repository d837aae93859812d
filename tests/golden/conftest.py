"""The simulator fixtures of tests/sim, shared with the golden-sample tests."""

from tests.sim.conftest import sim

__all__ = ["sim"]
