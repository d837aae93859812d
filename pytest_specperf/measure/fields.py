"""Every SGLang response field the suite reads, in one place.

The contract tests hold these names against SGLang's source, and the simulator's tests hold
the simulator to the same list.
"""

SERVER_INFO_FIELDS: tuple[str, ...] = (
    "version",
    "max_total_num_tokens",
    "max_running_requests",
    "model_path",
    "tp_size",
    "kv_cache_dtype",
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_draft_model_path",
    "internal_states",
)
INTERNAL_STATE_FIELDS: tuple[str, ...] = ("avg_spec_accept_length",)
# Read from every /generate stream chunk's meta_info.
META_INFO_FIELDS: tuple[str, ...] = ("id", "completion_tokens", "prompt_tokens", "finish_reason")
# Read from the final chunk's meta_info when the server speculates.
FINAL_META_INFO_FIELDS: tuple[str, ...] = (
    "e2e_latency",
    "spec_verify_ct",
    "spec_accept_length",
    "spec_correct_drafts_histogram",
)
# Read from a whole (non-streaming) /generate answer: the greedy output ids (lossless.py).
GENERATE_RESPONSE_FIELDS: tuple[str, ...] = ("output_ids",)
# Read from the OpenAI-compatible usage chunk.
USAGE_FIELDS: tuple[str, ...] = ("prompt_tokens", "completion_tokens")
