// Fit the law v(b) = b/(b/v0 + t) to a handful of measured step times and print
// the full report: v0, t, their uncertainty, b_half and any warnings.
#include <cstdio>
#include <vector>

#include "fitspeed/fitspeed.h"

int main() {
  // Seconds per optimizer step measured at each batch size on one device.
  struct Measurement {
    double batch;
    double step_time_s;
  };
  const Measurement measured[] = {{32, 0.171},  {64, 0.208},  {128, 0.292},
                                  {256, 0.455}, {512, 0.779}, {1024, 1.43}};

  std::vector<fitspeed::Sample> samples;
  for (const Measurement& m : measured) {
    fitspeed::Sample s;
    s.source = "example";
    s.batch = m.batch;
    s.step_time_s = m.step_time_s;
    s.label = "cnn";
    samples.push_back(s);
  }

  try {
    fitspeed::FitOptions options;  // hyperbolic law, relative-time residuals
    const fitspeed::FitResult result = fitspeed::Fit(samples, options);
    std::printf("%s", result.FullReport().c_str());
    const fitspeed::GroupFit& fit = result.fits.front();
    std::printf("\npredicted throughput at batch 2048: %.0f samples/s\n",
                fit.PredictThroughput(2048));
    return result.AllUsable() ? 0 : 1;
  } catch (const fitspeed::Error& e) {
    // Bad input: the message names the file, line and field.
    std::fprintf(stderr, "fit_samples: %s\n", e.what());
    return 2;
  }
}
