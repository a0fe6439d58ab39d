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


def test_uneven_stages_and_expert_folding_reach_the_split():
    # Llama 3.1 405B's 126 layers on pp 16 x vp 8 with the embedding and the
    # loss counted as layers (128 slots, one a chunk): the layout the request
    # builds is the one the CLI's --embedding-as-layer --loss-as-layer builds,
    # every stage's memory is reported, and a layout given whole is the same.
    # Global batch 256 over dp 16: 16 micro-batches, a multiple of pp as the
    # interleaved schedule needs.
    step = fitspeed.llm_step("llama-3.1-405b", "h100", seq_len=8192, devices=2048, tp=8, pp=16,
                             vp=8, global_batch=256, embedding_as_layer=True, loss_as_layer=True)
    split = step.to_dict()["split"]
    assert split["layout"].startswith("E|t|t|") and split["layout"].endswith("|t|L")
    assert len(step.to_dict()["memory"]["stage_totals"]) == 16
    again = fitspeed.llm_step("llama-3.1-405b", "h100", seq_len=8192, devices=2048, tp=8, pp=16,
                              vp=8, global_batch=256, pipeline_layout="E|(t|)*126L")
    assert again.to_dict()["step_time_s"] == step.to_dict()["step_time_s"]
    # Mixtral with its experts folded over the tp ranks (etp 1): etp reaches the split.
    moe = fitspeed.llm_step("mixtral-8x7b", "h100", seq_len=4096, devices=16, tp=2, ep=8, etp=1)
    assert moe.to_dict()["split"]["etp"] == 1
    with pytest.raises(fitspeed.Error, match="etp x ep = 16 must divide tp x cp x dp = 8"):
        fitspeed.llm_step("mixtral-8x7b", "h100", seq_len=4096, devices=8, tp=2, ep=8, etp=2)


def test_cuda_graphs_lift_the_host_floor_of_small_per_gpu_work():
    # Llama-2-70B LoRA at 1,024 tokens a GPU (tp 4, cp 8 on 64 GB200): eager,
    # every kernel's dispatch holds the passes; as CUDA graphs one launch a pass.
    kwargs = dict(seq_len=8192, devices=64, tp=4, cp=8, lora_rank=16, precision="fp8",
                  sequence_parallel=True)
    eager = fitspeed.llm_step("llama-2-70b", "gb200", **kwargs).to_dict()
    graphed = fitspeed.llm_step("llama-2-70b", "gb200", cuda_graphs=True, **kwargs).to_dict()
    assert graphed["parts"]["compute_s"] < 0.5 * eager["parts"]["compute_s"]
    assert any("CUDA graphs" in n for n in graphed["notes"])


def test_framework_is_a_request_field_with_its_defaults():
    # The request's framework field and llm_step's keyword give the same step;
    # FSDP's defaults (FULL_SHARD, 16-bit gradients) unless given.
    names = [name for name, _ in fitspeed.llm_frameworks()]
    assert names[0] == "megatron" and "fsdp" in names and "maxtext" in names
    r = _fitspeed.LlmStepRequest()
    r.model = "llama-2-7b"
    r.device = "h200"
    r.devices = 8
    r.seq_len = 4096
    r.framework = "fsdp"
    r.gradient_bytes = 2
    by_request = json.loads(r.run().to_json())
    step = fitspeed.llm_step("llama-2-7b", "h200", seq_len=4096, devices=8,
                             framework="fsdp").to_dict()
    assert by_request["step_time_s"] == step["step_time_s"]
    assert step["split"]["zero"] == 3 and step["training"]["gradient_bytes"] == 2
    assert step["training"]["framework"] == "fsdp"
    zero2 = fitspeed.llm_step("llama-2-7b", "h200", seq_len=4096, devices=8, framework="fsdp",
                              zero=2).to_dict()
    assert zero2["split"]["zero"] == 2
    with pytest.raises(fitspeed.UsageError, match="does not run tensor parallelism"):
        fitspeed.llm_step("llama-2-7b", "h200", seq_len=4096, devices=8, tp=2, framework="fsdp")
    with pytest.raises(fitspeed.UsageError, match="expected one of megatron"):
        fitspeed.llm_step("llama-2-7b", "h200", seq_len=4096, devices=8, framework="jax")
    plan = fitspeed.plan_llm("llama-2-7b", "h200", devices=16, global_batch=64, seq_len=4096,
                             framework="fsdp2", top=5).to_dict()
    assert plan["training"]["framework"] == "fsdp2"
    hybrid = fitspeed.plan_llm("llama-2-7b", "h200", devices=16, global_batch=64, seq_len=4096,
                               framework="fsdp", fix={"shard_group": 8}, top=3).to_dict()
    assert all(r["split"]["shard_group"] == 8 for r in hybrid["ranked"])
    step8 = fitspeed.llm_step("llama-2-7b", "h200", seq_len=4096, devices=16, framework="fsdp",
                              shard_group=8).to_dict()
    assert step8["split"]["shard_group"] == 8
