# The CLI and the Python functions fill the same request of the scenario layer
# (fitspeed/scenario/; the requests themselves are tested in
# tests/scenario/request_test.cc and test_requests.py): these check that each
# client maps its options to the same fields, the same options giving the
# same JSON.
import json
import subprocess

import pytest

import fitspeed


def run_cli(cli, *args):
    done = subprocess.run([cli, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("options, kwargs", [
    (["--precision", "mixed"], {"precision": "mixed"}),
    (["--precision", "mixed", "--framework", "pytorch"],
     {"precision": "mixed", "framework": "pytorch"}),
    (["--devices", "8", "--precision", "tf32"], {"devices": 8, "precision": "tf32"}),
])
def test_modeled_sweep_equals_the_cli_json(cli, options, kwargs):
    expected = run_cli(cli, "sweep", "resnet50", "--device", "a100", "--batches", "32,64,128,256",
                       *options, "--output", "json")
    got = fitspeed.model("resnet50", "a100", [32, 64, 128, 256], **kwargs).to_dict()
    assert got == expected


def test_modeled_transformer_with_sequence_length_equals_the_cli_json(cli):
    expected = run_cli(cli, "sweep", "bert-large", "--device", "v100-sxm2", "--seq-len", "128",
                       "--precision", "mixed", "--batches", "8,16,32", "--output", "json")
    got = fitspeed.model("bert-large", "v100-sxm2", [8, 16, 32], seq_len=128,
                         precision="mixed").to_dict()
    assert got == expected


def test_modeled_unpadded_bert_equals_the_cli_json(cli):
    expected = run_cli(cli, "sweep", "bert-large", "--device", "h100", "--seq-len", "512",
                       "--mean-tokens", "254.43", "--mean-square-tokens", "86312",
                       "--head-positions", "38", "--attention", "fused", "--precision", "mixed",
                       "--batches", "8,16,32", "--output", "json")
    got = fitspeed.model("bert-large", "h100", [8, 16, 32], seq_len=512, mean_tokens=254.43,
                         mean_square_tokens=86312, head_positions=38, attention="fused",
                         precision="mixed").to_dict()
    assert got == expected


def test_modeled_fp8_bert_cast_to_16_bits_whole_equals_the_cli_json(cli):
    # NVIDIA's MLPerf BERT as validate mlperf models it: FP8 (Transformer
    # Engine) on a model cast to FP16 whole.
    expected = run_cli(cli, "sweep", "bert-large", "--device", "h100", "--seq-len", "512",
                       "--mean-tokens", "254.43", "--head-positions", "38", "--attention",
                       "fused", "--precision", "fp8", "--amp-ops", "none", "--batches",
                       "48,96,192", "--output", "json")
    got = fitspeed.model("bert-large", "h100", [48, 96, 192], seq_len=512, mean_tokens=254.43,
                         head_positions=38, attention="fused", precision="fp8",
                         amp_ops="none").to_dict()
    assert got == expected
    assert got["model"]["precision"] == "fp8"


def test_fit_of_a_log_equals_the_cli_json(cli, data_dir):
    path = str(data_dir / "measured" / "pollux_t4_single_node.csv")
    expected = run_cli(cli, "fit", path, "--output", "json")
    assert fitspeed.fit(fitspeed.read(path)).to_dict() == expected


def test_projection_of_a_law_equals_the_cli_json(cli):
    expected = run_cli(cli, "project", "--v0", "1592.5", "--t", "1.033", "--samples", "50000",
                       "--batch", "64,256,1024", "--price", "4.5", "--label", "tpu",
                       "--output", "json")
    got = fitspeed.project((1592.5, 1.033), samples_per_epoch=50000, batch=[64, 256, 1024],
                           price_per_device_hour=4.5, label="tpu").to_dict()
    assert got == expected


def test_llm_step_equals_the_cli_json(cli):
    expected = run_cli(cli, "sweep", "llama-3-8b", "--device", "h100", "--devices", "16", "--tp",
                       "2", "--pp", "2", "--micro-batch", "2", "--global-batch", "64",
                       "--seq-len", "4096", "--recompute", "selective", "--sequence-parallel",
                       "--zero", "1", "--output", "json")
    got = fitspeed.llm_step("llama-3-8b", "h100", devices=16, tp=2, pp=2, micro_batch=2,
                            global_batch=64, seq_len=4096, recompute="selective",
                            sequence_parallel=True, zero=1).to_dict()
    assert got == expected


def test_llm_step_with_fp8_weights_equals_the_cli_json(cli):
    expected = run_cli(cli, "sweep", "llama-2-70b", "--device", "h100", "--devices", "8", "--tp",
                       "4", "--micro-batch", "1", "--global-batch", "8", "--seq-len", "8192",
                       "--precision", "fp8", "--lora-rank", "16", "--fp8-weights", "--output",
                       "json")
    got = fitspeed.llm_step("llama-2-70b", "h100", devices=8, tp=4, micro_batch=1,
                            global_batch=8, seq_len=8192, precision="fp8", lora_rank=16,
                            fp8_weights=True).to_dict()
    assert got == expected
    assert got["training"]["fp8_weights"] is True


def test_llm_step_with_lora_dropout_equals_the_cli_json(cli):
    expected = run_cli(cli, "sweep", "llama-2-70b", "--device", "h100", "--devices", "8", "--tp",
                       "4", "--micro-batch", "1", "--global-batch", "8", "--seq-len", "8192",
                       "--precision", "fp8", "--lora-rank", "16", "--lora-dropout", "--output",
                       "json")
    got = fitspeed.llm_step("llama-2-70b", "h100", devices=8, tp=4, micro_batch=1,
                            global_batch=8, seq_len=8192, precision="fp8", lora_rank=16,
                            lora_dropout=True).to_dict()
    assert got == expected
    assert got["training"]["lora_dropout"] is True


def test_llm_step_with_dropout_off_equals_the_cli_json(cli):
    expected = run_cli(cli, "sweep", "gpt3-175b", "--device", "h100", "--devices", "8", "--tp",
                       "8", "--sequence-parallel", "--micro-batch", "1", "--global-batch", "1",
                       "--seq-len", "2048", "--dropout", "off", "--output", "json")
    got = fitspeed.llm_step("gpt3-175b", "h100", devices=8, tp=8, sequence_parallel=True,
                            micro_batch=1, global_batch=1, seq_len=2048, dropout=False).to_dict()
    assert got == expected
    assert got["model"]["dropout"] is False


def test_llm_plan_equals_the_cli_json_but_for_the_search_speed(cli):
    expected = run_cli(cli, "plan", "llama-3-8b", "--device", "h100", "--devices", "64",
                       "--global-batch", "256", "--seq-len", "8192", "--tokens", "1e12",
                       "--price", "2.5", "--fix", "tp=2,mb=1,sp=1", "--top", "3", "--output", "json")
    got = fitspeed.plan_llm("llama-3-8b", "h100", devices=64, global_batch=256, seq_len=8192,
                            tokens=1e12, price_per_device_hour=2.5,
                            fix={"tp": 2, "micro_batch": 1, "sequence_parallel": True},
                            top=3).to_dict()

    def without_time(d):  # the search's speed is measured, so differs run to run
        d = dict(d)
        d["search"] = {k: v for k, v in d["search"].items() if k not in ("configurations_per_s", "search_s")}
        return d

    assert without_time(got) == without_time(expected)
    assert len(got["ranked"]) == 3
