"""The /server_info fields the suite reads, as the structs it reads them through.

Every field is typed ``Any``: a server that answers an odd value (a bool for an int, a
missing list) must give None in the summary, not a decode error; the readers check types.
``SERVER_INFO_FIELDS`` and ``INTERNAL_STATE_FIELDS`` are these structs' own field names, so
the contract test checks exactly what the code reads.
"""

from __future__ import annotations

from typing import Any

import msgspec


class InternalState(msgspec.Struct):
    """One entry of /server_info's ``internal_states`` (the first scheduler's)."""

    avg_spec_accept_length: Any = None


class ServerInfo(msgspec.Struct):
    """The part of /server_info (SGLang's, or the simulator's) that the suite reads."""

    version: Any = None
    model_path: Any = None
    tp_size: Any = None
    kv_cache_dtype: Any = None
    max_total_num_tokens: Any = None
    max_running_requests: Any = None
    speculative_algorithm: Any = None
    speculative_num_steps: Any = None
    speculative_eagle_topk: Any = None
    speculative_num_draft_tokens: Any = None
    internal_states: Any = None
    sim: Any = None  # the simulator's own block; SGLang has none


# Fields only the simulator answers: not part of SGLang's contract.
SIMULATOR_ONLY_FIELDS: frozenset[str] = frozenset({"sim"})


def read_server_info(info: Any) -> ServerInfo:
    """The fields the suite reads from a decoded /server_info object."""
    return msgspec.convert(info, ServerInfo)


def first_internal_state(info: ServerInfo) -> InternalState:
    states = info.internal_states
    first = states[0] if isinstance(states, list) and states else None
    return msgspec.convert(first, InternalState) if isinstance(first, dict) else InternalState()


def _names(struct: type[msgspec.Struct]) -> tuple[str, ...]:
    return tuple(field.encode_name for field in msgspec.structs.fields(struct))


SERVER_INFO_FIELDS: tuple[str, ...] = tuple(
    name for name in _names(ServerInfo) if name not in SIMULATOR_ONLY_FIELDS
)
INTERNAL_STATE_FIELDS: tuple[str, ...] = _names(InternalState)
