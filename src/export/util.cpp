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

}  // namespace tracefold
