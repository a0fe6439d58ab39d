// The writer of the device catalog (device.h, WriteDevices): `fitspeed devices`.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/table.h"
#include "fitspeed/device/device.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json CurveJson(const EfficiencyCurve& curve) {
  ordered_json points = ordered_json::array();
  for (const EfficiencyCurve::Point& p : curve.points) points.push_back({p.size, p.efficiency});
  return points;
}

ordered_json DeviceJson(const Device& d) {
  ordered_json links = ordered_json::array();
  for (const DeviceLink& l : d.links) {
    links.push_back({{"name", l.name},
                     {"connects", l.connects},
                     {"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s},
                     {"latency_s", l.latency_s}});
  }
  auto optional = [](double v) { return v > 0 ? ordered_json(v) : ordered_json(nullptr); };
  return {
      {"name", d.name},
      {"description", d.description},
      {"kind", d.kind},
      {"origin", d.origin},
      {"cores", d.cores},
      {"fp32_flops_per_s", d.fp32_flops_per_s},
      {"tf32_flops_per_s", optional(d.tf32_flops_per_s)},
      {"tensor16_flops_per_s", optional(d.tensor16_flops_per_s)},
      {"tensor16_type",
       d.tensor16_type.empty() ? ordered_json(nullptr) : ordered_json(d.tensor16_type)},
      {"fp8_flops_per_s", optional(d.fp8_flops_per_s)},
      {"int8_flops_per_s", optional(d.int8_flops_per_s)},
      {"fp4_flops_per_s", optional(d.fp4_flops_per_s)},
      {"fp32_matrix_on_tensor16", d.fp32_matrix_on_tensor16},
      {"tensor_layout",
       d.tensor_layout.empty() ? ordered_json(nullptr) : ordered_json(d.tensor_layout)},
      {"memory_bandwidth_bytes_per_s", d.memory_bandwidth_bytes_per_s},
      {"memory_capacity_bytes", d.memory_capacity_bytes},
      {"compute_efficiency", CurveJson(d.compute_efficiency)},
      {"memory_efficiency", CurveJson(d.memory_efficiency)},
      {"tensor_efficiency",
       d.tensor_efficiency.points.empty() ? ordered_json(nullptr) : CurveJson(d.tensor_efficiency)},
      {"fp8_efficiency",
       d.fp8_efficiency.points.empty() ? ordered_json(nullptr) : CurveJson(d.fp8_efficiency)},
      {"winograd_efficiency", d.winograd_efficiency.points.empty()
                                  ? ordered_json(nullptr)
                                  : CurveJson(d.winograd_efficiency)},
      {"depthwise_efficiency", d.depthwise_efficiency.points.empty()
                                   ? ordered_json(nullptr)
                                   : CurveJson(d.depthwise_efficiency)},
      {"normalization_memory_efficiency", d.normalization_memory_efficiency.points.empty()
                                              ? ordered_json(nullptr)
                                              : CurveJson(d.normalization_memory_efficiency)},
      {"attention_forward_efficiency", d.attention_forward_efficiency.points.empty()
                                           ? ordered_json(nullptr)
                                           : CurveJson(d.attention_forward_efficiency)},
      {"attention_backward_efficiency", d.attention_backward_efficiency.points.empty()
                                            ? ordered_json(nullptr)
                                            : CurveJson(d.attention_backward_efficiency)},
      {"bases", d.bases},
      {"kernel_launch_s", d.kernel_launch_s},
      {"step_host_s", d.step_host_s},
      {"batch_multiple", d.batch_multiple},
      {"feature_multiple_fp32", d.feature_multiple_fp32},
      {"feature_multiple_tensor", d.feature_multiple_tensor},
      {"scale_up_domain",
       d.scale_up_domain > 0 ? ordered_json(d.scale_up_domain) : ordered_json(nullptr)},
      {"streaming_multiprocessors", d.streaming_multiprocessors > 0
                                        ? ordered_json(d.streaming_multiprocessors)
                                        : ordered_json(nullptr)},
      {"links", links},
      {"price_per_hour",
       d.price_per_hour ? ordered_json(*d.price_per_hour) : ordered_json(nullptr)}};
}

std::string Tflops(double flops_per_s) {
  return flops_per_s > 0 ? FormatSig(flops_per_s / 1e12, 4) : "-";
}

std::string LinkList(const Device& d) {
  std::string text;
  for (const DeviceLink& l : d.links) {
    if (!text.empty()) text += " ";
    text += fmt::format("{}({}):{}GB/s", l.name, l.connects,
                        FormatSig(l.bandwidth_bytes_per_s / 1e9, 4));
  }
  return text.empty() ? "-" : text;
}

// The lines of one device in full below its row: description, origin,
// overheads, tiles, the 16-bit and low-precision peaks' sources, the scale-up domain, the
// efficiency curves, price and tensor layout.
void WriteDeviceDetail(std::ostream& out, const Device& d) {
  out << fmt::format(
      "{}\norigin: {}\nkernel launch: {} us, host overhead per step: {} ms\n"
      "tiles: batch per core x{}, features x{} (fp32), x{} (tensor units)\n",
      d.description, d.origin, FormatSig(d.kernel_launch_s * 1e6), FormatSig(d.step_host_s * 1e3),
      d.batch_multiple, d.feature_multiple_fp32, d.feature_multiple_tensor);
  auto curve = [](const EfficiencyCurve& c) {
    std::string text;
    for (const EfficiencyCurve::Point& p : c.points) {
      text += fmt::format(" ({}, {})", FormatSig(p.size, 3), FormatSig(p.efficiency, 3));
    }
    return text;
  };
  if (const auto peak16 = d.sources.find("peak_flops_per_s.tensor16");
      d.tensor16_flops_per_s > 0 && peak16 != d.sources.end()) {
    out << fmt::format("16-bit peak: {} TFLOPS {} ({})\n", Tflops(d.tensor16_flops_per_s),
                       d.tensor16_type, peak16->second);
  }
  for (const auto& [label, unit, key, value] :
       {std::tuple{"FP8", "TFLOPS", "fp8", d.fp8_flops_per_s},
        std::tuple{"INT8", "TOPS", "int8", d.int8_flops_per_s},
        std::tuple{"FP4", "TFLOPS", "fp4", d.fp4_flops_per_s}}) {
    const auto source = d.sources.find(fmt::format("peak_flops_per_s.{}", key));
    if (value > 0 && source != d.sources.end()) {
      out << fmt::format("{} peak: {} {} ({})\n", label, Tflops(value), unit, source->second);
    }
  }
  if (const auto source = d.sources.find("scale_up_domain");
      d.scale_up_domain > 0 && source != d.sources.end()) {
    out << fmt::format("scale-up domain: {} devices on the \"devices\" link ({})\n",
                       d.scale_up_domain, source->second);
  }
  // How a curve was obtained (its "basis", docs/devices.md), when the file says.
  auto basis = [&d](const char* field) {
    const auto it = d.bases.find(field);
    return it == d.bases.end() ? std::string() : " [" + it->second + "]";
  };
  out << "compute efficiency (FLOPs, fraction)" << basis("efficiency.compute") << ":"
      << curve(d.compute_efficiency) << "\n";
  if (!d.winograd_efficiency.points.empty()) {
    out << "Winograd F(2x2,3x3) convolution efficiency (its FLOPs, fraction)"
        << basis("efficiency.winograd") << ":" << curve(d.winograd_efficiency) << "\n";
  }
  if (!d.tensor_efficiency.points.empty()) {
    out << "tensor-unit efficiency (FLOPs, fraction)" << basis("efficiency.tensor") << ":"
        << curve(d.tensor_efficiency) << "\n";
  }
  if (!d.fp8_efficiency.points.empty()) {
    out << "FP8 matrix efficiency (FLOPs, fraction of the FP8 peak)" << basis("efficiency.fp8")
        << ":" << curve(d.fp8_efficiency) << "\n";
  }
  out << "memory efficiency (bytes, fraction)" << basis("efficiency.memory") << ":"
      << curve(d.memory_efficiency) << "\n";
  if (!d.normalization_memory_efficiency.points.empty()) {
    out << "memory efficiency of layer norm, RMS norm, softmax (bytes, fraction)"
        << basis("efficiency.memory_normalization") << ":"
        << curve(d.normalization_memory_efficiency) << "\n";
  }
  if (!d.attention_forward_efficiency.points.empty()) {
    out << "fused attention forward efficiency (FLOPs, fraction of the 16-bit peak)"
        << basis("efficiency.attention_forward") << ":" << curve(d.attention_forward_efficiency)
        << "\n";
  }
  if (!d.attention_backward_efficiency.points.empty()) {
    out << "fused attention backward efficiency (FLOPs, fraction of the 16-bit peak)"
        << basis("efficiency.attention_backward") << ":" << curve(d.attention_backward_efficiency)
        << "\n";
  }
  if (d.price_per_hour) {
    const auto source = d.sources.find("price_per_hour");
    out << fmt::format("price: {} per device-hour ({})\n", FormatSig(*d.price_per_hour),
                       source == d.sources.end() ? "no source" : source->second);
  }
  if (!d.tensor_layout.empty()) {
    out << fmt::format(
        "tensor layout: {} (tf32/mixed convolutions of a framework in the other layout pay "
        "transposes; sweep --layout)\n",
        d.tensor_layout);
  }
}

TextTable DeviceTable(const std::vector<Device>& devices) {
  // The low-precision peaks and the scale-up domain get columns only where a
  // device of the list has them (the older catalog has none).
  auto any = [&devices](auto has) { return std::any_of(devices.begin(), devices.end(), has); };
  const bool fp8 = any([](const Device& d) { return d.fp8_flops_per_s > 0; });
  const bool int8 = any([](const Device& d) { return d.int8_flops_per_s > 0; });
  const bool fp4 = any([](const Device& d) { return d.fp4_flops_per_s > 0; });
  const bool domain = any([](const Device& d) { return d.scale_up_domain > 0; });
  std::vector<std::string> header = {"device",      "kind",        "cores",
                                     "fp32_TFLOPS", "tf32_TFLOPS", "16bit_TFLOPS"};
  if (fp8) header.push_back("fp8_TFLOPS");
  if (int8) header.push_back("int8_TOPS");
  if (fp4) header.push_back("fp4_TFLOPS");
  for (const char* column : {"memory_GB/s", "memory_GiB"}) header.push_back(column);
  if (domain) header.push_back("scale_up");
  header.push_back("links");
  TextTable table(header);
  for (const Device& d : devices) {
    std::vector<std::string> row = {
        d.name,
        d.kind,
        std::to_string(d.cores),
        Tflops(d.fp32_flops_per_s),
        Tflops(d.tf32_flops_per_s),
        d.tensor16_flops_per_s > 0 ? Tflops(d.tensor16_flops_per_s) + " " + d.tensor16_type : "-"};
    if (fp8) row.push_back(Tflops(d.fp8_flops_per_s));
    if (int8) row.push_back(Tflops(d.int8_flops_per_s));
    if (fp4) row.push_back(Tflops(d.fp4_flops_per_s));
    row.push_back(FormatSig(d.memory_bandwidth_bytes_per_s / 1e9, 4));
    row.push_back(FormatSig(d.memory_capacity_bytes / (1u << 30), 4));
    if (domain) row.push_back(d.scale_up_domain > 0 ? std::to_string(d.scale_up_domain) : "-");
    row.push_back(LinkList(d));
    table.AddRow(row);
  }
  return table;
}

}  // namespace

void WriteDevices(std::ostream& out, const std::vector<Device>& devices, OutputFormat format,
                  bool detail) {
  switch (format) {
    case OutputFormat::kTable:
      out << DeviceTable(devices).Render();
      if (detail) {
        for (const Device& d : devices) WriteDeviceDetail(out, d);
      }
      break;
    case OutputFormat::kCsv:
      out << DeviceTable(devices).RenderCsv();
      break;
    case OutputFormat::kJson: {
      ordered_json j = {{"schema", "fitspeed.devices/1"}, {"devices", ordered_json::array()}};
      for (const Device& d : devices) j["devices"].push_back(DeviceJson(d));
      out << j.dump(2) << "\n";
      break;
    }
  }
}

}  // namespace fitspeed
