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

std::string ValueSeq::to_string() const {
  if (size_ == 0) return histogram_ ? "hist()" : "~";
  std::string out;
  auto sep = [&] {
    if (!out.empty() && out.back() != '(') out += ' ';
  };
  if (histogram_) {
    out = "hist(";
    for (const Span& r : spans_) {
      sep();
      out += format_value(vals_[r.off]) + ":" + std::to_string(r.reps);
    }
    out += ")";
    return out;
  }
  for (const Run& r : runs()) {
    if (r.reps == 1) {
      for (int64_t v : r.pattern) {
        sep();
        out += format_value(v);
      }
    } else if (r.pattern.size() == 1) {
      sep();
      out += format_value(r.pattern[0]) + "*" + std::to_string(r.reps);
    } else {
      sep();
      out += "(";
      for (std::size_t i = 0; i < r.pattern.size(); ++i) {
        if (i) out += ' ';
        out += format_value(r.pattern[i]);
      }
      out += ")*" + std::to_string(r.reps);
    }
  }
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
  int64_t value() {
    std::size_t start = pos;
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

ValueSeq ValueSeq::from_runs(std::vector<Run> runs, bool histogram) {
  ValueSeq seq;
  seq.histogram_ = histogram;
  if (runs.empty()) {
    seq.simple_ = !histogram;  // as parse() leaves `~` and `hist()`
    return seq;
  }
  seq.simple_ = false;
  auto add = [&](uint64_t n) {
    if (n > std::numeric_limits<uint64_t>::max() - seq.size_)
      throw ValueSeqParseError("value sequence: more than 2^64-1 values");
    seq.size_ += n;
  };
  for (Run& r : runs) {
    if (r.pattern.empty() || r.reps == 0)
      throw ValueSeqParseError("value sequence: a run needs values and a repeat count");
    if (histogram) {
      if (r.pattern.size() != 1)
        throw ValueSeqParseError("value sequence: a histogram run holds one value");
      if (!seq.vals_.empty() && r.pattern[0] <= seq.vals_.back())
        throw ValueSeqParseError("value sequence: histogram values must ascend");
      add(r.reps);
      seq.add_span(r.pattern.data(), 1, r.reps);
      continue;
    }
    if (r.reps > std::numeric_limits<uint64_t>::max() / r.pattern.size())
      throw ValueSeqParseError("value sequence: more than 2^64-1 values");
    add(r.reps * r.pattern.size());
    if (r.reps == 1 && !seq.spans_.empty() && seq.spans_.back().reps == 1) {
      seq.vals_.insert(seq.vals_.end(), r.pattern.begin(), r.pattern.end());
      seq.spans_.back().len += r.pattern.size();
    } else {
      seq.add_span(r.pattern.data(), r.pattern.size(), r.reps);
    }
  }
  if (!histogram && seq.spans_.size() == 1 && seq.spans_[0].len == 1) {
    ValueSeq simple;
    simple.single_value_ = seq.vals_[0];
    simple.size_ = seq.size_;
    return simple;
  }
  return seq;
}

}  // namespace tracefold
