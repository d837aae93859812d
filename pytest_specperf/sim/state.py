"""The running server's mutable state, shared by every handler."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_specperf.sim.config import SimConfig
from pytest_specperf.sim.faults import Fault, pick_fault
from pytest_specperf.sim.scheduler import Scheduler


@dataclass
class SimState:
    config: SimConfig
    scheduler: Scheduler
    ready: bool = False
    generation_arrivals: int = 0
    started_wall: float = 0.0

    def next_fault(self) -> Fault | None:
        """The fault (if any) for the next generation request, by arrival order."""
        index = self.generation_arrivals
        self.generation_arrivals += 1
        cfg = self.config
        return pick_fault(cfg.fault, cfg.fault_rate, cfg.seed, index)
