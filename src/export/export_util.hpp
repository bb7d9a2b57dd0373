// Helpers shared by the exporters (private to src/export).
#pragma once

#include <cstdint>
#include <string>

#include "tracefold/analysis_basic.hpp"
#include "tracefold/event.hpp"
#include "tracefold/value_seq.hpp"

namespace tracefold {

/// A JSON string literal (quotes included).
std::string json_string(const std::string& s);
/// A field value as JSON: a number, or the sentinel's name as a string.
std::string json_value(int64_t v);
/// Text with &, <, >, " escaped for XML/HTML.
std::string xml_escape(const std::string& s);
/// `MPI_Isend [site 3] 2048 B`: operation, call site, bytes.
std::string slice_name(const Event& ev);
/// 1234567 -> "1.23 ms" (ns input).
std::string time_text(double ns);
/// 123456 -> "120.6 KiB".
std::string bytes_text(uint64_t b);

}  // namespace tracefold
