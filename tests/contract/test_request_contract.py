"""The request bodies the load generator sends validate with SGLang's own request types."""

from __future__ import annotations

import pytest

from pytest_specperf.measure.workload import Workload, completions_body, generate_body
from tests.support import sglang_contract as contract

pytestmark = pytest.mark.contract
pytest.importorskip(
    "sglang.srt.server_args",
    reason="SGLang is not importable; install it with tools/install-sglang-contract.sh",
)


def test_default_workload_bodies_validate() -> None:
    assert contract.check_request_bodies(Workload()) == []


def test_completions_workload_bodies_validate() -> None:
    workload = Workload(endpoint="completions", temperature=0.7, ignore_eos=False)
    assert contract.check_request_bodies(workload, model="my-model") == []


def test_generate_body_normalizes_to_one_streaming_request() -> None:
    generate_req_input, _ = contract.request_types()
    request = generate_req_input(**generate_body(Workload(max_new_tokens=7)))
    request.normalize_batch_and_arguments()
    assert request.is_single
    assert request.stream is True
    assert request.sampling_params["max_new_tokens"] == 7


def test_completions_body_keeps_usage_chunk_and_ignore_eos() -> None:
    _, completion_request = contract.request_types()
    request = completion_request.model_validate(completions_body(Workload(), "m"))
    assert request.stream_options is not None
    assert request.stream_options.include_usage is True
    assert request.ignore_eos is True


def test_completions_body_with_wrong_type_is_rejected() -> None:
    _, completion_request = contract.request_types()
    body = completions_body(Workload(), "m")
    body["max_tokens"] = "lots"
    with pytest.raises(ValueError):
        completion_request.model_validate(body)
