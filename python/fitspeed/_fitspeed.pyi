# Type stubs of the extension fitspeed._fitspeed (python/src/module.cc).
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

__version__: str  # the library's, fitspeed::Version()
_python_executable: str  # the interpreter CMake built this module for

class Error(Exception):
    message: str
    file: Optional[str]
    line: Optional[int]
    field: Optional[str]

class DataError(Error, ValueError): ...
class UsageError(Error, ValueError): ...
class InputError(Error, OSError): ...

class Sample:
    source: str
    line: int
    batch: float
    devices: int
    label: str
    precision: str
    tags: Dict[str, str]
    throughput_sps: Optional[float]
    step_time_s: Optional[float]
    epoch_time_s: Optional[float]
    samples_per_epoch: Optional[float]
    epoch: Optional[int]
    seq_len: Optional[float]
    unit: str
    steps_rule: str
    def __init__(self) -> None: ...
    def validate(self) -> None: ...

class ParamEstimate:
    name: str
    unit: str
    value: float
    std_error: float
    ci_low: float
    ci_high: float

class FitPoint:
    source: str
    line: int
    batch: float
    devices: int
    observed: float
    predicted: float
    residual: float

class GroupFit:
    group: Dict[str, Any]
    seq_len: Optional[float]
    law: str
    objective: str
    loss: str
    confidence: float
    n_points: int
    dof: int
    converged: bool
    usable: bool
    iterations: int
    solver_message: str
    params: List[ParamEstimate]
    covariance: np.ndarray
    correlation: np.ndarray
    rss: float
    r2: float
    rel_rmse: float
    aic: float
    loo_rel_rmse: float
    loo_one_step: bool
    b_half: float
    b_90: float
    warnings: List[str]
    points: List[FitPoint]
    def param(self, name: str) -> ParamEstimate: ...
    def count_name(self) -> str: ...
    def predict(self, batch: Any) -> Any: ...
    def predict_step_time(self, batch: Any) -> Any: ...
    def brief_report(self) -> str: ...
    def full_report(self) -> str: ...

class FitResult:
    groups: List[GroupFit]
    def all_usable(self) -> bool: ...
    def brief_report(self) -> str: ...
    def full_report(self) -> str: ...
    def to_json(self) -> str: ...

def format_names() -> str: ...
def read_samples(spec: str, format: str = ..., skip_first_epochs: int = ...,
                 tensorboard_tag: str = ..., tensorboard_unit: str = ...,
                 warn: Optional[Callable[[str], None]] = ...) -> List[Sample]: ...
def parse_samples(text: bytes, source: str = ..., attributes: str = ..., format: str = ...,
                  skip_first_epochs: int = ...,
                  warn: Optional[Callable[[str], None]] = ...) -> List[Sample]: ...
def law_names() -> List[str]: ...
def devices_json(include_host: bool = ...) -> str: ...
def zoo_models() -> List[Dict[str, Any]]: ...
def transformer(spec: str) -> Dict[str, Any]: ...
def transformer_names() -> List[str]: ...
def llm_frameworks() -> List[Tuple[str, str]]: ...
def framework_gradient_bytes(framework: str, precision: str) -> float: ...
def forward_flops_per_token(spec: str, seq_len: int) -> float: ...

class Answer:
    notes: List[str]
    usable: bool
    problem: str
    def brief_report(self) -> str: ...
    def full_report(self) -> str: ...
    def to_json(self) -> str: ...
    def to_html(self) -> str: ...
class HostSweepAnswer(Answer): ...
class DeviceSweepAnswer(Answer): ...
class LlmStepAnswer(Answer): ...
class LlmPlanAnswer(Answer): ...

class HostSweepRequest:
    model: str
    seq_len: int
    layers: bool
    batches: List[int]
    max_batch: int
    precision: str
    backend: str
    optimizer: str
    threads: int
    min_repeats: int
    max_repeats: int
    min_time_s: float
    warmup_steps: int
    seed: int
    def __init__(self) -> None: ...
    def validate(self) -> None: ...
    def run(self) -> HostSweepAnswer: ...

class DeviceSweepRequest:
    model: str
    device: str
    links: str
    framework: str
    intervals: str
    interval_level: float
    layers: bool
    seq_len: int
    mean_tokens: float
    mean_square_tokens: float
    head_positions: int
    batches: List[int]
    max_batch: int
    precision: str
    optimizer: str
    devices: int
    devices_per_node: int
    overlap: bool
    accumulation: int
    recompute: bool
    steps_per_execution: int
    input_samples_per_s: float
    attention: str
    layout: str
    amp_ops: Optional[str]
    fusion: Optional[str]
    def __init__(self) -> None: ...
    def validate(self) -> None: ...
    def run(self) -> DeviceSweepAnswer: ...

class LlmStepRequest:
    model: str
    dropout: Optional[bool]
    interval_level: float
    device: str
    devices: int
    devices_per_node: int
    links: str
    seq_len: int
    precision: str
    lora_rank: int
    capacity_factor: float
    moe_imbalance: float
    mtp_layers: int
    lora_dropout: bool
    fp8_weights: bool
    activation_fp8_store: bool
    cuda_graphs: bool
    flash_attention: bool
    gradient_bytes: float
    framework: str
    tp: int
    pp: int
    vp: int
    cp: int
    ep: int
    etp: int
    overlap_moe_comm: bool
    tp_comm_overlap: bool
    pipeline_layout: str
    first_stage_layers: int
    last_stage_layers: int
    embedding_as_layer: bool
    loss_as_layer: bool
    micro_batch: int
    global_batch: int
    recompute: str
    sequence_parallel: bool
    recompute_modules: str
    zero: int
    shard_group: int
    overlap_grad_reduce: bool
    def __init__(self) -> None: ...
    def validate(self) -> None: ...
    def run(self) -> LlmStepAnswer: ...

class LlmPlanRequest:
    model: str
    dropout: Optional[bool]
    interval_level: float
    device: str
    devices: int
    devices_per_node: int
    links: str
    seq_len: int
    precision: str
    lora_rank: int
    capacity_factor: float
    moe_imbalance: float
    mtp_layers: int
    lora_dropout: bool
    fp8_weights: bool
    activation_fp8_store: bool
    cuda_graphs: bool
    flash_attention: bool
    gradient_bytes: float
    framework: str
    tokens: Optional[float]
    price_per_device_hour: Optional[float]
    global_batch: int
    top: int
    overlap_grad_reduce: bool
    overlap_moe_comm: bool
    tp_comm_overlap: bool
    recompute_modules: str
    pipeline_layout: str
    first_stage_layers: int
    last_stage_layers: int
    embedding_as_layer: bool
    loss_as_layer: bool
    def __init__(self) -> None: ...
    def fix(self, text: str) -> None: ...
    def validate(self) -> None: ...
    def run(self) -> LlmPlanAnswer: ...

class FitAnswer(Answer):
    fit: FitResult
class ProjectAnswer(Answer): ...

class FitRequest:
    samples: List[Sample]
    law: str
    objective: str
    loss: str
    loss_scale: float
    confidence: float
    leave_one_out: bool
    max_iterations: int
    initial: List[float]
    def __init__(self) -> None: ...
    def validate(self) -> None: ...
    def run(self) -> FitAnswer: ...

class ProjectRequest:
    measured: bool
    samples_per_epoch: float
    startup_s: Optional[float]
    first_epoch_extra_s: float
    samples: List[Sample]
    fit_json: str
    label: str
    devices: int
    batches: List[float]
    law: Optional[Tuple[float, float]]
    drop_remainder: bool
    validation_samples: float
    validation_batch: float
    epochs: List[float]
    confidence: float
    price_per_device_hour: Optional[float]
    def __init__(self) -> None: ...
    def validate(self) -> None: ...
    def run(self) -> ProjectAnswer: ...
