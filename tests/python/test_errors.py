# fitspeed's errors in Python: one base class, fitspeed.Error, and DataError
# (bad data; also a ValueError), UsageError (a bad option; also a ValueError),
# InputError (cannot read; also an OSError), each with the C++ message and,
# where the input names them, the file, line and field.
import math
import warnings

import pytest

import fitspeed


def test_the_hierarchy():
    for cls in (fitspeed.DataError, fitspeed.UsageError, fitspeed.InputError):
        assert issubclass(cls, fitspeed.Error)
    assert issubclass(fitspeed.DataError, ValueError)
    assert issubclass(fitspeed.UsageError, ValueError)
    assert issubclass(fitspeed.InputError, OSError)
    assert issubclass(fitspeed.Error, Exception)


def test_a_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(fitspeed.InputError) as e:
        fitspeed.read(str(tmp_path / "nope.csv"))
    assert "nope.csv" in e.value.message
    assert str(e.value) == e.value.message
    assert e.value.file is None and e.value.line is None and e.value.field is None


def test_bad_data_names_file_line_and_field(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("batch,throughput_sps\n64,100\n128,-5\n")
    with pytest.raises(fitspeed.DataError) as e:
        fitspeed.read(str(path))
    assert e.value.file == str(path)
    assert e.value.line == 3
    assert e.value.field == "throughput_sps"
    assert e.value.message.startswith(f"{path}:3: field 'throughput_sps'")


def test_bad_data_in_text_names_the_source():
    with pytest.raises(fitspeed.DataError) as e:
        fitspeed.read_text("batch,throughput_sps\n64,nan\n", source="mem.csv")
    assert e.value.file == "mem.csv" and e.value.line == 2


def test_a_bad_spec_or_format_is_a_usage_error(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("batch,throughput_sps\n64,100\n128,180\n")
    with pytest.raises(fitspeed.UsageError):
        fitspeed.read(str(path) + "@batch=-1")
    with pytest.raises(fitspeed.UsageError):
        fitspeed.read(str(path), format="no-such-format")
    with pytest.raises(fitspeed.UsageError):
        fitspeed.read(str(path), skip_first_epochs=-1)


def test_fit_errors():
    one = fitspeed.read_text("batch,throughput_sps\n64,100\n", as_frame=False)
    with pytest.raises(fitspeed.DataError):  # one batch size, two parameters
        fitspeed.fit(one)
    two = fitspeed.read_text("batch,throughput_sps\n64,100\n128,180\n", as_frame=False)
    with pytest.raises(fitspeed.UsageError):
        fitspeed.fit(two, confidence=1.5)
    with pytest.raises(fitspeed.UsageError):
        fitspeed.fit(two, law="no-such-law")
    with pytest.raises(fitspeed.UsageError):
        fitspeed.fit(two, loss="l7")
    with pytest.raises(fitspeed.DataError):
        fitspeed.fit([])
    s = fitspeed.Sample()
    s.batch = 64
    s.throughput_sps = math.nan
    with pytest.raises(fitspeed.DataError) as e:
        fitspeed.fit([s, s])
    assert e.value.field == "throughput"
    with pytest.raises(fitspeed.DataError) as e:
        fitspeed.frame_to_samples([{"throughput_sps": 3.0}])
    assert "batch" in e.value.message
    with pytest.raises(fitspeed.UsageError):
        s.unit = "furlongs"


def test_a_fit_of_several_groups_asks_which():
    two_labels = fitspeed.read_text(
        "label,batch,throughput_sps\na,64,100\na,128,180\na,256,300\n"
        "b,64,50\nb,128,90\nb,256,150\n")
    result = fitspeed.fit(two_labels)
    assert len(result.groups) == 2
    with pytest.raises(fitspeed.UsageError):
        result.v0
    # A CSV's series column becomes the label "column=value".
    assert result.group(label="label=b").param("v0").value > 0


def test_model_and_catalog_errors():
    with pytest.raises(fitspeed.UsageError):
        fitspeed.model("resnet50", "no-such-gpu", [32])
    with pytest.raises(fitspeed.UsageError):
        fitspeed.model("no-such-net", "a100", [32])
    with pytest.raises(fitspeed.UsageError):
        fitspeed.model("resnet50", "a100", [0])
    with pytest.raises(fitspeed.UsageError):
        fitspeed.model("resnet50", "a100", [32], interval_level=1.0)
    with pytest.raises(fitspeed.UsageError):
        fitspeed.transformer("transformer:layers=0,hidden=64,heads=2")


def test_llm_errors():
    with pytest.raises(fitspeed.UsageError):  # 32 heads are not divisible by tp = 3
        fitspeed.llm_step("llama-3-8b", "h100", devices=3, tp=3, seq_len=4096)
    with pytest.raises(fitspeed.UsageError):
        fitspeed.llm_step("llama-3-8b", "h100", seq_len=0)
    with pytest.raises(fitspeed.UsageError):
        fitspeed.plan_llm("llama-3-8b", "h100", devices=8, global_batch=8, seq_len=2048,
                          fix={"colour": 1})
    with pytest.raises(fitspeed.UsageError):
        fitspeed.plan_llm("llama-3-8b", "h100", devices=8, global_batch=8, seq_len=2048,
                          price_per_device_hour=2.0)
    with pytest.raises(fitspeed.UsageError):
        fitspeed.plan_llm("gpt2", "h100", devices=8, global_batch=8, seq_len=4096)


def test_project_errors():
    with pytest.raises(fitspeed.UsageError):
        fitspeed.project((-1.0, 0.1), samples_per_epoch=1000, batch=32)
    with pytest.raises(fitspeed.UsageError):
        fitspeed.project((100.0, 0.1), samples_per_epoch=0, batch=32)
    with pytest.raises(fitspeed.UsageError):
        fitspeed.project((100.0, 0.1), batch=32)
    with pytest.raises(fitspeed.UsageError):
        fitspeed.project("not a law", samples_per_epoch=1000)
    with pytest.raises(fitspeed.UsageError):
        fitspeed.project((100.0, 0.1), samples_per_epoch=1000, batch=32,
                         price_per_device_hour=-2)


def test_reader_doubts_are_warnings(data_dir):
    # The mmcls excerpt's 7 training lines are all in epoch 1, which is warm-up
    # by default: the reader still reads them and says so, naming file and line.
    path = str(data_dir / "logs-wild" / "detectron2-mmdet"
               / "issue_open-mmlab-mmpretrain-408_mmcls-log.excerpt.txt")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        samples = fitspeed.read(path + "@batch=256", as_frame=False)
    assert len(samples) == 7
    assert caught, "no warning"
    assert all(issubclass(w.category, fitspeed.FitspeedWarning) for w in caught)
    assert any(str(w.message).startswith(path + ":8: ") for w in caught)


def test_a_path_that_is_not_a_str_is_a_type_error():
    # str(None) opened a file named "None".
    with pytest.raises(TypeError, match="read: path_or_spec must be a str"):
        fitspeed.read(None)
    with pytest.raises(TypeError, match="transformer: spec"):
        fitspeed.transformer(42)


def test_a_nul_in_a_path_is_an_input_error(tmp_path):
    # C reads the NUL as the end of the path: "runs.csv\0x" opened runs.csv.
    path = tmp_path / "runs.csv"
    path.write_text("batch,throughput_sps\n64,100\n128,180\n")
    with pytest.raises(fitspeed.InputError, match="path_or_spec .* contains a NUL"):
        fitspeed.read(str(path) + "\0.txt")
    with pytest.raises(fitspeed.InputError, match="plan_llm: links"):
        fitspeed.plan_llm("llama-3-8b", "h100", devices=8, global_batch=8, seq_len=2048,
                          links=str(path) + "\0")


def test_read_text_refuses_what_is_not_text_before_building_it():
    # bytes(10**9) built a gigabyte of zeros before the reader saw it.
    with pytest.raises(TypeError, match="read_text: text must be str or bytes, not int"):
        fitspeed.read_text(10**9)
    with pytest.raises(TypeError):
        fitspeed.read_text(None)


def test_plan_llm_fix_values_cannot_inject_items():
    # {"tp": "8,pp=2"} became "tp=8,pp=2": pp pinned without being asked.
    for fix in ({"tp": "8,pp=2"}, {"tp": "8=2"}, {"tp": 8.0}, {"tp,pp": 8}):
        with pytest.raises(fitspeed.UsageError, match="plan_llm: fix"):
            fitspeed.plan_llm("llama-3-8b", "h100", devices=8, global_batch=8, seq_len=2048,
                              fix=fix)
    # A list raised AttributeError ('list' object has no attribute 'items').
    with pytest.raises(TypeError, match="plan_llm: fix must be a mapping"):
        fitspeed.plan_llm("llama-3-8b", "h100", devices=8, global_batch=8, seq_len=2048,
                          fix=[1, 2])


def test_plan_llm_refuses_an_infinite_price():
    # The plan priced the run at inf.
    with pytest.raises(fitspeed.UsageError, match="price per device-hour inf"):
        fitspeed.plan_llm("llama-3-8b", "h100", devices=8, global_batch=8, seq_len=2048,
                          tokens=1e12, price_per_device_hour=math.inf, top=1)
