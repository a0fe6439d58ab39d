// Private interface between the reader dispatch (input.cc) and the readers:
// one Read<Format> and one LooksLike<Format> per format, each in its own file.
#ifndef FITSPEED_SRC_IO_READERS_H_
#define FITSPEED_SRC_IO_READERS_H_

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fitspeed/core/sample.h"
#include "fitspeed/io/input.h"
#include "text.h"

namespace fitspeed::io {

// What every reader gets besides the text.
struct ReaderContext {
  const std::string& source;     // name for messages and Sample::source
  const Attributes& attributes;  // PATH@... values; readers may use them directly
  const ReadOptions& options;
  // `source` as the samples hold it: one string shared by all of them.
  SourceName sample_source = SourceName(source);
};

// One SharedString per distinct text within a read: a label or precision
// repeats over thousands of samples, which then all point at one string.
class StringPool {
 public:
  const SharedString& Get(std::string_view text) {
    if (last_ != nullptr && last_->str() == text) return *last_;
    auto it = strings_.find(text);
    if (it == strings_.end()) it = strings_.emplace(std::string(text), SharedString(text)).first;
    last_ = &it->second;
    return *last_;
  }

 private:
  std::map<std::string, SharedString, std::less<>> strings_;
  const SharedString* last_ = nullptr;  // the last one asked for, tried first
};

// Reports something read with doubt, as "source:line: message" (line 0: no
// line), to options.warn or standard error. Readers warn rather than refuse
// where a log is ambiguous but what they read is certain.
void Warn(const ReaderContext& context, int line, std::string_view message);

// Each reader returns the samples it found, with source and line set, in file
// order. It throws DataError (naming source, line and field) on malformed
// content. Attributes are applied afterwards by ParseSamples (see
// ApplyAttributes), and every sample is validated then, so a reader may leave
// batch at 0 when the log lacks it. Returning no samples is allowed: the caller
// reports "no samples found".
//
// The readers of line-oriented logs read a LineCursor, so that a log file is
// read a buffer at a time (ParseStream); their overloads on a text read it
// whole. The others need the whole document (JSON, CSV with quoted cells
// over lines, TensorBoard's records, the epoch list's two passes).
std::vector<Sample> ReadCsv(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadNist(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadKeras(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadKeras(LineCursor& lines, const ReaderContext& context);
std::vector<Sample> ReadLightning(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadKerasCsv(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadWandb(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadMllog(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadMllog(LineCursor& lines, const ReaderContext& context);
std::vector<Sample> ReadDllogger(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadDllogger(LineCursor& lines, const ReaderContext& context);
std::vector<Sample> ReadTimm(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadTimm(LineCursor& lines, const ReaderContext& context);
std::vector<Sample> ReadHf(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadHf(LineCursor& lines, const ReaderContext& context);
std::vector<Sample> ReadHfState(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadTfcnn(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadTfcnn(LineCursor& lines, const ReaderContext& context);
std::vector<Sample> ReadMegatron(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadMegatron(LineCursor& lines, const ReaderContext& context);
std::vector<Sample> ReadDeepspeed(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadDeepspeed(LineCursor& lines, const ReaderContext& context);
std::vector<Sample> ReadNanogpt(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadNanogpt(LineCursor& lines, const ReaderContext& context);
std::vector<Sample> ReadFairseq(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadFairseq(LineCursor& lines, const ReaderContext& context);
std::vector<Sample> ReadDetectron2(std::string_view text, const ReaderContext& context);
std::vector<Sample> ReadDetectron2(LineCursor& lines, const ReaderContext& context);
std::vector<Sample> ReadEpochs(std::string_view text, const ReaderContext& context);
// Binary: `text` holds the bytes of a TensorBoard event file.
std::vector<Sample> ReadTensorboard(std::string_view text, const ReaderContext& context);

// The reader on a LineCursor of `format`, or nullptr when it reads whole texts only.
using LineReader = std::vector<Sample> (*)(LineCursor&, const ReaderContext&);
LineReader LineReaderOf(Format format);

// How much of a log ParseStream reads at a time: 1 MiB (a buffer of about
// twice that is held, against the whole file).
inline constexpr size_t kStreamChunkBytes = size_t{1} << 20;

// ParseSamples on the text that `read` gives, with the same results
// (samples, warnings, errors): a log over 64 KiB of a line-oriented format that
// its start tells (or options.format names) is read `chunk_bytes` at a time and
// never held whole; any other is read whole (`expected_bytes`, a regular
// file's size, sizes the string at once), then parsed. ReadSamples reads files
// and standard input through it.
std::vector<Sample> ParseStream(const ReadBytes& read, const std::string& source,
                                const Attributes& attributes = {}, const ReadOptions& options = {},
                                size_t chunk_bytes = kStreamChunkBytes, size_t expected_bytes = 0);

// Cheap content sniffers on the start of a file (up to 64 KiB), used by
// DetectFormat in the order of the Format enum's specificity.
bool LooksLikeCsv(std::string_view head);
bool LooksLikeNist(std::string_view head);
bool LooksLikeKeras(std::string_view head);
bool LooksLikeLightning(std::string_view head);
bool LooksLikeKerasCsv(std::string_view head);
bool LooksLikeWandb(std::string_view head);
bool LooksLikeMllog(std::string_view head);
bool LooksLikeDllogger(std::string_view head);
bool LooksLikeTimm(std::string_view head);
bool LooksLikeHf(std::string_view head);
bool LooksLikeHfState(std::string_view head);
bool LooksLikeTfcnn(std::string_view head);
bool LooksLikeMegatron(std::string_view head);
bool LooksLikeDeepspeed(std::string_view head);
bool LooksLikeNanogpt(std::string_view head);
bool LooksLikeFairseq(std::string_view head);
bool LooksLikeDetectron2(std::string_view head);
bool LooksLikeEpochs(std::string_view head);
bool LooksLikeTensorboard(std::string_view head);

// Throws UsageError when ReadOptions.tensorboard_unit is not a unit the
// TensorBoard reader knows.
void ValidateTensorboardOptions(const ReadOptions& options);

// Fills what the attributes give and the sample lacks (batch, devices,
// samples_per_epoch), sets the steps rule when drop_remainder is given, and
// sets label/precision when given (an attribute label is prefixed to a label
// the log gives: "attr/log"). Called for every sample of a read with one
// `strings`, the samples share their labels and precision.
void ApplyAttributes(const Attributes& attributes, Sample& sample, StringPool& strings);
inline void ApplyAttributes(const Attributes& attributes, Sample& sample) {
  StringPool strings;
  ApplyAttributes(attributes, sample, strings);
}

}  // namespace fitspeed::io

#endif  // FITSPEED_SRC_IO_READERS_H_
