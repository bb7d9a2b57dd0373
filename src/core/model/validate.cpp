#include "tracefold/validate.hpp"

namespace tracefold {

std::string missing_required_field(const Node& node) {
  for (const FieldId f : required_fields(node.key.op)) {
    const Elastic* values = node.field(f);
    if (!values)
      return OpTable::name(node.key.op) + " needs field '" + FieldTable::name(f) +
             "', which is missing";
    // The entries are disjoint (the readers check): they cover the node's
    // ranks if and only if they hold as many ranks.
    std::size_t covered = 0;
    for (const ElasticEntry& e : values->entries()) covered += e.ranks.size();
    if (covered != node.ranks.size())
      return OpTable::name(node.key.op) + " needs field '" + FieldTable::name(f) +
             "' for each of its " + std::to_string(node.ranks.size()) + " ranks, it has " +
             std::to_string(covered);
  }
  return {};
}

std::string missing_required_field(const Event& event) {
  for (const FieldId f : required_fields(event.op))
    if (!event.find(f))
      return OpTable::name(event.op) + " needs field '" + FieldTable::name(f) +
             "', which is missing";
  return {};
}

bool valid_module_name(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c <= 0x20 || c == 0x7f) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    // UTF-8: a lead byte, then 1-3 continuation bytes; no overlong forms,
    // surrogates or code points above U+10FFFF.
    std::size_t len = 0;
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return false;
    i += len;
  }
  return true;
}

std::string invalid_site(const CallSite& site) {
  for (const Frame& f : site.frames)
    if (!valid_module_name(f.module)) {
      std::string shown;
      for (const char ch : f.module.substr(0, 60)) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x21 && c < 0x7f) {
          shown += ch;
        } else {
          static const char* const kHex = "0123456789abcdef";
          shown += "\\x";
          shown += kHex[c >> 4];
          shown += kHex[c & 15];
        }
      }
      return "module name '" + shown + "' holds a space, a control byte or invalid UTF-8";
    }
  return {};
}

namespace {

std::optional<std::size_t> any_init_thread_node(const Trace& trace) {
  for (std::size_t i = 0; i < trace.nodes.size(); ++i)
    if (OpTable::name(trace.nodes[i].key.op) == "MPI_Init_thread") return i;
  return std::nullopt;
}

// The value of `name` on `node` for its lowest rank that has one.
std::optional<int64_t> lowest_value(const Node& node, const char* name) {
  const auto id = FieldTable::find(name);
  const Elastic* values = id ? node.field(*id) : nullptr;
  if (!values || values->empty()) return std::nullopt;
  const ElasticEntry* lowest = nullptr;
  for (const ElasticEntry& e : values->entries())
    if (!e.ranks.empty() && e.values.size() > 0 &&
        (!lowest || e.ranks.first() < lowest->ranks.first()))
      lowest = &e;
  if (!lowest) return std::nullopt;
  return lowest->values.to_vector().front();
}

}  // namespace

std::optional<std::size_t> init_thread_node(const Trace& trace) {
  const auto node = any_init_thread_node(trace);
  if (node && recorded_thread_level(trace)) return std::nullopt;
  return node;
}

std::optional<ThreadLevel> recorded_thread_level(const Trace& trace) {
  const auto node = any_init_thread_node(trace);
  if (!node) return std::nullopt;
  const auto required = lowest_value(trace.nodes[*node], "required");
  const auto provided = lowest_value(trace.nodes[*node], "provided");
  if (!required || !provided) return std::nullopt;
  return ThreadLevel{static_cast<int>(*required), static_cast<int>(*provided)};
}

std::string thread_level_name(int level) {
  static constexpr const char* kNames[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                           "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
  if (level >= 0 && level < 4) return kNames[level];
  return std::to_string(level);
}

std::string describe_thread_level(const ThreadLevel& level) {
  return "required " + thread_level_name(level.required) + ", provided " +
         thread_level_name(level.provided);
}

std::optional<std::size_t> other_thread_node(const Trace& trace) {
  if (trace.threads <= 1) return std::nullopt;
  for (std::size_t i = 0; i < trace.nodes.size(); ++i)
    if (!trace.nodes[i].ranks.empty() && trace.nodes[i].ranks.last() >= trace.world_size) return i;
  return std::nullopt;
}

}  // namespace tracefold
