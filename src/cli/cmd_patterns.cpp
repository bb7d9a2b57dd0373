// `tracefold patterns`: communication patterns recovered from a trace
// (seed 004): each rank's repeated event sequences inside one function
// context, joined across ranks and named by their shape
// (src/analysis/patterns/).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "cli.hpp"
#include "tracefold/export.hpp"
#include "tracefold/modules.hpp"
#include "tracefold/patterns.hpp"
#include "tracefold/patterns_context.hpp"
#include "tracefold/patterns_truth.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::cli {

namespace {

// The named functions of a call's stack, innermost first: the label
// frame's inlined levels, then each frame further out (system libraries
// left out), which the context modes pick from.
std::vector<std::string> stack_functions(const SymbolTables& t, const CallSite& cs) {
  std::vector<std::string> out;
  const Frame* f = label_frame(t, cs);
  if (!f) return out;
  for (auto it = cs.frames.begin() + (f - cs.frames.data()); it != cs.frames.end(); ++it) {
    if (&*it != f && system_module(t, *it)) continue;
    if (const SourceFrames* s = t.symbols_of(*it))
      for (const SourceFrame& sf : *s)
        if (!sf.function.empty()) out.push_back(sf.function);
  }
  return out;
}

// The shape of a global pattern: its title and fit, its parameters, the
// edges it misses or has in excess (a few: they are what to look at).
void print_shape(const patterns::Shape& s) {
  constexpr std::size_t kMaxListed = 12;
  const std::size_t total = s.matched + s.extra.size() + s.missing.size();
  std::cout << "    shape: " << s.title();
  if (s.kind != patterns::ShapeKind::kUnclassified)
    std::cout << ", quality " << static_cast<int>(s.quality * 100 + 0.5) << "% (" << s.matched
              << " of " << total << " edges)";
  std::cout << "\n";
  if (!s.params.empty()) {
    std::cout << "     ";
    for (std::size_t i = 0; i < s.params.size(); ++i)
      std::cout << (i ? "; " : " ") << s.params[i].first << " " << s.params[i].second;
    std::cout << "\n";
  }
  auto list = [&](const char* what, const std::vector<std::pair<int32_t, int32_t>>& edges) {
    if (edges.empty()) return;
    std::cout << "      " << what;
    for (std::size_t e = 0; e < edges.size() && e < kMaxListed; ++e)
      std::cout << " " << edges[e].first << "->" << edges[e].second;
    if (edges.size() > kMaxListed) std::cout << " ... (" << edges.size() << " in all)";
    std::cout << "\n";
  };
  list("missing", s.missing);
  list("extra", s.extra);
}

// Step 2's patterns: whose per-process patterns they join, their edges.
void print_global(const patterns::Result& r) {
  std::cout << "global patterns: " << r.global.size() << "\n";
  constexpr std::size_t kMaxEdges = 24;
  for (std::size_t i = 0; i < r.global.size(); ++i) {
    const patterns::GlobalPattern& g = r.global[i];
    Ranklist ranks;
    for (const auto& [rank, p] : g.patterns) ranks.insert(rank);
    std::cout << "  G" << i + 1 << ": patterns of ranks " << human_ranks(ranks) << ", "
              << g.messages << " messages, " << g.loose_events << " events outside patterns\n"
              << "    edges";
    for (std::size_t e = 0; e < g.edges.size() && e < kMaxEdges; ++e)
      std::cout << " " << g.edges[e].first << "->" << g.edges[e].second;
    if (g.edges.size() > kMaxEdges) std::cout << " ... (" << g.edges.size() << " in all)";
    std::cout << "\n";
    print_shape(g.shape);
  }
}

nlohmann::json edges_json(const std::vector<std::pair<int32_t, int32_t>>& edges) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [from, to] : edges) a.push_back({from, to});
  return a;
}

nlohmann::json shape_json(const patterns::Shape& s) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : s.params) params[k] = v;
  return {{"name", s.kind == patterns::ShapeKind::kUnclassified ? "unclassified" : s.name},
          {"title", s.title()},
          {"partial", s.partial()},
          {"params", params},
          {"quality", s.quality},
          {"matched", s.matched},
          {"missing", edges_json(s.missing)},
          {"extra", edges_json(s.extra)}};
}

// A --truth evaluation's figures and pairs, for the JSON form.
nlohmann::json truth_json(const patterns::Evaluation& e, const patterns::Truth& t,
                          const std::vector<patterns::Reported>& rep) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const patterns::Evaluation::Pair& p : e.pairs) {
    nlohmann::json j{{"truth", t.patterns[p.truth].id},
                     {"reported", rep[p.reported].id},
                     {"overlap", p.overlap},
                     {"named", p.named},
                     {"naming_errors", p.naming_errors}};
    if (p.occurrences_agree) j["occurrences_agree"] = *p.occurrences_agree;
    if (p.roles_agree) j["roles_agree"] = *p.roles_agree;
    pairs.push_back(j);
  }
  nlohmann::json missed = nlohmann::json::array(), spurious = nlohmann::json::array();
  for (std::size_t i : e.missed) missed.push_back(t.patterns[i].id);
  for (std::size_t i : e.spurious) spurious.push_back(rep[i].id);
  nlohmann::json unlisted = nlohmann::json::array();
  for (const patterns::Evaluation::Unlisted& u : e.unlisted)
    unlisted.push_back({{"ranks", human_ranks(u.ranks)},
                        {"context", u.context},
                        {"event", u.event},
                        {"count", u.count}});
  return {{"file", t.file},
          {"expected", e.truth_patterns},
          {"reported", e.reported_patterns},
          {"pairs", pairs},
          {"missed", missed},
          {"spurious", spurious},
          {"precision", e.precision},
          {"recall", e.recall},
          {"naming", e.naming},
          {"coverage", e.coverage},
          {"events", e.events},
          {"covered", e.covered},
          {"listed_singles", e.listed_singles},
          {"unlisted_singles", e.unlisted_singles},
          {"unlisted", unlisted},
          {"in_several", e.in_several}};
}

// The listing's content as JSON, for scripts and the tests, written as it
// is made: a global pattern's edges alone are hundreds of thousands at
// 16,384 ranks (halo26: 390,072), and a document held whole before its
// first byte is written doubled the command's peak memory. The text is
// what nlohmann's dump(1) makes of the whole document (keys sorted).
class JsonStream {
 public:
  explicit JsonStream(std::ostream& os) : os_(os) {}
  // `v` at the current depth, as dump(1) nests it: its lines after the
  // first indented by the depth (strings hold no raw newline).
  void value(const nlohmann::json& v) {
    const std::string text = v.dump(1);
    std::size_t from = 0;
    for (std::size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
      os_.write(text.data() + from, static_cast<std::streamsize>(nl + 1 - from));
      indent();
    }
    os_ << std::string_view(text).substr(from);
  }
  void open(char bracket) {
    os_ << bracket;
    ++depth_;
    first_ = true;
  }
  // Closes what open() opened; an empty one as dump writes it, `[]`.
  void close(char bracket) {
    --depth_;
    if (!first_) {
      os_ << '\n';
      indent();
    }
    os_ << bracket;
    first_ = false;
  }
  // The separator before an element of an array, or before `key` of an
  // object (keys must come sorted, as dump orders them).
  void item() {
    os_ << (first_ ? "\n" : ",\n");
    indent();
    first_ = true;  // the element's own contents start afresh
  }
  void key(std::string_view key) {
    item();
    os_ << nlohmann::json(std::string(key)).dump() << ": ";
  }
  void done() { first_ = false; }  // after an element or key's value

 private:
  void indent() { os_ << std::string(static_cast<std::size_t>(depth_), ' '); }
  std::ostream& os_;
  int depth_ = 0;
  bool first_ = true;
};

void write_edges(JsonStream& js, const std::vector<std::pair<int32_t, int32_t>>& edges) {
  js.open('[');
  for (const auto& [from, to] : edges) {
    js.item();
    js.value(nlohmann::json::array({from, to}));
    js.done();
  }
  js.close(']');
}

void write_result_json(std::ostream& os, const patterns::Result& r, const std::string& trace,
                       int32_t world, patterns::PeerMode peers, const nlohmann::json* truth) {
  JsonStream js(os);
  js.open('{');
  js.key("global");
  js.open('[');
  for (const patterns::GlobalPattern& g : r.global) {
    Ranklist ranks;
    for (const auto& [rank, p] : g.patterns) ranks.insert(rank);
    js.item();
    js.open('{');
    js.key("edges");
    write_edges(js, g.edges);
    js.done();
    const std::pair<const char*, nlohmann::json> rest[] = {{"loose_events", g.loose_events},
                                                           {"messages", g.messages},
                                                           {"ranks", human_ranks(ranks)},
                                                           {"shape", shape_json(g.shape)}};
    for (const auto& [k, v] : rest) {
      js.key(k);
      js.value(v);
      js.done();
    }
    js.close('}');
  }
  js.close(']');
  js.done();
  js.key("groups");
  js.open('[');
  for (const patterns::RankPatterns& g : r.groups) {
    nlohmann::json pats = nlohmann::json::array();
    for (const auto& e : g.patterns) {
      nlohmann::json symbols = nlohmann::json::array();
      for (patterns::Symbol s : e.pattern.symbols) symbols.push_back(r.alphabet.describe(s, peers));
      nlohmann::json pat = {{"context", e.context},
                            {"positions", e.pattern.positions},
                            {"iterations", patterns::iterations(e.pattern)},
                            {"symbols", symbols}};
      if (e.pattern.loop) {
        nlohmann::json trips = nlohmann::json::array();
        for (const auto& [v, n] : e.pattern.loop->trips)
          trips.push_back({{"trips", v}, {"entries", n}});
        pat["loop_trips"] = trips;
      }
      pats.push_back(std::move(pat));
    }
    js.item();
    js.value({{"ranks", human_ranks(g.ranks)}, {"events", g.events}, {"patterns", pats}});
    js.done();
  }
  js.close(']');
  js.done();
  js.key("ranks");
  js.value(world);
  js.done();
  js.key("trace");
  js.value(trace);
  js.done();
  if (truth) {
    js.key("truth");
    js.value(*truth);
    js.done();
  }
  js.close('}');
  os << "\n";
}

}  // namespace

void add_patterns_command(CLI::App& app) {
  struct Args {
    std::string trace;
    bool absolute = false, no_context = false, json = false;
    std::string context = "function";
    std::optional<std::size_t> frame;
    std::string truth;
    SiteOptions sites;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "patterns", "Repeated communication sequences per rank, within the function that calls");
  cmd->add_option("trace", args->trace, "Trace file")->required()->check(existing_trace());
  cmd->add_flag("--absolute", args->absolute,
                "Peers as ranks in the communicator (default: relative, +1 = next rank)");
  cmd->add_flag("--no-context", args->no_context,
                "One context per rank: repeats may span functions (the seed's baseline)");
  auto* context =
      cmd->add_option("--context", args->context,
                      "What a context is: `function` (the calling function), `caller` (it and "
                      "its caller: a helper called from two places makes two contexts), or a "
                      "FILE of groups of functions (docs/patterns.md)")
          ->default_str("function");
  auto* frame = cmd->add_option("--context-frame", args->frame,
                                "The context is the function K frames out from the call (0: the "
                                "calling function, 1: its caller, ...)")
                    ->check(CLI::NonNegativeNumber);
  context->excludes(frame);
  frame->excludes(cmd->get_option("--no-context"));
  context->excludes(cmd->get_option("--no-context"));
  cmd->add_flag("--json", args->json, "Print the result as JSON instead of the listing");
  cmd->add_option("--truth", args->truth,
                  "Compare with the expected patterns of FILE: precision, recall, naming, "
                  "coverage (docs/patterns.md)")
      ->check(CLI::ExistingFile);
  add_site_options(cmd, args->sites);
  cmd->callback([args] {
    cli::guarded([&] {
      // A bad truth file fails before the trace is read.
      std::optional<patterns::Truth> truth;
      if (!args->truth.empty()) truth = patterns::load_truth(args->truth);
      // So is a bad context file; a --context that is neither mode nor file
      // is named as such.
      patterns::ContextSpec spec;
      std::string context_text = args->context;
      if (args->frame) {
        spec.kind = patterns::ContextSpec::Kind::kFrame;
        spec.frame = *args->frame;
        context_text = "frame " + std::to_string(*args->frame);
      } else if (args->context == "caller") {
        spec.kind = patterns::ContextSpec::Kind::kCaller;
      } else if (args->context != "function") {
        if (!std::filesystem::is_regular_file(args->context))
          throw std::runtime_error("--context " + args->context +
                                   ": neither 'function', 'caller' nor a groups file");
        spec = patterns::load_context_groups(args->context);
        context_text = "groups " + args->context;
      }
      Trace whole = load_trace(args->trace);
      const bool threaded = whole.threads > 1;
      if (threaded && truth)
        throw std::runtime_error("--truth takes a trace of one thread per rank; " + args->trace +
                                 " has " + std::to_string(whole.threads) +
                                 " threads per rank calling MPI");
      patterns::Options o;
      o.peers = args->absolute ? patterns::PeerMode::kAbsolute : patterns::PeerMode::kRelative;
      o.context =
          args->no_context ? patterns::ContextMode::kNone : patterns::ContextMode::kFunction;
      if (!args->no_context) prepare_sites(whole, args->sites, true);
      // A rank's threads make event strings of their own: each thread index
      // across the ranks is analysed alone (docs/patterns.md, "Threads").
      std::vector<Trace> classes;
      if (threaded)
        classes = patterns::thread_classes(whole);
      else
        classes.push_back(std::move(whole));  // its one class, not copied
      if (threaded && args->json) std::cout << "[";
      for (std::size_t k = 0; k < classes.size(); ++k) {
        const Trace& t = classes[k];
        // The context the mode names from the call's stack; without symbols,
        // the call site's label (then each site is a context of its own).
        auto context_of = [&](SiteId site) -> std::string {
          const CallSite& cs = t.sites.at(site);
          if (!args->sites.raw) {
            const std::vector<std::string> stack = stack_functions(t.symtab, cs);
            if (std::string name = patterns::context_name(stack, spec); !name.empty()) return name;
          }
          return site_label(t.symtab, cs, {args->sites.raw});
        };
        const patterns::Result r = patterns::find_process_patterns(t, o, context_of);
        std::optional<patterns::Evaluation> eval;
        std::vector<patterns::Reported> reported;
        if (truth) {
          reported = patterns::reported_patterns(r, o.peers);
          eval = patterns::evaluate(*truth, reported, r.cover, r.alphabet, o.peers);
        }
        if (args->json) {
          const nlohmann::json tj = eval ? truth_json(*eval, *truth, reported) : nlohmann::json();
          if (k > 0) std::cout << ",";
          write_result_json(std::cout, r, args->trace, t.world_size, o.peers, eval ? &tj : nullptr);
          continue;
        }
        if (threaded) std::cout << "thread class " << k << " of " << classes.size() << "\n";
        std::cout << "patterns of " << args->trace << ": " << t.world_size << " ranks, context "
                  << (args->no_context ? "none" : context_text) << ", peers "
                  << (args->absolute ? "absolute" : "relative") << "\n";
        for (const patterns::RankPatterns& g : r.groups) {
          std::cout << "ranks " << human_ranks(g.ranks) << ": " << g.events << " events, "
                    << g.patterns.size() << (g.patterns.size() == 1 ? " pattern" : " patterns")
                    << "\n";
          for (std::size_t i = 0; i < g.patterns.size(); ++i) {
            const auto& e = g.patterns[i];
            std::cout << "  #" << i + 1 << " in " << e.context << ": " << e.pattern.symbols.size()
                      << " events, " << e.pattern.positions.size() << " times (at event";
            for (std::size_t p : e.pattern.positions) std::cout << " " << p;
            std::cout << ")";
            // Occurrences that overlap are one loop: its iterations differ.
            if (const auto& loop = e.pattern.loop)
              std::cout << ", " << loop->iterations << " loop iterations (trips "
                        << patterns::trips_text(loop->trips) << ")";
            else if (const std::size_t n = patterns::iterations(e.pattern);
                     n != e.pattern.positions.size())
              std::cout << ", " << n << " iterations";
            std::cout << "\n   ";
            for (patterns::Symbol s : e.pattern.symbols)
              std::cout << " " << r.alphabet.describe(s, o.peers);
            std::cout << "\n";
          }
        }
        print_global(r);
        if (eval) patterns::print_evaluation(std::cout, *eval, *truth, reported);
      }
      if (threaded && args->json) std::cout << "]\n";
    });
    throw CLI::RuntimeError(0);  // done: main's dispatch below is for the other commands
  });
}

}  // namespace tracefold::cli
