// libFuzzer target for one reader (FITSPEED_FUZZ_FORMAT, a fitspeed::Format
// enumerator name) or for auto-detection. Any input may be rejected with a
// fitspeed::Error; anything else (a crash, another exception, a sanitizer
// report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fitspeed/core/error.h"
#include "fitspeed/io/input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fitspeed::ReadOptions options;
  options.format = fitspeed::Format::FITSPEED_FUZZ_FORMAT;
  fitspeed::Attributes attributes;
  attributes.batch = 64;  // so readers whose logs lack the batch get past that check
  attributes.samples_per_epoch = 50000;
  try {
    (void)fitspeed::ParseSamples(text, "fuzz-input", attributes, options);
  } catch (const fitspeed::Error&) {
  }
  return 0;
}
