"""Bodies of the informational endpoints: /server_info, /model_info, /v1/models.

New /server_info content goes in `server_info_body` (SGLang's own keys) or `sim_section`
(the simulator's knobs, under "sim").
"""

from __future__ import annotations

import os
from typing import Any

from pytest_specperf.sim.args import SIM_VERSION
from pytest_specperf.sim.sglang_defaults import INTERNAL_STATE_EXTRA_DEFAULTS
from pytest_specperf.sim.state import SimState


def model_info_body(st: SimState) -> dict[str, Any]:
    cfg = st.config
    sa = cfg.server_args
    return {
        "model_path": sa["model_path"],
        "tokenizer_path": sa["tokenizer_path"],
        "is_generation": True,
        "preferred_sampling_params": None,
        "weight_version": "default",
        "has_image_understanding": False,
        "has_audio_understanding": False,
        "model_type": cfg.profile.model_type,
        "architectures": list(cfg.profile.architectures),
    }


def sim_section(st: SimState) -> dict[str, Any]:
    cfg = st.config
    return {
        "profile": cfg.profile.name,
        "hardware": cfg.profile.hardware,
        "speedup": cfg.speedup,
        "seed": cfg.seed,
        "noise": cfg.noise,
        "noise_factor": st.scheduler.noise_factor,
        "jitter": cfg.jitter,
        "slowdown": cfg.slowdown,
        "acceptance": cfg.acceptance,
        "boot_delay": cfg.boot_delay,
        "crash_after": cfg.crash_after,
        "hang_at_boot": cfg.hang_at_boot,
        "fault": cfg.fault,
        "fault_rate": cfg.fault_rate if cfg.fault else 0.0,
        "error_status": cfg.error_status,
        "forward_sleep_time": st.scheduler.forward_sleep_s or None,
        "version": SIM_VERSION,
        # The GPUs the simulator was started with: how the suite's per-server GPU slices
        # (server/gpus.py) are checked on a machine without GPUs. None: not set.
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }


def server_info_body(st: SimState) -> dict[str, Any]:
    cfg = st.config
    sched = st.scheduler
    prof = cfg.profile
    internal: dict[str, Any] = dict(cfg.server_args)
    internal.update(INTERNAL_STATE_EXTRA_DEFAULTS)
    internal.update(
        context_length=cfg.context_length,
        effective_max_running_requests_per_dp=cfg.max_running_requests,
        last_gen_throughput=sched.last_gen_throughput,
        memory_usage={
            "graph": prof.graph_gb,
            "kvcache": prof.kvcache_gb,
            "token_capacity": cfg.max_total_num_tokens,
            "weight": prof.weight_gb,
        },
    )
    accept = sched.avg_accept_length
    if cfg.algorithm is not None and accept is not None:
        internal["avg_spec_accept_length"] = accept
    body: dict[str, Any] = dict(cfg.server_args)
    body.update(
        internal_states=[dict(sorted(internal.items()))],
        max_req_input_len=cfg.max_req_input_len,
        max_total_num_tokens=cfg.max_total_num_tokens,
        status="ready" if st.ready else "starting",
        version=SIM_VERSION,
    )
    body = dict(sorted(body.items()))
    body["sim"] = sim_section(st)
    return body


def v1_models_body(st: SimState) -> dict[str, Any]:
    cfg = st.config
    name = cfg.served_model_name
    return {
        "object": "list",
        "data": [
            {
                "id": name,
                "object": "model",
                "created": int(st.started_wall),
                "owned_by": "sglang",
                "root": name,
                "parent": None,
                "max_model_len": cfg.context_length,
            }
        ],
    }
