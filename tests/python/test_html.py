# The HTML reports from Python: each result made by a request has to_html(),
# the page `fitspeed ... --output html` prints for the same question.
import subprocess
import xml.etree.ElementTree as ET

import pytest

import fitspeed

XHTML = "{http://www.w3.org/1999/xhtml}"


def parse(page):
    return ET.fromstring(page)  # well formed: every element closed


def test_model_sweep_page_is_the_clis(cli):
    page = fitspeed.model("resnet50", "a100", [32, 64, 128], precision="mixed").to_html()
    run = subprocess.run([cli, "sweep", "device", "resnet50", "--device", "a100", "--precision",
                          "mixed", "--batches", "32,64,128", "--output", "html"],
                         capture_output=True, text=True, check=True)
    assert page == run.stdout
    rows = parse(page).findall(f".//{XHTML}table[@id='steps']/{XHTML}tbody/{XHTML}tr")
    assert [r[0].text for r in rows] == ["32", "64", "128"]


def test_plan_llm_page_has_the_ranked_splits_and_their_plots():
    plan = fitspeed.plan_llm("llama-2-7b", "h100", devices=64, global_batch=256, seq_len=4096,
                             tokens=1e11, price_per_device_hour=2.0, top=4)
    root = parse(plan.to_html())
    assert len(root.findall(f".//{XHTML}table[@id='ranked']/{XHTML}tbody/{XHTML}tr")) == 4
    svg_ids = {e.get("id") for e in root.iter("{http://www.w3.org/2000/svg}svg")}
    assert {"step-parts", "memory", "days", "cost"} <= svg_ids


def test_fit_page_draws_the_band_at_the_fits_confidence(data_dir):
    samples = fitspeed.read(str(data_dir / "measured" / "pollux_t4_single_node.csv"),
                            as_frame=False)
    samples = [s for s in samples if s.label == "model=imagenet" and s.devices == 1]
    page = fitspeed.fit(samples, confidence=0.9).to_html()
    assert "90% confidence band of the curve" in page
    assert "Fitted parameters, with their 90% confidence intervals" in page


def test_a_result_read_back_from_json_has_no_page():
    sweep = fitspeed.model("resnet50", "a100", [32, 64], precision="mixed")
    copy = fitspeed.ModeledSweep(sweep.to_json())
    with pytest.raises(fitspeed.UsageError, match="no HTML report"):
        copy.to_html()


def test_plan_where_no_split_fits_says_so_instead_of_an_empty_table():
    # Llama-3-70B's 16-bit weights alone are 141 GB: 8 T4s of 16 GiB (17.18 GB) cannot hold them.
    plan = fitspeed.plan_llm("llama-3-70b", "t4", devices=8, global_batch=8, seq_len=8192, top=3)
    root = parse(plan.to_html())
    assert root.find(f".//{XHTML}table[@id='ranked']") is None
    assert len(root.findall(f".//{XHTML}table[@id='not-fitting']/{XHTML}tbody/{XHTML}tr")) == 3
    assert "No split fits in 17.18 GB per device" in plan.to_html()
