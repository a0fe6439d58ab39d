# The scenario layer's requests from Python: the classes take their fields as
# attributes, run() gives the answer the package's functions wrap, and a
# field that does not exist or a value out of range is refused by name.
import json

import pytest

import fitspeed
from fitspeed import _fitspeed


def test_device_sweep_request_answers_what_model_returns():
    request = _fitspeed.DeviceSweepRequest()
    request.model = "resnet50"
    request.device = "a100"
    request.batches = [32, 64, 128]
    request.precision = "mixed"
    answer = request.run()
    assert answer.usable and answer.notes == []
    assert json.loads(answer.to_json()) == fitspeed.model(
        "resnet50", "a100", [32, 64, 128], precision="mixed").to_dict()
    assert "resnet50 modeled on a100 (mixed, 1 device)" in answer.brief_report()
    assert "samples/s_80%" in answer.full_report()  # the per-batch table with its interval


def test_llm_step_request_derives_dp_and_the_global_batch():
    request = _fitspeed.LlmStepRequest()
    request.model = "llama-2-7b"
    request.device = "h100"
    request.devices = 16
    request.seq_len = 4096
    request.tp = 2
    request.pp = 2
    request.micro_batch = 2
    step = json.loads(request.run().to_json())
    # dp = 16 / (2 x 2) = 4; global batch = 2 x 4 = 8.
    assert step["split"]["dp"] == 4
    assert step["split"]["global_batch"] == 8


def test_a_field_the_request_lacks_is_a_type_error():
    with pytest.raises(TypeError, match="has no field 'tensor_parallel'"):
        fitspeed._request(_fitspeed.LlmStepRequest, tensor_parallel=2)


def test_bad_values_are_refused_by_name():
    request = _fitspeed.LlmPlanRequest()
    request.model = "llama-2-7b"
    request.device = "h100"
    request.devices = 8
    request.global_batch = 64
    request.seq_len = 4096
    request.tokens = float("nan")
    with pytest.raises(fitspeed.UsageError, match="tokens nan"):
        request.validate()
    with pytest.raises(fitspeed.UsageError):
        request.precision = "fp64"
