// Fits data generated exactly from v0 = 1000 samples/s, t = 0.05 s through the
// installed library: step time = b/1000 + 0.05.
#include <fitspeed/fitspeed.h>

#include <cstdio>
#include <vector>

int main() {
  std::vector<fitspeed::Sample> samples;
  for (double b : {8.0, 16.0, 32.0, 64.0, 128.0}) {
    fitspeed::Sample s;
    s.batch = b;
    s.step_time_s = b / 1000.0 + 0.05;
    samples.push_back(s);
  }
  const fitspeed::FitResult result = fitspeed::Fit(samples);
  std::printf("v0 = %.0f\n", result.fits.at(0).Param("v0").value);
  return result.AllUsable() ? 0 : 1;
}
