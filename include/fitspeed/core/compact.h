// Small value types that keep a Sample at 96 bytes (sample.h): a handle to an
// immutable value shared by its copies, tags in one shared block, and an
// optional stored in the bytes of its value.
#ifndef FITSPEED_CORE_COMPACT_H_
#define FITSPEED_CORE_COMPACT_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace fitspeed {

// An immutable T shared by every copy of the handle, in one pointer: a copy
// adds a reference (an atomic increment), the last handle frees the value. An
// empty handle reads as T{}. SharedString (sample.h) is one: the readers give
// every sample of a series the same label and precision, which as std::string
// members were 32 bytes each per sample, plus a heap block past 15 characters.
template <class T>
class Shared {
 public:
  Shared() noexcept = default;
  Shared(T value) : rep_(new Rep(std::move(value))) {}  // NOLINT(google-explicit-constructor)
  Shared(const Shared& other) noexcept : rep_(other.rep_) {
    if (rep_) rep_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  Shared(Shared&& other) noexcept : rep_(std::exchange(other.rep_, nullptr)) {}
  Shared& operator=(Shared other) noexcept {
    std::swap(rep_, other.rep_);
    return *this;
  }
  ~Shared() { Release(); }

  const T& get() const noexcept { return rep_ ? rep_->value : Default(); }
  const T& operator*() const noexcept { return get(); }
  const T* operator->() const noexcept { return &get(); }

  // Whether both handles point at one value (then they are equal without comparing).
  bool SharesWith(const Shared& other) const noexcept { return rep_ == other.rep_; }

 private:
  struct Rep {
    explicit Rep(T v) : value(std::move(v)) {}
    std::atomic<std::size_t> refs{1};
    T value;
  };
  static const T& Default() noexcept {
    static const T value{};
    return value;
  }
  void Release() noexcept {
    if (rep_ && rep_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete rep_;
  }

  Rep* rep_ = nullptr;
};

// Names and values (a source's categorical columns, Sample::tags), sorted by
// name, immutable and shared by copies: one pointer to one heap block that
// holds the strings back to back (a std::map of two short strings takes
// about 300 bytes in five blocks). Reads as a map of string_views.
class Tags {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;  // name, value
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Tags::value_type;
    using difference_type = std::ptrdiff_t;
    using pointer = const value_type*;
    using reference = value_type;
    const_iterator() = default;
    value_type operator*() const;
    const_iterator& operator++();
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const const_iterator& o) const { return at_ == o.at_; }
    bool operator!=(const const_iterator& o) const { return at_ != o.at_; }

   private:
    friend class Tags;
    explicit const_iterator(const char* at) : at_(at) {}
    const char* at_ = nullptr;  // the length of the next name
  };

  Tags() noexcept = default;
  Tags(const std::map<std::string, std::string>& tags);  // NOLINT(google-explicit-constructor)
  Tags(std::initializer_list<std::pair<const std::string, std::string>> tags)
      : Tags(std::map<std::string, std::string>(tags)) {}
  Tags(const Tags& other) noexcept;
  Tags(Tags&& other) noexcept : rep_(std::exchange(other.rep_, nullptr)) {}
  Tags& operator=(Tags other) noexcept {
    std::swap(rep_, other.rep_);
    return *this;
  }
  ~Tags();

  const_iterator begin() const;
  const_iterator end() const;
  bool empty() const noexcept { return rep_ == nullptr; }
  std::size_t size() const noexcept;
  // The value of `name`, or nothing.
  std::optional<std::string_view> Find(std::string_view name) const;
  std::size_t count(std::string_view name) const { return Find(name) ? 1 : 0; }
  // The value of `name`; throws std::out_of_range when there is none.
  std::string_view at(std::string_view name) const;
  // These tags with `name` set to `value`.
  Tags With(std::string_view name, std::string_view value) const;
  std::map<std::string, std::string> ToMap() const;

  friend bool operator==(const Tags& a, const Tags& b);
  friend bool operator!=(const Tags& a, const Tags& b) { return !(a == b); }

 private:
  struct Rep;
  Rep* rep_ = nullptr;  // null: no tags
};

// The value a CompactOptional<T> reserves for "empty". For double, a NaN
// whose payload arithmetic does not produce (any NaN stored is stored as the
// standard quiet NaN, so a NaN read from a log stays a value); for int, the
// smallest int, which no count or epoch takes (storing it throws
// std::invalid_argument).
template <class T>
struct CompactOptionalTraits;

template <>
struct CompactOptionalTraits<double> {
  static constexpr std::uint64_t kEmptyBits = 0x7ff4'f175'bee0'0001;  // a signalling NaN
  static double Empty() noexcept {
    double v;
    std::memcpy(&v, &kEmptyBits, sizeof v);
    return v;
  }
  static bool IsEmpty(double v) noexcept {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits == kEmptyBits;
  }
  static double Stored(double v) noexcept {
    return IsEmpty(v) ? std::numeric_limits<double>::quiet_NaN() : v;
  }
};

template <>
struct CompactOptionalTraits<int> {
  static int Empty() noexcept { return std::numeric_limits<int>::min(); }
  static bool IsEmpty(int v) noexcept { return v == Empty(); }
  static int Stored(int v) {
    if (IsEmpty(v))
      throw std::invalid_argument("the smallest int is reserved for an empty optional");
    return v;
  }
};

// std::optional<T> in sizeof(T) bytes (std::optional<double> takes 16): the
// same interface (has_value, *, value, value_or, reset, == nullopt, == a T),
// converting to and from std::optional<T>. Empty is one reserved value of T
// (CompactOptionalTraits).
template <class T>
class CompactOptional {
  using Traits = CompactOptionalTraits<T>;

 public:
  using value_type = T;

  CompactOptional() noexcept = default;
  CompactOptional(std::nullopt_t) noexcept {}                  // NOLINT
  CompactOptional(T value) : value_(Traits::Stored(value)) {}  // NOLINT
  CompactOptional(const std::optional<T>& value)               // NOLINT
      : value_(value ? Traits::Stored(*value) : Traits::Empty()) {}
  operator std::optional<T>() const {  // NOLINT(google-explicit-constructor)
    return has_value() ? std::optional<T>(value_) : std::nullopt;
  }

  bool has_value() const noexcept { return !Traits::IsEmpty(value_); }
  explicit operator bool() const noexcept { return has_value(); }
  // Unchecked, as std::optional's: only on a value.
  const T& operator*() const noexcept { return value_; }
  T& operator*() noexcept { return value_; }
  const T& value() const {
    if (!has_value()) throw std::bad_optional_access();
    return value_;
  }
  T value_or(T fallback) const noexcept { return has_value() ? value_ : fallback; }
  void reset() noexcept { value_ = Traits::Empty(); }
  T& emplace(T value) {
    value_ = Traits::Stored(value);
    return value_;
  }

  // As std::optional's: empty equals empty and nullopt, a value equals an equal value.
  friend bool operator==(const CompactOptional& a, const CompactOptional& b) noexcept {
    return a.has_value() == b.has_value() && (!a.has_value() || a.value_ == b.value_);
  }
  friend bool operator==(const CompactOptional& a, std::nullopt_t) noexcept { return !a; }
  friend bool operator==(std::nullopt_t, const CompactOptional& b) noexcept { return !b; }
  friend bool operator==(const CompactOptional& a, const T& b) noexcept {
    return a && a.value_ == b;
  }
  friend bool operator==(const T& a, const CompactOptional& b) noexcept { return b == a; }
  friend bool operator!=(const CompactOptional& a, const CompactOptional& b) noexcept {
    return !(a == b);
  }
  friend bool operator!=(const CompactOptional& a, std::nullopt_t) noexcept { return bool(a); }
  friend bool operator!=(std::nullopt_t, const CompactOptional& b) noexcept { return bool(b); }
  friend bool operator!=(const CompactOptional& a, const T& b) noexcept { return !(a == b); }
  friend bool operator!=(const T& a, const CompactOptional& b) noexcept { return !(b == a); }

 private:
  T value_ = Traits::Empty();
};

}  // namespace fitspeed

#endif  // FITSPEED_CORE_COMPACT_H_
