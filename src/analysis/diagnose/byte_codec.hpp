// Flat byte encoding of what the analysis ranks exchange (digests and
// reductions): trivially copyable values in the host's own layout, since
// every analysis rank runs the same binary on the same kind of machine.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "tracefold/diagnose.hpp"

namespace tracefold::diagnose_detail {

class ByteWriter {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put(const std::string& s) {
    put(uint64_t(s.size()));
    out += s;
  }
  template <class T>
  void put_all(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(uint64_t(v.size()));
    out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string out;
};

/// Reads what ByteWriter wrote; `what` names the input in the error a
/// short input gives ("a rank's digest").
class ByteReader {
 public:
  ByteReader(const std::string& s, const char* what) : in_(s), what_(what) {}
  void raw(void* to, std::size_t n) {
    if (in_.size() - at_ < n) cut_short();
    std::memcpy(to, in_.data() + at_, n);
    at_ += n;
  }
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    raw(&v, sizeof v);
    return v;
  }
  std::string str() {
    const uint64_t n = get<uint64_t>();
    if (in_.size() - at_ < n) cut_short();
    std::string s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  template <class T>
  void get_all(std::vector<T>& v) {
    const uint64_t n = get<uint64_t>();
    if ((in_.size() - at_) / sizeof(T) < n) cut_short();
    v.resize(n);
    raw(v.data(), n * sizeof(T));
  }
  bool done() const { return at_ == in_.size(); }

 private:
  [[noreturn]] void cut_short() const {
    throw DiagnoseError(std::string("tracefold-diagnose: ") + what_ + " is cut short");
  }
  const std::string& in_;
  const char* what_;
  std::size_t at_ = 0;
};

}  // namespace tracefold::diagnose_detail
