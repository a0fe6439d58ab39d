# Type stubs of the package fitspeed (python/fitspeed/__init__.py); the
# extension's own are in _fitspeed.pyi. tests/python/test_stubs.py checks that
# every public name and signature here matches the package.
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ._fitspeed import (
    DataError as DataError,
    Error as Error,
    FitPoint as FitPoint,
    GroupFit as GroupFit,
    InputError as InputError,
    ParamEstimate as ParamEstimate,
    Sample as Sample,
    UsageError as UsageError,
)

__version__: str
__all__: List[str]

class FitspeedWarning(UserWarning): ...

def format_names() -> List[str]: ...
def law_names() -> List[str]: ...
def samples_to_frame(samples: Sequence[Sample]) -> Any: ...
def frame_to_samples(frame: Any) -> List[Sample]: ...
def read(path_or_spec: str, *, format: str = ..., skip_first_epochs: int = ...,
         tensorboard_tag: str = ..., tensorboard_unit: str = ...,
         as_frame: bool = ...) -> Any: ...
def read_text(text: Union[str, bytes], *, source: str = ..., attributes: str = ...,
              format: str = ..., skip_first_epochs: int = ...,
              as_frame: bool = ...) -> Any: ...

class FitResult:
    samples: List[Sample]
    groups: List[GroupFit]
    def group(self, label: Optional[str] = ..., devices: Optional[int] = ...,
              precision: Optional[str] = ...) -> GroupFit: ...
    @property
    def v0(self) -> ParamEstimate: ...
    @property
    def t(self) -> ParamEstimate: ...
    @property
    def covariance(self) -> np.ndarray: ...
    @property
    def usable(self) -> bool: ...
    def predict(self, batch: Any) -> Any: ...
    def predict_step_time(self, batch: Any) -> Any: ...
    def predict_band(self, batch: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    def brief_report(self) -> str: ...
    def full_report(self) -> str: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_html(self) -> str: ...

def fit(samples: Any, *, law: str = ..., objective: str = ..., loss: str = ...,
        loss_scale: float = ..., confidence: float = ..., leave_one_out: bool = ...,
        max_iterations: int = ..., initial: Sequence[float] = ...) -> FitResult: ...

class _JsonResult:
    def to_json(self) -> str: ...
    def to_html(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def __getitem__(self, key: str) -> Any: ...

class ModeledSweep(_JsonResult):
    notes: List[str]
    def steps(self, as_frame: bool = ...) -> Any: ...
    @property
    def interval(self) -> Dict[str, Any]: ...
    def fit_groups(self) -> List[Dict[str, Any]]: ...

class HostSweep(_JsonResult):
    def steps(self, as_frame: bool = ...) -> Any: ...

class Projection(_JsonResult):
    def rows(self, as_frame: bool = ...) -> Any: ...

class LlmStep(_JsonResult): ...

class LlmPlan(_JsonResult):
    def ranked(self, as_frame: bool = ...) -> Any: ...
    def not_fitting(self, as_frame: bool = ...) -> Any: ...

def project(source: Any, *, samples_per_epoch: Optional[float] = ...,
            batch: Union[None, float, Sequence[float]] = ...,
            epochs: Optional[Sequence[float]] = ...,
            price_per_device_hour: Optional[float] = ..., drop_remainder: bool = ...,
            validation_samples: float = ..., validation_batch: float = ...,
            startup_s: float = ..., first_epoch_extra_s: float = ...,
            confidence: float = ..., devices: int = ..., label: str = ...,
            measured: bool = ...) -> Projection: ...
def devices(*, include_host: bool = ...) -> List[Dict[str, Any]]: ...
def models() -> List[Dict[str, Any]]: ...
def transformer(spec: str) -> Dict[str, Any]: ...
def model(network: str, device: str, batches: Optional[Sequence[int]] = ..., *,
          max_batch: int = ..., precision: str = ..., optimizer: str = ..., devices: int = ...,
          devices_per_node: int = ..., overlap: bool = ..., accumulation: int = ...,
          recompute: bool = ..., attention: str = ..., layout: str = ...,
          framework: Optional[str] = ..., steps_per_execution: int = ...,
          input_samples_per_s: float = ..., seq_len: int = ..., interval_level: float = ...,
          links: Optional[str] = ..., mean_tokens: float = ..., mean_square_tokens: float = ...,
          head_positions: int = ..., amp_ops: Optional[str] = ...) -> ModeledSweep: ...
def sweep(network: str, batches: Optional[Sequence[int]] = ..., *, max_batch: int = ...,
          precision: str = ..., backend: str = ..., optimizer: str = ..., threads: int = ...,
          min_repeats: int = ..., max_repeats: int = ..., min_time_s: float = ...,
          warmup_steps: int = ..., seed: int = ..., seq_len: int = ...) -> HostSweep: ...
def llm_step(model: str, device: str, *, seq_len: int, devices: int = ..., tp: int = ...,
             pp: int = ..., vp: int = ..., cp: int = ..., ep: int = ..., micro_batch: int = ...,
             global_batch: int = ..., recompute: str = ..., sequence_parallel: bool = ...,
             zero: Optional[int] = ..., precision: str = ..., lora_rank: int = ...,
             flash_attention: bool = ..., overlap_grad_reduce: bool = ...,
             gradient_bytes: Optional[float] = ..., devices_per_node: int = ...,
             links: Optional[str] = ..., interval_level: float = ...,
             fp8_weights: bool = ..., dropout: Optional[bool] = ...,
             lora_dropout: bool = ...,
             activation_fp8_store: bool = ..., cuda_graphs: bool = ..., etp: int = ...,
             pipeline_layout: str = ..., first_stage_layers: int = ...,
             last_stage_layers: int = ..., embedding_as_layer: bool = ...,
             loss_as_layer: bool = ..., capacity_factor: float = ...,
             moe_imbalance: float = ..., mtp_layers: int = ...,
             overlap_moe_comm: bool = ..., recompute_modules: str = ...,
             framework: str = ..., tp_comm_overlap: bool = ...,
             shard_group: int = ...) -> LlmStep: ...
def plan_llm(model: str, device: str, *, devices: int, global_batch: int, seq_len: int,
             tokens: Optional[float] = ..., price_per_device_hour: Optional[float] = ...,
             top: int = ..., precision: str = ..., lora_rank: int = ...,
             flash_attention: bool = ..., overlap_grad_reduce: bool = ...,
             gradient_bytes: Optional[float] = ..., devices_per_node: int = ...,
             links: Optional[str] = ..., fix: Optional[Mapping[str, Any]] = ...,
             interval_level: float = ..., fp8_weights: bool = ...,
             dropout: Optional[bool] = ..., lora_dropout: bool = ...,
             activation_fp8_store: bool = ..., cuda_graphs: bool = ..., pipeline_layout: str = ...,
             first_stage_layers: int = ..., last_stage_layers: int = ...,
             embedding_as_layer: bool = ..., loss_as_layer: bool = ...,
             capacity_factor: float = ..., moe_imbalance: float = ...,
             mtp_layers: int = ..., overlap_moe_comm: bool = ...,
             recompute_modules: str = ..., framework: str = ...,
             tp_comm_overlap: bool = ...) -> LlmPlan: ...
def llm_frameworks() -> List[Tuple[str, str]]: ...
