// `tracefold memreplay`: the reference stream of a memtrace raw log, in the
// interleaved order of interleave.hpp, printed (--raw) or run through the
// cache simulator of cache_sim.hpp (--cache) with hit and miss counts per
// level, per thread and per access site.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <memory>
#include <optional>
#include <sstream>

#include "cache_sim.hpp"
#include "cli.hpp"
#include "fold.hpp"
#include "interleave.hpp"
#include "memtrace_sites.hpp"
#include "raw_writer.hpp"
#include "ref_text.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::cli {
namespace {

namespace mt = tracefold::memtrace;

// References taken from the streams at a time.
constexpr std::size_t kBatch = 4096;

struct ReplayArgs {
  std::string dir;
  std::string cache;
  std::string raw_log;
  bool raw = false;
  std::uint64_t interleave = 1000;
  std::uint32_t private_levels = 0;
  std::size_t top = 20;
  bool raw_sites = false;
};

// --raw: one reference a line (ref_text.hpp), into a large buffer written
// out whole.
void print_raw(mt::InterleavedReader& in) {
  std::vector<char> buf(1 << 18);
  char* const end = buf.data() + buf.size();
  char* p = buf.data();
  auto flush = [&] {
    std::fwrite(buf.data(), 1, static_cast<std::size_t>(p - buf.data()), stdout);
    p = buf.data();
  };
  std::fputs(mt::kRefTextHeader, stdout);
  auto lines = std::make_unique<mt::RefTextWriter>();
  std::uint32_t t = 0;
  std::vector<mt::MemRef> batch(kBatch);
  while (std::size_t got = in.next_batch(t, batch.data(), batch.size())) {
    for (std::size_t i = 0; i < got; i++) {
      if (static_cast<std::size_t>(end - p) < mt::kRefTextMax) flush();
      p = lines->line(p, t, batch[i]);
    }
  }
  flush();
  std::fflush(stdout);
}

// Site ids by (instruction, access index): open addressing, because a
// std::unordered_map lookup per reference would cost more than the
// simulation. Instruction addresses fit in 56 bits on amd64.
class SiteIndex {
 public:
  SiteIndex() : keys_(1024, 0), ids_(1024, 0) {}
  // Kept small enough to be inlined: the insertion, once per site, is not.
  std::uint32_t id(std::uint64_t iaddr, std::uint8_t index) {
    const std::uint64_t key = (iaddr << 8 | index) + 1;  // 0 marks an empty slot
    const std::size_t mask = mask_;
    for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      if (keys_[i] == key) return ids_[i];
      if (keys_[i] == 0) return insert(i, key, iaddr, index);
    }
  }
  std::uint32_t size() const { return count_; }
  std::pair<std::uint64_t, std::uint8_t> site(std::uint32_t id) const { return sites_[id]; }

 private:
  static std::size_t hash(std::uint64_t k) {
    return static_cast<std::size_t>((k * 0x9e3779b97f4a7c15ULL) >> 20);
  }
  [[gnu::noinline]] std::uint32_t insert(std::size_t slot, std::uint64_t key, std::uint64_t iaddr,
                                         std::uint8_t index) {
    if (2 * (count_ + 1) > keys_.size()) {
      grow();
      slot = hash(key) & mask_;
      while (keys_[slot] != 0) slot = (slot + 1) & mask_;
    }
    keys_[slot] = key;
    ids_[slot] = count_;
    sites_.push_back({iaddr, index});
    return count_++;
  }
  void grow() {
    std::vector<std::uint64_t> keys(keys_.size() * 2, 0);
    std::vector<std::uint32_t> ids(keys.size(), 0);
    const std::size_t mask = keys.size() - 1;
    for (std::size_t j = 0; j < keys_.size(); j++) {
      if (keys_[j] == 0) continue;
      std::size_t i = hash(keys_[j]) & mask;
      while (keys[i] != 0) i = (i + 1) & mask;
      keys[i] = keys_[j];
      ids[i] = ids_[j];
    }
    keys_.swap(keys);
    ids_.swap(ids);
    mask_ = mask;
  }
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> ids_;
  std::vector<std::pair<std::uint64_t, std::uint8_t>> sites_;
  std::uint32_t count_ = 0;
  std::size_t mask_ = 1023;  // keys_.size() - 1
};

// References, loads and stores of a thread or a site (misses per level are
// kept beside them in flat arrays).
struct Counts {
  std::uint64_t refs = 0, loads = 0, stores = 0;
};

std::string percent(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return "-";
  std::ostringstream o;
  o << std::fixed << std::setprecision(2)
    << 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  return o.str();
}

void simulate(mt::InterleavedReader& in, const ReplayArgs& a, std::vector<mt::Module> modules) {
  const auto levels = mt::parse_cache_spec(a.cache);
  const std::size_t L = levels.size();
  mt::CacheHierarchy caches(levels, in.threads(), a.private_levels);
  const std::uint32_t T = in.threads();

  // Loads and stores per thread and per site, at [2 * id + store]: a hit,
  // the common case, costs two increments here; misses per level are
  // counted on the misses only.
  std::vector<std::uint64_t> thread_dirs(2 * T, 0);
  std::vector<std::uint64_t> thread_misses(T * L, 0);
  SiteIndex sites;
  std::vector<std::uint64_t> site_dirs;
  std::uint32_t known = 0;  // sites with room in site_dirs and site_misses
  std::vector<std::uint64_t> site_misses;
  std::vector<std::uint64_t> load_misses(L, 0), store_misses(L, 0);

  std::uint32_t t = 0;
  std::vector<mt::MemRef> batch(kBatch);
  while (std::size_t got = in.next_batch(t, batch.data(), batch.size())) {
    std::uint64_t* const tdirs = &thread_dirs[2 * t];
    for (std::size_t i = 0; i < got; i++) {
      const mt::MemRef& m = batch[i];
      const std::size_t reached = caches.access(t, m.daddr, m.size);
      const std::uint32_t s = sites.id(m.iaddr, m.index);
      if (s >= known) [[unlikely]] {
        known = s + 1;
        site_dirs.resize(2 * known, 0);
        site_misses.resize(L * known, 0);
      }
      tdirs[m.store]++;
      site_dirs[2 * s + m.store]++;
      if (reached == 0) continue;
      auto& dir_misses = m.store ? store_misses : load_misses;
      for (std::size_t k = 0; k < reached; k++) {
        thread_misses[t * L + k]++;
        site_misses[s * L + k]++;
        dir_misses[k]++;
      }
    }
  }
  auto counts = [](const std::vector<std::uint64_t>& dirs, std::size_t id) {
    return Counts{dirs[2 * id] + dirs[2 * id + 1], dirs[2 * id], dirs[2 * id + 1]};
  };
  std::vector<Counts> thread_counts(T), site_counts(sites.size());
  for (std::uint32_t i = 0; i < T; i++) thread_counts[i] = counts(thread_dirs, i);
  for (std::uint32_t i = 0; i < sites.size(); i++) site_counts[i] = counts(site_dirs, i);

  Counts total;
  for (const auto& c : thread_counts) {
    total.refs += c.refs;
    total.loads += c.loads;
    total.stores += c.stores;
  }
  std::cout << "references: " << total.refs << " (" << total.loads << " loads, " << total.stores
            << " stores) of " << T << " thread" << (T == 1 ? "" : "s") << "; interleaving: ";
  if (a.interleave == 0)
    std::cout << "each thread's whole stream in turn, thread 0 first\n";
  else
    std::cout << "round-robin turns of " << a.interleave << " references\n";
  std::cout << "caches: LRU, write-allocate, non-inclusive; a level is looked up on a miss of "
               "the one above\n";
  for (std::size_t k = 0; k < L; k++)
    std::cout << "  " << levels[k].describe() << ", "
              << (k < a.private_levels ? "private to each thread" : "shared") << "\n";

  std::cout << "\nlevel       accesses        hits      misses   hit %  miss % of refs   load "
               "misses  store misses\n";
  std::uint64_t accesses = total.refs;
  for (std::size_t k = 0; k < L; k++) {
    const std::uint64_t misses = load_misses[k] + store_misses[k];
    std::cout << std::left << std::setw(8) << levels[k].name << std::right << std::setw(12)
              << accesses << std::setw(12) << accesses - misses << std::setw(12) << misses
              << std::setw(8) << percent(accesses - misses, accesses) << std::setw(16)
              << percent(misses, total.refs) << std::setw(14) << load_misses[k] << std::setw(14)
              << store_misses[k] << "\n";
    accesses = misses;
  }

  // Per thread and per site: each level's misses and their share of the
  // thread's (site's) references.
  auto level_columns = [&](const std::uint64_t* misses, std::uint64_t refs) {
    std::ostringstream o;
    for (std::size_t k = 0; k < L; k++)
      o << std::setw(12) << misses[k] << std::setw(8) << percent(misses[k], refs);
    return o.str();
  };
  std::ostringstream head;
  for (std::size_t k = 0; k < L; k++)
    head << std::setw(12) << levels[k].name + " misses" << std::setw(8) << "miss %";
  std::cout << "\nthread  references" << head.str() << "\n";
  for (std::uint32_t i = 0; i < T; i++)
    std::cout << std::setw(6) << i << std::setw(12) << thread_counts[i].refs
              << level_columns(&thread_misses[i * L], thread_counts[i].refs) << "\n";

  std::vector<std::uint32_t> order(sites.size());
  for (std::uint32_t i = 0; i < order.size(); i++) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    if (site_misses[x * L] != site_misses[y * L]) return site_misses[x * L] > site_misses[y * L];
    if (site_counts[x].refs != site_counts[y].refs)
      return site_counts[x].refs > site_counts[y].refs;
    return sites.site(x) < sites.site(y);
  });
  if (order.size() > a.top) order.resize(a.top);
  SiteNamer names(std::move(modules), a.raw_sites);
  std::cout << "\n"
            << order.size() << " of " << sites.size() << " sites by " << levels[0].name
            << " misses:\n      iaddr idx  references" << head.str() << "  function\n";
  for (std::uint32_t s : order) {
    const auto [iaddr, index] = sites.site(s);
    std::cout << std::hex << std::setw(11) << iaddr << std::dec << std::setw(4) << unsigned{index}
              << std::setw(12) << site_counts[s].refs
              << level_columns(&site_misses[s * L], site_counts[s].refs) << "  "
              << names.name(iaddr) << "\n";
  }
}

// --raw-log OUTDIR: each thread's stream into OUTDIR/thread-N.bin as the
// Valgrind tool writes it. Streams are separate files, so no interleaving:
// each is copied whole in turn, block by block.
void write_raw_log(const ReplayArgs& a, const std::optional<Trace>& folded) {
  const std::filesystem::path out = a.raw_log;
  std::filesystem::create_directories(out);
  if (std::filesystem::equivalent(out, a.dir))
    throw std::runtime_error(a.raw_log + ": --raw-log must not be the input directory");
  std::vector<std::unique_ptr<mt::RefSource>> sources;
  std::vector<std::uint32_t> pids;
  if (folded) {
    // A folded trace keeps no process id: the streams say 0.
    sources = mt::folded_sources(*folded);
    pids.assign(sources.size(), 0);
  } else {
    for (const auto& f : mt::raw_stream_files(a.dir)) {
      auto r = std::make_unique<mt::RawStreamReader>(f);
      if (r->thread() != sources.size())
        throw mt::RawFormatError(f.string() + ": header says thread " +
                                 std::to_string(r->thread()));
      pids.push_back(r->pid());
      sources.push_back(mt::raw_source(std::move(r)));
    }
  }
  std::vector<mt::MemRef> batch(kBatch);
  for (std::uint32_t t = 0; t < sources.size(); t++) {
    mt::RawStreamWriter w(out / ("thread-" + std::to_string(t) + ".bin"), t, pids[t]);
    while (std::size_t got = sources[t]->next_batch(batch.data(), batch.size()))
      w.write(batch.data(), got);
    w.close();
  }
  // The tables that name contexts and modules: copied from a raw log; a
  // folded trace keeps the modules (contexts.bin is not regenerated).
  if (folded) {
    if (auto m = mt::trace_modules(*folded); !m.empty()) mt::write_modules(out / "modules.bin", m);
  } else {
    for (const char* name : {"contexts.bin", "modules.bin"})
      if (std::filesystem::exists(std::filesystem::path(a.dir) / name))
        std::filesystem::copy_file(std::filesystem::path(a.dir) / name, out / name,
                                   std::filesystem::copy_options::overwrite_existing);
  }
}

void run_memreplay(const ReplayArgs& a) {
  if (int(a.raw) + int(!a.cache.empty()) + int(!a.raw_log.empty()) != 1)
    throw std::runtime_error(
        "memreplay: give --raw (print the references), --raw-log "
        "OUTDIR (write them as a raw log) or --cache SPEC (simulate "
        "caches, e.g. --cache L1=32K:8:64)");
  if (!a.cache.empty()) mt::parse_cache_spec(a.cache);  // before reading any stream
  // A raw log is a directory; anything else is a folded memory trace.
  std::optional<Trace> folded;
  if (!std::filesystem::is_directory(a.dir)) {
    folded = load_trace(a.dir);
    if (!mt::is_memory_trace(*folded))
      throw std::runtime_error(a.dir + ": not a memory trace (tracefold memtrace-fold makes one)");
  }
  if (!a.raw_log.empty()) return write_raw_log(a, folded);
  mt::InterleavedReader in = folded
                                 ? mt::InterleavedReader(mt::folded_sources(*folded), a.interleave)
                                 : mt::InterleavedReader(mt::raw_stream_files(a.dir), a.interleave);
  if (a.raw)
    print_raw(in);
  else
    simulate(in, a, folded ? mt::trace_modules(*folded) : read_modules_if_any(a.dir));
}

}  // namespace

void add_memreplay_command(CLI::App& app) {
  auto a = std::make_shared<ReplayArgs>();
  auto* cmd = app.add_subcommand(
      "memreplay",
      "Regenerate the reference stream of a memtrace raw log or folded trace, as text (--raw) "
      "or as a raw log (--raw-log OUTDIR), or run it "
      "through an LRU cache simulator (--cache L1=32K:8:64,L2=1M:16:64)");
  cmd->add_option("dir", a->dir,
                  "The --raw-log directory, or a memory trace from tracefold memtrace-fold")
      ->required();
  cmd->add_option("--cache", a->cache,
                  "Cache levels, first level first: NAME=SIZE:ASSOC:LINE[,...], SIZE with K, M or "
                  "G (e.g. L1=32K:8:64,L2=1M:16:64)");
  cmd->add_flag("--raw", a->raw, "Print the references, one a line (format in docs/memtrace.md)");
  cmd->add_option("--raw-log", a->raw_log,
                  "Write the references as a raw log, OUTDIR/thread-N.bin as memtrace --raw-log "
                  "writes them (and modules.bin; contexts.bin when the input is a raw log)");
  cmd->add_option("--interleave", a->interleave,
                  "Threads take round-robin turns of this many references (0: each thread's "
                  "whole stream in turn; default 1000)");
  cmd->add_option("--private", a->private_levels,
                  "The first this many levels are private to each thread, the others shared "
                  "(default 0: all shared)");
  cmd->add_option("--top", a->top, "Sites to list (default 20)");
  cmd->add_flag("--raw-sites", a->raw_sites, "Sites as module+0xoffset, without symbols");
  cmd->callback([a] {
    guarded([&] { run_memreplay(*a); });
    throw CLI::RuntimeError(0);
  });
}

}  // namespace tracefold::cli
