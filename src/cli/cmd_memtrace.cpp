// `tracefold memtrace` (records the memory references of a program under
// the tracefold-mem Valgrind tool) and `tracefold memtrace-stats` (what a
// raw log holds). The work is the tool's and tracefold_memtrace's; this file
// only finds the pieces and prints.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "cli.hpp"
#include "fold.hpp"
#include "interleave.hpp"
#include "memtrace_sites.hpp"
#include "raw_reader.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::cli {
namespace {

namespace fs = std::filesystem;
namespace mt = tracefold::memtrace;

// The program to run and its arguments, split off argv before CLI11 parses
// (split_memtrace_program): its options must reach it untouched.
std::vector<std::string> g_program;

struct MemtraceArgs {
  std::string raw_log;
  bool libs = false;
  bool wait_for_start = false;
  bool no_call_paths = false;
  std::string only;
  std::string addr_range;
  bool quiet = false;
};

// The VALGRIND_LIB directory of the build: the tool, its preload library and
// links to the installed Valgrind's files.
fs::path find_vglib() {
  fs::path dir = find_companion(
      "TRACEFOLD_MEM_VGLIB", {"../memtrace/vglib", "../libexec/tracefold/vglib"},
      "cannot find the tracefold-mem Valgrind tool: build the target tracefold_mem_tool (needs "
      "the Debian package valgrind) or set TRACEFOLD_MEM_VGLIB to its vglib directory");
  if (!fs::exists(dir / "tracefold-mem-amd64-linux"))
    throw std::runtime_error(dir.string() +
                             ": no tracefold-mem-amd64-linux in it (build tracefold_mem_tool)");
  return dir;
}

[[noreturn]] void run_memtrace(const MemtraceArgs& a, const std::vector<std::string>& program) {
  if (program.empty())
    throw std::runtime_error(
        "memtrace: no program given, e.g. tracefold memtrace --raw-log raw -- ./app args");
  const fs::path vglib = find_vglib();
  std::vector<std::string> args = {TRACEFOLD_VALGRIND_BIN, "--tool=tracefold-mem"};
  if (a.quiet) args.push_back("-q");
  if (!a.raw_log.empty()) {
    // A name with %p or %q{VAR} is expanded by the tool, per process: the
    // directories must then exist already (as with the tool alone).
    if (a.raw_log.find('%') == std::string::npos) {
      std::error_code ec;
      fs::create_directories(a.raw_log, ec);
      if (ec) throw std::runtime_error("cannot create " + a.raw_log + ": " + ec.message());
    }
    args.push_back("--raw-log=" + a.raw_log);
  }
  if (a.libs) args.push_back("--libs=yes");
  if (a.wait_for_start) args.push_back("--record-at-start=no");
  if (a.no_call_paths) args.push_back("--call-paths=no");
  if (!a.only.empty()) args.push_back("--only=" + a.only);
  if (!a.addr_range.empty()) args.push_back("--addr-range=" + a.addr_range);
  args.insert(args.end(), program.begin(), program.end());

  setenv("VALGRIND_LIB", vglib.c_str(), 1);
  // OpenMP runtimes spin while waiting: the spinning is recorded (with
  // --libs) and differs from run to run. Passive waiting sleeps instead.
  setenv("OMP_WAIT_POLICY", "passive", 0);
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  throw std::runtime_error(std::string("cannot run ") + argv[0] + ": " + std::strerror(errno) +
                           " (install the Debian package valgrind)");
}

// ---- memtrace-stats ----

struct SiteStats {
  std::uint64_t refs = 0, loads = 0, stores = 0, bytes = 0;
  std::uint16_t size = 0;
  std::map<std::int64_t, std::uint64_t> strides;  // delta of consecutive addresses -> count
  std::uint64_t last = 0;
  bool has_last = false;
};

struct SiteKey {
  std::uint64_t iaddr;
  std::uint8_t index;
  bool operator==(const SiteKey&) const = default;
};
struct SiteHash {
  std::size_t operator()(const SiteKey& k) const { return k.iaddr * 31 + k.index; }
};

struct StatsArgs {
  std::string dir;
  std::size_t top = 20;
  bool raw_sites = false;
};

void run_memtrace_stats(const StatsArgs& a) {
  // A raw log is a directory; anything else is a folded memory trace, whose
  // streams expand to the same references (and which keeps the modules).
  std::optional<Trace> folded;
  if (!std::filesystem::is_directory(a.dir)) {
    folded = load_trace(a.dir);
    if (!mt::is_memory_trace(*folded))
      throw std::runtime_error(a.dir + ": not a memory trace (tracefold memtrace-fold makes one)");
  }
  mt::InterleavedReader in = folded ? mt::InterleavedReader(mt::folded_sources(*folded), 0)
                                    : mt::InterleavedReader(mt::raw_stream_files(a.dir), 0);
  std::vector<mt::Module> modules =
      folded ? mt::trace_modules(*folded) : read_modules_if_any(a.dir);

  std::unordered_map<SiteKey, SiteStats, SiteHash> sites;
  std::array<std::uint64_t, 4> kind_refs{};
  std::array<std::unordered_set<std::uint64_t>, 4> kind_lines;  // 64-byte lines touched
  struct Counts {
    std::uint64_t loads = 0, stores = 0, bytes = 0;
  };
  std::vector<Counts> per_thread(in.threads());
  std::vector<mt::MemRef> batch(4096);
  std::uint32_t thread = 0, prev = UINT32_MAX;
  while (std::size_t n = in.next_batch(thread, batch.data(), batch.size())) {
    if (thread != prev)
      for (auto& [k, s] : sites) s.has_last = false;  // strides within a thread
    prev = thread;
    Counts& c = per_thread[thread];
    for (std::size_t i = 0; i < n; i++) {
      const mt::MemRef& m = batch[i];
      (m.store ? c.stores : c.loads)++;
      c.bytes += m.size;
      auto k = static_cast<std::size_t>(m.kind);
      kind_refs[k]++;
      kind_lines[k].insert(m.daddr >> 6);
      SiteStats& s = sites[SiteKey{m.iaddr, m.index}];
      s.refs++;
      (m.store ? s.stores : s.loads)++;
      s.bytes += m.size;
      s.size = m.size;
      if (s.has_last) s.strides[static_cast<std::int64_t>(m.daddr - s.last)]++;
      s.last = m.daddr;
      s.has_last = true;
    }
  }
  std::cout << "thread  references       loads      stores       bytes\n";
  std::uint64_t total = 0;
  for (std::size_t t = 0; t < per_thread.size(); t++) {
    const Counts& c = per_thread[t];
    std::cout << std::setw(6) << t << std::setw(12) << c.loads + c.stores << std::setw(12)
              << c.loads << std::setw(12) << c.stores << std::setw(12) << c.bytes << "\n";
    total += c.loads + c.stores;
  }
  std::cout << "\nkind    references   footprint (64-byte lines)\n";
  for (std::size_t k = 0; k < 4; k++) {
    if (kind_refs[k] == 0) continue;
    std::cout << std::left << std::setw(8) << mt::addr_kind_name(static_cast<mt::AddrKind>(k))
              << std::right << std::setw(10) << kind_refs[k] << std::setw(14)
              << kind_lines[k].size() << " (" << human_bytes(kind_lines[k].size() * 64) << ")\n";
  }

  // Sites by references, named when a module of modules.bin (those the
  // statics named) holds the instruction.
  std::vector<std::pair<SiteKey, const SiteStats*>> order;
  for (const auto& [k, s] : sites) order.emplace_back(k, &s);
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.second->refs != y.second->refs ? x.second->refs > y.second->refs
                                            : x.first.iaddr < y.first.iaddr;
  });
  if (order.size() > a.top) order.resize(a.top);
  SiteNamer names(std::move(modules), a.raw_sites);
  std::cout << "\n"
            << order.size() << " of " << sites.size() << " sites by references (of " << total
            << "):\n";
  std::cout << "      iaddr idx  references   loads  stores size  stride (share)  function\n";
  for (const auto& [k, s] : order) {
    std::int64_t stride = 0;
    std::uint64_t stride_n = 0;
    for (const auto& [d, n] : s->strides)
      if (n > stride_n) stride = d, stride_n = n;
    std::ostringstream sh;
    if (stride_n > 0)
      sh << stride << " (" << (100 * stride_n) / (s->refs > 1 ? s->refs - 1 : 1) << "%)";
    else
      sh << "-";
    std::cout << std::hex << std::setw(11) << k.iaddr << std::dec << std::setw(4) << int{k.index}
              << std::setw(12) << s->refs << std::setw(8) << s->loads << std::setw(8) << s->stores
              << std::setw(5) << s->size << "  " << std::left << std::setw(15) << sh.str()
              << std::right << "  " << names.name(k.iaddr) << "\n";
  }
}

}  // namespace

void split_memtrace_program(int& argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "memtrace") return;
  // The program starts after `--`, or at the first word that is neither an
  // option of memtrace nor the value of one that takes a value.
  const std::unordered_set<std::string> with_value = {"--raw-log", "--only", "--addr-range"};
  for (int i = 2; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") {
      g_program.assign(argv + i + 1, argv + argc);
      argc = i;
      return;
    }
    if (with_value.count(word) > 0) {
      ++i;
      continue;
    }
    if (!word.empty() && word[0] == '-') continue;
    g_program.assign(argv + i, argv + argc);
    argc = i;
    return;
  }
}

// cmd_memfold.cpp; declared here, not in cli.hpp, as only this file adds it.
void add_memfold_command(CLI::App& app);

void add_memtrace_commands(CLI::App& app) {
  auto a = std::make_shared<MemtraceArgs>();
  auto* cmd =
      app.add_subcommand("memtrace",
                         "Record a program's loads and stores under the tracefold-mem "
                         "Valgrind tool: tracefold memtrace [--raw-log DIR] -- PROGRAM ARGS");
  cmd->add_option("--raw-log", a->raw_log,
                  "Write DIR/thread-N.bin, contexts.bin and modules.bin (created if missing; %p "
                  "and %q{VAR} expand per process, e.g. per MPI rank)");
  cmd->add_flag("--libs", a->libs, "Also record accesses made by shared libraries' code");
  cmd->add_flag("--wait-for-start", a->wait_for_start,
                "Record only between TRACEFOLD_MEM_START() and TRACEFOLD_MEM_STOP()");
  cmd->add_flag("--no-call-paths", a->no_call_paths, "No shadow stack, every access in context 0");
  cmd->add_option("--only", a->only,
                  "Record only while a call to this function is on the shadow stack");
  cmd->add_option("--addr-range", a->addr_range,
                  "Record only accesses to data addresses in S-E[,S-E...] (E excluded)");
  cmd->add_flag("-q,--quiet", a->quiet, "Valgrind's -q: no banner, no totals at exit");
  cmd->callback([a] { guarded([&] { run_memtrace(*a, g_program); }); });

  auto s = std::make_shared<StatsArgs>();
  auto* stats = app.add_subcommand("memtrace-stats",
                                   "References per thread, per kind of address and per site "
                                   "(with strides) of a memtrace raw log");
  stats
      ->add_option("dir", s->dir,
                   "The --raw-log directory, or a memory trace from tracefold memtrace-fold")
      ->required();
  stats->add_option("--top", s->top, "Sites to list (default 20)");
  stats->add_flag("--raw-sites", s->raw_sites, "Sites as module+0xoffset, without symbols");
  stats->callback([s] {
    guarded([&] { run_memtrace_stats(*s); });
    throw CLI::RuntimeError(0);
  });
  add_memreplay_command(app);
  add_memfold_command(app);
}

}  // namespace tracefold::cli
