#include "core/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

// What a file of mode `mode` is, for the message that refuses it.
const char* KindOfInputFile(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// "what 'path'", or "'path'" when `what` is empty.
std::string NamedInputFile(std::string_view what, const std::string& path) {
  return what.empty() ? fmt::format("'{}'", path) : fmt::format("{} '{}'", what, path);
}

[[noreturn]] void ThrowTooLarge(const std::string& named, uint64_t max_bytes) {
  throw InputError(
      fmt::format("cannot read {}: it holds more than {} bytes ({} MiB), the most "
                  "fitspeed reads",
                  named, max_bytes, max_bytes >> 20));
}

}  // namespace

InputFile::InputFile(const std::string& path, std::string_view what, uint64_t max_bytes,
                     PipeInputs pipes)
    : named_(NamedInputFile(what, path)), max_bytes_(max_bytes) {
  if (path.find('\0') != std::string::npos) {
    throw InputError(fmt::format("cannot open {}: the path contains a NUL character",
                                 NamedInputFile(what, path.c_str())));
  }
  // Where FIFOs are refused, O_NONBLOCK: opening one without a writer
  // returns at once (reads of a regular file ignore the flag). Where they are
  // read, the open waits for the writer, as `cat` does. fstat then tells what
  // was opened (no race with a stat of the path).
  const int flags = O_RDONLY | O_CLOEXEC | (pipes == PipeInputs::kRefuse ? O_NONBLOCK : 0);
  fd_ = ::open(path.c_str(), flags);
  if (fd_ < 0) {
    throw InputError(fmt::format("cannot open {}: {}", named_, std::strerror(errno)));
  }
  try {
    struct stat info {};
    if (::fstat(fd_, &info) != 0) {
      throw InputError(fmt::format("cannot read {}: {}", named_, std::strerror(errno)));
    }
    const bool regular = S_ISREG(info.st_mode);
    const bool pipe = S_ISFIFO(info.st_mode) && pipes == PipeInputs::kRead;
    if (!regular && !pipe) {
      throw InputError(fmt::format("cannot read {}: it is {}, not a regular file", named_,
                                   KindOfInputFile(info.st_mode)));
    }
    if (regular) {
      size_at_open_ = static_cast<uint64_t>(info.st_size);
      if (*size_at_open_ > max_bytes_) ThrowTooLarge(named_, max_bytes_);
    }
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

InputFile::~InputFile() { ::close(fd_); }

size_t InputFile::Read(char* data, size_t size) {
  for (;;) {
    const ssize_t n = ::read(fd_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw InputError(fmt::format("cannot read {}: {}", named_, std::strerror(errno)));
    }
    read_ += static_cast<uint64_t>(n);
    if (read_ > max_bytes_) ThrowTooLarge(named_, max_bytes_);
    return static_cast<size_t>(n);
  }
}

std::string ReadInputFile(const std::string& path, std::string_view what, uint64_t max_bytes,
                          PipeInputs pipes) {
  InputFile file(path, what, max_bytes, pipes);
  // Read straight into the string at the file's size; a file that grows
  // meanwhile, or a pipe, is read on in chunks up to the cap.
  std::string text;
  text.resize(file.size_at_open() ? static_cast<size_t>(*file.size_at_open()) + 1
                                  : size_t{1} << 16);
  size_t used = 0;
  for (;;) {
    if (used == text.size()) {
      text.resize(std::min<uint64_t>(2 * text.size(), max_bytes + 1));
    }
    const size_t n = file.Read(text.data() + used, text.size() - used);
    if (n == 0) break;
    used += n;
  }
  text.resize(used);
  return text;
}

bool LooksLikeFilePath(std::string_view name) {
  constexpr std::string_view kJson = ".json";
  return name.find('/') != std::string_view::npos ||
         (name.size() > kJson.size() && name.substr(name.size() - kJson.size()) == kJson);
}

size_t InputStream::Read(char* data, size_t size) {
  in_.read(data, static_cast<std::streamsize>(size));
  const size_t n = static_cast<size_t>(in_.gcount());
  if (in_.bad()) throw InputError(fmt::format("cannot read {}", source_));
  read_ += n;
  if (read_ > max_bytes_) ThrowTooLarge(source_, max_bytes_);
  return n;
}

std::string ReadInputStream(std::istream& in, const std::string& source, uint64_t max_bytes) {
  InputStream stream(in, source, max_bytes);
  std::string text;
  char chunk[1 << 16];
  while (const size_t n = stream.Read(chunk, sizeof chunk)) text.append(chunk, n);
  return text;
}

}  // namespace fitspeed
