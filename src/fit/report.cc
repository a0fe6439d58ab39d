// Text reports of fits: one line (BriefReport) or an lmfit-like block (FullReport).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "fit/registry.h"
#include "fitspeed/fit/fit.h"

namespace fitspeed {

namespace {

// Significant digits that show a value to about two digits of its standard
// error; 6 when the error is unknown.
int DigitsFor(double value, double std_error) {
  if (!(std::isfinite(std_error) && std_error > 0 && std::isfinite(value) && value != 0)) return 6;
  const int digits = static_cast<int>(std::floor(std::log10(std::fabs(value) / std_error))) + 2;
  return std::clamp(digits, 2, 12);
}

// x to `digits` significant digits; whole numbers with more digits than that
// are shown in full rather than in exponent form (1398, not 1.4e+03).
std::string Num(double x, int digits) {
  if (std::isfinite(x) && std::fabs(x) >= 1 && std::fabs(x) < 1e15 &&
      std::floor(std::log10(std::fabs(x))) >= digits) {
    return fmt::format("{:.0f}", x);
  }
  return fmt::format("{:.{}g}", x, digits);
}

std::string Percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  return fmt::format("{:.3g}%", 100 * fraction);
}

// "1461.2 +/- 3.1 samples/s (0.21%)".
std::string ValueWithError(const ParamEstimate& p) {
  const int digits = DigitsFor(p.value, p.std_error);
  if (!std::isfinite(p.std_error))
    return fmt::format("{} {} (no error estimate)", Num(p.value, digits), p.unit);
  return fmt::format("{} +/- {} {} ({})", Num(p.value, digits), Num(p.std_error, 2), p.unit,
                     Percent(p.std_error / std::fabs(p.value)));
}

std::string ResidualDefinition(Objective objective, const std::string& count) {
  switch (objective) {
    case Objective::kAbsoluteThroughput:
      return "predicted - observed " + count + "/s";
    case Objective::kAbsoluteTime:
      return "predicted - observed s per step";
    case Objective::kRelativeTime:
      break;
  }
  return "predicted/observed step time - 1";
}

std::string ResidualUnitSquared(Objective objective, const std::string& count) {
  switch (objective) {
    case Objective::kAbsoluteThroughput:
      return "(" + count + "/s)^2";
    case Objective::kAbsoluteTime:
      return "s^2";
    case Objective::kRelativeTime:
      break;
  }
  return "dimensionless";
}

std::string Batch(double batch, const std::string& count) {
  return std::isfinite(batch) ? Num(batch, 4) + " " + count : std::string("n/a");
}

// A rate parameter per sequence again in tokens: "= 1.23e+05 +/- 900 tokens/s
// (sequences of 2048 tokens)".
bool IsSequenceRate(const ParamEstimate& p) { return p.unit == "sequences/s"; }
std::string InTokens(const ParamEstimate& p, double seq_len) {
  const int digits = DigitsFor(p.value * seq_len, p.std_error * seq_len);
  std::string text = "= " + Num(p.value * seq_len, digits);
  if (std::isfinite(p.std_error)) text += " +/- " + Num(p.std_error * seq_len, 2);
  return text + fmt::format(" tokens/s (sequences of {:g} tokens)", seq_len);
}

}  // namespace

std::string GroupFit::BriefReport() const {
  std::string text = fmt::format("{}: {}", group.ToString(), law);
  for (const ParamEstimate& p : params) {
    const int digits = DigitsFor(p.value, p.std_error);
    text += fmt::format("{} {} = {}", &p == params.data() ? "" : ",", p.name, Num(p.value, digits));
    if (std::isfinite(p.std_error)) text += fmt::format(" +/- {}", Num(p.std_error, 2));
    text += " " + p.unit;
    if (seq_len && IsSequenceRate(p)) {
      text +=
          fmt::format(" ({} tokens/s)", Num(p.value * *seq_len, DigitsFor(p.value, p.std_error)));
    }
  }
  text += fmt::format("; rel RMSE {}, n = {}, {}", Percent(rel_rmse), n_points,
                      usable      ? "usable"
                      : converged ? "NOT usable"
                                  : "NOT converged");
  if (!warnings.empty()) {
    text += fmt::format(", {} warning{}", warnings.size(), warnings.size() == 1 ? "" : "s");
  }
  return text;
}

std::string GroupFit::FullReport() const {
  const LawEntry* entry = FindLaw(law);
  std::string out;
  auto line = [&out](const std::string& text) { out += text + "\n"; };
  line(fmt::format("[[Fit]] {}", group.ToString()));
  line(fmt::format("    law          {}: {}", law, entry ? entry->formula : "?"));
  line(fmt::format("    objective    {} (residual = {})", ObjectiveName(objective),
                   ResidualDefinition(objective, CountName())));
  line(fmt::format("    loss         {}",
                   loss == Loss::kSquared
                       ? LossName(loss)
                       : fmt::format("{} (scale {:g})", LossName(loss), loss_scale)));
  line(fmt::format("    points       {} (dof {})", n_points, dof));
  line(fmt::format("    solver       {} after {} iterations: {}",
                   converged ? "converged" : "did NOT converge", iterations, solver_message));
  line(fmt::format("    usable       {}", usable ? "yes" : "no"));

  line("[[Parameters]]");
  size_t width = 0;
  for (const ParamEstimate& p : params) width = std::max(width, p.name.size());
  for (const ParamEstimate& p : params) {
    std::string text = fmt::format("    {:<{}} = {}", p.name, width, ValueWithError(p));
    if (std::isfinite(p.ci_low)) {
      const int digits = DigitsFor(p.value, p.std_error) + 1;
      text += fmt::format(", {:g}% CI [{}, {}]", 100 * confidence, Num(p.ci_low, digits),
                          Num(p.ci_high, digits));
    }
    line(text);
    if (seq_len && IsSequenceRate(p)) {
      line(fmt::format("    {:<{}}   {}", "", width, InTokens(p, *seq_len)));
    }
  }
  if (params.size() > 1) {
    line("[[Correlations]]");
    for (size_t a = 0; a < params.size(); ++a) {
      for (size_t b = a + 1; b < params.size(); ++b) {
        const bool known =
            correlation.rows() > static_cast<Eigen::Index>(b) && std::isfinite(correlation(a, b));
        line(fmt::format("    C({}, {}) = {}", params[a].name, params[b].name,
                         known ? fmt::format("{:+.4f}", correlation(a, b)) : "n/a"));
      }
    }
  }

  line("[[Statistics]]");
  line(fmt::format("    RSS          {:.6g} ({})", rss,
                   ResidualUnitSquared(objective, CountName())));
  line(fmt::format("    R^2          {:.6g}", r2));
  line(fmt::format("    rel RMSE     {} (throughput, predicted/observed - 1)", Percent(rel_rmse)));
  line(fmt::format("    AIC          {:.6g} (n ln(RSS/n) + 2p)", aic));
  line(fmt::format(
      "    LOO rel RMSE {}",
      std::isfinite(loo_rel_rmse)
          ? Percent(loo_rel_rmse) + (loo_one_step ? " (throughput of each point from one "
                                                    "Gauss-Newton step without it: "
                                                    "too many points to refit each)"
                                                  : " (throughput of each point from a "
                                                    "fit without it)")
          : std::string("not computed")));
  line(fmt::format("    b_half       {} (throughput at half the asymptote)",
                   Batch(b_half, CountName())));
  line(fmt::format("    b_90         {} (throughput at 90% of the asymptote)",
                   Batch(b_90, CountName())));
  line("[[Warnings]]");
  if (warnings.empty()) line("    none");
  for (const std::string& warning : warnings) line("    - " + warning);
  return out;
}

std::string FitResult::BriefReport() const {
  std::string out;
  for (const GroupFit& fit : fits) out += fit.BriefReport() + "\n";
  return out;
}

std::string FitResult::FullReport() const {
  std::string out;
  for (const GroupFit& fit : fits) out += (out.empty() ? "" : "\n") + fit.FullReport();
  for (const DeviceScaling& scaling : scaling) {
    out += fmt::format("\n[[Device scaling]] label={}{} (hyperbolic law)\n",
                       scaling.label.empty() ? "(none)" : scaling.label,
                       scaling.precision.empty() ? "" : " precision=" + scaling.precision);
    out += fmt::format("    {:>8}  {:>26}  {:>22}\n", "devices",
                       fmt::format("v0 [{}]", scaling.rate_unit), "t [s]");
    for (const DeviceScalingRow& row : scaling.rows) {
      auto cell = [](double value, double error) {
        const int digits = DigitsFor(value, error);
        return std::isfinite(error) ? fmt::format("{} +/- {}", Num(value, digits), Num(error, 2))
                                    : Num(value, digits);
      };
      out += fmt::format("    {:>8}  {:>26}  {:>22}\n", row.devices, cell(row.v0, row.v0_stderr),
                         cell(row.t, row.t_stderr));
    }
  }
  return out;
}

}  // namespace fitspeed
