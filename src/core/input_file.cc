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

// Closes the descriptor when the read ends, thrown or not.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

std::string ReadInputFile(const std::string& path, std::string_view what, uint64_t max_bytes,
                          PipeInputs pipes) {
  const std::string named = NamedInputFile(what, path);
  if (path.find('\0') != std::string::npos) {
    throw InputError(fmt::format("cannot open {}: the path contains a NUL character",
                                 NamedInputFile(what, path.c_str())));
  }
  // Where FIFOs are refused, O_NONBLOCK: opening one without a writer
  // returns at once (reads of a regular file ignore the flag). Where they are
  // read, the open waits for the writer, as `cat` does. fstat then tells what
  // was opened (no race with a stat of the path).
  const int flags = O_RDONLY | O_CLOEXEC | (pipes == PipeInputs::kRefuse ? O_NONBLOCK : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    throw InputError(fmt::format("cannot open {}: {}", named, std::strerror(errno)));
  }
  const FdCloser closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    throw InputError(fmt::format("cannot read {}: {}", named, std::strerror(errno)));
  }
  const bool regular = S_ISREG(info.st_mode);
  const bool pipe = S_ISFIFO(info.st_mode) && pipes == PipeInputs::kRead;
  if (!regular && !pipe) {
    throw InputError(fmt::format("cannot read {}: it is {}, not a regular file", named,
                                 KindOfInputFile(info.st_mode)));
  }
  if (regular && static_cast<uint64_t>(info.st_size) > max_bytes) {
    ThrowTooLarge(named, max_bytes);
  }
  // Read straight into the string at the file's size; a file that grows
  // meanwhile, or a pipe, is read on in chunks up to the cap. Not mapped: a log
  // truncated while it is read (logrotate's copytruncate) would kill the
  // process with SIGBUS.
  std::string text;
  text.resize(regular ? static_cast<size_t>(info.st_size) + 1 : size_t{1} << 16);
  size_t used = 0;
  for (;;) {
    if (used == text.size()) {
      if (used > max_bytes) ThrowTooLarge(named, max_bytes);
      text.resize(std::min<uint64_t>(2 * text.size(), max_bytes + 1));
    }
    const ssize_t n = ::read(fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw InputError(fmt::format("cannot read {}: {}", named, std::strerror(errno)));
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  if (used > max_bytes) ThrowTooLarge(named, max_bytes);
  text.resize(used);
  return text;
}

bool LooksLikeFilePath(std::string_view name) {
  constexpr std::string_view kJson = ".json";
  return name.find('/') != std::string_view::npos ||
         (name.size() > kJson.size() && name.substr(name.size() - kJson.size()) == kJson);
}

std::string ReadInputStream(std::istream& in, const std::string& source, uint64_t max_bytes) {
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) ThrowTooLarge(source, max_bytes);
  }
  if (in.bad()) throw InputError(fmt::format("cannot read {}", source));
  return text;
}

}  // namespace fitspeed
