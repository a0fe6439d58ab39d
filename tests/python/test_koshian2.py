# koshian2/TPU-Benchmark's per-epoch times projected through Python as they
# were measured (`project(..., measured=True)`), against the author's own
# summary (tests/data/measured/koshian2_tpu_benchmark_result_summary.csv,
# read here with the csv module, independently of fitspeed). The author
# projects E epochs as before_training + first_epoch + (E-1)*second_epoch_mean,
# each rounded to 0.1 s, so E epochs may differ by 0.05*(E+1) s.
import csv

import fitspeed

KEYS = ["device", "batch_size", "use_validation", "use_augmentation", "from_storage",
        "num_workers"]


def summary(data_dir):
    rows = {}
    with open(data_dir / "measured" / "koshian2_tpu_benchmark_result_summary.csv") as f:
        for row in csv.DictReader(f):
            rows[tuple(row[k].lower() for k in KEYS)] = row
    return rows


def test_measured_projection_reproduces_the_authors_summary(data_dir):
    spec = str(data_dir / "measured" / "koshian2_tpu_benchmark_main_per_epoch.csv")
    samples = fitspeed.read(spec + "@samples=50000,drop_remainder=1", skip_first_epochs=0)
    assert len(samples) == 80 * 20  # 80 configurations x 20 epochs
    projection = fitspeed.project(samples, measured=True, epochs=[20, 100])
    rows = projection.rows(as_frame=False)
    assert len(rows) == 80 * 2
    by_author = summary(data_dir)
    checked = 0
    for row in rows:
        # The configuration's label joins the CSV's series columns (key=value).
        label = dict(part.split("=", 1) for part in row["label"].split(",") if "=" in part)
        key = (label["device"].lower(), str(int(row["batch"])),
               *(label[k].lower() for k in KEYS[2:]))
        s = by_author[key]
        e = row["epochs"]
        by_hand = (float(s["before_training"]) + float(s["first_epoch"])
                   + (e - 1) * float(s["second_epoch_mean"]))
        assert abs(row["total_s"] - by_hand) <= 0.05 * (e + 1) + 1e-6, (key, e)
        if e == 20:  # the run itself: the summary's total, 0.1 s rounding + 21 x 0.5 ms
            assert abs(row["total_s"] - float(s["total_second"])) <= 0.05 + 0.0105 + 1e-6
        checked += 1
    assert checked == 160
