#include "tracefold/event.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace tracefold {

// ---------------------------------------------------------------- operations

namespace {
// Tables below are built once and never destroyed: the recorder still needs
// them in exit handlers that run after static destructors.
const std::vector<std::string>& op_names() {
  static const auto* names = new std::vector<std::string>{
#define TF_OP(n, ...) #n,
#include "ops.def"
#undef TF_OP
  };
  return *names;
}

const std::unordered_map<std::string_view, OpId>& op_index() {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string_view, OpId>;
    const auto& names = op_names();
    for (std::size_t i = 0; i < names.size(); ++i) m->emplace(names[i], static_cast<OpId>(i));
    return m;
  }();
  return *index;
}
}  // namespace

std::optional<OpId> OpTable::find(std::string_view name) {
  auto it = op_index().find(name);
  if (it == op_index().end()) return std::nullopt;
  return it->second;
}

const std::string& OpTable::name(OpId id) {
  return op_names().at(id);
}
std::size_t OpTable::size() {
  return op_names().size();
}

bool OpTable::makes_request(OpId id) {
  static const std::vector<bool> table = [] {
    std::vector<bool> t(op_names().size(), false);
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::string& n = op_names()[i];
      const bool nonblocking = n.rfind("MPI_I", 0) == 0 && n != "MPI_Init" &&
                               n != "MPI_Init_thread" && n != "MPI_Iprobe" && n != "MPI_Improbe" &&
                               n.rfind("MPI_Intercomm_", 0) != 0;
      const bool persistent =
          n.size() > 9 && n.rfind("MPI_", 0) == 0 && n.compare(n.size() - 5, 5, "_init") == 0;
      t[i] = nonblocking || persistent || n == "MPI_Start" || n == "MPI_Startall";
    }
    return t;
  }();
  return id < table.size() && table[id];
}

// -------------------------------------------------------------------- fields

namespace {
struct FieldInfo {
  std::string name;
  FieldKind kind;
  FieldRole role;
};

// Entries are written once, before their id is published, and never move, so
// lookups by id need no lock (they run on the recorder's hot path).
struct FieldRegistry {
  static constexpr std::size_t kCapacity = 4096;
  std::mutex mu;
  std::array<FieldInfo, kCapacity> fields;
  std::atomic<std::size_t> count{0};
  std::unordered_map<std::string, FieldId> index;
  std::size_t known = 0;

  FieldRegistry() {
    const std::vector<FieldInfo> builtin = {
        {"peer", FieldKind::kScalar, FieldRole::kPeer},
        {"src", FieldKind::kScalar, FieldRole::kPeer},
        {"rpeer", FieldKind::kScalar, FieldRole::kPeer},
        {"srcs", FieldKind::kList, FieldRole::kPeer},
        {"tag", FieldKind::kScalar, FieldRole::kPlain},
        {"mtag", FieldKind::kScalar, FieldRole::kPlain},
        {"mtags", FieldKind::kList, FieldRole::kPlain},
        {"count", FieldKind::kScalar, FieldRole::kPlain},
        {"dtype", FieldKind::kScalar, FieldRole::kPlain},
        {"dsize", FieldKind::kScalar, FieldRole::kPlain},
        {"rcount", FieldKind::kScalar, FieldRole::kPlain},
        {"rdtype", FieldKind::kScalar, FieldRole::kPlain},
        {"rdsize", FieldKind::kScalar, FieldRole::kPlain},
        {"comm", FieldKind::kScalar, FieldRole::kPlain},
        {"root", FieldKind::kScalar, FieldRole::kPlain},
        {"redop", FieldKind::kScalar, FieldRole::kPlain},
        {"newcomm", FieldKind::kScalar, FieldRole::kPlain},
        {"color", FieldKind::kScalar, FieldRole::kPlain},
        {"key", FieldKind::kScalar, FieldRole::kPlain},
        {"req", FieldKind::kScalar, FieldRole::kPlain},
        {"flag", FieldKind::kScalar, FieldRole::kPlain},
        {"links", FieldKind::kList, FieldRole::kPlain},
        {"counts", FieldKind::kList, FieldRole::kPlain},
        {"displs", FieldKind::kList, FieldRole::kPlain},
        {"rcounts", FieldKind::kList, FieldRole::kPlain},
        {"rdispls", FieldKind::kList, FieldRole::kPlain},
    };
    for (const auto& f : builtin) add(f);
    known = count.load();
    // FieldTable::kind answers for these without the registry.
    for (std::size_t i = 0; i < known; ++i)
      if (i >= FieldTable::kBuiltinFields ||
          (((FieldTable::kBuiltinListMask >> i) & 1u) != 0) != (fields[i].kind == FieldKind::kList))
        throw std::logic_error("FieldRegistry: kBuiltinListMask does not match the built-ins");
  }
  FieldId add(const FieldInfo& f) {
    std::size_t n = count.load(std::memory_order_relaxed);
    if (n >= kCapacity) throw std::invalid_argument("too many distinct field names");
    fields[n] = f;
    index.emplace(f.name, static_cast<FieldId>(n));
    count.store(n + 1, std::memory_order_release);
    return static_cast<FieldId>(n);
  }
  const FieldInfo& at(FieldId id) const {
    if (id >= count.load(std::memory_order_acquire)) throw std::out_of_range("unknown field id");
    return fields[id];
  }
};

FieldRegistry& registry() {
  static auto* r = new FieldRegistry;
  return *r;
}

bool valid_field_name(std::string_view n) {
  if (n.empty() || n.size() > 64 || !(n[0] >= 'a' && n[0] <= 'z')) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}
}  // namespace

FieldId FieldTable::peer() {
  return 0;
}
FieldId FieldTable::src() {
  return 1;
}
FieldId FieldTable::comm() {
  static const FieldId id = *find("comm");
  return id;
}
FieldId FieldTable::links() {
  static const FieldId id = *find("links");
  return id;
}

const std::vector<FieldId>& required_fields(OpId op) {
  static const auto* table = [] {
    const std::vector<std::string_view> columns = {
#define TF_OP(n, family, mode, variant, required) #required,
#include "ops.def"
#undef TF_OP
    };
    auto* t = new std::vector<std::vector<FieldId>>;
    for (std::string_view c : columns) {
      std::vector<FieldId>& fields = t->emplace_back();
      while (!c.empty() && c != "-") {
        const auto sp = c.find(' ');
        fields.push_back(FieldTable::find(c.substr(0, sp)).value());
        c = sp == std::string_view::npos ? std::string_view() : c.substr(sp + 1);
      }
    }
    return t;
  }();
  static const std::vector<FieldId> none;
  return op < table->size() ? (*table)[op] : none;
}

FieldId FieldTable::intern(std::string_view name, FieldKind kind) {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.index.find(std::string(name));
  if (it != r.index.end()) {
    if (r.fields[it->second].kind != kind)
      throw std::invalid_argument("field '" + std::string(name) + "' is a " +
                                  (kind == FieldKind::kList ? "scalar" : "list") +
                                  " field, not a " +
                                  (kind == FieldKind::kList ? "list" : "scalar"));
    return it->second;
  }
  if (!valid_field_name(name))
    throw std::invalid_argument("invalid field name '" + std::string(name) +
                                "' (expected [a-z][a-z0-9_]*)");
  return r.add(FieldInfo{std::string(name), kind, FieldRole::kPlain});
}

std::optional<FieldId> FieldTable::find(std::string_view name) {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.index.find(std::string(name));
  if (it == r.index.end()) return std::nullopt;
  return it->second;
}

const std::string& FieldTable::name(FieldId id) {
  return registry().at(id).name;
}

FieldKind FieldTable::registered_kind(FieldId id) {
  return registry().at(id).kind;
}

// Only the built-in `peer`, `src`, `rpeer` and `srcs` are peer-like (ids
// 0..3); answering without the registry keeps this off the recorder's hot
// path.
bool FieldTable::print_before(FieldId a, FieldId b) {
  auto& r = registry();
  const bool ka = a < r.known, kb = b < r.known;
  if (ka != kb) return ka;
  if (ka) return a < b;
  return r.at(a).name < r.at(b).name;
}

// ------------------------------------------------------------------ call sites

SiteId SiteTable::intern(const CallSite& site) {
  auto it = index_.find(site);
  if (it != index_.end()) return it->second;
  auto id = static_cast<SiteId>(sites_.size());
  sites_.push_back(site);
  index_.emplace(site, id);
  return id;
}

std::string SiteTable::format(const CallSite& site) {
  if (site.frames.empty()) return "-";
  std::string out;
  char buf[32];
  for (const Frame& f : site.frames) {
    if (!out.empty()) out += ' ';
    out += f.module;
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f.offset, 16);
    (void)ec;
    out += "+0x";
    out.append(buf, end);
  }
  return out;
}

bool SiteTable::parse(std::string_view text, CallSite& out) {
  out.frames.clear();
  if (text == "-") return true;
  std::size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    if (pos >= text.size()) break;
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view tok = text.substr(pos, end - pos);
    std::size_t plus = tok.rfind("+0x");
    if (plus == std::string_view::npos || plus == 0 || plus + 3 >= tok.size()) return false;
    Frame f;
    f.module = std::string(tok.substr(0, plus));
    auto hex = tok.substr(plus + 3);
    auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), f.offset, 16);
    if (ec != std::errc() || p != hex.data() + hex.size()) return false;
    out.frames.push_back(std::move(f));
    pos = end;
  }
  return !out.frames.empty();
}

// ---------------------------------------------------------------------- events

void Event::set(FieldId f, int64_t v) {
  // The recorder sets fields mostly in id order: append without a search.
  if (fields.empty() || fields.back().field < f) {
    fields.push_back(FieldValue{f, v, {}});
    return;
  }
  auto it = std::lower_bound(fields.begin(), fields.end(), f,
                             [](const FieldValue& fv, FieldId id) { return fv.field < id; });
  if (it != fields.end() && it->field == f) {
    it->scalar = v;
    return;
  }
  fields.insert(it, FieldValue{f, v, {}});
}

void Event::set_list(FieldId f, std::vector<int64_t> v) {
  auto it = std::lower_bound(fields.begin(), fields.end(), f,
                             [](const FieldValue& fv, FieldId id) { return fv.field < id; });
  if (it != fields.end() && it->field == f) {
    it->list = std::move(v);
    return;
  }
  fields.insert(it, FieldValue{f, kAbsent, std::move(v)});
}

bool Event::same_call(const Event& other) const {
  return op == other.op && site == other.site && fields == other.fields;
}

std::pair<int32_t, int32_t> comm_position(int64_t comm, int32_t world_rank,
                                          const CommTable& comms) {
  const CommGroup* g = comms.group_of(comm, world_rank);
  if (!g)
    throw std::invalid_argument("communicator " + format_value(comm) + " is not defined for rank " +
                                std::to_string(world_rank));
  return {comms.rank_in(comm, world_rank), static_cast<int32_t>(g->members.size())};
}

namespace {
// Comm of an event for peer encoding: its `comm` field, or the world.
std::pair<int32_t, int32_t> me_and_size(const Event& ev, int32_t world_rank,
                                        const CommTable& comms) {
  int64_t comm = ev.get(FieldTable::comm());
  if (comm == kAbsent) comm = CommTable::kWorld;
  return comm_position(comm, world_rank, comms);
}

// Calls f on every rank value of the event's peer-like fields: a scalar, or
// each element of a list (`srcs`); sentinels (any, null, undef) are skipped.
template <class F>
void for_peer_values(Event& ev, F&& f) {
  for (FieldValue& fv : ev.fields) {
    if (FieldTable::role(fv.field) != FieldRole::kPeer) continue;
    if (fv.scalar != kAbsent && !is_sentinel(fv.scalar)) f(fv.field, fv.scalar);
    for (int64_t& v : fv.list)
      if (!is_sentinel(v)) f(fv.field, v);
  }
}
}  // namespace

bool has_relative_fields(const Event& ev) {
  return has_relative_fields(std::span<const FieldValue>(ev.fields));
}

bool has_relative_fields(std::span<const FieldValue> fields) {
  for (const FieldValue& fv : fields) {
    if (FieldTable::role(fv.field) != FieldRole::kPeer) continue;
    if (!is_sentinel(fv.scalar)) return true;
    for (int64_t v : fv.list)
      if (!is_sentinel(v)) return true;
  }
  return false;
}

void encode_relative(Event& ev, int32_t world_rank, const CommTable& comms) {
  if (!has_relative_fields(ev)) return;
  auto [me, size] = me_and_size(ev, world_rank, comms);
  encode_relative(ev, me, size);
}

namespace {
[[noreturn, gnu::cold, gnu::noinline]] void outside_comm(FieldId field, int64_t v, int32_t size) {
  throw std::invalid_argument("field " + FieldTable::name(field) + "=" + std::to_string(v) +
                              " is outside the communicator (size " + std::to_string(size) + ")");
}
}  // namespace

void encode_relative(Event& ev, int32_t me, int32_t size) {
  encode_relative(std::span<FieldValue>(ev.fields), me, size);
}

void encode_relative(std::span<FieldValue> fields, int32_t me, int32_t size) {
  // The recorder's path, once per recorded call: a plain loop (no callback)
  // and, with me in [0, size) (always, for a member), v - me in (-size,
  // size), so one addition instead of two divisions per peer.
  const bool member = me >= 0 && me < size;
  auto encode = [&](FieldId field, int64_t& v) {
    if (v < 0 || v >= size) outside_comm(field, v, size);
    if (member) {
      v -= me;
      if (v < 0) v += size;
    } else {
      v = ((v - me) % size + size) % size;
    }
  };
  for (FieldValue& fv : fields) {
    if (FieldTable::role(fv.field) != FieldRole::kPeer) continue;
    if (fv.scalar != kAbsent && !is_sentinel(fv.scalar)) encode(fv.field, fv.scalar);
    for (int64_t& v : fv.list)
      if (!is_sentinel(v)) encode(fv.field, v);
  }
}

void decode_relative(Event& ev, int32_t world_rank, const CommTable& comms) {
  if (!has_relative_fields(ev)) return;
  auto [me, size] = me_and_size(ev, world_rank, comms);
  decode_relative(ev, me, size);
}

void decode_relative(Event& ev, int32_t me, int32_t size) {
  for_peer_values(ev, [&](FieldId, int64_t& v) { v = (v + me) % size; });
}

}  // namespace tracefold
