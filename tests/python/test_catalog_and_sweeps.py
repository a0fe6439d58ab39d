# The catalog, the models and the host sweep through Python.
import math

import fitspeed


def test_transformer_parameter_counts_are_the_reference_implementations():
    # Hugging Face transformers' num_parameters() of the published configs
    # (docs/llm.md, "Models"): Llama-3-8B 8,030,261,248; Llama-3-70B 70,553,706,496;
    # Mixtral-8x7B 46,702,792,704.
    assert fitspeed.transformer("llama-3-8b")["parameters"] == 8_030_261_248
    assert fitspeed.transformer("llama-3-70b")["parameters"] == 70_553_706_496
    assert fitspeed.transformer("mixtral-8x7b")["parameters"] == 46_702_792_704


def test_short_form_counts_by_hand():
    # One layer, hidden 64, 4 heads, FFN 256, vocabulary 100, learned positions 32,
    # biases, LayerNorm, tied output -- by hand:
    #   embeddings 100*64 + 32*64 = 8,448
    #   attention 4*64*64 + 4*64 = 16,640; feed-forward 2*64*256 + 256 + 64 = 33,088
    #   two LayerNorms 2*2*64 = 256; final LayerNorm 128
    #   total 8,448 + 16,640 + 33,088 + 256 + 128 = 58,560
    spec = ("transformer:layers=1,hidden=64,heads=4,ffn=256,vocab=100,positions=learned,"
            "max_positions=32,bias=1")
    assert fitspeed.transformer(spec)["parameters"] == 58_560


def test_devices_carry_their_numbers_and_sources():
    devices = {d["name"]: d for d in fitspeed.devices()}
    assert {"a100", "h100", "t4", "tpu-v5p"} <= set(devices)
    assert "host" not in devices
    # H100 SXM: 989.4 TFLOPS dense BF16 tensor peak (NVIDIA's datasheet).
    assert math.isclose(devices["h100"]["tensor16_flops_per_s"], 989.4e12, rel_tol=0.01)


def test_models_lists_the_zoo_and_the_transformers():
    kinds = {(m["name"], m["kind"]) for m in fitspeed.models()}
    assert ("resnet50", "zoo") in kinds
    assert ("llama-3-70b", "transformer") in kinds


def test_host_sweep_measures_every_batch_and_fits_them():
    sweep = fitspeed.sweep("cnn-cifar-small", [1, 2, 4], threads=1, min_repeats=2,
                           min_time_s=0.01, warmup_steps=1)
    d = sweep.to_dict()
    steps = sweep.steps(as_frame=False)
    assert [s["batch"] for s in steps] == [1, 2, 4]
    for s in steps:  # sane, not fast: the step took time and the rate is its inverse
        assert s["step_time_s"] > 0
        assert math.isclose(s["throughput_sps"], s["batch"] / s["step_time_s"], rel_tol=1e-6)
    assert d["fits"][0]["law"] == "hyperbolic"
