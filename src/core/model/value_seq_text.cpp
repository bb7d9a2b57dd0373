// The text of value sequences (ValueSeq::to_string, parse, from_runs) and of
// single values (format_value, parse_value); the folding is in value_seq.cpp.
#include <charconv>
#include <limits>
#include <string>

#include "tracefold/value_seq.hpp"

namespace tracefold {

std::string format_value(int64_t v) {
  switch (v) {
    case kAbsent:
      return "_";
    case kAny:
      return "any";
    case kNull:
      return "null";
    case kUndefined:
      return "undef";
    default:
      return std::to_string(v);
  }
}

bool parse_value(std::string_view text, int64_t& out) {
  // Numbers first: the names are rare.
  if (!text.empty() && (text[0] == '-' || (text[0] >= '0' && text[0] <= '9'))) {
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && ptr == text.data() + text.size() && !is_sentinel(out);
  }
  if (text == "_") {
    out = kAbsent;
    return true;
  }
  if (text == "any") {
    out = kAny;
    return true;
  }
  if (text == "null") {
    out = kNull;
    return true;
  }
  if (text == "undef") {
    out = kUndefined;
    return true;
  }
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || ptr != text.data() + text.size()) return false;
  return !is_sentinel(out);
}

namespace {
// format_value and std::to_string appended in place: a trace's text holds
// every value of every rank, and a string per value cost more than the rest.
void put_digits(std::string& out, uint64_t n, bool negative) {
  char buf[24];
  char* const end = buf + sizeof buf;
  char* p = end;
  do {
    *--p = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  if (negative) *--p = '-';
  out.append(p, static_cast<std::size_t>(end - p));
}
void put_value(std::string& out, int64_t v) {
  if (is_sentinel(v)) {
    out += format_value(v);
    return;
  }
  put_digits(out, v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), v < 0);
}
void put_count(std::string& out, uint64_t n) {
  put_digits(out, n, false);
}
}  // namespace

std::string ValueSeq::to_string() const {
  if (size_ == 0) return histogram_ ? "hist()" : "~";
  std::string out;
  if (histogram_) {
    out = "hist(";
    for (const Span& r : spans_) {
      if (out.back() != '(') out += ' ';
      put_value(out, vals_[r.off]);
      out += ':';
      put_count(out, r.reps);
    }
    out += ")";
    return out;
  }
  // The runs in place, as runs() gives them, without a copy of each.
  auto put_run = [&](const int64_t* pattern, std::size_t len, uint64_t reps) {
    if (!out.empty()) out += ' ';
    if (reps == 1) {
      for (std::size_t i = 0; i < len; ++i) {
        if (i) out += ' ';
        put_value(out, pattern[i]);
      }
      return;
    }
    if (len > 1) out += '(';
    for (std::size_t i = 0; i < len; ++i) {
      if (i) out += ' ';
      put_value(out, pattern[i]);
    }
    out += len > 1 ? ")*" : "*";
    put_count(out, reps);
  };
  if (simple_) {
    put_run(&single_value_, 1, size_);
    return out;
  }
  for (const Span& s : spans_) put_run(pattern_of(s), s.len, s.reps);
  if (partial_) put_run(pattern_of(spans_.back()), partial_, 1);
  return out;
}

namespace {
struct SeqLexer {
  std::string_view text;
  std::size_t pos = 0;
  void skip() {
    while (pos < text.size() && text[pos] == ' ') ++pos;
  }
  bool at_end() {
    skip();
    return pos >= text.size();
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ValueSeqParseError("value sequence '" + std::string(text) + "': expected " + what +
                             " at offset " + std::to_string(pos));
  }
  std::string_view token() {
    skip();
    std::size_t start = pos;
    while (pos < text.size() && text[pos] != ' ' && text[pos] != '(' && text[pos] != ')' &&
           text[pos] != '*' && text[pos] != ':')
      ++pos;
    return text.substr(start, pos - start);
  }
  static bool ends_token(char c) {
    return c == ' ' || c == '(' || c == ')' || c == '*' || c == ':';
  }
  int64_t value() {
    std::size_t start = pos;
    // A number read in place, the common case: what token() and
    // parse_value would take, and nothing else (else they say why not).
    // Up to 18 digits cannot overflow; longer ones take the general way.
    skip();
    std::size_t p = pos;
    const bool negative = p < text.size() && text[p] == '-';
    if (negative) ++p;
    const std::size_t digits = p;
    uint64_t u = 0;
    while (p < text.size() && p - digits < 18 && text[p] >= '0' && text[p] <= '9')
      u = u * 10 + static_cast<uint64_t>(text[p++] - '0');
    if (p > digits && (p == text.size() || ends_token(text[p]))) {
      pos = p;
      return negative ? -static_cast<int64_t>(u) : static_cast<int64_t>(u);
    }
    pos = start;
    auto t = token();
    int64_t v;
    if (!parse_value(t, v)) {
      pos = start;
      fail("a value (integer, _, any, null or undef)");
    }
    return v;
  }
  uint64_t count() {
    skip();
    std::size_t start = pos;
    auto t = token();
    uint64_t n = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
    if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || n == 0) {
      pos = start;
      fail("a positive repeat count");
    }
    return n;
  }
};
}  // namespace

ValueSeq ValueSeq::parse(std::string_view text) {
  SeqLexer lx{text};
  ValueSeq seq;
  seq.simple_ = false;
  if (lx.at_end()) lx.fail("a value sequence");
  if (text.substr(lx.pos) == "~") return ValueSeq{};
  auto add_literal = [&](int64_t v) {
    if (seq.spans_.empty() || seq.spans_.back().reps != 1)
      seq.spans_.push_back(Span{seq.vals_.size(), 0, 1});
    seq.vals_.push_back(v);
    ++seq.spans_.back().len;
    ++seq.size_;
  };
  if (text.substr(lx.pos, 5) == "hist(") {
    lx.pos += 5;
    seq.histogram_ = true;
    int64_t prev = 0;
    while (!lx.at_end() && text[lx.pos] != ')') {
      int64_t v = lx.value();
      if (!seq.spans_.empty() && v <= prev) lx.fail("histogram values in ascending order");
      if (lx.pos >= text.size() || text[lx.pos] != ':') lx.fail("':'");
      ++lx.pos;
      uint64_t c = lx.count();
      seq.add_span(&v, 1, c);
      seq.size_ += c;
      prev = v;
    }
    if (lx.at_end()) lx.fail("')'");
    ++lx.pos;
    if (!lx.at_end()) lx.fail("end of histogram");
    return seq;
  }
  while (!lx.at_end()) {
    if (text[lx.pos] == '(') {
      ++lx.pos;
      std::vector<int64_t> pattern;
      while (!lx.at_end() && text[lx.pos] != ')') pattern.push_back(lx.value());
      if (lx.at_end()) lx.fail("')'");
      ++lx.pos;
      if (pattern.empty()) lx.fail("a non-empty pattern");
      if (lx.pos >= text.size() || text[lx.pos] != '*') lx.fail("'*' after ')'");
      ++lx.pos;
      uint64_t n = lx.count();
      if (n < 2) lx.fail("a repeat count of at least 2");
      seq.size_ += n * pattern.size();
      seq.add_span(pattern.data(), pattern.size(), n);
      continue;
    }
    int64_t v = lx.value();
    if (lx.pos < text.size() && text[lx.pos] == '*') {
      ++lx.pos;
      uint64_t n = lx.count();
      if (n < 2) lx.fail("a repeat count of at least 2");
      seq.add_span(&v, 1, n);
      seq.size_ += n;
    } else {
      add_literal(v);
    }
  }
  // Canonical in-memory form for a single constant run.
  if (seq.spans_.size() == 1 && seq.spans_[0].len == 1) {
    ValueSeq simple;
    simple.single_value_ = seq.vals_[0];
    simple.size_ = seq.size_;
    return simple;
  }
  return seq;
}

ValueSeq::RunBuilder::RunBuilder(bool histogram, std::size_t runs) {
  seq_.histogram_ = histogram;
  seq_.simple_ = false;
  // Every run holds a value at least: room for that many too, instead of
  // the values' buffer doubling from one as they come.
  if (runs > 1) {
    seq_.spans_.reserve(runs);
    seq_.vals_.reserve(runs);
  }
}

void ValueSeq::RunBuilder::add(const int64_t* pattern, std::size_t len, uint64_t reps) {
  ValueSeq& seq = seq_;
  auto add_size = [&](uint64_t n) {
    if (n > std::numeric_limits<uint64_t>::max() - seq.size_)
      throw ValueSeqParseError("value sequence: more than 2^64-1 values");
    seq.size_ += n;
  };
  if (len == 0 || reps == 0)
    throw ValueSeqParseError("value sequence: a run needs values and a repeat count");
  if (seq.histogram_) {
    if (len != 1) throw ValueSeqParseError("value sequence: a histogram run holds one value");
    if (!seq.vals_.empty() && pattern[0] <= seq.vals_.back())
      throw ValueSeqParseError("value sequence: histogram values must ascend");
    add_size(reps);
    seq.add_span(pattern, 1, reps);
    return;
  }
  if (reps > std::numeric_limits<uint64_t>::max() / len)
    throw ValueSeqParseError("value sequence: more than 2^64-1 values");
  add_size(reps * len);
  if (reps == 1 && !seq.spans_.empty() && seq.spans_.back().reps == 1) {
    seq.vals_.insert(seq.vals_.end(), pattern, pattern + len);
    seq.spans_.back().len += len;
  } else {
    seq.add_span(pattern, len, reps);
  }
}

ValueSeq ValueSeq::RunBuilder::finish() && {
  ValueSeq& seq = seq_;
  if (seq.spans_.empty()) {
    seq.simple_ = !seq.histogram_;  // as parse() leaves `~` and `hist()`
    return std::move(seq);
  }
  if (!seq.histogram_ && seq.spans_.size() == 1 && seq.spans_[0].len == 1) {
    ValueSeq simple;
    simple.single_value_ = seq.vals_[0];
    simple.size_ = seq.size_;
    return simple;
  }
  return std::move(seq);
}

ValueSeq ValueSeq::from_runs(std::vector<Run> runs, bool histogram) {
  RunBuilder b(histogram);
  for (const Run& r : runs) b.add(r.pattern.data(), r.pattern.size(), r.reps);
  return std::move(b).finish();
}

}  // namespace tracefold
