#include <filesystem>
#include <fstream>
#include <map>

#include "block_file.hpp"
#include "tracefold/event_log.hpp"
#include "tracefold/validate.hpp"

namespace tracefold {

using block_file::put;

namespace {

constexpr char kMagic[4] = {'T', 'F', 'E', 'V'};
constexpr uint8_t kVersion = 1;
// Events recorded, events dropped.
constexpr uint64_t kTrailerBytes = 2 * 8;
constexpr uint64_t kModule = 0, kSite = 1, kComm = 2, kField = 3, kEvent = 4, kAgain = 5;

constexpr block_file::Format kBlocks{
    .raise = [](const std::string& message) { throw EventLogError(message); },
    .max_raw_bytes = kMaxEventLogBlockBytes,
    .min_record_bytes = 2,
    .records = "records",
    .cut_frame_ends = true,
    .varint_truncated = "truncated record in a block",
    .varint_too_long = "corrupt varint in a block"};

// Of an event's operation, site and fields: where it goes in the writer's
// table of recent events.
uint64_t event_hash(const Event& ev) {
  uint64_t h = (uint64_t{ev.op} << 32 | ev.site) * 0x9E3779B97F4A7C15ull;
  for (const FieldValue& f : ev.fields) {
    h = (h ^ f.field ^ static_cast<uint64_t>(f.scalar)) * 0x9E3779B97F4A7C15ull;
    for (int64_t v : f.list) h = (h ^ static_cast<uint64_t>(v)) * 0x9E3779B97F4A7C15ull;
  }
  return h ^ (h >> 29);
}

}  // namespace

void EventLogWriter::open(const std::string& path, int32_t rank, int32_t world_size,
                          uint64_t max_bytes, std::size_t block_bytes) {
  const std::vector<uint8_t> header = block_file::header(kMagic, kVersion, rank, world_size);
  const std::string error =
      block_file::Writer(*this).open(path, header, max_bytes, kTrailerBytes, block_bytes);
  if (!error.empty()) throw EventLogError(error);
}

void EventLogWriter::end_record() {
  block_file::Writer out(*this);
  if (out.end_record()) flush();
}

void EventLogWriter::add_module(const Module& m) {
  block_file::Writer out(*this);
  if (!out.accepting()) return;
  out.put_module(kModule, m);
  end_record();
}

void EventLogWriter::add_site(const CallSite& site) {
  block_file::Writer out(*this);
  if (!out.accepting()) return;
  const std::string text = SiteTable::format(site);
  out.put_varint(kSite);
  out.put_varint(text.size());
  out.put_bytes(text);
  end_record();
}

void EventLogWriter::add_comm(int64_t id, const CommGroup& group) {
  block_file::Writer out(*this);
  if (!out.accepting()) return;
  out.put_varint(kComm);
  out.put_varint(block_file::zigzag(id));
  out.put_varint(group.members.size());
  for (int32_t m : group.members) out.put_varint(static_cast<uint64_t>(m));
  end_record();
}

void EventLogWriter::add_event(const Event& ev) {
  block_file::Writer out(*this);
  if (!out.accepting()) {
    ++dropped_;
    return;
  }
  // An iterative program repeats its calls exactly: a call equal to one in
  // the table of recent events is written as the distance back to it,
  // which costs less than encoding (and compressing) its fields again.
  Recent& recent = recent_[event_hash(ev) & (kRecent - 1)];
  if (recent.index != UINT64_MAX && recent.ev.op == ev.op && recent.ev.site == ev.site &&
      recent.ev.fields == ev.fields) {
    out.put_varint(kAgain);
    out.put_varint(events_ - recent.index);
    recent.index = events_++;
    ++recorded_;
    ++block_events_;
    end_record();
    return;
  }
  recent.ev.op = ev.op;
  recent.ev.site = ev.site;
  recent.ev.fields = ev.fields;
  recent.index = events_++;
  for (const FieldValue& f : ev.fields) {
    if (f.field >= field_ids_.size()) field_ids_.resize(std::size_t(f.field) + 1, -1);
    if (field_ids_[f.field] >= 0) continue;
    field_ids_[f.field] = static_cast<int32_t>(fields_++);
    const std::string& name = FieldTable::name(f.field);
    out.put_varint(kField);
    out.put_byte(FieldTable::kind(f.field) == FieldKind::kList ? 1 : 0);
    out.put_varint(name.size());
    out.put_bytes(name);
    // Counted, but no flush between a declaration and its event: the
    // event's end_record flushes a full block.
    (void)out.end_record();
  }
  out.put_varint(kEvent);
  out.put_varint(ev.op);
  out.put_varint(ev.site);
  out.put_varint(ev.fields.size());
  for (const FieldValue& f : ev.fields) {
    out.put_varint(static_cast<uint64_t>(field_ids_[f.field]));
    if (FieldTable::kind(f.field) == FieldKind::kList) {
      out.put_varint(f.list.size());
      for (int64_t v : f.list) out.put_varint(block_file::zigzag(v));
    } else {
      out.put_varint(block_file::zigzag(f.scalar));
    }
  }
  ++recorded_;
  ++block_events_;
  end_record();
}

void EventLogWriter::flush() {
  block_file::Writer out(*this);
  if (out.flush()) {
    recorded_ -= block_events_;
    dropped_ += block_events_;
  }
  if (out.block_records() == 0) block_events_ = 0;
}

void EventLogWriter::close() {
  if (!is_open()) return;
  flush();
  std::vector<uint8_t> trailer;
  put<uint64_t>(trailer, recorded_);
  put<uint64_t>(trailer, dropped_);
  block_file::Writer(*this).close(trailer);
}

std::string event_log_path(const std::string& dir, int32_t rank) {
  return dir + "/events-" + std::to_string(rank) + ".tfe";
}

RankEventLog read_event_log_file(const std::string& path) {
  return parse_event_log(block_file::read(path, kBlocks), path);
}

RankEventLog read_event_log_header(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw EventLogError(path + ": cannot open");
  // Magic, version, rank, world size.
  std::vector<uint8_t> head(13);
  file.read(reinterpret_cast<char*>(head.data()), std::streamsize(head.size()));
  head.resize(std::size_t(file.gcount()));
  block_file::Reader in(head, path, kBlocks);
  const uint8_t version = in.header(kMagic, "not a tracefold event log (bad magic)");
  if (version != kVersion)
    in.fail("event log version " + std::to_string(version) + " (this tracefold reads 1)");
  RankEventLog f;
  in.rank_and_world(f.rank, f.world_size);
  return f;
}

RankEventLog parse_event_log(std::span<const uint8_t> data, const std::string& path) {
  block_file::Reader in(data, path, kBlocks);
  const uint8_t version = in.header(kMagic, "not a tracefold event log (bad magic)");
  if (version != kVersion)
    in.fail("event log version " + std::to_string(version) + " (this tracefold reads 1)");
  RankEventLog f;
  in.rank_and_world(f.rank, f.world_size);
  f.comms.define_world(f.world_size);
  std::vector<std::pair<FieldId, FieldKind>> fields;
  // 2 GiB of values: far beyond a rank's recording (lists are per-call
  // request and count vectors), small enough to refuse before the host is out
  // of memory.
  constexpr uint64_t kMaxListValues = uint64_t{1} << 28;
  uint64_t list_values = 0;
  for (;;) {
    const block_file::Reader::Next next = in.next();
    if (next == block_file::Reader::Next::kEnd) break;
    if (next == block_file::Reader::Next::kTrailer) {
      uint64_t recorded = 0;
      in.get(recorded, "trailer");
      in.get(f.dropped, "trailer");
      f.has_trailer = true;
      if (recorded != f.events.size())
        in.fail("trailer says " + std::to_string(recorded) + " events, the blocks hold " +
                std::to_string(f.events.size()));
      if (!in.at_end()) in.fail(in.at(), "bytes after the trailer");
      break;
    }
    const uint32_t records = in.block_records();
    for (uint32_t r = 0; r < records; ++r) {
      const std::string where = "record " + std::to_string(r) + " of the block: ";
      // A repeat record is two bytes and copies its event, lists included:
      // a damaged file could ask for more memory than any recording holds.
      auto count_list_values = [&](const Event& ev) {
        for (const FieldValue& fv : ev.fields) list_values += fv.list.size();
        if (list_values > kMaxListValues)
          in.fail_block(where + "the events so far hold more than " +
                        std::to_string(kMaxListValues) + " list values (a damaged file?)");
      };
      auto text = [&](const char* what) {
        const uint64_t len = in.varint();
        if (len > in.left()) in.fail_block(where + what + " longer than the block");
        return std::string_view(reinterpret_cast<const char*>(in.take(len)), len);
      };
      const uint64_t kind = in.varint();
      if (kind == kModule) {
        std::string error;
        std::optional<Module> m = parse_module_line(text("module line"), error);
        if (!m) in.fail_block(where + "bad module line: " + error);
        f.modules.push_back(std::move(*m));
      } else if (kind == kSite) {
        CallSite site;
        if (!SiteTable::parse(text("site"), site)) in.fail_block(where + "bad call site");
        if (const std::string bad = invalid_site(site); !bad.empty()) in.fail_block(where + bad);
        f.sites.push_back(std::move(site));
      } else if (kind == kComm) {
        const int64_t id = block_file::unzigzag(in.varint());
        const uint64_t n = in.varint();
        if (n > in.left()) in.fail_block(where + "communicator longer than the block");
        std::vector<int32_t> members;
        for (uint64_t i = 0; i < n; ++i) {
          const uint64_t m = in.varint();
          if (m >= uint64_t(f.world_size))
            in.fail_block(where + "communicator " + std::to_string(id) + " has member " +
                          std::to_string(m) + ", the world has " + std::to_string(f.world_size) +
                          " ranks");
          members.push_back(static_cast<int32_t>(m));
        }
        try {
          f.comms.define(id, CommGroup{members});
        } catch (const std::exception& e) {
          in.fail_block(where + e.what());
        }
      } else if (kind == kField) {
        if (in.left() == 0) in.fail_block(where + "truncated field");
        const uint8_t list = *in.take(1);
        const std::string name(text("field name"));
        try {
          const FieldKind k = list ? FieldKind::kList : FieldKind::kScalar;
          fields.emplace_back(FieldTable::intern(name, k), k);
        } catch (const std::exception& e) {
          in.fail_block(where + "field '" + name + "': " + e.what());
        }
      } else if (kind == kEvent) {
        Event ev;
        const uint64_t op = in.varint();
        if (op >= OpTable::size())
          in.fail_block(where + "operation " + std::to_string(op) + ", not one of the " +
                        std::to_string(OpTable::size()) + " known");
        ev.op = static_cast<OpId>(op);
        const uint64_t site = in.varint();
        if (site >= f.sites.size())
          in.fail_block(where + "event refers to unknown site " + std::to_string(site));
        ev.site = static_cast<SiteId>(site);
        const uint64_t n = in.varint();
        if (n > fields.size()) in.fail_block(where + "event with more fields than declared");
        for (uint64_t i = 0; i < n; ++i) {
          const uint64_t id = in.varint();
          if (id >= fields.size())
            in.fail_block(where + "event refers to unknown field " + std::to_string(id));
          const auto [field, k] = fields[id];
          if (k == FieldKind::kList) {
            const uint64_t len = in.varint();
            if (len > in.left()) in.fail_block(where + "list longer than the block");
            std::vector<int64_t> values(len);
            for (int64_t& v : values) v = block_file::unzigzag(in.varint());
            ev.set_list(field, std::move(values));
          } else {
            ev.set(field, block_file::unzigzag(in.varint()));
          }
        }
        if (const std::string missing = missing_required_field(ev); !missing.empty())
          in.fail_block(where + missing);
        count_list_values(ev);
        f.events.push_back(std::move(ev));
      } else if (kind == kAgain) {
        const uint64_t back = in.varint();
        if (back == 0 || back > f.events.size())
          in.fail_block(where + "repeats the event " + std::to_string(back) + " back, of " +
                        std::to_string(f.events.size()));
        count_list_values(f.events[f.events.size() - back]);
        f.events.push_back(f.events[f.events.size() - back]);
      } else {
        in.fail_block(where + "unknown record kind " + std::to_string(kind));
      }
    }
    in.end_block();
  }
  return f;
}

bool is_unfolded_run(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::exists(event_log_path(dir, 0), ec);
}

UnfoldedRun read_unfolded_run(const std::string& dir) {
  UnfoldedRun run;
  Trace& t = run.tables;
  const RankEventLog first = read_event_log_file(event_log_path(dir, 0));
  t.world_size = first.world_size;
  t.comms.define_world(t.world_size);
  run.events.resize(std::size_t(t.world_size));
  run.dropped.assign(std::size_t(t.world_size), 0);
  std::vector<int32_t> missing;
  for (int32_t r = 0; r < t.world_size; ++r) {
    const std::string path = event_log_path(dir, r);
    if (r > 0 && !std::filesystem::exists(path)) {
      missing.push_back(r);
      continue;
    }
    RankEventLog log = r == 0 ? first : read_event_log_file(path);
    if (log.rank != r || log.world_size != t.world_size)
      throw EventLogError(path + ": event log of rank " + std::to_string(log.rank) + " of " +
                          std::to_string(log.world_size) + " ranks, rank 0's has " +
                          std::to_string(t.world_size) + " ranks");
    if (!log.has_trailer) run.cut.push_back(r);
    run.dropped[std::size_t(r)] = log.dropped;
    for (Module& m : log.modules) t.symtab.modules.emplace(m.name, std::move(m));
    std::vector<SiteId> site_ids;
    site_ids.reserve(log.sites.size());
    for (const CallSite& s : log.sites) site_ids.push_back(t.sites.intern(s));
    for (Event& ev : log.events) ev.site = site_ids[ev.site];
    try {
      t.comms.merge(log.comms);
    } catch (const std::exception& e) {
      throw EventLogError(path + ": " + e.what());
    }
    run.events[std::size_t(r)] = std::move(log.events);
  }
  if (!missing.empty()) {
    std::string list;
    for (int32_t r : missing) list += (list.empty() ? "" : ", ") + std::to_string(r);
    throw EventLogError(dir + ": no event log (events-R.tfe) for ranks " + list + " of " +
                        std::to_string(t.world_size));
  }
  return run;
}

}  // namespace tracefold
