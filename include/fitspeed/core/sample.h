// One measurement of training speed at one batch size, as a reader or a sweep
// extracts it, and the quantities every layer derives from it.
#ifndef FITSPEED_CORE_SAMPLE_H_
#define FITSPEED_CORE_SAMPLE_H_

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fitspeed/core/compact.h"

namespace fitspeed {

// How an epoch of N samples is cut into steps of batch b.
enum class StepsRule : std::uint8_t {
  kKeepPartial,    // ceil(N/b) steps, the last one smaller (Keras model.fit on arrays)
  kDropRemainder,  // floor(N/b) steps, the remainder dropped (TPU pipelines, fit_generator)
};

// What a sample's batch, throughput and samples_per_epoch count. A language
// model's "sample" is one sequence; its logs often count tokens instead. The
// law v = b/(b/v0 + t) holds in either unit as long as b and v share it.
enum class Unit : std::uint8_t {
  kSamples,  // samples (images, sequences, utterances)
  kTokens,   // tokens; a sequence is seq_len of them
};
std::string UnitName(Unit unit);          // "samples", "tokens"
Unit ParseUnit(const std::string& name);  // "samples"/"sequences", "tokens"; throws UsageError

// A string shared by every copy (Shared<std::string>) that reads as a
// `const std::string&`, compares with strings and prints; assigning a string
// gives a new one. Sample's source, label and precision are SharedStrings: a
// reader makes one per series and every sample points at it (a log of 200,000
// samples held its path, label and precision 200,000 times each).
class SharedString {
 public:
  SharedString() = default;
  SharedString(std::string text)  // NOLINT(google-explicit-constructor): as a string member was
      : text_(text.empty() ? Shared<std::string>() : Shared<std::string>(std::move(text))) {}
  explicit SharedString(std::string_view text) : SharedString(std::string(text)) {}
  SharedString(const char* text) : SharedString(std::string(text)) {}  // NOLINT
  const std::string& str() const { return *text_; }
  operator const std::string&() const { return str(); }  // NOLINT
  const char* c_str() const { return str().c_str(); }
  bool empty() const { return str().empty(); }
  std::size_t size() const { return str().size(); }
  bool SharesWith(const SharedString& other) const { return text_.SharesWith(other.text_); }

 private:
  Shared<std::string> text_;  // empty: ""
};
bool operator==(const SharedString& a, const SharedString& b);
bool operator==(const SharedString& a, const std::string& b);
bool operator==(const SharedString& a, const char* b);
inline bool operator==(const std::string& a, const SharedString& b) { return b == a; }
inline bool operator==(const char* a, const SharedString& b) { return b == a; }
template <class T>
bool operator!=(const SharedString& a, const T& b) {
  return !(a == b);
}
inline bool operator!=(const std::string& a, const SharedString& b) { return !(b == a); }
inline bool operator!=(const char* a, const SharedString& b) { return !(b == a); }
bool operator<(const SharedString& a, const SharedString& b);
std::ostream& operator<<(std::ostream& out, const SharedString& text);

// The name of the file samples came from ("-" for standard input).
using SourceName = SharedString;

// Tags as a std::map, to build them (Sample::tags is a compact Tags).
using TagMap = std::map<std::string, std::string>;

// The largest batch a sweep, run or modeled, takes (2^30 samples): far above
// any real step, and low enough that doubling it and the element counts
// derived from it stay within int64.
inline constexpr int64_t kMaxSweepBatch = int64_t{1} << 30;

// A measurement. `batch` is the global batch of one optimizer step (summed over
// all `devices`); exactly one of throughput_sps, step_time_s, epoch_time_s is
// the observation (the others stay empty). An epoch time also needs
// samples_per_epoch. batch, throughput_sps and samples_per_epoch all count
// `unit` (samples unless a log or @unit= says tokens).
struct Sample {
  SourceName source;       // file the sample came from ("-" for standard input)
  SharedString label;      // series name (e.g. "tpu", "model=bert"), may be empty
  SharedString precision;  // "fp32", "mixed", ... or empty when unknown
  // Categorical columns of the source (CSV series keys); `label` joins them.
  Tags tags;
  double batch = 0;                           // samples per optimizer step, all devices together
  CompactOptional<double> throughput_sps;     // samples per second, all devices
  CompactOptional<double> step_time_s;        // seconds per optimizer step
  CompactOptional<double> epoch_time_s;       // seconds for one epoch
  CompactOptional<double> samples_per_epoch;  // N, needed with epoch_time_s
  // Tokens per sample (the sequence length), where the log or @seq_len= states
  // it. ParseSamples turns a sample counted in tokens into sequences when it
  // is known (see ToSequences), so fits of a language model are per sequence
  // and tokens/s is v0 * seq_len.
  CompactOptional<double> seq_len;
  int line = 0;                // 1-based line in source, 0 if not from a line
  int devices = 1;             // data-parallel devices sharing the batch
  CompactOptional<int> epoch;  // 1-based epoch number, when known
  StepsRule steps_rule = StepsRule::kKeepPartial;
  Unit unit = Unit::kSamples;

  // Samples per device and step.
  double PerDeviceBatch() const { return batch / devices; }
};
// Readers hold every sample of a log at once (200,000 for a long Megatron run),
// and every byte of a Sample is written to fresh memory, which costs about as
// much as parsing the line (bench/README.md). 96 bytes, so that a vector grown
// by doubling holds under 200 bytes per sample.
static_assert(sizeof(Sample) <= 96, "Sample grew: see the comment above");

// A sample reduced to the law's terms: the mean step time at an effective batch.
// For an epoch time T over N samples: steps = ceil(N/b) or floor(N/b),
// samples used = N or steps*b, effective batch = used/steps and step time =
// T/steps, so that T = used/v0 + steps*t becomes step = b_eff/v0 + t exactly.
struct StepObservation {
  double batch = 0;        // effective samples per step
  double step_time_s = 0;  // seconds per step
  double throughput_sps() const { return batch / step_time_s; }
};

// Steps in an epoch of `samples_per_epoch` at `batch` under `rule`.
double StepsPerEpoch(double samples_per_epoch, double batch, StepsRule rule);

// Samples actually trained in an epoch (N, or the whole steps times b).
double SamplesUsedPerEpoch(double samples_per_epoch, double batch, StepsRule rule);

// The observation of `sample` in the law's terms. Throws DataError if the
// sample is incomplete or not positive and finite.
StepObservation ToStepObservation(const Sample& sample);

// Checks a sample's fields (finite, positive, exactly one observation, an
// epoch time has samples_per_epoch); throws DataError naming source, line and field.
void ValidateSample(const Sample& sample);

// Converts a sample counted in tokens whose seq_len is known to sequences:
// batch, throughput and samples per epoch are divided by seq_len (a batch of
// 524288 tokens at seq_len 2048 is 256 sequences). Samples already in samples,
// or in tokens without seq_len, are left as they are. Throws DataError when
// seq_len is not positive and finite.
void ToSequences(Sample& sample);

// Rate unit of samples of `unit`: "samples/s" or "tokens/s".
std::string RateUnitName(Unit unit);

// The key that separates fits: samples of one (devices, label, precision,
// unit); samples and tokens are never fitted together.
struct GroupKey {
  int devices = 1;
  std::string label;
  std::string precision;
  Unit unit = Unit::kSamples;
  bool operator<(const GroupKey& other) const;
  bool operator==(const GroupKey& other) const;
  std::string ToString() const;  // "devices=2 label=tpu precision=fp32 unit=tokens"
};
GroupKey GroupOf(const Sample& sample);

// Samples split by GroupKey, groups in key order, samples in input order.
std::vector<std::pair<GroupKey, std::vector<Sample>>> GroupSamples(
    const std::vector<Sample>& samples);

}  // namespace fitspeed

#endif  // FITSPEED_CORE_SAMPLE_H_
