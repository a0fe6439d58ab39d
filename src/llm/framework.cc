// The frameworks' profiles (fitspeed/llm/framework.h).
#include "fitspeed/llm/framework.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"

namespace fitspeed {

const char* EmbeddedLlmFrameworksJson();

namespace {

constexpr const char* kSchemaLlmFrameworks = "fitspeed.llm-frameworks/1";

// A profile's field as text from `allowed`; DataError naming it otherwise.
std::string ChoiceField(const nlohmann::json& p, const std::string& field,
                        const std::vector<std::string>& allowed, const std::string& source) {
  if (!p.contains(field) || !p[field].is_string())
    throw DataError(source, 0, field, "expected text");
  const std::string v = p[field];
  for (const std::string& a : allowed)
    if (v == a) return v;
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw DataError(source, 0, field, fmt::format("{}: expected one of {}", v, list));
}

bool BoolField(const nlohmann::json& p, const std::string& field, const std::string& source) {
  if (!p.contains(field) || !p[field].is_boolean())
    throw DataError(source, 0, field, "expected true or false");
  return p[field].get<bool>();
}

// A list of ZeRO levels (0..3) as bits.
unsigned ZeroLevels(const nlohmann::json& p, const std::string& field, const std::string& source) {
  if (!p.contains(field) || !p[field].is_array())
    throw DataError(source, 0, field, "expected a list of ZeRO levels (0..3)");
  unsigned bits = 0;
  for (const nlohmann::json& z : p[field]) {
    if (!z.is_number_integer() || z.get<int>() < 0 || z.get<int>() > 3)
      throw DataError(source, 0, field, "expected ZeRO levels 0, 1, 2 or 3");
    bits |= 1u << z.get<int>();
  }
  return bits;
}

LlmFramework ParseProfile(const nlohmann::json& p, const std::string& source) {
  if (!p.is_object()) throw DataError(source, 0, "frameworks", "expected objects");
  LlmFramework f;
  if (!p.contains("name") || !p["name"].is_string() || p["name"].get<std::string>().empty())
    throw DataError(source, 0, "name", "expected a name");
  f.name = p["name"];
  const std::string where = source + " (" + f.name + ")";
  for (const char* key : {"title", "development_family"}) {
    if (!p.contains(key) || !p[key].is_string()) throw DataError(where, 0, key, "expected text");
  }
  f.title = p["title"];
  f.development_family = p["development_family"];
  f.kernels = ChoiceField(p, "kernels", {"fused", "eager"}, where) == "eager" ? LlmKernels::kEager
                                                                              : LlmKernels::kFused;
  f.separate_projections = BoolField(p, "separate_projections", where);
  f.tp_comm_overlap = BoolField(p, "tp_comm_overlap", where);
  f.compiled_step = ChoiceField(p, "host", {"eager", "compiled-step"}, where) == "compiled-step";
  f.sharding = ChoiceField(p, "sharding", {"zero", "fsdp"}, where) == "fsdp" ? LlmSharding::kFsdp
                                                                             : LlmSharding::kZero;
  f.gradient_rule =
      ChoiceField(p, "gradient_bytes", {"fp32-main-grad", "model-dtype", "fp32-reduce"}, where);
  f.zero_levels = ZeroLevels(p, "zero", where);
  f.zero_with_pipeline = ZeroLevels(p, "zero_with_pipeline", where) & f.zero_levels;
  if ((f.zero_levels & 1u) == 0)
    throw DataError(where, 0, "zero", "expected level 0 among them (plain data parallelism)");
  if (!p.contains("zero_default") || !p["zero_default"].is_number_integer())
    throw DataError(where, 0, "zero_default", "expected a ZeRO level");
  f.zero_default = p["zero_default"];
  if (f.zero_default < 0 || f.zero_default > 3 || (f.zero_levels & (1u << f.zero_default)) == 0)
    throw DataError(where, 0, "zero_default", "expected one of the levels of \"zero\"");
  if (!p.contains("parallel") || !p["parallel"].is_array())
    throw DataError(where, 0, "parallel", "expected a list of tp, pp, vp, cp, ep, sp");
  for (const nlohmann::json& x : p["parallel"]) {
    const std::string v = x.is_string() ? x.get<std::string>() : "";
    bool* flag = v == "tp"   ? &f.tp
                 : v == "pp" ? &f.pp
                 : v == "vp" ? &f.vp
                 : v == "cp" ? &f.cp
                 : v == "ep" ? &f.ep
                 : v == "sp" ? &f.sequence_parallel
                             : nullptr;
    if (flag == nullptr)
      throw DataError(where, 0, "parallel", "expected tp, pp, vp, cp, ep or sp, got " + x.dump());
    *flag = true;
  }
  if (!p.contains("behaviours") || !p["behaviours"].is_array() || p["behaviours"].empty())
    throw DataError(where, 0, "behaviours", "expected what the profile rests on, with sources");
  for (const nlohmann::json& b : p["behaviours"]) {
    if (!b.is_object() || !b.contains("what") || !b["what"].is_string() || !b.contains("source") ||
        !b["source"].is_string())
      throw DataError(where, 0, "behaviours", "expected {\"what\": text, \"source\": text}");
    f.behaviours.push_back({b["what"].get<std::string>(), b["source"].get<std::string>()});
  }
  return f;
}

}  // namespace

double LlmFramework::GradientBytes(const std::string& precision) const {
  if (gradient_rule == "model-dtype") return 2.0;
  if (gradient_rule == "fp32-reduce") return 4.0;
  // Megatron keeps FP32 main_grad under bf16 (arguments.py forces
  // accumulate_allreduce_grads_in_fp32) and 16-bit gradients under fp16.
  return precision == "fp16" ? 2.0 : 4.0;
}

bool LlmFramework::RunsZero(int zero, bool pipeline) const {
  if (zero < 0 || zero > 3) return false;
  return ((pipeline ? zero_with_pipeline : zero_levels) & (1u << zero)) != 0;
}

void LlmFramework::CheckSplit(const LlmSplit& s) const {
  const auto refuse = [&](const std::string& what) {
    throw UsageError(fmt::format("--framework {} ({}) does not run {}; {}", name, title, what,
                                 "choose a framework that does (`--framework` lists them)"));
  };
  if (s.tp > 1 && !tp) refuse(fmt::format("tensor parallelism (tp {})", s.tp));
  if (s.pp > 1 && !pp) refuse(fmt::format("pipeline parallelism (pp {})", s.pp));
  if (s.vp > 1 && !vp) refuse(fmt::format("interleaved pipeline stages (vp {})", s.vp));
  if (s.cp > 1 && !cp) refuse(fmt::format("context parallelism (cp {})", s.cp));
  if (s.ep > 1 && !ep) refuse(fmt::format("expert parallelism (ep {})", s.ep));
  if (s.sequence_parallel && !sequence_parallel) refuse("Megatron's sequence parallelism");
  if (s.tp_comm_overlap && !tp_comm_overlap)
    refuse("Transformer Engine's tensor-parallel communication overlap (tp_comm_overlap)");
  if (!RunsZero(s.zero, s.pp > 1)) {
    std::string levels;
    for (int z = 0; z <= 3; ++z)
      if (RunsZero(z, s.pp > 1)) levels += (levels.empty() ? "" : ", ") + std::to_string(z);
    refuse(fmt::format("ZeRO level {}{} (it runs {})", s.zero,
                       s.pp > 1 ? " with pipeline parallelism" : "", levels));
  }
}

std::vector<LlmFramework> ParseLlmFrameworks(const std::string& text, const std::string& source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw DataError(source, 0, "json", e.what());
  }
  if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != kSchemaLlmFrameworks)
    throw DataError(source, 0, "schema", fmt::format("expected \"{}\"", kSchemaLlmFrameworks));
  if (!doc.contains("frameworks") || !doc["frameworks"].is_array() || doc["frameworks"].empty())
    throw DataError(source, 0, "frameworks", "expected a list of profiles");
  std::vector<LlmFramework> out;
  for (const nlohmann::json& p : doc["frameworks"]) {
    LlmFramework f = ParseProfile(p, source);
    for (const LlmFramework& g : out)
      if (g.name == f.name) throw DataError(source, 0, "name", f.name + ": named twice");
    out.push_back(std::move(f));
  }
  return out;
}

const std::vector<LlmFramework>& LlmFrameworks() {
  static const std::vector<LlmFramework> profiles =
      ParseLlmFrameworks(EmbeddedLlmFrameworksJson(), "data/llm-frameworks.json");
  return profiles;
}

const LlmFramework& FindLlmFramework(const std::string& name) {
  std::string names;
  for (const LlmFramework& f : LlmFrameworks()) {
    if (f.name == name) return f;
    names += (names.empty() ? "" : ", ") + f.name;
  }
  throw UsageError(fmt::format("framework (--framework) '{}': expected one of {}", name, names));
}

void ApplyLlmFramework(LlmTraining& t, const std::string& precision) {
  const LlmFramework& f = FindLlmFramework(t.framework);
  t.kernels = f.kernels;
  t.separate_projections = f.separate_projections;
  t.compiled_step = f.compiled_step;
  t.sharding = f.sharding;
  if (t.gradient_bytes == 0) t.gradient_bytes = f.GradientBytes(precision);
}

}  // namespace fitspeed
