// The writer of the kernel fits (fitspeed/evidence/output.h): the device
// efficiency curves fitted to published per-kernel timings (DeepBench, K40
// SGEMM), their residuals per GPU, unit, op and pass, how often the model's
// convolution algorithm rule agrees with cuDNN's choice, the catalog on the
// second sources and its links on the all-reduces (fitspeed/evidence/kernels.h;
// docs/validation.md, "Kernel fits").
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/table.h"
#include "evidence/output_util.h"
#include "fitspeed/evidence/output.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;
using evidence_output::Number;
using evidence_output::PercentCell;

std::string Sig(double value, int digits = 3) {
  return std::isfinite(value) ? FormatSig(value, digits) : "-";
}

TextTable FitTable(const KernelFitReport& report) {
  TextTable table({"gpu", "unit", "kernels", "e_max", "e_max_se", "F_half_flops", "F_half_se",
                   "slope", "slope_se", "half_dim", "half_dim_se", "eff_1e8", "eff_1e9", "eff_1e10",
                   "eff_1e11", "median_err_%", "p90_err_%", "converged"});
  for (const KernelCurveFit& f : report.fits) {
    // A held shape term (square kernels only) shows its value and "held"; none "-".
    const std::string half_dim = f.half_dim > 0 ? Sig(f.half_dim) : "-";
    const std::string half_dim_se = f.half_dim_fitted ? Sig(f.half_dim_se, 2)
                                    : f.half_dim > 0  ? "held"
                                                      : "-";
    table.AddRow({f.gpu, KernelUnitName(f.unit), std::to_string(f.kernels), Sig(f.e_max),
                  Sig(f.e_max_se, 2), Sig(f.f_half), Sig(f.f_half_se, 2), Sig(f.slope),
                  Sig(f.slope_se, 2), half_dim, half_dim_se, Sig(f.At(1e8)), Sig(f.At(1e9)),
                  Sig(f.At(1e10)), Sig(f.At(1e11)), PercentCell(100 * f.median_abs_error),
                  PercentCell(100 * f.p90_abs_error), f.converged ? "yes" : "no"});
  }
  return table;
}

TextTable MemoryTable(const KernelFitReport& report) {
  TextTable table({"gpu", "class", "kernels", "plateau", "ci95_low", "ci95_high", "q25", "q75",
                   "per_op_medians"});
  for (const MemoryPlateauFit& f : report.memory) {
    std::string ops;
    for (const MemoryPlateauFit::Op& op : f.ops) {
      ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", op.name, Sig(op.median_efficiency));
    }
    table.AddRow({f.gpu, MemoryClassName(f.memory_class), std::to_string(f.kernels),
                  Sig(f.efficiency), Sig(f.ci_low), Sig(f.ci_high), Sig(f.q25), Sig(f.q75), ops});
  }
  return table;
}

ordered_json MemoryJson(const KernelFitReport& report) {
  ordered_json list = ordered_json::array();
  for (const MemoryPlateauFit& f : report.memory) {
    ordered_json ops = ordered_json::array();
    for (const MemoryPlateauFit::Op& op : f.ops) {
      ops.push_back({{"op", op.name},
                     {"kernels", op.kernels},
                     {"median_efficiency", Number(op.median_efficiency)}});
    }
    list.push_back({{"gpu", f.gpu},
                    {"class", MemoryClassName(f.memory_class)},
                    {"kernels", f.kernels},
                    {"plateau", Number(f.efficiency)},
                    {"ci95_low", Number(f.ci_low)},
                    {"ci95_high", Number(f.ci_high)},
                    {"q25", Number(f.q25)},
                    {"q75", Number(f.q75)},
                    {"ops", ops}});
  }
  return list;
}

TextTable GroupTable(const KernelFitReport& report) {
  TextTable table({"gpu", "unit", "kernels_of", "kernels", "median_err_%", "median_signed_err_%"});
  for (const KernelCurveFit& f : report.fits) {
    for (const KernelCurveFit::Group& g : f.groups) {
      table.AddRow({f.gpu, KernelUnitName(f.unit), g.name, std::to_string(g.kernels),
                    PercentCell(100 * g.median_abs_error),
                    PercentCell(100 * g.median_signed_error)});
    }
  }
  return table;
}

TextTable AgreementTable(const KernelFitReport& report) {
  TextTable table({"gpu", "fp32_fwd_convolutions", "winograd_by_cudnn", "winograd_by_rule", "agree",
                   "agree_%"});
  for (const AlgorithmAgreement& a : report.agreement) {
    table.AddRow({a.gpu, std::to_string(a.convolutions), std::to_string(a.winograd_by_cudnn),
                  std::to_string(a.winograd_by_rule), std::to_string(a.agree),
                  PercentCell(100.0 * a.agree / a.convolutions)});
  }
  return table;
}

ordered_json ReportJson(const KernelFitReport& report, const std::string& kernel_dir) {
  ordered_json fits = ordered_json::array();
  for (const KernelCurveFit& f : report.fits) {
    ordered_json groups = ordered_json::array();
    for (const KernelCurveFit::Group& g : f.groups) {
      groups.push_back({{"kernels_of", g.name},
                        {"kernels", g.kernels},
                        {"median_abs_error", Number(g.median_abs_error)},
                        {"median_signed_error", Number(g.median_signed_error)}});
    }
    fits.push_back({{"gpu", f.gpu},
                    {"unit", KernelUnitName(f.unit)},
                    {"kernels", f.kernels},
                    {"e_max", Number(f.e_max)},
                    {"e_max_se", Number(f.e_max_se)},
                    {"f_half_flops", Number(f.f_half)},
                    {"f_half_se", Number(f.f_half_se)},
                    {"slope", Number(f.slope)},
                    {"slope_se", Number(f.slope_se)},
                    {"half_dim", Number(f.half_dim)},
                    {"half_dim_se", Number(f.half_dim_se)},
                    {"half_dim_fitted", f.half_dim_fitted},
                    {"converged", f.converged},
                    {"median_abs_error", Number(f.median_abs_error)},
                    {"p90_abs_error", Number(f.p90_abs_error)},
                    {"groups", groups}});
  }
  ordered_json agreement = ordered_json::array();
  for (const AlgorithmAgreement& a : report.agreement) {
    agreement.push_back({{"gpu", a.gpu},
                         {"fp32_fwd_convolutions", a.convolutions},
                         {"winograd_by_cudnn", a.winograd_by_cudnn},
                         {"winograd_by_rule", a.winograd_by_rule},
                         {"agree", a.agree}});
  }
  ordered_json depthwise = nullptr;
  if (report.depthwise) {
    const DepthwiseDerivation& d = *report.depthwise;
    depthwise = {{"source", d.source},
                 {"batch", d.batch},
                 {"separable_images_per_s", d.separable_images_per_s},
                 {"conv_images_per_s", d.conv_images_per_s},
                 {"pointwise_modeled_s", Number(d.pointwise_modeled_s)},
                 {"depthwise_s", Number(d.depthwise_s)},
                 {"depthwise_flops", Number(d.depthwise_flops)},
                 {"efficiency", Number(d.efficiency)},
                 {"conv_modeled_s", Number(d.conv_modeled_s)},
                 {"conv_measured_s", Number(d.conv_measured_s)},
                 {"conv_error", Number(d.conv_error())}};
  }
  return {{"schema", "fitspeed.kernel-fits/1"},
          {"data_dir", kernel_dir},
          {"curve", "eff(F) = e_max / (1 + (F_half / F)^slope)"},
          {"fits", fits},
          {"algorithm_agreement", agreement},
          {"depthwise", depthwise},
          {"memory_plateaus", MemoryJson(report)},
          {"skipped", report.skipped}};
}

TextTable CheckTable(const std::vector<KernelCheck>& checks) {
  TextTable table({"table", "gpu", "catalog_device", "unit", "curve_basis", "kernels",
                   "below_floor", "median_err_%", "median_signed_%", "p90_err_%"});
  for (const KernelCheck& c : checks) {
    table.AddRow({c.table, c.gpu, c.device, c.unit, c.basis, std::to_string(c.kernels),
                  std::to_string(c.below_floor), PercentCell(100 * c.median_abs_error),
                  PercentCell(100 * c.median_signed_error), PercentCell(100 * c.p90_abs_error)});
  }
  return table;
}

// The checks that hold convolutions with the library's algorithm recorded.
TextTable ConvolutionCheckTable(const std::vector<KernelCheck>& checks) {
  TextTable table({"table", "gpu", "catalog_device", "convolutions", "winograd_by_library",
                   "winograd_by_rule", "rule_agree_%", "signed_%_library_winograd",
                   "signed_%_library_other", "fastest_agree_%", "fastest_median_err_%"});
  for (const KernelCheck& c : checks) {
    if (c.convolutions == 0) continue;
    table.AddRow({c.table, c.gpu, c.device, std::to_string(c.convolutions),
                  std::to_string(c.winograd_by_library), std::to_string(c.winograd_by_rule),
                  PercentCell(100.0 * c.agree / c.convolutions),
                  PercentCell(100 * c.median_signed_error_library_winograd),
                  PercentCell(100 * c.median_signed_error_library_other),
                  PercentCell(100.0 * c.agree_fastest / c.convolutions),
                  PercentCell(100 * c.median_abs_error_fastest)});
  }
  return table;
}

ordered_json ChecksJson(const std::vector<KernelCheck>& checks) {
  ordered_json list = ordered_json::array();
  for (const KernelCheck& c : checks) {
    list.push_back({{"table", c.table},
                    {"gpu", c.gpu},
                    {"catalog_device", c.device},
                    {"unit", c.unit},
                    {"curve_basis", c.basis},
                    {"kernels", c.kernels},
                    {"below_floor", c.below_floor},
                    {"median_abs_error", Number(c.median_abs_error)},
                    {"median_signed_error", Number(c.median_signed_error)},
                    {"p90_abs_error", Number(c.p90_abs_error)}});
    if (c.convolutions > 0) {
      list.back()["convolutions"] = {
          {"count", c.convolutions},
          {"winograd_by_library", c.winograd_by_library},
          {"winograd_by_rule", c.winograd_by_rule},
          {"rule_agree", c.agree},
          {"median_signed_error_library_winograd", Number(c.median_signed_error_library_winograd)},
          {"median_signed_error_library_other", Number(c.median_signed_error_library_other)},
          {"fastest_agree", c.agree_fastest},
          {"median_abs_error_fastest", Number(c.median_abs_error_fastest)}};
    }
  }
  return list;
}

TextTable AllReduceTable(const std::vector<AllReduceCheck>& checks) {
  TextTable table({"gpu", "catalog_device", "link", "link_GB/s", "devices", "nodes", "buffers",
                   "median_err_%", "median_signed_%", "largest_MB", "measured_busbw_GB/s",
                   "problem"});
  for (const AllReduceCheck& c : checks) {
    const bool modeled = c.problem.empty();
    table.AddRow(
        {c.gpu, c.device, c.link.empty() ? "-" : c.link,
         c.link.empty() ? "-" : Sig(c.link_bandwidth_bytes_per_s / 1e9), std::to_string(c.devices),
         std::to_string(c.nodes), std::to_string(c.measurements),
         modeled ? PercentCell(100 * c.median_abs_error) : "-",
         modeled ? PercentCell(100 * c.median_signed_error) : "-", Sig(c.largest_bytes / 1e6),
         Sig(c.measured_bus_bandwidth / 1e9), modeled ? "" : c.problem});
  }
  return table;
}

ordered_json AllReduceJson(const std::vector<AllReduceCheck>& checks) {
  ordered_json list = ordered_json::array();
  for (const AllReduceCheck& c : checks) {
    list.push_back(
        {{"gpu", c.gpu},
         {"catalog_device", c.device},
         {"link", c.link},
         {"link_bandwidth_bytes_per_s", Number(c.link_bandwidth_bytes_per_s)},
         {"devices", c.devices},
         {"nodes", c.nodes},
         {"buffers", c.measurements},
         {"median_abs_error", c.problem.empty() ? Number(c.median_abs_error) : ordered_json()},
         {"median_signed_error",
          c.problem.empty() ? Number(c.median_signed_error) : ordered_json()},
         {"largest_bytes", Number(c.largest_bytes)},
         {"measured_bus_bandwidth_bytes_per_s", Number(c.measured_bus_bandwidth)},
         {"problem", c.problem}});
  }
  return list;
}

}  // namespace

void WriteKernelValidation(std::ostream& out, const KernelValidation& v, OutputFormat format) {
  const KernelFitReport& report = v.fits;
  if (format == OutputFormat::kJson) {
    ordered_json j = ReportJson(report, v.kernel_dir);
    j["catalog_checks"] = ChecksJson(v.catalog_checks);
    j["allreduce_checks"] = AllReduceJson(v.allreduce_checks);
    out << j.dump(2) << "\n";
    return;
  }
  if (format == OutputFormat::kCsv) {
    out << FitTable(report).RenderCsv();
    return;
  }
  out << fmt::format(
      "Device efficiency curves fitted to published kernel timings ({}: Baidu DeepBench "
      "training GEMMs and convolutions, cuBLAS SGEMM on a Tesla K40): eff(F) = e_max / (1 + "
      "(F_half / F)^slope), least squares on ln(modeled / measured time), the modeled time "
      "max(F / (peak eff(F)), bytes / (bandwidth mem_eff)) + launch as `sweep --device` "
      "computes it; standard errors s^2 (J^T J)^-1; err: |modeled / measured - 1| of the "
      "fitted kernels (in-sample)\n",
      v.kernel_dir);
  out << FitTable(report).Render() << "\n";
  out << "Residuals per kind of kernel (signed: modeled / measured - 1, > 0 the model "
         "too slow)\n"
      << GroupTable(report).Render() << "\n";
  out << "Convolution algorithm: the model's rule (Winograd F(2x2,3x3) for FP32 3x3 "
         "stride-1 convolutions of one group on CUDA cores) against cuDNN's forward "
         "choice in DeepBench\n"
      << AgreementTable(report).Render();
  for (const std::string& s : report.skipped) out << "skipped: " << s << "\n";
  out << "\nThe catalog on kernels it was not fitted to (out of sample): NeuSight's FP32 "
         "nn.Linear and torch.bmm (PyTorch 2.1 eager, one call timed; under 50 us left "
         "out) and autoheuristic's cuBLAS GEMMs of HuggingFace/TIMM training shapes; each "
         "timed as "
         "`sweep --device` times a pass on the catalog device (curve_basis: how that "
         "device's curve was obtained; signed > 0: the model too slow)\n"
      << CheckTable(v.catalog_checks).Render();
  out << "\nConvolutions of the second sources against the algorithm the library ran "
         "(NeuSight: cuDNN 8.9 with cudnn.benchmark, read from the kernel's name): the "
         "model's rule (Winograd for every FP32 3x3 stride-1 convolution of one group on a "
         "device with a Winograd curve), the signed error of the convolutions cuDNN ran "
         "with Winograd and of the others, and the alternative of timing each with the "
         "faster of the device's implicit-GEMM and Winograd curves (not the catalog's "
         "rule)\n"
      << ConvolutionCheckTable(v.catalog_checks).Render();
  out << "\nAll-reduce: the ring formula 2(n-1)/n S/B + 2(n-1) a on the catalog device's "
         "link that connects devices (what `sweep --device --devices N` models) against "
         "DeepBench's FP32 all-reduce timings (data/kernels/deepbench_allreduce.csv; NCCL "
         "2.0, the cluster's topology not named by the source); not calibrated on. "
         "measured_busbw: 2(n-1)/n S / time of the largest buffer, per direction, to "
         "compare with the link's bandwidth; signed > 0: the model too slow\n"
      << AllReduceTable(v.allreduce_checks).Render();
  if (!report.memory.empty()) {
    out << "\nMemory-bound kernels: the plateau of the memory curve, bytes / (time x "
           "datasheet bandwidth) of NeuSight's FP32 element-wise, LayerNorm and softmax "
           "kernels moving >= 1 GB (neusight_vec_large.csv; PyTorch 2.1, one eager call "
           "timed, its dispatch at most ~5% there) and of the H200's BF16 LayerNorm, RMSNorm "
           "and softmax kernels of this project's run (data/llm-gpu/memory_ops.csv, CUDA "
           "events): median, its 95% interval (order statistics) and quartiles; elementwise: "
           "efficiency.memory, normalization: "
           "efficiency.memory_normalization (layer norm, RMS norm, softmax, softmax "
           "cross-entropy)\n"
        << MemoryTable(report).Render();
  }
  if (report.depthwise) {
    const DepthwiseDerivation& d = *report.depthwise;
    out << fmt::format(
        "\nDepthwise convolutions (derived; no per-kernel sweep of a catalog GPU): {} (V100, "
        "TF 2.1, FP16, batch {}): SeparableConv2D {} images/s = {} ms per batch, of which the "
        "pointwise 1x1 is modeled at {} ms (fitted V100 tensor curve, memory curve); the "
        "depthwise 3x3 ({} GFLOP) took the other {} ms: {} of the FP32 peak, the depthwise "
        "curve of every GPU. Check, out of sample: the Conv2D row ({} images/s, {} ms) is "
        "modeled at {} ms with the same tensor curve, {}% off\n",
        d.source, d.batch, Sig(d.separable_images_per_s, 4),
        Sig(1e3 * d.batch / d.separable_images_per_s), Sig(1e3 * d.pointwise_modeled_s),
        Sig(d.depthwise_flops / 1e9), Sig(1e3 * d.depthwise_s), Sig(d.efficiency),
        Sig(d.conv_images_per_s, 4), Sig(1e3 * d.conv_measured_s), Sig(1e3 * d.conv_modeled_s),
        PercentCell(100 * d.conv_error()));
  }
}

}  // namespace fitspeed
