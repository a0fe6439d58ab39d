// Reading a file the user named (a config.json, a network, device, links, fit
// or interval JSON, a log): only what can be read to an end, and at most a cap,
// so that a FIFO or /dev/zero given as a file neither blocks nor fills memory.
#ifndef FITSPEED_SRC_CORE_INPUT_FILE_H_
#define FITSPEED_SRC_CORE_INPUT_FILE_H_

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace fitspeed {

// The most a JSON or text document may hold: 64 MiB, over a hundred times
// the largest JSON in data/ (llm-calibration.json, 0.25 MB).
inline constexpr uint64_t kMaxDocumentBytes = uint64_t{64} << 20;
// The most a training log may hold: 2 GiB.
inline constexpr uint64_t kMaxLogBytes = uint64_t{2} << 30;

// How ReadInputFile treats what is not a regular file.
enum class PipeInputs {
  kRefuse,  // only a regular file (documents)
  kRead,    // a FIFO is read to its end too (logs: `fitspeed read <(zcat run.log.gz)`)
};

// The whole text of the file at `path`; `what` names it in messages ("the
// config.json", "device file"). Throws InputError naming the path when it is
// missing, a directory, not a regular file (a FIFO, unless `pipes` reads them,
// a device such as /dev/zero, a socket), cannot be read, or holds more than
// `max_bytes` (the message states the cap).
std::string ReadInputFile(const std::string& path, std::string_view what,
                          uint64_t max_bytes = kMaxDocumentBytes,
                          PipeInputs pipes = PipeInputs::kRefuse);

// A file the user named, opened and checked as ReadInputFile checks it (the
// same errors), to be read in pieces: a log is read a buffer at a time rather
// than held whole. Read() past `max_bytes` in all throws InputError stating the
// cap. Not mapped: a log truncated while it is read (logrotate's copytruncate)
// would kill the process with SIGBUS; read() just ends early.
class InputFile {
 public:
  InputFile(const std::string& path, std::string_view what, uint64_t max_bytes = kMaxDocumentBytes,
            PipeInputs pipes = PipeInputs::kRefuse);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Reads up to `size` bytes into `data`; returns how many, 0 at the end.
  // Throws InputError when the file cannot be read or holds more than the cap.
  size_t Read(char* data, size_t size);
  // The size of a regular file when it was opened; nullopt for a pipe.
  std::optional<uint64_t> size_at_open() const { return size_at_open_; }

 private:
  std::string named_;  // "what 'path'", for messages
  uint64_t max_bytes_;
  int fd_ = -1;
  std::optional<uint64_t> size_at_open_;
  uint64_t read_ = 0;  // bytes read so far
};

// Whether a MODEL or device argument names a file rather than a built-in
// entry: it holds a '/' or ends in ".json". Such a name is read as a file
// (a missing one is an InputError), not looked up.
bool LooksLikeFilePath(std::string_view name);

// The rest of `in` (standard input), `source` naming it in messages; InputError
// when it cannot be read or holds more than `max_bytes`.
std::string ReadInputStream(std::istream& in, const std::string& source, uint64_t max_bytes);

// The rest of `in` read in pieces, with ReadInputStream's errors.
class InputStream {
 public:
  InputStream(std::istream& in, std::string source, uint64_t max_bytes)
      : in_(in), source_(std::move(source)), max_bytes_(max_bytes) {}
  // Reads up to `size` bytes into `data`; returns how many, 0 at the end.
  size_t Read(char* data, size_t size);

 private:
  std::istream& in_;
  std::string source_;
  uint64_t max_bytes_;
  uint64_t read_ = 0;  // bytes read so far
};

}  // namespace fitspeed

#endif  // FITSPEED_SRC_CORE_INPUT_FILE_H_
