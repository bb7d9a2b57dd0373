#include <cstdio>

#include "export_util.hpp"

namespace tracefold {

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\t':
        o += "\\t";
        break;
      case '\r':
        o += "\\r";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o + "\"";
}

std::string json_value(int64_t v) {
  if (is_sentinel(v)) return json_string(format_value(v));
  return std::to_string(v);
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string time_text(double ns) {
  char buf[48];
  if (ns < 1e3)
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (ns < 1e6)
    std::snprintf(buf, sizeof buf, "%.3g us", ns / 1e3);
  else if (ns < 1e9)
    std::snprintf(buf, sizeof buf, "%.3g ms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3g s", ns / 1e9);
  return buf;
}

std::string bytes_text(uint64_t b) {
  char buf[48];
  if (b < 1024)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  else if (b < 1024ull * 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else if (b < 1024ull * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1024.0 * 1024 * 1024));
  return buf;
}

std::string human_ranks(const Ranklist& ranks) {
  // Long regular runs are shortened to their first two members and the
  // last: a reader sees the pattern and the end, not ten thousand numbers.
  std::string out;
  auto block = [](int32_t lo, int32_t span) {
    return span == 0 ? std::to_string(lo)
                     : std::to_string(lo) + "\u2013" + std::to_string(lo + span);
  };
  for (const Ranklist::Run& r : ranks.runs()) {
    if (!out.empty()) out += ",";
    if (r.count <= 3) {
      for (int32_t i = 0; i < r.count; ++i)
        out += (i ? "," : "") + block(r.lo + i * r.stride, r.span);
    } else {
      out += block(r.lo, r.span) + "," + block(r.lo + r.stride, r.span) + ",\u2026," +
             block(r.lo + (r.count - 1) * r.stride, r.span);
    }
  }
  return out;
}

std::string human_ranks(const std::vector<int32_t>& ranks) {
  return human_ranks(Ranklist::from_ranks(ranks));
}

}  // namespace tracefold
