// The truth file of `tracefold patterns --truth`: blocks of `KEYWORD VALUE`
// lines, one block per expected pattern or singleton (docs/patterns.md).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <istream>
#include <set>
#include <stdexcept>
#include <string>

#include "tracefold/patterns_truth.hpp"

namespace tracefold::patterns {

TruthError::TruthError(const std::string& file, std::size_t line, const std::string& message)
    : std::runtime_error(file + ":" + std::to_string(line) + ": " + message),
      file_(file),
      line_(line) {}

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

bool parse_count(const std::string& text, std::size_t& out) {
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end && !text.empty();
}

int32_t parse_rank(const std::string& text) {
  int32_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || text.empty() || v < 0)
    throw std::invalid_argument("'" + text + "' is not a rank");
  return v;
}

// Short events separated by blanks, as a sorted set.
std::vector<std::string> event_set(const std::string& text) {
  std::set<std::string> s;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b = text.find_first_not_of(" \t", i);
    if (b == std::string::npos) break;
    auto e = text.find_first_of(" \t", b);
    if (e == std::string::npos) e = text.size();
    s.insert(text.substr(b, e - b));
    i = e;
  }
  return {s.begin(), s.end()};
}

class Reader {
 public:
  explicit Reader(std::string file) { truth_.file = std::move(file); }

  void line(std::size_t n, const std::string& raw) {
    line_ = n;
    const std::string text = trim(raw);
    if (text.empty() || text[0] == '#') return;
    const auto sp = text.find_first_of(" \t");
    const std::string key = text.substr(0, sp);
    const std::string value = sp == std::string::npos ? "" : trim(text.substr(sp));
    if (key == "pattern" || key == "singleton") return start(key, value);
    if (kind_.empty()) fail("'" + key + "' before the first 'pattern' or 'singleton' line");
    if (!seen_.insert(key).second && key != "param" && key != "role")
      fail("'" + key + "' given twice for " + kind_ + " '" + id_ + "'");
    if (value.empty()) fail("'" + key + "' without a value");
    if (key == "context") {
      set_context(value);
    } else if (key == "ranks") {
      set_ranks(ranks_of(value));
    } else if (kind_ == "pattern") {
      pattern_line(key, value);
    } else {
      singleton_line(key, value);
    }
  }

  Truth finish() {
    close();
    return std::move(truth_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw TruthError(truth_.file, line_, message);
  }

  Ranklist ranks_of(const std::string& value) const {
    try {
      return parse_rank_ranges(value);
    } catch (const std::invalid_argument& ex) {
      fail(std::string("bad ranks: ") + ex.what());
    }
  }

  void start(const std::string& kind, const std::string& id) {
    close();
    if (id.empty() || id.find_first_of(" \t") != std::string::npos)
      fail("'" + kind + "' needs one word, its id");
    if (!ids_.insert(id).second) fail("id '" + id + "' used twice");
    kind_ = kind;
    id_ = id;
    start_ = line_;
    seen_.clear();
    if (kind == "pattern") {
      truth_.patterns.emplace_back();
      truth_.patterns.back().id = id;
      truth_.patterns.back().line = line_;
      truth_.patterns.back().context = "*";
    } else {
      truth_.singletons.emplace_back();
      truth_.singletons.back().id = id;
      truth_.singletons.back().line = line_;
      truth_.singletons.back().context = "*";
    }
  }

  // A block must say whose ranks it is about, and a pattern its shape.
  void close() {
    if (kind_.empty()) return;
    const std::size_t at = line_;
    line_ = start_;
    if (!seen_.count("ranks")) fail(kind_ + " '" + id_ + "' has no 'ranks' line");
    if (kind_ == "pattern" && !seen_.count("shape"))
      fail("pattern '" + id_ + "' has no 'shape' line");
    line_ = at;
    kind_.clear();
  }

  void set_context(const std::string& v) {
    if (kind_ == "pattern")
      truth_.patterns.back().context = v;
    else
      truth_.singletons.back().context = v;
  }

  void set_ranks(Ranklist r) {
    if (kind_ == "pattern")
      truth_.patterns.back().ranks = std::move(r);
    else
      truth_.singletons.back().ranks = std::move(r);
  }

  void pattern_line(const std::string& key, const std::string& value) {
    TruthPattern& p = truth_.patterns.back();
    if (key == "occurrences") {
      std::size_t n = 0;
      if (!parse_count(value, n)) fail("occurrences '" + value + "' is not a count");
      p.occurrences = n;
    } else if (key == "shape") {
      p.shape = value;
    } else if (key == "param") {
      const auto eq = value.find('=');
      if (eq == std::string::npos) fail("'param' needs NAME = VALUE");
      std::string name = trim(value.substr(0, eq)), v = trim(value.substr(eq + 1));
      if (name.empty() || v.empty()) fail("'param' needs NAME = VALUE");
      for (const auto& [k, _] : p.params)
        if (k == name) fail("parameter '" + name + "' given twice");
      p.params.emplace_back(std::move(name), std::move(v));
    } else if (key == "role") {
      const auto colon = value.find(':');
      if (colon == std::string::npos) fail("'role' needs RANKS: EVENT ...");
      Role r{ranks_of(trim(value.substr(0, colon))), event_set(value.substr(colon + 1))};
      if (r.events.empty()) fail("'role' lists no events");
      p.roles.push_back(std::move(r));
    } else {
      fail("unknown keyword '" + key + "' in pattern '" + id_ +
           "' (context, ranks, occurrences, shape, param, role)");
    }
  }

  void singleton_line(const std::string& key, const std::string& value) {
    TruthSingleton& s = truth_.singletons.back();
    if (key == "event") {
      if (value.find_first_of(" \t") != std::string::npos) fail("'event' takes one event");
      s.event = value;
    } else if (key == "count") {
      std::size_t n = 0;
      if (!parse_count(value, n)) fail("count '" + value + "' is not a count");
      s.count = n;
    } else {
      fail("unknown keyword '" + key + "' in singleton '" + id_ +
           "' (context, ranks, event, count)");
    }
  }

  Truth truth_;
  std::size_t line_ = 0, start_ = 0;
  std::string kind_, id_;
  std::set<std::string> seen_, ids_;
};

}  // namespace

Ranklist parse_rank_ranges(const std::string& text) {
  // Ranges are united as intervals: `0-1000000` costs no more than `0-1`.
  Ranklist ranks;
  std::string t = text;
  // The listing prints ranges with an en dash.
  for (std::size_t p; (p = t.find("\u2013")) != std::string::npos;) t.replace(p, 3, "-");
  std::size_t i = 0;
  while (true) {
    const auto comma = t.find(',', i);
    const std::string item = trim(t.substr(i, comma == std::string::npos ? comma : comma - i));
    if (item.empty()) throw std::invalid_argument("empty item in '" + text + "'");
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      ranks.insert(parse_rank(item));
    } else {
      const int32_t lo = parse_rank(trim(item.substr(0, dash)));
      const int32_t hi = parse_rank(trim(item.substr(dash + 1)));
      if (hi < lo) throw std::invalid_argument("range '" + item + "' runs backwards");
      if (hi == INT32_MAX) throw std::invalid_argument("range '" + item + "' is too large");
      ranks.unite(Ranklist::range(lo, hi - lo + 1));
    }
    if (comma == std::string::npos) break;
    i = comma + 1;
  }
  return ranks;
}

Truth parse_truth(std::istream& in, const std::string& file) {
  Reader reader(file);
  std::string raw;
  std::size_t n = 0;
  while (std::getline(in, raw)) reader.line(++n, raw);
  return reader.finish();
}

Truth load_truth(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw TruthError(path, 0, "cannot be read");
  return parse_truth(in, path);
}

}  // namespace tracefold::patterns
