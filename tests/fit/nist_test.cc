// NIST StRD certified values: Misra1d is the hyperbolic law (b1 = v0,
// b2 = 1/(v0 t)), Misra1a the exponential law (b1 = vmax, b2 = 1/b_scale).
// Fitted with the absolute-throughput objective (NIST's residual y - f(x)),
// from both NIST starting points; a GSL solver cross-checks Misra1d.
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fitspeed/fit/fit.h"

namespace fitspeed {
namespace {

// The observations of a NIST .dat file as throughput samples (x = batch,
// y = throughput), read from the data lines the header names (61 to 74).
std::vector<Sample> ReadNist(const std::string& name) {
  const std::string path = std::string(FITSPEED_TEST_DATA_DIR) + "/nist/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<Sample> samples;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (line < 61 || line > 74) continue;
    std::istringstream fields(text);
    double y = 0, x = 0;
    EXPECT_TRUE(fields >> y >> x) << path << ":" << line;
    Sample s;
    s.source = path;
    s.line = line;
    s.batch = x;
    s.throughput_sps = y;
    samples.push_back(s);
  }
  EXPECT_EQ(samples.size(), 14u);
  return samples;
}

// NIST's log relative error: the number of matching significant digits.
double Lre(double value, double certified) {
  const double rel = std::fabs(value - certified) / std::fabs(certified);
  return rel == 0 ? 15.0 : -std::log10(rel);
}

struct Certified {
  double b1, b1_sd, b2, b2_sd, rss;
};

// Misra1d.dat lines 41-43.
constexpr Certified kMisra1d{4.3736970754E+02, 3.6489174345E+00, 3.0227324449E-04, 2.9334354479E-06,
                             5.6419295283E-02};
// Misra1a.dat lines 41-43.
constexpr Certified kMisra1a{2.3894212918E+02, 2.7070075241E+00, 5.5015643181E-04, 7.2668688436E-06,
                             1.2455138894E-01};
constexpr double kMinDigits = 9;

FitOptions NistOptions(const std::string& law, std::vector<double> initial) {
  FitOptions options;
  options.law = law;
  options.objective = Objective::kAbsoluteThroughput;
  options.initial = std::move(initial);
  options.leave_one_out = false;
  return options;
}

void ExpectCertified(const char* what, double b1, double b1_sd, double b2, double b2_sd, double rss,
                     const Certified& c) {
  const double lre[] = {Lre(b1, c.b1), Lre(b1_sd, c.b1_sd), Lre(b2, c.b2), Lre(b2_sd, c.b2_sd),
                        Lre(rss, c.rss)};
  std::printf("%s: digits b1 %.1f sd(b1) %.1f b2 %.1f sd(b2) %.1f RSS %.1f\n", what, lre[0], lre[1],
              lre[2], lre[3], lre[4]);
  EXPECT_GE(lre[0], kMinDigits) << what << " b1 = " << b1;
  EXPECT_GE(lre[1], kMinDigits) << what << " sd(b1) = " << b1_sd;
  EXPECT_GE(lre[2], kMinDigits) << what << " b2 = " << b2;
  EXPECT_GE(lre[3], kMinDigits) << what << " sd(b2) = " << b2_sd;
  EXPECT_GE(lre[4], kMinDigits) << what << " RSS = " << rss;
}

// b2 = 1/(v0 t); by the delta method var(b2) = g^T C g, g = (-b2/v0, -b2/t).
void ExpectMisra1d(const char* what, const GroupFit& fit) {
  ASSERT_TRUE(fit.converged) << fit.solver_message;
  const double v0 = fit.Param("v0").value, t = fit.Param("t").value;
  const double b2 = 1 / (v0 * t);
  const double g[] = {-b2 / v0, -b2 / t};
  double var = 0;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 2; ++b) var += g[a] * fit.covariance(a, b) * g[b];
  }
  ExpectCertified(what, v0, fit.Param("v0").std_error, b2, std::sqrt(var), fit.rss, kMisra1d);
}

// b2 = 1/b_scale; sd(b2) = sd(b_scale)/b_scale^2.
void ExpectMisra1a(const char* what, const GroupFit& fit) {
  ASSERT_TRUE(fit.converged) << fit.solver_message;
  const ParamEstimate& b_scale = fit.Param("b_scale");
  ExpectCertified(what, fit.Param("vmax").value, fit.Param("vmax").std_error, 1 / b_scale.value,
                  b_scale.std_error / (b_scale.value * b_scale.value), fit.rss, kMisra1a);
}

TEST(NistMisra1d, HyperbolicFromStart1) {
  // Start 1: b1 = 500, b2 = 1e-4 -> v0 = 500, t = 1/(500 * 1e-4) = 20 s.
  ExpectMisra1d("Misra1d start 1",
                FitGroup(ReadNist("Misra1d.dat"), NistOptions("hyperbolic", {500, 20})));
}

TEST(NistMisra1d, HyperbolicFromStart2) {
  // Start 2: b1 = 450, b2 = 3e-4 -> v0 = 450, t = 1/(450 * 3e-4) = 7.4074 s.
  ExpectMisra1d("Misra1d start 2",
                FitGroup(ReadNist("Misra1d.dat"), NistOptions("hyperbolic", {450, 1 / 0.135})));
}

TEST(NistMisra1d, HyperbolicFromClosedFormStart) {
  ExpectMisra1d("Misra1d auto start",
                FitGroup(ReadNist("Misra1d.dat"), NistOptions("hyperbolic", {})));
}

TEST(NistMisra1d, ConfidenceIntervalUsesStudentT) {
  // 95% interval with 12 dof: t_0.975(12) = 2.178812829667 (statistical tables).
  const GroupFit fit = FitGroup(ReadNist("Misra1d.dat"), NistOptions("hyperbolic", {}));
  const ParamEstimate& v0 = fit.Param("v0");
  EXPECT_NEAR(v0.ci_high - v0.value, 2.178812829667 * kMisra1d.b1_sd, 1e-8 * kMisra1d.b1_sd);
  EXPECT_NEAR(v0.value - v0.ci_low, 2.178812829667 * kMisra1d.b1_sd, 1e-8 * kMisra1d.b1_sd);
}

TEST(NistMisra1d, FullReportShowsTheCertifiedValues) {
  const std::string report =
      FitGroup(ReadNist("Misra1d.dat"), NistOptions("hyperbolic", {})).FullReport();
  // b1 = 437.37 +/- 3.6489 (0.8343%), shown to two digits of its error; the
  // residual standard deviation 6.8568272111E-02 squared times 12 dof is the RSS.
  EXPECT_NE(report.find("v0 = 437.4 +/- 3.6 samples/s (0.834%)"), std::string::npos) << report;
  // t = 1/(b1 b2) = 1/(437.36970754 * 3.0227324449e-4) = 7.56400... s.
  EXPECT_NE(report.find("t  = 7.564"), std::string::npos) << report;
  EXPECT_NE(report.find("RSS          0.0564193 ((samples/s)^2)"), std::string::npos) << report;
  EXPECT_NE(report.find("points       14 (dof 12)"), std::string::npos) << report;
}

TEST(NistMisra1a, ExponentialFromStart1) {
  // Start 1: b1 = 500, b2 = 1e-4 -> vmax = 500, b_scale = 1e4.
  ExpectMisra1a("Misra1a start 1",
                FitGroup(ReadNist("Misra1a.dat"), NistOptions("exponential", {500, 1e4})));
}

TEST(NistMisra1a, ExponentialFromStart2) {
  // Start 2: b1 = 250, b2 = 5e-4 -> vmax = 250, b_scale = 2000.
  ExpectMisra1a("Misra1a start 2",
                FitGroup(ReadNist("Misra1a.dat"), NistOptions("exponential", {250, 2000})));
}

TEST(NistMisra1a, ExponentialFromHeuristicStart) {
  ExpectMisra1a("Misra1a auto start",
                FitGroup(ReadNist("Misra1a.dat"), NistOptions("exponential", {})));
}

// GSL's trust-region Levenberg-Marquardt on y = x/(x/v0 + t), an independent solver.
struct GslData {
  std::vector<double> x, y;
};

int GslResiduals(const gsl_vector* p, void* data, gsl_vector* f) {
  const auto* d = static_cast<const GslData*>(data);
  const double v0 = gsl_vector_get(p, 0), t = gsl_vector_get(p, 1);
  for (size_t i = 0; i < d->x.size(); ++i) {
    gsl_vector_set(f, i, d->x[i] / (d->x[i] / v0 + t) - d->y[i]);
  }
  return GSL_SUCCESS;
}

int GslJacobian(const gsl_vector* p, void* data, gsl_matrix* jac) {
  const auto* d = static_cast<const GslData*>(data);
  const double v0 = gsl_vector_get(p, 0), t = gsl_vector_get(p, 1);
  for (size_t i = 0; i < d->x.size(); ++i) {
    // v = x/T, T = x/v0 + t: dv/dv0 = x^2/(v0^2 T^2), dv/dt = -x/T^2.
    const double x = d->x[i], step = x / v0 + t;
    gsl_matrix_set(jac, i, 0, x * x / (v0 * v0 * step * step));
    gsl_matrix_set(jac, i, 1, -x / (step * step));
  }
  return GSL_SUCCESS;
}

TEST(NistMisra1d, AgreesWithGslMultifitNlinear) {
  const std::vector<Sample> samples = ReadNist("Misra1d.dat");
  GslData data;
  for (const Sample& s : samples) {
    data.x.push_back(s.batch);
    data.y.push_back(*s.throughput_sps);
  }
  const size_t n = data.x.size(), p = 2;
  gsl_set_error_handler_off();
  gsl_multifit_nlinear_fdf fdf;
  fdf.f = GslResiduals;
  fdf.df = GslJacobian;
  fdf.fvv = nullptr;
  fdf.n = n;
  fdf.p = p;
  fdf.params = &data;
  gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
  gsl_multifit_nlinear_workspace* work =
      gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, n, p);
  ASSERT_NE(work, nullptr);
  double start[] = {500, 20};  // NIST start 1
  gsl_vector_view x0 = gsl_vector_view_array(start, p);
  ASSERT_EQ(gsl_multifit_nlinear_init(&x0.vector, &fdf, work), GSL_SUCCESS);
  int info = 0;
  const int status =
      gsl_multifit_nlinear_driver(500, 1e-14, 1e-14, 1e-14, nullptr, nullptr, &info, work);
  ASSERT_EQ(status, GSL_SUCCESS);
  const gsl_vector* solution = gsl_multifit_nlinear_position(work);
  const double gsl_v0 = gsl_vector_get(solution, 0), gsl_t = gsl_vector_get(solution, 1);
  double chisq = 0;
  gsl_blas_ddot(gsl_multifit_nlinear_residual(work), gsl_multifit_nlinear_residual(work), &chisq);
  gsl_matrix* covar = gsl_matrix_alloc(p, p);
  gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(work), 0.0, covar);
  const double s2 = chisq / static_cast<double>(n - p);
  const double gsl_v0_sd = std::sqrt(s2 * gsl_matrix_get(covar, 0, 0));
  const double gsl_t_sd = std::sqrt(s2 * gsl_matrix_get(covar, 1, 1));
  gsl_matrix_free(covar);
  gsl_multifit_nlinear_free(work);

  const GroupFit fit = FitGroup(samples, NistOptions("hyperbolic", {500, 20}));
  EXPECT_NEAR(fit.Param("v0").value, gsl_v0, 1e-9 * gsl_v0);
  EXPECT_NEAR(fit.Param("t").value, gsl_t, 1e-9 * gsl_t);
  EXPECT_NEAR(fit.Param("v0").std_error, gsl_v0_sd, 1e-8 * gsl_v0_sd);
  EXPECT_NEAR(fit.Param("t").std_error, gsl_t_sd, 1e-8 * gsl_t_sd);
  EXPECT_NEAR(fit.rss, chisq, 1e-9 * chisq);
}

}  // namespace
}  // namespace fitspeed
