// Folding of whole logs into one trace, and merging of folded traces: the
// ids a trace's sites use (contexts, modules) given by content, and stored
// in the trace (fold.hpp's MemTables) so that a merge can rename another
// trace's ids the way folding all the logs at once would have.
#include <algorithm>
#include <charconv>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

#include "fold.hpp"
#include "fold_codec.hpp"
#include "raw_format.h"

namespace tracefold::memtrace {

namespace {

// Every process numbers its contexts in the order it first takes each
// call path (MPI_Init takes thousands, in an order of its own on every
// rank) and its modules in the order it first touches their statics, so
// the same path or file has different ids in different logs. An id space
// is a raw log or a folded trace. The first keeps its ids, so that a
// trace of one log expands to that log's very records; a later space's
// context takes the id its call path already has, else the next free id,
// given in order of first use: folding logs 0-7 at once and merging the
// folds of 0-3 and 4-7 then give the same ids. Modules go by file name,
// all of a space's at its start, in its table's order.
class IdSpaces {
 public:
  using PathOf = std::function<std::string(std::uint32_t)>;

  // renumber: the first space's contexts too take ids in order of first
  // use (a canonical fold), rather than keeping the process's own.
  explicit IdSpaces(bool renumber = false) : renumber_(renumber) {}

  // Starts the next space. first_contexts, first_modules: the highest
  // context and module ids of the space's own first log (the stored
  // MemTables values for a trace, which keeps only the modules it names).
  void begin(const std::string& name, PathOf path_of, const std::vector<Module>& modules,
             std::uint32_t first_contexts, std::uint32_t first_modules) {
    shifts_.clear();
    mod_shift_.clear();
    if (spaces_ == 1 && renumber_) base_ = next_ - 1;  // the first space's count
    if (spaces_++ == 0) {
      base_ = renumber_ ? 0 : first_contexts;
      modules_ = modules;
      first_modules_ = std::max<std::uint32_t>(
          first_modules, modules.empty() ? 0 : static_cast<std::uint32_t>(modules.size() - 1));
      // Modules new to the trace are numbered after the first log's own.
      modules_.resize(std::size_t{first_modules_} + 1);
      programs_ = programs(modules);
      mod_to_.resize(modules_.size());
      for (std::uint32_t i = 0; i < mod_to_.size(); i++) mod_to_[i] = modules_[i].id;
      used_.assign(modules_.size(), 0);
      code_.clear();
      for (const Module& m : modules_)
        if (m.id != 0 && m.has_text()) code_.push_back({m.text_lo, m.text_hi, 0, m.id});
      std::sort(code_.begin(), code_.end());
    } else {
      if (spaces_ == 2 && !renumber_) next_ = std::max(base_, top_) + 1;
      add_modules(name, modules);
    }
    path_of_ = std::move(path_of);
    to_.clear();
  }

  void remap(MemRef* refs, std::size_t n) {
    const bool moved = !shifts_.empty();
    // Consecutive references mostly share their context: the last one's id
    // is kept at hand (in locals, which stores to refs cannot alias).
    std::uint32_t from = 0, to = 0;
    for (std::size_t i = 0; i < n; i++) {
      MemRef& m = refs[i];
      if (moved) shift(m);
      if (m.context != from) {
        from = m.context;
        to = context(from);
      }
      m.context = to;
      if (m.kind == AddrKind::Heap)
        m.region = context(m.region);
      else if (m.kind == AddrKind::Static && m.region < mod_to_.size() && mod_to_[m.region])
        m.region = mod_to_[m.region];
    }
  }

  // Keeps in the trace's table the modules its sites name: a static's
  // module, the module whose code holds the instruction (once per site, not
  // per reference).
  void mark_sites(const SiteTable& sites) {
    for (SiteId id = 0; id < sites.size(); id++) {
      const auto k = fold_detail::decode_site(sites.at(id));
      if (!k) continue;
      if (k->kind == AddrKind::Static && k->region < used_.size()) used_[k->region] = 1;
      if (const Code* c = find_code(code_, k->iaddr)) used_[c->id] = 1;
    }
  }

  MemTables tables(std::vector<std::uint32_t> log_streams) const {
    MemTables t;
    const std::uint32_t base = renumber_ && spaces_ == 1 ? next_ - 1 : base_;
    // Only the modules the trace names: a log lists every file with code.
    t.modules = modules_;
    for (Module& m : t.modules)
      if (m.id >= used_.size() || !used_[m.id]) m = Module{};
    t.first_log_contexts = base;
    t.first_log_modules = first_modules_;
    t.log_streams = std::move(log_streams);
    for (const auto& [id, path] : paths_) t.contexts.emplace(id, path);
    return t;
  }

 private:
  // A module whose file is no shared object: the program (or a plugin
  // loaded by path, which is the program's too).
  static bool is_program(const std::string& file) {
    return file.find(".so", file.find_last_of('/') + 1) == std::string::npos;
  }
  static std::vector<std::string> programs(const std::vector<Module>& modules) {
    std::vector<std::string> out;
    for (const Module& m : modules)
      if (m.id != 0 && is_program(m.name)) out.push_back(m.name);
    std::sort(out.begin(), out.end());
    return out;
  }

  void add_modules(const std::string& name, const std::vector<Module>& modules) {
    // Logs that do not touch the program's statics say nothing either way.
    const auto mine = programs(modules);
    if (!programs_.empty() && !mine.empty() && mine != programs_)
      throw std::runtime_error(name + ": traced " + mine[0] + ", the first traced " + programs_[0] +
                               ": traces of different programs are not merged");
    if (programs_.empty()) programs_ = mine;
    mod_to_.assign(modules.size(), 0);
    mod_shift_.assign(modules.size(), 0);
    for (const Module& m : modules) {
      if (m.id == 0 || m.id >= modules.size()) continue;
      auto it = std::find_if(modules_.begin() + 1, modules_.end(),
                             [&m](const Module& x) { return x.id != 0 && x.name == m.name; });
      if (it == modules_.end()) {
        Module copy = m;
        copy.id = static_cast<std::uint32_t>(modules_.size());
        modules_.push_back(copy);
        used_.push_back(0);
        mod_to_[m.id] = copy.id;
        if (copy.has_text()) {
          code_.push_back({copy.text_lo, copy.text_hi, 0, copy.id});
          std::sort(code_.begin(), code_.end());
        }
        continue;
      }
      mod_to_[m.id] = it->id;
      if (it->base == m.base) continue;
      // The file lies elsewhere in this space: its code addresses move to
      // where the trace has it, which needs the extent of its code.
      if (!(m.has_text() && it->has_text()) || m.text_hi - m.text_lo != it->text_hi - it->text_lo)
        throw std::runtime_error(name + ": module " + m.name + " was loaded at " + hex(m.base) +
                                 ", at " + hex(it->base) +
                                 " in the first, and the extent of its code is not known in "
                                 "both: traces of different builds or of logs without code "
                                 "extents are not merged");
      const std::uint64_t d = it->base - m.base;
      mod_shift_[m.id] = d;
      shifts_.push_back({m.text_lo, m.text_hi, d, it->id});
    }
    std::sort(shifts_.begin(), shifts_.end());
  }

  // A code range: [lo, hi) of module `id`, `shift` added to move it.
  struct Code {
    std::uint64_t lo, hi, shift;
    std::uint32_t id;
    bool operator<(const Code& o) const { return lo < o.lo; }
  };
  static const Code* find_code(const std::vector<Code>& v, std::uint64_t a) {
    auto it = std::upper_bound(v.begin(), v.end(), a,
                               [](std::uint64_t x, const Code& c) { return x < c.lo; });
    if (it == v.begin()) return nullptr;
    --it;
    return a < it->hi ? &*it : nullptr;
  }

  // Moves a reference of a module loaded elsewhere to the trace's layout:
  // its instruction, and a static's data address (the normalised address
  // stays as it is).
  void shift(MemRef& m) {
    if (const Code* c = find_code(shifts_, m.iaddr)) m.iaddr += c->shift;
    if (m.kind == AddrKind::Static && m.region < mod_shift_.size()) m.daddr += mod_shift_[m.region];
  }

  // A call path with module frames in this space's ids (`ID+OFFSET`, hex
  // offset from the module's base) in the trace's, its modules kept.
  std::string rename_frames(const std::string& path) {
    if (path.find('+') == std::string::npos) return path;
    std::string out;
    std::string_view rest = path;
    while (true) {
      const std::size_t gt = std::min(rest.find('>'), rest.size());
      std::string_view f = rest.substr(0, gt);
      const std::size_t plus = f.find('+');
      std::uint32_t id = 0;
      if (plus != std::string_view::npos &&
          std::from_chars(f.data(), f.data() + plus, id).ptr == f.data() + plus &&
          id < mod_to_.size() && mod_to_[id] != 0) {
        const std::uint32_t to = mod_to_[id];
        used_[to] = 1;
        out += std::to_string(to);
        out += f.substr(plus);
      } else {
        out += f;
      }
      if (gt == rest.size()) break;
      out += '>';
      rest.remove_prefix(gt + 1);
    }
    return out;
  }

  static std::string hex(std::uint64_t v) {
    char buf[24] = "0x";
    auto r = std::to_chars(buf + 2, buf + sizeof buf, v, 16);
    return std::string(buf, r.ptr);
  }

  std::uint32_t context(std::uint32_t c) {
    if (c == 0) return 0;
    if (c < to_.size() && to_[c]) return to_[c] - 1;
    const std::uint32_t id = assign(c);
    // Ids are dense per space except the overflow id: a vector suffices.
    if (c < (1u << 26)) {
      if (c >= to_.size()) to_.resize(std::max<std::size_t>(c + 1, 2 * to_.size()), 0);
      to_[c] = id + 1;
    }
    return id;
  }

  std::uint32_t assign(std::uint32_t c) {
    std::string path = rename_frames(path_of_(c));
    std::uint32_t id;
    if (spaces_ == 1 && !renumber_) {
      id = c;
      if (c != TFM_CTX_OVERFLOW) top_ = std::max(top_, c);
      ids_.try_emplace(path, id);
    } else {
      const auto [it, fresh] = ids_.try_emplace(path, next_);
      if (fresh) next_++;
      id = it->second;
    }
    paths_.try_emplace(id, std::move(path));
    return id;
  }

  bool renumber_ = false;
  std::size_t spaces_ = 0;
  std::uint32_t base_ = 0, top_ = 0, next_ = 1, first_modules_ = 0;
  PathOf path_of_;
  std::vector<std::uint32_t> to_;  // current space's id -> trace id + 1 (0: not yet)
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::unordered_map<std::uint32_t, std::string> paths_;
  std::vector<Module> modules_;           // by trace id
  std::vector<std::uint32_t> mod_to_;     // current space's module id -> trace id
  std::vector<std::uint64_t> mod_shift_;  // current space's module id -> shift of its statics
  std::vector<Code> shifts_;              // current space's moved code, by lo
  std::vector<Code> code_;                // the trace's modules' code, by lo
  std::vector<char> used_;                // by trace id: named by the trace
  std::vector<std::string> programs_;     // see add_modules
};

// A log's code by address: which module a call site lies in.
struct CodeIndex {
  std::vector<const Module*> by_lo;
  explicit CodeIndex(const std::vector<Module>& modules) {
    for (const Module& m : modules)
      if (m.id != 0 && m.has_text()) by_lo.push_back(&m);
    std::sort(by_lo.begin(), by_lo.end(),
              [](const Module* a, const Module* b) { return a->text_lo < b->text_lo; });
  }
  const Module* find(std::uint64_t a) const {
    auto it = std::upper_bound(by_lo.begin(), by_lo.end(), a,
                               [](std::uint64_t x, const Module* m) { return x < m->text_lo; });
    if (it == by_lo.begin()) return nullptr;
    --it;
    return a < (*it)->text_hi ? *it : nullptr;
  }
};

// A call path as text: a call site in a module as `ID+OFFSET` (the
// module's id, the hex offset from its base: the same wherever the file
// was loaded), one outside every module as its hex address.
std::string path_text(const std::vector<std::uint64_t>& path, const CodeIndex& code) {
  std::string out;
  char buf[20];
  for (std::uint64_t a : path) {
    if (!out.empty()) out += '>';
    if (const Module* m = code.find(a)) {
      out += std::to_string(m->id);
      out += '+';
      a -= m->base;
    }
    auto r = std::to_chars(buf, buf + sizeof buf, a, 16);
    out.append(buf, r.ptr);
  }
  return out;
}

std::string unknown_context(std::uint32_t c) {
  return c == TFM_CTX_OVERFLOW ? "overflow" : "?" + std::to_string(c);
}

// One id space's streams to fold.
struct Space {
  std::string name;
  std::uint32_t streams = 0;
  std::function<std::unique_ptr<RefSource>(std::uint32_t)> open;
  IdSpaces::PathOf path_of;
  std::vector<Module> modules;
  std::uint32_t first_contexts = 0, first_modules = 0;
  std::vector<std::uint32_t> log_streams;
};

class RawSource : public RefSource {
 public:
  explicit RawSource(const std::filesystem::path& file) : in_(file) {}
  std::size_t next_batch(MemRef* out, std::size_t n) override { return in_.next_batch(out, n); }

 private:
  RawStreamReader in_;
};

// The data addresses of a canonical fold (MemFoldOptions::canonical), one
// space at a time. Heap blocks keep their places relative to the space's
// first heap block, moved to kCanonicalHeapBase with their offsets within
// a page: the allocator lays blocks out alike in two runs, but where its
// arena starts moves with whatever was mapped before it.
class CanonicalAddresses {
 public:
  void begin_space() { heap_known_ = false; }
  void apply(MemRef* refs, std::size_t n) {
    for (std::size_t i = 0; i < n; i++) {
      MemRef& m = refs[i];
      switch (m.kind) {
        case AddrKind::Static:
          m.daddr = canonical_static(m.region, m.offset);
          break;
        case AddrKind::Stack:
          m.daddr = canonical_stack(m.owner, m.offset);
          break;
        case AddrKind::Heap:
          if (!heap_known_) {
            heap_known_ = true;
            heap_origin_ =
                static_cast<std::uint64_t>(fold_detail::dbase_of(m)) & ~std::uint64_t{4095};
          }
          m.daddr = m.daddr - heap_origin_ + kCanonicalHeapBase;
          break;
        case AddrKind::Other:
          break;
      }
    }
  }

 private:
  bool heap_known_ = false;
  std::uint64_t heap_origin_ = 0;
};

// Each space is let go of once its streams are folded: a raw log's context
// table (170,000 contexts of MPI_Init) need not outlive its streams.
Trace fold_spaces(std::vector<Space> spaces, const MemFoldOptions& options, MemFoldStats* stats) {
  std::vector<std::uint32_t> logs;
  std::uint32_t streams = 0;
  for (const Space& s : spaces) {
    streams += s.streams;
    logs.insert(logs.end(), s.log_streams.begin(), s.log_streams.end());
  }
  // Streams per log, when every log has as many (else the origins are
  // fitted along the stream number alone).
  std::uint32_t per_log = logs.size() > 1 ? logs[0] : 0;
  for (std::uint32_t n : logs)
    if (n != per_log) per_log = 0;
  IdSpaces ids(options.canonical);
  CanonicalAddresses canonical;
  SiteTable sites;
  std::vector<Trace> traces;
  std::vector<std::vector<SiteOrigin>> origins;
  std::vector<MemRef> batch(4096);
  std::uint32_t t = 0;
  for (Space& space : spaces) {
    ids.begin(space.name, std::move(space.path_of), space.modules, space.first_contexts,
              space.first_modules);
    canonical.begin_space();
    for (std::uint32_t s = 0; s < space.streams; s++, t++) {
      auto in = space.open(s);
      ThreadFolder folder(t, sites, options);
      while (std::size_t got = in->next_batch(batch.data(), batch.size())) {
        ids.remap(batch.data(), got);
        if (options.canonical) canonical.apply(batch.data(), got);
        folder.append(batch.data(), got);
      }
      traces.push_back(folder.finish(streams));
      origins.push_back(folder.origins());
      if (stats) {
        stats->refs += folder.stats().refs;
        stats->runs += folder.stats().runs;
        stats->in_runs += folder.stats().in_runs;
        stats->events += folder.stats().events;
      }
    }
    space = Space{};
  }
  ids.mark_sites(sites);
  Trace out = merge_threads(std::move(traces), origins, per_log);
  set_mem_tables(out, ids.tables(std::move(logs)));
  return out;
}

}  // namespace

Trace fold_raw_logs(const std::vector<std::filesystem::path>& dirs, const MemFoldOptions& options,
                    MemFoldStats* stats) {
  // Every log's contexts, read as its turn comes (a log of MPI_Init holds
  // about 170,000) and kept for its path_of.
  struct Log {
    std::vector<std::filesystem::path> files;
    std::vector<Context> contexts;
    std::vector<Module> modules;
    std::unique_ptr<CodeIndex> code;
  };
  std::vector<Space> spaces;
  for (const auto& dir : dirs) {
    auto log = std::make_shared<Log>();
    log->files = raw_stream_files(dir);
    if (log->files.empty()) throw RawFormatError(dir.string() + ": no thread-N.bin files");
    if (const auto f = dir / "contexts.bin"; std::filesystem::exists(f))
      log->contexts = read_contexts(f);
    Space s;
    s.name = dir.string();
    s.streams = static_cast<std::uint32_t>(log->files.size());
    s.log_streams = {s.streams};
    s.first_contexts =
        log->contexts.empty() ? 0 : static_cast<std::uint32_t>(log->contexts.size() - 1);
    if (const auto f = dir / "modules.bin"; std::filesystem::exists(f))
      log->modules = read_modules(f);
    log->code = std::make_unique<CodeIndex>(log->modules);
    s.modules = log->modules;
    s.open = [log](std::uint32_t i) { return std::make_unique<RawSource>(log->files[i]); };
    s.path_of = [log](std::uint32_t c) {
      if (c == TFM_CTX_OVERFLOW || c >= log->contexts.size()) return unknown_context(c);
      return path_text(call_path(log->contexts, c), *log->code);
    };
    spaces.push_back(std::move(s));
  }
  try {
    return fold_spaces(std::move(spaces), options, stats);
  } catch (const RawFormatError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw RawFormatError(e.what());
  }
}

Trace fold_raw_log(const std::filesystem::path& dir, const MemFoldOptions& options,
                   MemFoldStats* stats) {
  return fold_raw_logs({dir}, options, stats);
}

Trace merge_memory_traces(const std::vector<Trace>& traces, const std::vector<std::string>& names,
                          const MemFoldOptions& options, MemFoldStats* stats) {
  if (names.size() != traces.size())
    throw std::invalid_argument("merge_memory_traces: one name per trace");
  std::vector<Space> spaces;
  for (std::size_t i = 0; i < traces.size(); i++) {
    const Trace& trace = traces[i];
    if (!is_memory_trace(trace))
      throw std::runtime_error(names[i] + ": not a memory trace, and memory traces are merged " +
                               "only with memory traces");
    auto tables = mem_tables(trace);
    if (!tables)
      throw std::runtime_error(names[i] +
                               ": a memory trace without its context table (folded by an "
                               "earlier tracefold): fold its raw logs again to merge it");
    std::uint64_t sum = 0;
    for (std::uint32_t n : tables->log_streams) sum += n;
    if (sum != static_cast<std::uint64_t>(trace.world_size))
      throw std::runtime_error(names[i] + ": its table gives " + std::to_string(sum) +
                               " streams, the trace has " + std::to_string(trace.world_size));
    Space s;
    s.name = names[i];
    s.streams = static_cast<std::uint32_t>(trace.world_size);
    s.log_streams = tables->log_streams;
    s.first_contexts = tables->first_log_contexts;
    s.first_modules = tables->first_log_modules;
    s.modules = tables->modules;
    const Trace* t = &trace;
    s.open = [t](std::uint32_t stream) { return std::make_unique<MemStreamReader>(*t, stream); };
    auto contexts = std::make_shared<std::map<std::uint32_t, std::string>>(tables->contexts);
    s.path_of = [contexts](std::uint32_t c) {
      const auto it = contexts->find(c);
      return it == contexts->end() ? unknown_context(c) : it->second;
    };
    spaces.push_back(std::move(s));
  }
  return fold_spaces(std::move(spaces), options, stats);
}

}  // namespace tracefold::memtrace
