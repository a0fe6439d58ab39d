// The Python extension `fitspeed._fitspeed`: the library's entry points as
// Python functions (docs/python.md). The package `fitspeed` (python/fitspeed/)
// wraps it: DataFrames, keyword defaults and result objects live there, the
// numbers all come from here, from the same functions the CLI calls.
//
// Every fitspeed::Error becomes a Python exception of the package's hierarchy
// (fitspeed.Error, with DataError, UsageError and InputError below it) that
// carries the message and, for a DataError, the file, line and field it names.
#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fitspeed/device/frameworks.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/fitspeed.h"
#include "fitspeed/llm/calibration.h"
#include "fitspeed/llm/planner.h"
#include "fitspeed/project/config.h"
#include "fitspeed/project/report.h"
#include "fitspeed/scenario/llm.h"
#include "fitspeed/scenario/project.h"
#include "fitspeed/scenario/sweep.h"

namespace py = pybind11;

namespace fitspeed::python {
namespace {

// The exception types, created once at import and kept for the process.
PyObject* g_error = nullptr;
PyObject* g_data_error = nullptr;
PyObject* g_usage_error = nullptr;
PyObject* g_input_error = nullptr;

// An exception type of the package. The base class holds the defaults every
// error has: file, line and field None (set where the input names them), and
// message, a property giving the text it was raised with.
PyObject* NewException(py::module_& m, const char* name, const char* doc, py::tuple bases,
                       bool base) {
  const std::string qualified = std::string("fitspeed.") + name;
  py::dict attributes;
  if (base) {
    attributes["file"] = py::none();
    attributes["line"] = py::none();
    attributes["field"] = py::none();
    py::object builtins = py::module_::import("builtins");
    py::object eval = builtins.attr("eval");
    attributes["message"] = builtins.attr("property")(
        eval("lambda self: str(self.args[0]) if self.args else ''"), py::none(), py::none(),
        "The message, as the CLI prints it after 'fitspeed: '.");
  }
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), attributes.ptr());
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(type));
  return type;
}

// Raises `type(message)` with the attributes file, line and field.
void Raise(PyObject* type, const char* message, py::object file, py::object line,
           py::object field) {
  py::object exc = py::reinterpret_borrow<py::object>(type)(message);
  exc.attr("file") = std::move(file);
  exc.attr("line") = std::move(line);
  exc.attr("field") = std::move(field);
  PyErr_SetObject(type, exc.ptr());
}

void TranslateErrors(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const DataError& e) {
    Raise(g_data_error, e.what(), e.source().empty() ? py::none() : py::object(py::str(e.source())),
          e.line() > 0 ? py::object(py::int_(e.line())) : py::none(),
          e.field().empty() ? py::none() : py::object(py::str(e.field())));
  } catch (const UsageError& e) {
    Raise(g_usage_error, e.what(), py::none(), py::none(), py::none());
  } catch (const InputError& e) {
    Raise(g_input_error, e.what(), py::none(), py::none(), py::none());
  } catch (const Error& e) {
    Raise(g_error, e.what(), py::none(), py::none(), py::none());
  }
}

// ---------------------------------------------------------------- samples

std::string StepsRuleName(StepsRule rule) {
  return rule == StepsRule::kDropRemainder ? "drop-remainder" : "keep-partial";
}
StepsRule ParseStepsRule(const std::string& name) {
  if (name == "keep-partial") return StepsRule::kKeepPartial;
  if (name == "drop-remainder") return StepsRule::kDropRemainder;
  throw UsageError("steps_rule '" + name + "': expected keep-partial or drop-remainder");
}

ReadOptions MakeReadOptions(const std::string& format, int skip_first_epochs,
                            const std::string& tensorboard_tag, const std::string& tensorboard_unit,
                            const std::function<void(const std::string&)>& warn) {
  if (skip_first_epochs < 0) {
    throw UsageError("skip_first_epochs " + std::to_string(skip_first_epochs) + ": must be >= 0");
  }
  ReadOptions options;
  options.format = ParseFormat(format);
  options.skip_first_epochs = skip_first_epochs;
  options.tensorboard_tag = tensorboard_tag;
  options.tensorboard_unit = tensorboard_unit;
  options.warn = warn;
  return options;
}

// A Sample field held as a compact handle (sample.h), read and written in
// Python as the std type pybind11 converts (str, dict, None or a number).
template <class Field, class Value>
void BindField(py::class_<Sample>& sample, const char* name, Field Sample::*field,
               const char* doc) {
  sample.def_property(
      name, [field](const Sample& s) { return Value(s.*field); },
      [field](Sample& s, Value value) { s.*field = Field(std::move(value)); }, doc);
}

void BindSamples(py::module_& m) {
  py::class_<Sample> sample(m, "Sample",
                            R"(One measurement: a batch and its throughput, step time or epoch time.

Fields as fitspeed/core/sample.h documents them: batch is the global batch (all
devices), throughput_sps in samples (or tokens, see unit) per second, step_time_s
seconds per optimizer step, epoch_time_s seconds per epoch with samples_per_epoch.)");
  using OptionalDouble = std::optional<double>;
  BindField<SharedString, std::string>(sample, "label", &Sample::label,
                                       "series name, may be empty");
  BindField<SharedString, std::string>(sample, "precision", &Sample::precision,
                                       "'fp32', 'mixed', ... or empty when unknown");
  sample.def_property(
      "tags", [](const Sample& s) { return s.tags.ToMap(); },
      [](Sample& s, const TagMap& tags) { s.tags = tags; },
      "categorical columns of the source (CSV series keys)");
  BindField<CompactOptional<double>, OptionalDouble>(
      sample, "throughput_sps", &Sample::throughput_sps, "samples (or tokens) per second");
  BindField<CompactOptional<double>, OptionalDouble>(sample, "step_time_s", &Sample::step_time_s,
                                                     "seconds per optimizer step");
  BindField<CompactOptional<double>, OptionalDouble>(sample, "epoch_time_s", &Sample::epoch_time_s,
                                                     "seconds for one epoch");
  BindField<CompactOptional<double>, OptionalDouble>(
      sample, "samples_per_epoch", &Sample::samples_per_epoch, "N, needed with epoch_time_s");
  BindField<CompactOptional<int>, std::optional<int>>(sample, "epoch", &Sample::epoch,
                                                      "1-based epoch number, when known");
  BindField<CompactOptional<double>, OptionalDouble>(sample, "seq_len", &Sample::seq_len,
                                                     "tokens per sample, where stated");
  sample.def(py::init<>())
      .def_property(
          "source", [](const Sample& s) { return std::string(s.source); },
          [](Sample& s, const std::string& name) { s.source = name; },
          "file the sample came from ('-' for standard input)")
      .def_readwrite("line", &Sample::line, "1-based line in source, 0 if not from a line")
      .def_readwrite("batch", &Sample::batch, "samples per optimizer step, all devices together")
      .def_readwrite("devices", &Sample::devices, "data-parallel devices sharing the batch")
      .def_property(
          "unit", [](const Sample& s) { return UnitName(s.unit); },
          [](Sample& s, const std::string& name) { s.unit = ParseUnit(name); },
          "what batch and rates count: 'samples' or 'tokens'")
      .def_property(
          "steps_rule", [](const Sample& s) { return StepsRuleName(s.steps_rule); },
          [](Sample& s, const std::string& name) { s.steps_rule = ParseStepsRule(name); },
          "how an epoch is cut into steps: 'keep-partial' (ceil) or 'drop-remainder' (floor)")
      .def("validate", &ValidateSample,
           "Raises DataError naming the field when the sample is invalid.")
      .def("__repr__", [](const Sample& s) {
        std::ostringstream out;
        out << "Sample(batch=" << s.batch << ", devices=" << s.devices;
        if (s.throughput_sps) out << ", throughput_sps=" << *s.throughput_sps;
        if (s.step_time_s) out << ", step_time_s=" << *s.step_time_s;
        if (s.epoch_time_s) out << ", epoch_time_s=" << *s.epoch_time_s;
        out << ", unit='" << UnitName(s.unit) << "', source='" << s.source << "', line=" << s.line
            << ")";
        return out.str();
      });

  m.def(
      "format_names", []() { return FormatNames(); },
      "The log formats read() takes, comma-separated, in detection order.");
  m.def(
      "read_samples",
      [](const std::string& spec, const std::string& format, int skip_first_epochs,
         const std::string& tensorboard_tag, const std::string& tensorboard_unit,
         const std::function<void(const std::string&)>& warn) {
        const ReadOptions options =
            MakeReadOptions(format, skip_first_epochs, tensorboard_tag, tensorboard_unit, warn);
        return ReadSamples(ParseInputSpec(spec), options);
      },
      py::arg("spec"), py::arg("format") = "auto", py::arg("skip_first_epochs") = 1,
      py::arg("tensorboard_tag") = "", py::arg("tensorboard_unit") = "", py::arg("warn") = nullptr,
      "Reads the samples of a log: 'PATH' or 'PATH@batch=64,devices=8,...' (attributes fill what "
      "the log lacks). Raises InputError when it cannot be read, DataError naming file, line and "
      "field when its content is bad.");
  m.def(
      "parse_samples",
      [](const py::bytes& text, const std::string& source, const std::string& attributes,
         const std::string& format, int skip_first_epochs,
         const std::function<void(const std::string&)>& warn) {
        const ReadOptions options = MakeReadOptions(format, skip_first_epochs, "", "", warn);
        const std::string attrs =
            attributes.empty() ? source : source + "@" + attributes;  // parsed as a spec
        const InputSpec spec = ParseInputSpec(attrs);
        const std::string content = text;
        return ParseSamples(content, source, spec.attributes, options);
      },
      py::arg("text"), py::arg("source") = "<text>", py::arg("attributes") = "",
      py::arg("format") = "auto", py::arg("skip_first_epochs") = 1, py::arg("warn") = nullptr,
      "Reads the samples of a log given as bytes (`source` names it in messages); attributes as "
      "after '@' in a spec: 'batch=64,devices=8'.");
}

// ---------------------------------------------------------------- fit

void BindFit(py::module_& m) {
  py::class_<ParamEstimate>(m, "ParamEstimate",
                            "One fitted parameter with its standard error and interval.")
      .def_readonly("name", &ParamEstimate::name)
      .def_readonly("unit", &ParamEstimate::unit)
      .def_readonly("value", &ParamEstimate::value)
      .def_readonly("std_error", &ParamEstimate::std_error,
                    "sqrt(s^2 (J^T J)^-1_ii), s^2 = RSS/dof")
      .def_readonly("ci_low", &ParamEstimate::ci_low,
                    "interval at the fit's confidence (t quantile)")
      .def_readonly("ci_high", &ParamEstimate::ci_high)
      .def("__repr__", [](const ParamEstimate& p) {
        std::ostringstream out;
        out.precision(10);
        out << "ParamEstimate(" << p.name << "=" << p.value << " " << p.unit
            << ", std_error=" << p.std_error << ", ci=[" << p.ci_low << ", " << p.ci_high << "])";
        return out.str();
      });

  py::class_<FitPoint>(m, "FitPoint",
                       "One fitted point: observed and predicted in the objective's quantity.")
      .def_readonly("source", &FitPoint::source)
      .def_readonly("line", &FitPoint::line)
      .def_readonly("batch", &FitPoint::batch)
      .def_readonly("devices", &FitPoint::devices)
      .def_readonly("observed", &FitPoint::observed)
      .def_readonly("predicted", &FitPoint::predicted)
      .def_readonly("residual", &FitPoint::residual);

  py::class_<GroupFit>(m, "GroupFit",
                       R"(The fit of one group of samples (devices, label, precision, unit).

v(b) = b/(b/v0 + t) for the default hyperbolic law; params holds the law's
parameters with their standard errors and confidence intervals, covariance
their covariance s^2 (J^T J)^-1.)")
      .def_property_readonly("group",
                             [](const GroupFit& g) {
                               py::dict d;
                               d["devices"] = g.group.devices;
                               d["label"] = g.group.label;
                               d["precision"] = g.group.precision;
                               d["unit"] = UnitName(g.group.unit);
                               return d;
                             })
      .def_readonly("seq_len", &GroupFit::seq_len)
      .def_readonly("law", &GroupFit::law)
      .def_property_readonly("objective",
                             [](const GroupFit& g) { return ObjectiveName(g.objective); })
      .def_property_readonly("loss", [](const GroupFit& g) { return LossName(g.loss); })
      .def_readonly("confidence", &GroupFit::confidence)
      .def_readonly("n_points", &GroupFit::n_points)
      .def_readonly("dof", &GroupFit::dof)
      .def_readonly("converged", &GroupFit::converged)
      .def_readonly("usable", &GroupFit::usable)
      .def_readonly("iterations", &GroupFit::iterations)
      .def_readonly("solver_message", &GroupFit::solver_message)
      .def_readonly("params", &GroupFit::params)
      .def_readonly("covariance", &GroupFit::covariance)
      .def_readonly("correlation", &GroupFit::correlation)
      .def_readonly("rss", &GroupFit::rss)
      .def_readonly("r2", &GroupFit::r2)
      .def_readonly("rel_rmse", &GroupFit::rel_rmse)
      .def_readonly("aic", &GroupFit::aic)
      .def_readonly("loo_rel_rmse", &GroupFit::loo_rel_rmse)
      .def_readonly("loo_one_step", &GroupFit::loo_one_step)
      .def_readonly("b_half", &GroupFit::b_half)
      .def_readonly("b_90", &GroupFit::b_90)
      .def_readonly("warnings", &GroupFit::warnings)
      .def_readonly("points", &GroupFit::points)
      .def("param", &GroupFit::Param, py::arg("name"), py::return_value_policy::copy,
           "The named parameter ('v0', 't', ...); KeyError-like IndexError when absent.")
      .def("count_name", &GroupFit::CountName, "'tokens', 'sequences' or 'samples'")
      .def("predict", py::vectorize(&GroupFit::PredictThroughput), py::arg("batch"),
           "Fitted throughput (count_name()/s) at batch b (a number or an array).")
      .def("predict_step_time", py::vectorize(&GroupFit::PredictStepTime), py::arg("batch"),
           "Fitted step time (s) at batch b (a number or an array).")
      .def("brief_report", &GroupFit::BriefReport, "One line.")
      .def("full_report", &GroupFit::FullReport, "Several lines, lmfit-like.");

  py::class_<FitResult>(m, "FitResult", "The fits of every group, in key order.")
      .def_readonly("groups", &FitResult::fits)
      .def("all_usable", &FitResult::AllUsable)
      .def("brief_report", &FitResult::BriefReport)
      .def("full_report", &FitResult::FullReport)
      .def(
          "to_json", [](const FitResult& r) { return FitToJson(r); },
          "The 'fitspeed.fit/1' JSON text, as `fitspeed fit --output json` writes it.");

  m.def("law_names", &LawNames, "The laws fit() takes.");
}

// ---------------------------------------------------------------- catalog and models

void BindCatalog(py::module_& m) {
  m.def(
      "devices_json",
      [](bool include_host) {
        std::vector<Device> devices;
        for (const std::string& name : CatalogDeviceNames()) {
          if (name == "host" && !include_host) continue;
          devices.push_back(LoadDevice(name));
        }
        std::ostringstream out;
        WriteDevices(out, devices, OutputFormat::kJson, true);
        return out.str();
      },
      py::arg("include_host") = false,
      "The catalog as 'fitspeed.devices/1' JSON text (`fitspeed devices --output json`); with "
      "include_host, this CPU probed (about a second).");
  m.def(
      "zoo_models",
      []() {
        py::list out;
        for (const ZooEntry& e : ZooEntries()) {
          py::dict d;
          d["name"] = e.name;
          d["kind"] = "zoo";
          d["description"] = e.description;
          d["reference"] = e.reference;
          d["default_seq_len"] = e.default_seq_len;
          d["max_seq_len"] = e.max_seq_len;
          out.append(d);
        }
        return out;
      },
      "The zoo's networks: name, description, reference, sequence lengths.");
  m.def(
      "transformer",
      [](const std::string& spec) {
        const TransformerConfig c = LoadTransformer(spec);
        const TransformerParameters p = CountParameters(c);
        py::dict d;
        d["name"] = c.name;
        d["kind"] = "transformer";
        d["architecture"] = c.architecture;
        d["source"] = c.source;
        d["layers"] = c.layers;
        d["hidden"] = c.hidden;
        d["heads"] = c.heads;
        d["kv_heads"] = c.kv_heads;
        d["head_dim"] = c.head_dim;
        d["ffn_hidden"] = c.ffn_hidden;
        d["vocab"] = c.vocab;
        d["max_positions"] = c.max_positions;
        d["parameters"] = p.total;
        d["active_parameters_per_token"] = p.active_per_token;
        // The layer kinds and the 2025 variants (docs/llm.md, "Models").
        int64_t moe_layers = 0, sliding_layers = 0;
        for (int64_t i = 0; i < c.layers; ++i) {
          moe_layers += LayerKindAt(c, i).moe ? 1 : 0;
          sliding_layers += LayerKindAt(c, i).sliding ? 1 : 0;
        }
        d["experts"] = c.experts;
        d["top_k"] = c.top_k;
        d["moe_layers"] = moe_layers;
        d["sliding_layers"] = sliding_layers;
        d["sliding_window"] = c.sliding_window;
        if (c.latent.kv_rank > 0) {
          py::dict latent;
          latent["q_rank"] = c.latent.q_rank;
          latent["kv_rank"] = c.latent.kv_rank;
          latent["rope_dim"] = c.latent.rope_dim;
          latent["nope_dim"] = c.latent.nope_dim;
          latent["v_dim"] = c.latent.v_dim;
          d["latent"] = latent;
        }
        d["mtp_layers"] = c.mtp_layers;
        d["mtp_parameters"] = p.mtp;
        return d;
      },
      py::arg("spec"),
      "A transformer (built-in name, 'transformer:layers=..,hidden=..', or a config.json path): "
      "its shape and exact parameter count.");
  m.def("transformer_names", &BuiltinTransformerNames, "The built-in transformers.");
  m.def(
      "llm_frameworks",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const LlmFramework& f : LlmFrameworks()) out.emplace_back(f.name, f.title);
        return out;
      },
      "The frameworks llm_step and plan_llm take: (name, title) pairs, megatron first.");
  m.def(
      "framework_gradient_bytes",
      [](const std::string& framework, const std::string& precision) {
        return FindLlmFramework(framework).GradientBytes(precision);
      },
      py::arg("framework"), py::arg("precision"),
      "The bytes per reduced gradient element the framework uses at the precision.");
  m.def(
      "forward_flops_per_token",
      [](const std::string& spec, int64_t seq_len) {
        return ForwardFlopsPerToken(LoadTransformer(spec), seq_len);
      },
      py::arg("spec"), py::arg("seq_len"), "Forward FLOPs per token at a sequence length.");
}

// ---------------------------------------------------------------- requests and answers
//
// The scenario layer (fitspeed/scenario/): each request bound as a class
// whose fields are read and written as attributes (the package's functions
// set them from keyword arguments), run() returning the answer the CLI prints.

// A field of a request reached through `ref` (a lambda returning a reference
// to it), read and written as its own type.
template <class C, class Ref>
void Field(py::class_<C>& c, const char* name, Ref ref, const char* doc) {
  using T = std::remove_reference_t<decltype(ref(std::declval<C&>()))>;
  c.def_property(
      name, [ref](C& r) { return ref(r); }, [ref](C& r, T v) { ref(r) = std::move(v); }, doc);
}

// A field held as an enum, read and written by its name.
template <class C, class Ref, class Parse, class Name>
void NamedField(py::class_<C>& c, const char* name, Ref ref, Parse parse, Name name_of,
                const char* doc) {
  c.def_property(
      name, [ref, name_of](C& r) { return name_of(ref(r)); },
      [ref, parse](C& r, const std::string& v) { ref(r) = parse(v); }, doc);
}

// An optional field held as an enum: None or its name.
template <class C, class Ref, class Parse, class Name>
void OptionalNamedField(py::class_<C>& c, const char* name, Ref ref, Parse parse, Name name_of,
                        const char* doc) {
  c.def_property(
      name,
      [ref, name_of](C& r) -> std::optional<std::string> {
        return ref(r) ? std::optional<std::string>(name_of(*ref(r))) : std::nullopt;
      },
      [ref, parse](C& r, const std::optional<std::string>& v) {
        if (v) {
          ref(r) = parse(*v);
        } else {
          ref(r).reset();
        }
      },
      doc);
}

// Runs a request without the GIL (it may take seconds).
template <class Request>
auto RunReleased(const Request& request) {
  py::gil_scoped_release release;
  return request.Run();
}

void BindAnswer(py::module_& m) {
  py::class_<Answer>(m, "Answer", "What a request's run() returns (fitspeed/scenario/answer.h).")
      .def("brief_report", &Answer::BriefReport, "One line.")
      .def("full_report", &Answer::FullReport, "The table `fitspeed` prints.")
      .def("to_json", &Answer::ToJson, "The JSON `fitspeed --output json` prints.")
      .def("to_html", &Answer::ToHtml,
           "The HTML page `fitspeed --output html` prints (docs/reports.md).")
      .def_readonly("notes", &Answer::notes, "Sentences said on the way (the CLI's stderr).")
      .def_readonly("usable", &Answer::usable)
      .def_readonly("problem", &Answer::problem, "Why not usable, else empty.");
  py::class_<HostSweepAnswer, Answer>(m, "HostSweepAnswer");
  py::class_<DeviceSweepAnswer, Answer>(m, "DeviceSweepAnswer");
  py::class_<LlmStepAnswer, Answer>(m, "LlmStepAnswer");
  py::class_<LlmPlanAnswer, Answer>(m, "LlmPlanAnswer");
}

std::string HostPrecisionName(Precision p) { return PrecisionName(p, PrecisionContext::kHost); }
Precision ParseHostPrecision(const std::string& n) {
  return ParsePrecision(n, PrecisionContext::kHost);
}
Precision ParseDevicePrecision(const std::string& n) {
  return ParsePrecision(n, PrecisionContext::kDevice);
}
std::string DevicePrecisionName(Precision p) { return PrecisionName(p); }

void BindHostSweepRequest(py::module_& m) {
  using R = HostSweepRequest;
  py::class_<R> c(m, "HostSweepRequest",
                  "`fitspeed sweep host`: the real training step timed on this CPU at every "
                  "batch, then fitted (fitspeed/scenario/sweep.h).");
  c.def(py::init<>())
      .def_readwrite("model", &R::model, "zoo network or fitspeed.network/1 file")
      .def_readwrite("seq_len", &R::seq_len, "tokens per sequence; 0: the model's default")
      .def_readwrite("layers", &R::layers, "per-layer times in the report")
      .def("validate", &R::Validate)
      .def("run", &RunReleased<R>);
  Field(
      c, "batches", [](R & r) -> auto& { return r.options.batches; }, "[]: automatic");
  Field(
      c, "max_batch", [](R & r) -> auto& { return r.options.auto_max_batch; }, "");
  NamedField(
      c, "precision", [](R & r) -> auto& { return r.options.precision; }, &ParseHostPrecision,
      &HostPrecisionName, "fp32 or bf16");
  NamedField(
      c, "backend", [](R & r) -> auto& { return r.options.backend; }, &ParseBackend, &BackendName,
      "onednn or eigen");
  NamedField(
      c, "optimizer", [](R & r) -> auto& { return r.options.optimizer; }, &ParseOptimizer,
      &OptimizerName, "sgd, sgd-momentum, adam, rmsprop");
  Field(
      c, "threads", [](R & r) -> auto& { return r.options.threads; }, "0: every CPU");
  Field(
      c, "min_repeats", [](R & r) -> auto& { return r.options.min_repeats; }, "");
  Field(
      c, "max_repeats", [](R & r) -> auto& { return r.options.max_repeats; }, "");
  Field(
      c, "min_time_s", [](R & r) -> auto& { return r.options.min_time_s; }, "");
  Field(
      c, "warmup_steps", [](R & r) -> auto& { return r.options.warmup_steps; }, "");
  Field(
      c, "seed", [](R & r) -> auto& { return r.options.seed; }, "");
}

void BindDeviceSweepRequest(py::module_& m) {
  using R = DeviceSweepRequest;
  py::class_<R> c(m, "DeviceSweepRequest",
                  "`fitspeed sweep device`: the training step modeled on a catalogued device "
                  "at every batch, fitted, with the model's interval (fitspeed/scenario/sweep.h).");
  c.def(py::init<>())
      .def_readwrite("model", &R::model, "zoo network or fitspeed.network/1 file")
      .def_readwrite("device", &R::device, "catalog device or device JSON file")
      .def_readwrite("links", &R::links, "links file; '': the device's")
      .def_readwrite("framework", &R::framework, "framework profile; '': none")
      .def_readwrite("intervals", &R::intervals, "intervals file; '': built in")
      .def_readwrite("interval_level", &R::interval_level, "in (0, 1)")
      .def_readwrite("layers", &R::layers, "per-layer times in the report")
      .def("validate", &R::Validate)
      .def("run", &RunReleased<R>);
  Field(
      c, "seq_len", [](R & r) -> auto& { return r.zoo.seq_len; }, "");
  Field(
      c, "mean_tokens", [](R & r) -> auto& { return r.zoo.mean_tokens; }, "");
  Field(
      c, "mean_square_tokens", [](R & r) -> auto& { return r.zoo.mean_square_tokens; }, "");
  Field(
      c, "head_positions", [](R & r) -> auto& { return r.zoo.head_positions; }, "");
  Field(
      c, "batches", [](R & r) -> auto& { return r.options.batches; }, "[]: 1, 2, 4, ...");
  Field(
      c, "max_batch", [](R & r) -> auto& { return r.options.max_batch; }, "");
  NamedField(
      c, "precision", [](R & r) -> auto& { return r.options.precision; }, &ParseDevicePrecision,
      &DevicePrecisionName, "fp32, tf32, mixed or fp8");
  NamedField(
      c, "optimizer", [](R & r) -> auto& { return r.options.optimizer; }, &ParseOptimizer,
      &OptimizerName, "sgd, sgd-momentum, adam, rmsprop");
  Field(
      c, "devices", [](R & r) -> auto& { return r.options.devices; }, "");
  Field(
      c, "devices_per_node", [](R & r) -> auto& { return r.options.devices_per_node; }, "");
  Field(
      c, "overlap", [](R & r) -> auto& { return r.options.overlap; }, "");
  Field(
      c, "accumulation", [](R & r) -> auto& { return r.options.accumulation; }, "");
  Field(
      c, "recompute", [](R & r) -> auto& { return r.options.recompute; }, "");
  Field(
      c, "steps_per_execution", [](R & r) -> auto& { return r.options.steps_per_execution; }, "");
  Field(
      c, "input_samples_per_s", [](R & r) -> auto& { return r.options.input_samples_per_s; }, "");
  NamedField(
      c, "attention", [](R & r) -> auto& { return r.options.attention; }, &ParseAttentionKernel,
      &AttentionKernelName, "unfused or fused");
  NamedField(
      c, "layout", [](R & r) -> auto& { return r.options.layout; }, &ParseActivationLayout,
      &ActivationLayoutName, "nchw or nhwc");
  OptionalNamedField(
      c, "amp_ops", [](R & r) -> auto& { return r.amp_ops; }, &ParseAmpOpList, &AmpOpListName,
      "pytorch, tensorflow, none; None: the framework's");
  OptionalNamedField(
      c, "fusion", [](R & r) -> auto& { return r.fusion; }, &ParseElementwiseFusion,
      &ElementwiseFusionName, "none or bn-relu-add; None: the framework's");
}

// The cluster and training fields an LLM request shares with the other.
template <class R, class Training>
void BindLlmCommon(py::class_<R>& c, Training training) {
  c.def_readwrite("model", &R::model, "built-in transformer, transformer:..., or a config.json")
      .def_readwrite("dropout", &R::dropout, "True/False over the model's own; None: the model's")
      .def_readwrite("interval_level", &R::interval_level, "in (0, 1)")
      .def("validate", &R::Validate)
      .def("run", &RunReleased<R>);
  Field(
      c, "device", [](R & r) -> auto& { return r.cluster.device; }, "");
  Field(
      c, "devices", [](R & r) -> auto& { return r.cluster.devices; }, "");
  Field(
      c, "devices_per_node", [](R & r) -> auto& { return r.cluster.devices_per_node; }, "");
  Field(
      c, "links", [](R & r) -> auto& { return r.cluster.links; }, "");
  Field(
      c, "seq_len", [training](R & r) -> auto& { return training(r).seq_len; }, "");
  NamedField(
      c, "precision", [training](R & r) -> auto& { return training(r).format; }, &ParseMatrixFormat,
      &MatrixFormatName, "mixed, bf16, fp16, fp8, fp8-block, mxfp8, int8, fp4 or nvfp4");
  Field(
      c, "lora_rank", [training](R & r) -> auto& { return training(r).lora_rank; }, "");
  Field(
      c, "capacity_factor", [training](R & r) -> auto& { return training(r).capacity_factor; },
      "MoE: 0 dropless, else each expert's capacity over its balanced share");
  Field(
      c, "moe_imbalance", [training](R & r) -> auto& { return training(r).moe_imbalance; },
      "MoE: the busiest expert rank's tokens over the mean, >= 1");
  Field(
      c, "mtp_layers", [training](R & r) -> auto& { return training(r).mtp_layers; },
      "multi-token prediction modules trained; -1: the model's");
  Field(
      c, "lora_dropout", [training](R & r) -> auto& { return training(r).lora_dropout; }, "");
  Field(
      c, "fp8_weights", [training](R & r) -> auto& { return training(r).fp8_weights; }, "");
  Field(
      c, "activation_fp8_store",
      [training](R & r) -> auto& { return training(r).activation_fp8_store; }, "");
  Field(
      c, "cuda_graphs", [training](R & r) -> auto& { return training(r).cuda_graphs; }, "");
  Field(
      c, "flash_attention", [training](R & r) -> auto& { return training(r).flash_attention; }, "");
  Field(
      c, "gradient_bytes", [training](R & r) -> auto& { return training(r).gradient_bytes; },
      "2 or 4");
  Field(
      c, "framework", [training](R & r) -> auto& { return training(r).framework; },
      "megatron (default), nemo, megatron-deepspeed, deepspeed, fsdp, fsdp2, fsdp2-compile, "
      "maxtext: llm_frameworks()");
}

void BindLlmRequests(py::module_& m) {
  using S = LlmStepRequest;
  py::class_<S> step(m, "LlmStepRequest",
                     "One training step of a transformer split (fitspeed/scenario/llm.h).");
  step.def(py::init<>());
  BindLlmCommon(step, [](S& r) -> LlmTraining& { return r.training; });
  Field(
      step, "tp", [](S & r) -> auto& { return r.split.tp; }, "");
  Field(
      step, "pp", [](S & r) -> auto& { return r.split.pp; }, "");
  Field(
      step, "vp", [](S & r) -> auto& { return r.split.vp; }, "");
  Field(
      step, "cp", [](S & r) -> auto& { return r.split.cp; }, "");
  Field(
      step, "ep", [](S & r) -> auto& { return r.split.ep; }, "");
  Field(
      step, "etp", [](S & r) -> auto& { return r.split.etp; }, "0: tp");
  Field(
      step, "overlap_moe_comm", [](S & r) -> auto& { return r.split.overlap_moe_comm; }, "");
  Field(
      step, "tp_comm_overlap", [](S & r) -> auto& { return r.split.tp_comm_overlap; },
      "Transformer Engine's userbuffers overlap; needs sequence_parallel");
  Field(
      step, "shard_group", [](S & r) -> auto& { return r.split.shard_group; },
      "hybrid sharding: ZeRO's state over groups of this many ranks; 0: every rank");
  Field(
      step, "pipeline_layout", [](S & r) -> auto& { return r.split.layout; },
      "Megatron's layout grammar; '': even");
  Field(
      step, "first_stage_layers", [](S & r) -> auto& { return r.first_stage_layers; }, "0: even");
  Field(
      step, "last_stage_layers", [](S & r) -> auto& { return r.last_stage_layers; }, "0: even");
  Field(
      step, "embedding_as_layer", [](S & r) -> auto& { return r.embedding_as_layer; }, "");
  Field(
      step, "loss_as_layer", [](S & r) -> auto& { return r.loss_as_layer; }, "");
  Field(
      step, "micro_batch", [](S & r) -> auto& { return r.split.micro_batch; }, "");
  Field(
      step, "global_batch", [](S & r) -> auto& { return r.split.global_batch; },
      "0: micro_batch x dp");
  NamedField(
      step, "recompute", [](S & r) -> auto& { return r.split.recompute; }, &ParseRecompute,
      &RecomputeName, "none, selective or full");
  Field(
      step, "sequence_parallel", [](S & r) -> auto& { return r.split.sequence_parallel; }, "");
  NamedField(
      step, "recompute_modules", [](S & r) -> auto& { return r.split.recompute_modules; },
      &ParseRecomputeModules, &RecomputeModulesName,
      "with recompute 'selective': core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, "
      "shared_experts");
  Field(
      step, "zero", [](S & r) -> auto& { return r.split.zero; },
      "0..3; -1: the framework's default");
  Field(
      step, "overlap_grad_reduce", [](S & r) -> auto& { return r.split.overlap_grad_reduce; }, "");

  using P = LlmPlanRequest;
  py::class_<P> plan(m, "LlmPlanRequest",
                     "Every split of a cluster ranked (fitspeed/scenario/llm.h).");
  plan.def(py::init<>())
      .def_readwrite("tokens", &P::tokens, "tokens of the run; None: no days")
      .def_readwrite("price_per_device_hour", &P::price_per_device_hour, "None: no cost")
      .def(
          "fix", [](P& r, const std::string& text) { ApplyLlmPlanFix(text, r.options); },
          py::arg("text"), "Pins sizes as `fitspeed plan --fix` does ('tp=8,mb=2').");
  BindLlmCommon(plan, [](P& r) -> LlmTraining& { return r.options.training; });
  Field(
      plan, "global_batch", [](P & r) -> auto& { return r.options.global_batch; }, "");
  Field(
      plan, "top", [](P & r) -> auto& { return r.options.top; }, "");
  Field(
      plan, "overlap_grad_reduce", [](P & r) -> auto& { return r.options.overlap_grad_reduce; },
      "");
  Field(
      plan, "pipeline_layout", [](P & r) -> auto& { return r.options.layout; }, "'': searched");
  Field(
      plan, "overlap_moe_comm", [](P & r) -> auto& { return r.options.overlap_moe_comm; }, "");
  Field(
      plan, "tp_comm_overlap", [](P & r) -> auto& { return r.options.tp_comm_overlap; },
      "in every split with sequence parallelism");
  NamedField(
      plan, "recompute_modules", [](P & r) -> auto& { return r.options.recompute_modules; },
      &ParseRecomputeModules, &RecomputeModulesName, "for the splits that recompute selectively");
  Field(
      plan, "first_stage_layers", [](P & r) -> auto& { return r.options.first_stage_layers; },
      "0: searched");
  Field(
      plan, "last_stage_layers", [](P & r) -> auto& { return r.options.last_stage_layers; },
      "0: searched");
  Field(
      plan, "embedding_as_layer", [](P & r) -> auto& { return r.options.embedding_as_layer; }, "");
  Field(
      plan, "loss_as_layer", [](P & r) -> auto& { return r.options.loss_as_layer; }, "");
}

void BindFitAndProjectRequests(py::module_& m) {
  py::class_<FitAnswer, Answer>(m, "FitAnswer").def_readonly("fit", &FitAnswer::fit);
  py::class_<ProjectAnswer, Answer>(m, "ProjectAnswer");
  using F = FitRequest;
  py::class_<F> fit(m, "FitRequest",
                    "`fitspeed fit`: the law fitted to every group of samples "
                    "(fitspeed/scenario/project.h).");
  fit.def(py::init<>())
      .def_readwrite("samples", &F::samples)
      .def("validate", &F::Validate)
      .def("run", &RunReleased<F>);
  Field(
      fit, "law", [](F & r) -> auto& { return r.options.law; }, "law_names()");
  NamedField(
      fit, "objective", [](F & r) -> auto& { return r.options.objective; }, &ParseObjective,
      &ObjectiveName, "relative-time, absolute-throughput, absolute-time");
  NamedField(
      fit, "loss", [](F & r) -> auto& { return r.options.loss; }, &ParseLoss, &LossName,
      "squared, huber, cauchy");
  Field(
      fit, "loss_scale", [](F & r) -> auto& { return r.options.loss_scale; }, "");
  Field(
      fit, "confidence", [](F & r) -> auto& { return r.options.confidence; }, "");
  Field(
      fit, "leave_one_out", [](F & r) -> auto& { return r.options.leave_one_out; }, "");
  Field(
      fit, "max_iterations", [](F & r) -> auto& { return r.options.max_iterations; }, "");
  Field(
      fit, "initial", [](F & r) -> auto& { return r.options.initial; }, "");

  using P = ProjectRequest;
  py::class_<P> project(m, "ProjectRequest",
                        "`fitspeed project`: epoch and run totals with their intervals and "
                        "costs (fitspeed/scenario/project.h).");
  project.def(py::init<>())
      .def_readwrite("measured", &P::measured, "samples are per-epoch logs, projected as measured")
      .def_readwrite("samples_per_epoch", &P::samples_per_epoch, "0: the samples' own")
      .def_readwrite("startup_s", &P::startup_s)
      .def_readwrite("first_epoch_extra_s", &P::first_epoch_extra_s)
      .def("validate", &P::Validate)
      .def("run", &RunReleased<P>);
  Field(
      project, "samples", [](P & r) -> auto& { return r.source.samples; }, "");
  Field(
      project, "fit_json", [](P & r) -> auto& { return r.source.fit_json; }, "");
  Field(
      project, "label", [](P & r) -> auto& { return r.source.label; }, "");
  Field(
      project, "devices", [](P & r) -> auto& { return r.source.law_devices; }, "");
  Field(
      project, "batches", [](P & r) -> auto& { return r.source.batches; }, "");
  project.def_property(
      "law",
      [](P& r) -> std::optional<std::pair<double, double>> {
        if (!r.source.law) return std::nullopt;
        return std::make_pair(r.source.law->v0_sps, r.source.law->t_s);
      },
      [](P& r, std::optional<std::pair<double, double>> law) {
        r.source.law.reset();
        if (!law) return;
        r.source.law = SpeedLaw{};
        r.source.law->v0_sps = law->first;
        r.source.law->t_s = law->second;
      },
      "(v0, t): v0 of all devices together, samples/s; t, s");
  project.def_property(
      "drop_remainder", [](P& r) { return r.steps_rule == StepsRule::kDropRemainder; },
      [](P& r, bool drop) {
        r.steps_rule = drop ? StepsRule::kDropRemainder : StepsRule::kKeepPartial;
      });
  Field(
      project, "validation_samples", [](P & r) -> auto& { return r.validation.samples; }, "");
  Field(
      project, "validation_batch", [](P & r) -> auto& { return r.validation.batch; }, "");
  Field(
      project, "epochs", [](P & r) -> auto& { return r.options.epochs; }, "");
  Field(
      project, "confidence", [](P & r) -> auto& { return r.options.confidence; }, "");
  Field(
      project, "price_per_device_hour",
      [](P & r) -> auto& { return r.options.prices.default_per_device_hour; }, "");
}

}  // namespace
}  // namespace fitspeed::python

PYBIND11_MODULE(_fitspeed, m) {
  using namespace fitspeed::python;
  m.doc() = "fitspeed's C++ library (the package `fitspeed` wraps it; docs/python.md).";
  // The library's version (fitspeed.__version__ is this), and the interpreter
  // CMake built the module for (Python3_EXECUTABLE), which the package names
  // when numpy or pandas cannot be imported.
  m.attr("__version__") = fitspeed::Version();
  m.attr("_python_executable") = FITSPEED_PYTHON_EXECUTABLE;
  g_error = NewException(m, "Error",
                         "Base of every error fitspeed raises on purpose; .message, and .file, "
                         ".line, .field where the input names them (else None).",
                         py::make_tuple(py::handle(PyExc_Exception)), true);
  g_data_error =
      NewException(m, "DataError", "Input that could be read but is not valid data.",
                   py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError)), false);
  g_usage_error =
      NewException(m, "UsageError", "Options or arguments that break a documented rule.",
                   py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError)), false);
  g_input_error =
      NewException(m, "InputError", "Input that could not be opened or read.",
                   py::make_tuple(py::handle(g_error), py::handle(PyExc_OSError)), false);
  py::register_exception_translator(&TranslateErrors);
  BindSamples(m);
  BindFit(m);
  BindCatalog(m);
  BindAnswer(m);
  BindHostSweepRequest(m);
  BindDeviceSweepRequest(m);
  BindLlmRequests(m);
  BindFitAndProjectRequests(m);
}
