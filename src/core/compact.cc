#include "fitspeed/core/compact.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace fitspeed {

// The block: the header, then for each tag in name order the name's length,
// the name, the value's length and the value (lengths as uint32_t, unaligned).
struct Tags::Rep {
  std::atomic<std::size_t> refs{1};
  std::uint32_t count = 0;
  std::uint32_t bytes = 0;  // of the strings and their lengths, after the header
  const char* data() const { return reinterpret_cast<const char*>(this + 1); }
  char* data() { return reinterpret_cast<char*>(this + 1); }
};

namespace {

std::string_view Next(const char*& at) {
  std::uint32_t length;
  std::memcpy(&length, at, sizeof length);
  const std::string_view text(at + sizeof length, length);
  at += sizeof length + length;
  return text;
}

void Put(char*& at, std::string_view text) {
  const auto length = static_cast<std::uint32_t>(text.size());
  std::memcpy(at, &length, sizeof length);
  std::memcpy(at + sizeof length, text.data(), text.size());
  at += sizeof length + text.size();
}

}  // namespace

Tags::value_type Tags::const_iterator::operator*() const {
  const char* at = at_;
  const std::string_view name = Next(at);
  return {name, Next(at)};
}

Tags::const_iterator& Tags::const_iterator::operator++() {
  Next(at_);
  Next(at_);
  return *this;
}

Tags::Tags(const std::map<std::string, std::string>& tags) {
  if (tags.empty()) return;
  std::size_t bytes = 0;
  for (const auto& [name, value] : tags)
    bytes += 2 * sizeof(std::uint32_t) + name.size() + value.size();
  void* block = ::operator new(sizeof(Rep) + bytes);
  rep_ = new (block) Rep;
  rep_->count = static_cast<std::uint32_t>(tags.size());
  rep_->bytes = static_cast<std::uint32_t>(bytes);
  char* at = rep_->data();
  for (const auto& [name, value] : tags) {
    Put(at, name);
    Put(at, value);
  }
}

Tags::Tags(const Tags& other) noexcept : rep_(other.rep_) {
  if (rep_) rep_->refs.fetch_add(1, std::memory_order_relaxed);
}

Tags::~Tags() {
  if (rep_ && rep_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    rep_->~Rep();
    ::operator delete(rep_);
  }
}

Tags::const_iterator Tags::begin() const { return const_iterator(rep_ ? rep_->data() : nullptr); }
Tags::const_iterator Tags::end() const {
  return const_iterator(rep_ ? rep_->data() + rep_->bytes : nullptr);
}
std::size_t Tags::size() const noexcept { return rep_ ? rep_->count : 0; }

std::optional<std::string_view> Tags::Find(std::string_view name) const {
  for (const auto [tag, value] : *this) {
    if (tag == name) return value;
  }
  return std::nullopt;
}

std::string_view Tags::at(std::string_view name) const {
  if (const auto value = Find(name)) return *value;
  throw std::out_of_range("no tag named '" + std::string(name) + "'");
}

Tags Tags::With(std::string_view name, std::string_view value) const {
  std::map<std::string, std::string> tags = ToMap();
  tags[std::string(name)] = std::string(value);
  return Tags(tags);
}

std::map<std::string, std::string> Tags::ToMap() const {
  std::map<std::string, std::string> tags;
  for (const auto [name, value] : *this) tags.emplace(name, value);
  return tags;
}

bool operator==(const Tags& a, const Tags& b) {
  if (a.rep_ == b.rep_) return true;
  if (a.size() != b.size() || a.rep_->bytes != b.rep_->bytes) return false;
  return std::memcmp(a.rep_->data(), b.rep_->data(), a.rep_->bytes) == 0;
}

}  // namespace fitspeed
