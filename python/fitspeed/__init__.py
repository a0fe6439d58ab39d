"""fitspeed: how fast a model trains at which batch size, on how many devices,
and what the run takes and costs.

The law: a step at batch b takes T(b) = b/v0 + t, so throughput is
v(b) = b/(b/v0 + t): v0 the ideal throughput, t the fixed cost per step.

    import fitspeed
    samples = fitspeed.read("tests/data/koshian2/...csv")  # a DataFrame with pandas
    result = fitspeed.fit(samples)
    print(result.brief_report())
    print(result.v0, result.t)          # ParamEstimate: value, std_error, ci_low, ci_high
    fitspeed.project(result, samples_per_epoch=50000, batch=128, epochs=[10, 90])

Every number comes from fitspeed's C++ library (the extension fitspeed._fitspeed),
from the functions the `fitspeed` command-line tool calls; docs/python.md.
Errors are raised as fitspeed.Error and its subclasses DataError (bad data,
with .file, .line and .field), UsageError (a bad option) and InputError (a file
that cannot be read).

numpy is needed: without it `import fitspeed` raises ImportError. pandas gives
the tables (read, read_text, and the rows of sweeps, projections and plans):
without it those calls raise ImportError unless as_frame=False asks for lists.
Both messages name the interpreter that lacks the package (sys.executable)
and the one this build is for (CMake's Python3_EXECUTABLE; docs/python.md).
"""

from __future__ import annotations

import importlib.machinery
import json
import math
import os
import sys
import sysconfig
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

try:
    from . import _fitspeed
except ImportError:
    # Where the extension in this folder was built for another Python (another
    # version's file name: _fitspeed.cpython-312-...so), say so; else the error as is.
    _here = os.path.dirname(__file__)
    _built = sorted(p for p in os.listdir(_here) if p.startswith("_fitspeed.") and p.endswith(".so"))
    if not _built or any(os.path.exists(os.path.join(_here, "_fitspeed" + suffix))
                         for suffix in importlib.machinery.EXTENSION_SUFFIXES):
        raise
    raise ImportError(
        f"fitspeed's extension {', '.join(_built)} in {_here} was not built for this "
        f"interpreter, {sys.executable} (Python {sys.version_info.major}."
        f"{sys.version_info.minor}, which loads _fitspeed{sysconfig.get_config_var('EXT_SUFFIX')}): "
        f"build it for this one with cmake -DPython3_EXECUTABLE={sys.executable}, or pip "
        "install . with it (docs/python.md)", name=__name__ + "._fitspeed") from None
from ._fitspeed import (
    DataError,
    Error,
    FitPoint,
    GroupFit,
    InputError,
    ParamEstimate,
    Sample,
    UsageError,
)

__all__ = [
    "Error",
    "DataError",
    "UsageError",
    "InputError",
    "FitspeedWarning",
    "Sample",
    "ParamEstimate",
    "FitPoint",
    "GroupFit",
    "FitResult",
    "ModeledSweep",
    "HostSweep",
    "Projection",
    "LlmStep",
    "LlmPlan",
    "read",
    "read_text",
    "samples_to_frame",
    "frame_to_samples",
    "fit",
    "project",
    "devices",
    "models",
    "transformer",
    "model",
    "sweep",
    "llm_step",
    "plan_llm",
    "llm_frameworks",
    "format_names",
    "law_names",
]

# The library's version: project(VERSION) of CMakeLists.txt, through fitspeed::Version().
__version__: str = _fitspeed.__version__


def _missing_package(package: str, what: str, error: BaseException) -> ImportError:
    """The ImportError for a package (numpy, pandas) this interpreter lacks: it names
    the package, the interpreter that looked for it (sys.executable) and the one
    this build of fitspeed is for (CMake's Python3_EXECUTABLE)."""
    def how(python: str) -> str:  # Debian's interpreter takes Debian's packages
        return (f"apt-get install python3-{package}" if python.startswith("/usr/bin/")
                else f"{python} -m pip install {package}")

    built_for = _fitspeed._python_executable
    advice = f"install {package} for it ({how(sys.executable)})"
    if os.path.realpath(built_for) != os.path.realpath(sys.executable):
        advice += (f", or run the interpreter this build of fitspeed is for, {built_for}, "
                   f"with {package} installed ({how(built_for)})")
    return ImportError(f"{what} needs {package}, which this interpreter, {sys.executable}, "
                       f"cannot import ({error}): {advice}", name=package)


try:  # numpy: the fits' covariances and predictions are numpy arrays.
    import numpy as _np  # noqa: F401
except ImportError as _error:
    raise _missing_package("numpy", "fitspeed", _error) from None

try:  # pandas: the tables are DataFrames; as_frame=False gives lists without it.
    import pandas as _pd
    _pandas_error: Optional[BaseException] = None
except ImportError as _error:
    _pd = None
    _pandas_error = _error


def _pandas(what: str):
    """pandas, or the ImportError that says what needs it and where it is missing."""
    if _pd is None:
        raise _missing_package(
            "pandas", f"{what} (a pandas DataFrame; as_frame=False gives a list instead)",
            _pandas_error)
    return _pd


class FitspeedWarning(UserWarning):
    """A reader's doubt about what it read ("train.log:12: ..."): an assumption it
    made, lines it skipped, numbers that disagree."""


def _warn(message: str) -> None:
    warnings.warn(message, FitspeedWarning, stacklevel=3)


def format_names() -> List[str]:
    """The log formats read() takes, in detection order ('auto' first)."""
    return [name.strip() for name in _fitspeed.format_names().split(",")]


def law_names() -> List[str]:
    """The laws fit() takes ('hyperbolic', ...)."""
    return list(_fitspeed.law_names())


# ---------------------------------------------------------------- samples

_SAMPLE_COLUMNS = [
    "source", "line", "batch", "devices", "label", "precision", "unit",
    "throughput_sps", "step_time_s", "epoch_time_s", "samples_per_epoch", "epoch",
    "seq_len", "steps_rule",
]


_NUMERIC_COLUMNS = ["batch", "throughput_sps", "step_time_s", "epoch_time_s",
                    "samples_per_epoch", "seq_len"]


def _sample_record(s: Sample) -> Dict[str, Any]:
    record = {name: getattr(s, name) for name in _SAMPLE_COLUMNS}
    for key, value in s.tags.items():
        record.setdefault(key, value)
    record["tags"] = dict(s.tags)
    return record


def samples_to_frame(samples: Sequence[Sample]):
    """The samples as a pandas DataFrame, one row per sample (columns: source, line,
    batch, devices, label, precision, unit, throughput_sps, step_time_s,
    epoch_time_s, samples_per_epoch, epoch, seq_len, steps_rule, tags, and one
    column per tag). What a log does not state is NaN (<NA> for epoch): a log
    of step times has no throughput_sps. Needs pandas (ImportError without it)."""
    _pandas("fitspeed.samples_to_frame")
    records = [_sample_record(s) for s in samples]
    frame = _pd.DataFrame.from_records(records, columns=_columns_of(records))
    # Missing numbers as NaN, so that columns are numeric (a rate a log does
    # not state is NaN: e.g. throughput_sps of a log of step times).
    for name in _NUMERIC_COLUMNS:
        frame[name] = _pd.to_numeric(frame[name]).astype(float)
    frame["epoch"] = frame["epoch"].astype("Int64")
    return frame


def _columns_of(records: List[Dict[str, Any]]) -> List[str]:
    columns = list(_SAMPLE_COLUMNS)
    for r in records:
        for key in r:
            if key not in columns:
                columns.append(key)
    return columns


def _missing(value: Any) -> bool:
    """None, NaN (a missing number in pandas) or pandas.NA (a missing integer)."""
    if value is None or (_pd is not None and value is _pd.NA):
        return True
    return isinstance(value, float) and math.isnan(value)


def _sample_from_mapping(row: Mapping[str, Any], where: str) -> Sample:
    s = Sample()
    for name in ("source", "label", "precision"):
        if name in row and not _missing(row[name]):
            setattr(s, name, str(row[name]))
    if "line" in row and not _missing(row["line"]):
        s.line = int(row["line"])
    if "batch" not in row or _missing(row["batch"]):
        raise DataError(f"{where}: field 'batch': missing")
    try:
        s.batch = float(row["batch"])
        if "devices" in row and not _missing(row["devices"]):
            s.devices = int(row["devices"])
        for name in ("throughput_sps", "step_time_s", "epoch_time_s", "samples_per_epoch",
                     "seq_len"):
            if name in row and not _missing(row[name]):
                setattr(s, name, float(row[name]))
        if "epoch" in row and not _missing(row["epoch"]):
            s.epoch = int(row["epoch"])
    except (TypeError, ValueError) as e:
        raise DataError(f"{where}: {e}") from None
    if "unit" in row and not _missing(row["unit"]):
        s.unit = str(row["unit"])
    if "steps_rule" in row and not _missing(row["steps_rule"]):
        s.steps_rule = str(row["steps_rule"])
    tags = row.get("tags")
    if isinstance(tags, Mapping):
        s.tags = {str(k): str(v) for k, v in tags.items()}
    return s


def frame_to_samples(frame) -> List[Sample]:
    """Samples from a DataFrame (or any iterable of mappings) with the columns
    samples_to_frame writes; 'batch' and one of throughput_sps, step_time_s or
    epoch_time_s (with samples_per_epoch) are needed, the rest optional."""
    rows: Iterable[Mapping[str, Any]]
    if _pd is not None and isinstance(frame, _pd.DataFrame):
        rows = frame.to_dict("records")
    else:
        rows = frame
    return [_sample_from_mapping(row, f"row {i + 1}") for i, row in enumerate(rows)]


def _as_samples(samples) -> List[Sample]:
    if isinstance(samples, Sample):
        return [samples]
    if _pd is not None and isinstance(samples, _pd.DataFrame):
        return frame_to_samples(samples)
    items = list(samples)
    if all(isinstance(s, Sample) for s in items):
        return items
    if all(isinstance(s, Mapping) for s in items):
        return frame_to_samples(items)
    raise UsageError("samples: expected a DataFrame, Samples or mappings with a 'batch'")


def _path_arg(value: Any, function: str, argument: str) -> str:
    """`value` as the path (or spec) the library opens: a str or os.PathLike,
    else TypeError; a NUL, which C would read as the end of the path, is an
    InputError. Both name the function and argument."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{function}: {argument} must be a str or os.PathLike, "
                        f"not {type(value).__name__}")
    path = os.fspath(value)
    if not isinstance(path, str):
        raise TypeError(f"{function}: {argument} must be a str path, not {type(path).__name__}")
    if "\0" in path:
        raise InputError(f"{function}: {argument} {path!r} contains a NUL character")
    return path


def _frame_or_list(samples: List[Sample], as_frame: bool):
    return samples_to_frame(samples) if as_frame else samples


def read(path_or_spec: str, *, format: str = "auto", skip_first_epochs: int = 1,
         tensorboard_tag: str = "", tensorboard_unit: str = "",
         as_frame: bool = True):
    """Reads the samples of a training log.

    path_or_spec: 'PATH' or 'PATH@batch=64,devices=8,samples=50000,...' (the
    attributes fill what the log lacks; docs/formats/). format: 'auto' detects
    it (format_names() lists them). skip_first_epochs: samples of epochs <= this
    are dropped (epoch 1 carries compilation and warm-up); 0 keeps all.
    Returns a pandas DataFrame (samples_to_frame), or with as_frame=False a
    list of Sample; without pandas the DataFrame is an ImportError naming it and
    the interpreter, never a list in its place. A reader's doubts are issued as
    FitspeedWarning. Raises InputError (cannot read), DataError (bad content:
    .file, .line, .field), UsageError (bad spec or option)."""
    if as_frame:
        _pandas("fitspeed.read")
    samples = _fitspeed.read_samples(_path_arg(path_or_spec, "read", "path_or_spec"), format,
                                     skip_first_epochs, tensorboard_tag, tensorboard_unit, _warn)
    return _frame_or_list(samples, as_frame)


def read_text(text: Union[str, bytes], *, source: str = "<text>", attributes: str = "",
              format: str = "auto", skip_first_epochs: int = 1,
              as_frame: bool = True):
    """Reads the samples of a log given as text or bytes; `source` names it in
    messages, `attributes` are those after '@' in a spec ('batch=64,devices=8').
    Returns what read() returns."""
    # Checked first: bytes(10**9) would build a gigabyte of zeros.
    if not isinstance(text, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"read_text: text must be str or bytes, not {type(text).__name__}")
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    if as_frame:
        _pandas("fitspeed.read_text")
    samples = _fitspeed.parse_samples(data, source, attributes, format, skip_first_epochs, _warn)
    return _frame_or_list(samples, as_frame)


# ---------------------------------------------------------------- fit


class _HtmlReport:
    """The HTML report of a result: `fitspeed ... --output html` (docs/reports.md)."""

    _answer: Any = None

    def to_html(self) -> str:
        """One self-contained HTML page (no scripts, fonts or links outside it):
        the tables, the plots with their intervals and the assumptions, as
        `--output html` writes it. Save it and open it in a browser:
        pathlib.Path("report.html").write_text(result.to_html())."""
        if self._answer is None:
            raise UsageError("this result was not made by a request of this session "
                             "(read from JSON): it has no HTML report")
        return self._answer.to_html()


class FitResult(_HtmlReport):
    """The fits of every group of samples (devices, label, precision, unit).

    With one group (the usual case) v0, t, covariance, predict() and the
    reports speak for it; with several, pick one with group(...) or groups[i]."""

    def __init__(self, native: "_fitspeed.FitResult", samples: List[Sample], answer: Any = None):
        self._native = native
        self._answer = answer
        self.samples = samples
        self.groups: List[GroupFit] = list(native.groups)

    def _one(self) -> GroupFit:
        if len(self.groups) != 1:
            keys = "; ".join(str(g.group) for g in self.groups)
            raise UsageError(f"{len(self.groups)} groups were fitted ({keys}): pick one with "
                             "result.group(label=..., devices=..., precision=...)")
        return self.groups[0]

    def group(self, label: Optional[str] = None, devices: Optional[int] = None,
              precision: Optional[str] = None) -> GroupFit:
        """The one group matching the given keys (UsageError for none or several)."""
        found = [g for g in self.groups
                 if (label is None or g.group["label"] == label)
                 and (devices is None or g.group["devices"] == devices)
                 and (precision is None or g.group["precision"] == precision)]
        if len(found) != 1:
            raise UsageError(f"{len(found)} groups match label={label!r} devices={devices!r} "
                             f"precision={precision!r}")
        return found[0]

    @property
    def v0(self) -> ParamEstimate:
        """Ideal throughput (count_name()/s) with its standard error and interval."""
        return self._one().param("v0")

    @property
    def t(self) -> ParamEstimate:
        """Fixed time per step (s) with its standard error and interval."""
        return self._one().param("t")

    @property
    def covariance(self):
        """Covariance of the parameters (numpy), in params order ((v0, t) for the
        hyperbolic law)."""
        return self._one().covariance

    @property
    def usable(self) -> bool:
        return bool(self._native.all_usable())

    def predict(self, batch):
        """Fitted throughput at batch (a number or an array)."""
        return self._one().predict(batch)

    def predict_step_time(self, batch):
        """Fitted step time (s) at batch (a number or an array)."""
        return self._one().predict_step_time(batch)

    def predict_band(self, batch):
        """The fitted throughput at `batch` with its confidence band at the fit's
        confidence: the delta method on the covariance of (v0, t) with the
        Student t quantile the parameters' intervals use (read back from v0's
        interval). Returns (low, value, high) as numpy arrays; hyperbolic law only."""
        import numpy as np
        g = self._one()
        if g.law != "hyperbolic":
            raise UsageError("predict_band needs the hyperbolic law")
        b = np.asarray(batch, dtype=float)
        p_v0, p_t = g.param("v0"), g.param("t")
        v0, t = p_v0.value, p_t.value
        denom = (b / v0 + t) ** 2
        # v = b/(b/v0 + t): dv/dv0 = (b/v0)^2 / (b/v0 + t)^2, dv/dt = -b / (b/v0 + t)^2.
        grad = np.stack([b * b / (v0 * v0) / denom, -b / denom])
        cov = np.asarray(g.covariance)[:2, :2]
        var = np.einsum("i...,ij,j...->...", grad, cov, grad)
        q = (p_v0.ci_high - v0) / p_v0.std_error if p_v0.std_error > 0 else float("nan")
        v = b / (b / v0 + t)
        half = q * np.sqrt(np.maximum(var, 0))
        return v - half, v, v + half

    def brief_report(self) -> str:
        return self._native.brief_report()

    def full_report(self) -> str:
        return self._native.full_report()

    def to_json(self) -> str:
        """The 'fitspeed.fit/1' JSON text, as `fitspeed fit --output json` writes it."""
        return self._native.to_json()

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self.to_json())

    def __repr__(self) -> str:
        return f"<fitspeed.FitResult {len(self.groups)} group(s): {self.brief_report().strip()}>"


def fit(samples, *, law: str = "hyperbolic", objective: str = "relative-time",
        loss: str = "squared", loss_scale: float = 0.05, confidence: float = 0.95,
        leave_one_out: bool = True, max_iterations: int = 200,
        initial: Sequence[float] = ()) -> FitResult:
    """Fits the law to samples (a DataFrame from read(), a list of Sample, or
    mappings with 'batch' and a rate), one fit per (devices, label, precision,
    unit) group, by Ceres least squares (docs/fitting.md).

    law: law_names(); objective: 'relative-time' (default), 'absolute-throughput'
    (NIST's) or 'absolute-time'; loss: 'squared', 'huber' or 'cauchy' with
    loss_scale; confidence: level of the parameters' intervals. Raises DataError
    for invalid samples or too few batch sizes; a fit that does not converge is
    reported (usable False), not raised."""
    items = _as_samples(samples)
    answer = _run(_fitspeed.FitRequest, samples=items, law=law, objective=objective, loss=loss,
                  loss_scale=loss_scale, confidence=confidence, leave_one_out=leave_one_out,
                  max_iterations=max_iterations, initial=[float(x) for x in initial])
    return FitResult(answer.fit, items, answer)


# ---------------------------------------------------------------- results built from JSON


class _JsonResult(_HtmlReport):
    """A result the library wrote as JSON (the CLI's schema): to_dict() is that
    JSON, exactly as the CLI's --output json writes it."""

    def __init__(self, text: str, answer: Any = None):
        self._json = text
        self._answer = answer
        self._dict = json.loads(text)

    def to_json(self) -> str:
        return self._json

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self._json)

    def __getitem__(self, key: str) -> Any:
        return self._dict[key]

    def _table(self, rows: List[Dict[str, Any]], as_frame: bool, what: str):
        """rows as a DataFrame (nested keys flattened: 'split.tp'), or as they are
        with as_frame=False; ImportError naming pandas where it is missing."""
        if not as_frame:
            return rows
        pd = _pandas(f"{type(self).__name__}.{what}")
        return pd.json_normalize(rows) if rows else pd.DataFrame()


class ModeledSweep(_JsonResult):
    """A training step modeled on a catalogued device at every batch, its fit and
    the model's prediction interval ('fitspeed sweep --device --output json').
    notes: what the model assumed (framework profile, links), as the CLI says
    on standard error."""

    def __init__(self, text: str, notes: Sequence[str] = (), answer: Any = None):
        super().__init__(text, answer)
        self.notes = list(notes)

    def steps(self, as_frame: bool = True):
        """The modeled steps, one per batch (throughput_sps, step_time_s, interval)."""
        return self._table(self._dict.get("steps", []), as_frame, "steps")

    @property
    def interval(self) -> Dict[str, Any]:
        """The model's prediction interval for this class of setup."""
        return self._dict.get("model_interval", {})

    def fit_groups(self) -> List[Dict[str, Any]]:
        return self._dict.get("fits", [])


class HostSweep(_JsonResult):
    """The real training step timed on this CPU at every batch, and its fit
    ('fitspeed sweep --output json')."""

    def steps(self, as_frame: bool = True):
        """The measured batches: step time, its spread and repeats, throughput."""
        return self._table(self._dict.get("measurements", []), as_frame, "steps")


class Projection(_JsonResult):
    """Epoch and run totals ('fitspeed project --output json')."""

    def rows(self, as_frame: bool = True):
        """One row per configuration, batch and epoch count: total_s with its interval,
        and cost where a price was given."""
        return self._table(self._dict.get("rows", []), as_frame, "rows")


class LlmStep(_JsonResult):
    """One step of a transformer split ('fitspeed.llm-step/1'): step_time_s,
    throughput_sps, tokens_per_s, mfu, memory_bytes, fits, the interval and the
    time by part."""


class LlmPlan(_JsonResult):
    """The splits of a cluster ranked by time per token ('fitspeed.llm-plan/1')."""

    def ranked(self, as_frame: bool = True):
        return self._table(self._dict.get("ranked", []), as_frame, "ranked")

    def not_fitting(self, as_frame: bool = True):
        return self._table(self._dict.get("not_fitting", []), as_frame, "not_fitting")


# ---------------------------------------------------------------- project


def project(source, *, samples_per_epoch: Optional[float] = None,
            batch: Union[None, float, Sequence[float]] = None, epochs: Optional[Sequence[float]] = None,
            price_per_device_hour: Optional[float] = None, drop_remainder: bool = False,
            validation_samples: float = 0, validation_batch: float = 0, startup_s: float = 0,
            first_epoch_extra_s: float = 0, confidence: float = 0.95, devices: int = 1,
            label: str = "", measured: bool = False) -> Projection:
    """What training takes: epoch time N_used/v0 + steps*t and totals for epoch
    counts, each with its interval (from the fit's covariance, and for a modeled
    sweep combined with the model's out-of-sample errors), and the cost at a
    price per device-hour.

    source: a FitResult, a ModeledSweep or HostSweep, or the law as numbers
    (v0, t) (v0 of all `devices` together, samples/s; t in s). batch: the global
    batch(es) to project; default the batches measured. epochs: default 10, 20,
    50, ..., 2000.

    measured=True projects per-epoch logs as they were measured, without a law:
    source is their samples (read with skip_first_epochs=0, epoch 1 is needed),
    one configuration per (devices, label, precision, batch); startup_s fills a
    startup the log does not state (`fitspeed project --measured`)."""
    epoch_list = [] if epochs is None else [float(e) for e in epochs]
    request = _request(_fitspeed.ProjectRequest, confidence=float(confidence),
                       price_per_device_hour=price_per_device_hour)
    if epoch_list:
        request.epochs = epoch_list
    if measured:
        if samples_per_epoch is not None or batch is not None:
            raise UsageError("measured=True projects the epochs as logged: not with "
                             "samples_per_epoch or batch")
        request.measured = True
        request.samples = _as_samples(source)
        request.startup_s = startup_s or None
        answer = request.run()
        return Projection(answer.to_json(), answer)
    if samples_per_epoch is None:
        raise UsageError("project: give samples_per_epoch (training samples per epoch)")
    request.batches = [] if batch is None else ([float(batch)] if isinstance(batch, (int, float))
                                                else [float(b) for b in batch])
    request.samples_per_epoch = float(samples_per_epoch)
    request.drop_remainder = drop_remainder
    request.validation_samples = float(validation_samples)
    request.validation_batch = float(validation_batch)
    request.startup_s = float(startup_s)
    request.first_epoch_extra_s = float(first_epoch_extra_s)
    if isinstance(source, (FitResult, ModeledSweep, HostSweep)):
        request.fit_json = source.to_json()
    elif isinstance(source, (tuple, list)) and len(source) == 2:
        request.law = (float(source[0]), float(source[1]))
        request.devices = int(devices)
        request.label = label
    else:
        raise UsageError("project: source must be a FitResult, a ModeledSweep, a HostSweep or "
                         "(v0, t)")
    answer = request.run()
    return Projection(answer.to_json(), answer)


# ---------------------------------------------------------------- catalog and models


def devices(*, include_host: bool = False) -> List[Dict[str, Any]]:
    """The device catalog: one dict per device (peaks per precision, memory,
    links, efficiency curves, where each number comes from), as `fitspeed
    devices --detail --output json` writes them. include_host probes this CPU
    (about a second)."""
    return json.loads(_fitspeed.devices_json(include_host))["devices"]


def models() -> List[Dict[str, Any]]:
    """The networks fitspeed knows: the zoo's (kind 'zoo', for model() and sweep())
    and the built-in transformers (kind 'transformer', for llm_step() and
    plan_llm(), with their exact parameter counts)."""
    out = list(_fitspeed.zoo_models())
    zoo = {m["name"] for m in out}
    for name in _fitspeed.transformer_names():
        entry = _fitspeed.transformer(name)
        entry["in_zoo"] = name in zoo
        out.append(entry)
    return out


def transformer(spec: str) -> Dict[str, Any]:
    """A transformer's shape and exact parameter count: a built-in name, the short
    form 'transformer:layers=..,hidden=..,heads=..', or a Hugging Face
    config.json path."""
    return _fitspeed.transformer(_path_arg(spec, "transformer", "spec"))


def model(network: str, device: str, batches: Optional[Sequence[int]] = None, *,
          max_batch: int = 4096, precision: str = "fp32", optimizer: str = "sgd-momentum",
          devices: int = 1, devices_per_node: int = 0, overlap: bool = False,
          accumulation: int = 1, recompute: bool = False, attention: str = "unfused",
          layout: str = "nchw", framework: Optional[str] = None, steps_per_execution: int = 1,
          input_samples_per_s: float = 0, seq_len: int = 0, interval_level: float = 0.8,
          links: Optional[str] = None, mean_tokens: float = 0, mean_square_tokens: float = 0,
          head_positions: int = 0, amp_ops: Optional[str] = None) -> ModeledSweep:
    """The training step of a zoo network modeled on a catalogued device at every
    batch (default 1, 2, 4, ... max_batch), fitted, with the model's prediction
    interval at interval_level; the same numbers as `fitspeed sweep NETWORK
    --device DEVICE --output json` with the same options. framework
    ('pytorch', 'tensorflow', 'mxnet') applies a framework profile. mean_tokens,
    mean_square_tokens and head_positions are --mean-tokens, --mean-square-tokens
    and --head-positions: unpadded sequences and BERT's masked-LM positions. amp_ops
    is --amp-ops ('pytorch', 'tensorflow', or 'none' for a model cast to 16 bits
    whole); default: the framework's. precision 'fp8' models Transformer Engine."""
    answer = _run(_fitspeed.DeviceSweepRequest, model=_path_arg(network, "model", "network"),
                  device=_path_arg(device, "model", "device"),
                  batches=[int(b) for b in (batches or [])], max_batch=max_batch,
                  precision=precision, optimizer=optimizer, devices=devices,
                  devices_per_node=devices_per_node, overlap=overlap, accumulation=accumulation,
                  recompute=recompute, attention=attention, layout=layout,
                  framework=framework or "", steps_per_execution=steps_per_execution,
                  input_samples_per_s=float(input_samples_per_s), seq_len=seq_len,
                  interval_level=interval_level,
                  links=_path_arg(links or "", "model", "links"),
                  mean_tokens=float(mean_tokens), mean_square_tokens=float(mean_square_tokens),
                  head_positions=int(head_positions), amp_ops=amp_ops)
    return ModeledSweep(answer.to_json(), answer.notes, answer)


def sweep(network: str, batches: Optional[Sequence[int]] = None, *, max_batch: int = 4096,
          precision: str = "fp32", backend: str = "onednn", optimizer: str = "sgd-momentum",
          threads: int = 0, min_repeats: int = 5, max_repeats: int = 1000,
          min_time_s: float = 0.5, warmup_steps: int = 2, seed: int = 1,
          seq_len: int = 0) -> HostSweep:
    """Times the real training step (forward, backward, update; oneDNN) of a zoo
    network on this CPU at every batch (default: doubling until the throughput
    saturates) and fits the law: `fitspeed sweep NETWORK --output json`."""
    answer = _run(_fitspeed.HostSweepRequest, model=_path_arg(network, "sweep", "network"),
                  batches=[int(b) for b in (batches or [])], max_batch=max_batch,
                  precision=precision, backend=backend, optimizer=optimizer, threads=threads,
                  min_repeats=min_repeats, max_repeats=max_repeats, min_time_s=min_time_s,
                  warmup_steps=warmup_steps, seed=seed, seq_len=seq_len)
    return HostSweep(answer.to_json(), answer)


def _gradient_bytes(given: Optional[float], precision: str, framework: str) -> float:
    """The bytes per reduced gradient element: the given 2 or 4, else the
    framework's for the precision (Megatron's FP32 main_grad, 4, and 2 under
    fp16; FSDP's 16-bit reduce type, 2), as the CLI's --gradient-bytes defaults."""
    if given is None:
        if not isinstance(framework, str):
            raise TypeError(f"framework: expected a name, got {type(framework).__name__}")
        return _fitspeed.framework_gradient_bytes(framework, precision)
    return float(given)


def llm_frameworks() -> List[Tuple[str, str]]:
    """The frameworks llm_step and plan_llm take (`--framework`): (name, title)
    pairs, megatron (the default) first; docs/llm.md, "Frameworks"."""
    return list(_fitspeed.llm_frameworks())


def llm_step(model: str, device: str, *, seq_len: int, devices: int = 0, tp: int = 1,
             pp: int = 1, vp: int = 1, cp: int = 1, ep: int = 1, micro_batch: int = 1,
             global_batch: int = 0, recompute: str = "none", sequence_parallel: bool = False,
             zero: Optional[int] = None, precision: str = "mixed", lora_rank: int = 0,
             flash_attention: bool = True, overlap_grad_reduce: bool = True,
             gradient_bytes: Optional[float] = None, devices_per_node: int = 0,
             links: Optional[str] = None, interval_level: float = 0.8,
             fp8_weights: bool = False, dropout: Optional[bool] = None,
             lora_dropout: bool = False, activation_fp8_store: bool = False,
             cuda_graphs: bool = False, etp: int = 0,
             pipeline_layout: str = "", first_stage_layers: int = 0,
             last_stage_layers: int = 0, embedding_as_layer: bool = False,
             loss_as_layer: bool = False, capacity_factor: float = 0.0,
             moe_imbalance: float = 1.0, mtp_layers: int = -1,
             overlap_moe_comm: bool = False, recompute_modules: str = "",
             framework: str = "megatron", tp_comm_overlap: bool = False,
             shard_group: int = 0) -> LlmStep:
    """One training step of a transformer split over tp x pp x cp x dp devices
    (devices default tp*pp*cp; dp = devices/(tp*pp*cp)): time by part, memory per
    GPU, MFU and the interval; `fitspeed sweep MODEL --device D --tp .. --output
    json` (docs/llm.md). fp8_weights (with precision 'fp8'): the weights held in
    FP8 alone, `--fp8-weights`. dropout: True or False over the model's own
    (None), `--dropout on|off`. lora_dropout (with lora_rank): dropout on each
    adapter's input, `--lora-dropout`. activation_fp8_store (gated feed-forward):
    the SwiGLU's input held in FP8 for the backward pass, `--activation-fp8-store`.
    cuda_graphs: each layer's passes as CUDA graphs, `--cuda-graphs`.
    Mixtures of experts: etp (0: tp), capacity_factor (0: dropless),
    moe_imbalance, mtp_layers (-1: the model's), overlap_moe_comm;
    recompute_modules 'layernorm,mla_up_proj,...' (with recompute 'selective',
    Megatron-Core's --recompute-modules). Uneven stages:
    pipeline_layout (Megatron's grammar), or first_stage_layers and
    last_stage_layers, or embedding_as_layer and loss_as_layer. framework: how
    the step is run (llm_frameworks(): megatron by default, fsdp, fsdp2,
    deepspeed, maxtext, ...), `--framework`; zero None: its default (FSDP's 3).
    tp_comm_overlap (with sequence_parallel): Transformer Engine's userbuffers
    overlap of the tensor-parallel collectives, `--tp-comm-overlap`. shard_group
    (with zero >= 1): hybrid sharding over groups of that many ranks,
    `--shard-group`."""
    answer = _run(_fitspeed.LlmStepRequest, model=_path_arg(model, "llm_step", "model"),
                  device=_path_arg(device, "llm_step", "device"), seq_len=seq_len,
                  devices=devices, tp=tp, pp=pp, vp=vp, cp=cp, ep=ep, micro_batch=micro_batch,
                  global_batch=global_batch, recompute=recompute,
                  sequence_parallel=sequence_parallel, zero=-1 if zero is None else zero,
                  precision=precision, framework=framework,
                  lora_rank=lora_rank, flash_attention=flash_attention,
                  overlap_grad_reduce=overlap_grad_reduce,
                  gradient_bytes=_gradient_bytes(gradient_bytes, precision, framework),
                  devices_per_node=devices_per_node,
                  links=_path_arg(links or "", "llm_step", "links"),
                  interval_level=interval_level, fp8_weights=fp8_weights, dropout=dropout,
                  lora_dropout=lora_dropout, activation_fp8_store=activation_fp8_store,
                  cuda_graphs=cuda_graphs,
                  etp=etp, pipeline_layout=pipeline_layout,
                  first_stage_layers=first_stage_layers, last_stage_layers=last_stage_layers,
                  embedding_as_layer=embedding_as_layer, loss_as_layer=loss_as_layer,
                  capacity_factor=float(capacity_factor), moe_imbalance=float(moe_imbalance),
                  mtp_layers=mtp_layers, overlap_moe_comm=overlap_moe_comm,
                  tp_comm_overlap=tp_comm_overlap, shard_group=shard_group,
                  **({"recompute_modules": recompute_modules} if recompute_modules else {}))
    return LlmStep(answer.to_json(), answer)


def plan_llm(model: str, device: str, *, devices: int, global_batch: int, seq_len: int,
             tokens: Optional[float] = None, price_per_device_hour: Optional[float] = None,
             top: int = 10, precision: str = "mixed", lora_rank: int = 0,
             flash_attention: bool = True, overlap_grad_reduce: bool = True,
             gradient_bytes: Optional[float] = None, devices_per_node: int = 0, links: Optional[str] = None,
             fix: Optional[Mapping[str, Any]] = None, interval_level: float = 0.8,
             fp8_weights: bool = False, dropout: Optional[bool] = None,
             lora_dropout: bool = False, activation_fp8_store: bool = False, cuda_graphs: bool = False,
             pipeline_layout: str = "", first_stage_layers: int = 0,
             last_stage_layers: int = 0, embedding_as_layer: bool = False,
             loss_as_layer: bool = False, capacity_factor: float = 0.0,
             moe_imbalance: float = 1.0, mtp_layers: int = -1,
             overlap_moe_comm: bool = False, recompute_modules: str = "",
             framework: str = "megatron", tp_comm_overlap: bool = False) -> LlmPlan:
    """Every split of `devices` devices (tp, pp, vp, cp, ep, dp, micro-batch,
    recomputation, sequence parallelism, ZeRO stage) modeled and ranked by time
    per token; with tokens the days (and cost with a price) of the run. fix
    pins choices: {'tp': 8, 'micro_batch': 2, 'recompute': 'full',
    'sequence_parallel': True, 'zero': 1, ...} (keys tp, pp, vp, cp, ep, dp,
    micro_batch or mb, recompute, sequence_parallel or sp, zero, shard_group or
    shard), checked as
    `fitspeed plan --fix` checks them. dropout: True or False over the
    model's own (None), `--dropout on|off`; lora_dropout, `--lora-dropout`;
    activation_fp8_store, `--activation-fp8-store`. Mixtures of experts and
    uneven stages as llm_step (etp through fix: {'etp': 1}). framework: as
    llm_step; only the splits it runs are searched.
    `fitspeed plan MODEL
    --device D --output json`."""
    request = _request(_fitspeed.LlmPlanRequest, model=_path_arg(model, "plan_llm", "model"),
                       device=_path_arg(device, "plan_llm", "device"), devices=devices,
                       global_batch=global_batch, seq_len=seq_len, tokens=tokens,
                       price_per_device_hour=price_per_device_hour, top=top,
                       precision=precision, lora_rank=lora_rank,
                       flash_attention=flash_attention,
                       overlap_grad_reduce=overlap_grad_reduce,
                       gradient_bytes=_gradient_bytes(gradient_bytes, precision, framework),
                       devices_per_node=devices_per_node, framework=framework,
                       links=_path_arg(links or "", "plan_llm", "links"),
                       interval_level=interval_level,
                       fp8_weights=fp8_weights, dropout=dropout, lora_dropout=lora_dropout,
                       activation_fp8_store=activation_fp8_store, cuda_graphs=cuda_graphs,
                       pipeline_layout=pipeline_layout, first_stage_layers=first_stage_layers,
                       last_stage_layers=last_stage_layers,
                       embedding_as_layer=embedding_as_layer, loss_as_layer=loss_as_layer,
                       capacity_factor=float(capacity_factor),
                       moe_imbalance=float(moe_imbalance), mtp_layers=mtp_layers,
                       overlap_moe_comm=overlap_moe_comm, tp_comm_overlap=tp_comm_overlap,
                       **({"recompute_modules": recompute_modules} if recompute_modules else {}))
    request.fix(_fix_text(fix or {}))
    answer = request.run()
    return LlmPlan(answer.to_json(), answer)


def _request(cls, **fields):
    """A request of the scenario layer (fitspeed/scenario/) with its fields set from
    keyword arguments; TypeError for a field it does not have."""
    request = cls()
    for name, value in fields.items():
        if not hasattr(request, name):
            raise TypeError(f"{cls.__name__} has no field '{name}'")
        setattr(request, name, value)
    return request


def _run(cls, **fields):
    """The answer of a request made by _request."""
    return _request(cls, **fields).run()


# plan_llm's fix keys as `fitspeed plan --fix` names them.
_FIX_KEYS = {"micro_batch": "mb", "sequence_parallel": "sp", "shard_group": "shard"}


def _fix_text(fix: Mapping[str, Any]) -> str:
    """{'tp': 8, 'micro_batch': 2, 'sequence_parallel': True} -> 'tp=8,mb=2,sp=1': the
    text the library's --fix parser reads (and checks). TypeError when fix is not
    a mapping; UsageError for a key or value that is not an int or a str without
    ',' and '=' (which would smuggle in another item: {'tp': '8,pp=2'})."""
    if not isinstance(fix, Mapping):
        raise TypeError(f"plan_llm: fix must be a mapping such as {{'tp': 8}}, "
                        f"not {type(fix).__name__}")
    items = []
    for key, value in fix.items():
        if isinstance(value, bool):
            value = int(value)
        for what, text in (("key", key), ("value", value)):
            if isinstance(text, int) and what == "value":
                continue
            if not isinstance(text, str) or "," in text or "=" in text:
                raise UsageError(f"plan_llm: fix {what} {text!r} (of {key!r}): expected "
                                 f"{'an int or ' if what == 'value' else ''}a str without "
                                 f"',' and '='")
        items.append(f"{_FIX_KEYS.get(key, key)}={value}")
    return ",".join(items)
