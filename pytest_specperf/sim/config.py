"""The simulator's resolved configuration: what `args.parse_args` returns and every part of
the server reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_specperf.sim import model
from pytest_specperf.sim.faults import Fault


@dataclass(frozen=True)
class SimConfig:
    """Everything the server needs, resolved."""

    host: str
    port: int
    api_key: str | None
    profile: model.Profile
    algorithm: str | None  # normalised: NEXTN -> EAGLE
    num_steps: int | None
    eagle_topk: int | None
    num_draft_tokens: int | None
    chain: int
    max_running_requests: int
    max_total_num_tokens: int
    context_length: int
    seed: int
    speedup: float
    noise: float
    jitter: float
    point_noise: float
    point_noise_period: float
    noise_seed: int
    slowdown: float
    acceptance: float | None
    boot_delay: float
    crash_after: int | None
    hang_at_boot: bool
    fault: Fault | None
    fault_rate: float
    error_status: int
    server_args: dict[str, Any] = field(default_factory=dict)
    # --sim-corrupt-output named this server's depth: greedy outputs are altered.
    corrupt_output: bool = False
    # --sim-cold-shape-ms: model ms added to the first step of each step shape of a boot.
    cold_shape_ms: float = 0.0
    # --sim-cpu-bound: the scheduler waits out each step on the CPU instead of sleeping.
    cpu_bound: bool = False
    warnings: tuple[str, ...] = ()

    @property
    def max_req_input_len(self) -> int:
        return self.context_length - 6

    @property
    def served_model_name(self) -> str:
        return str(self.server_args["served_model_name"])
