// `tracefold patterns --truth`: reported global patterns matched one to one
// with a truth file's, and the figures of the match (docs/patterns.md,
// "Evaluation against a ground truth").
#include <algorithm>
#include <iomanip>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>

#include "tracefold/export.hpp"
#include "tracefold/patterns_truth.hpp"

namespace tracefold::patterns {

std::string short_event(const Alphabet& alphabet, Symbol s, PeerMode mode) {
  // describe() gives `send(+1, comm 0, tag 7)` or `allreduce(comm 0)`:
  // the communicator and tag are the program's numbering, not its shape.
  const std::string d = alphabet.describe(s, mode);
  const auto open = d.find('(');
  if (open == std::string::npos) return d;
  if (d.compare(open + 1, 5, "comm ") == 0) return d.substr(0, open);
  const auto comma = d.find(", comm ", open);
  return comma == std::string::npos ? d : d.substr(0, comma) + ")";
}

std::vector<Reported> reported_patterns(const Result& r, PeerMode mode) {
  // Which group holds each rank's per-process patterns.
  std::map<int32_t, const RankPatterns*> group_of;
  for (const RankPatterns& g : r.groups)
    g.ranks.for_each([&](int32_t rank) { group_of[rank] = &g; });
  std::vector<Reported> out;
  for (std::size_t i = 0; i < r.global.size(); ++i) {
    const GlobalPattern& g = r.global[i];
    Reported rep;
    rep.id = "G" + std::to_string(i + 1);
    std::vector<int32_t> ranks;
    std::set<std::string> contexts;
    std::map<int32_t, std::set<std::string>> events;
    for (const auto& [rank, p] : g.patterns) {
      ranks.push_back(rank);
      const RankPatterns::Entry& e = group_of.at(rank)->patterns.at(static_cast<std::size_t>(p));
      contexts.insert(e.context);
      for (Symbol s : e.pattern.symbols) events[rank].insert(short_event(r.alphabet, s, mode));
    }
    rep.ranks = Ranklist::from_ranks(ranks);
    rep.contexts.assign(contexts.begin(), contexts.end());
    // Ranks with equal events are one role.
    std::map<std::set<std::string>, std::vector<int32_t>> roles;
    for (const auto& [rank, ev] : events) roles[ev].push_back(rank);
    for (auto& [ev, rs] : roles)
      rep.roles.push_back({Ranklist::from_ranks(std::move(rs)), {ev.begin(), ev.end()}});
    std::map<std::size_t, std::size_t> counts;
    for (const GlobalPattern::Order& o : g.order) ++counts[o.occurrences];
    std::size_t best = 0;
    for (const auto& [occ, n] : counts)
      if (n >= best) best = n, rep.occurrences = occ;
    rep.shape = g.shape.kind == ShapeKind::kUnclassified ? "unclassified" : g.shape.name;
    rep.params = g.shape.params;
    out.push_back(std::move(rep));
  }
  return out;
}

namespace {

// On intervals: |A & B| = |A| + |B| - |A | B|.
double jaccard(const Ranklist& a, const Ranklist& b) {
  const std::size_t either = a.united(b).size();
  const std::size_t both = a.size() + b.size() - either;
  return either == 0 ? 1.0 : static_cast<double>(both) / static_cast<double>(either);
}

bool context_agrees(const std::string& truth, const std::vector<std::string>& reported) {
  return truth == "*" || std::find(reported.begin(), reported.end(), truth) != reported.end();
}

// Shape and every parameter the truth gives; what disagrees goes to `errors`.
void judge(const TruthPattern& t, const Reported& r, Evaluation::Pair& p) {
  if (t.shape != r.shape) p.naming_errors.push_back("shape " + r.shape + ", expected " + t.shape);
  for (const auto& [key, want] : t.params) {
    auto it = std::find_if(r.params.begin(), r.params.end(),
                           [&](const auto& kv) { return kv.first == key; });
    if (it == r.params.end())
      p.naming_errors.push_back(key + " missing, expected " + want);
    else if (it->second != want)
      p.naming_errors.push_back(key + " " + it->second + ", expected " + want);
  }
  p.named = p.naming_errors.empty();
  if (t.occurrences) p.occurrences_agree = *t.occurrences == r.occurrences;
  if (!t.roles.empty()) {
    // Every rank of a truth role makes exactly the role's events.
    bool ok = true;
    for (const Role& role : t.roles)
      role.ranks.for_each([&](int32_t rank) {
        auto it = std::find_if(r.roles.begin(), r.roles.end(),
                               [&](const Role& rr) { return rr.ranks.contains(rank); });
        if (it == r.roles.end() || it->events != role.events) ok = false;
      });
    p.roles_agree = ok;
  }
}

double share(std::size_t part, std::size_t whole) {
  return whole == 0 ? 1.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

Evaluation evaluate(const Truth& truth, const std::vector<Reported>& reported,
                    const Result::Cover& cover, const Alphabet& alphabet, PeerMode mode) {
  Evaluation e;
  e.truth_patterns = truth.patterns.size();
  e.reported_patterns = reported.size();
  // A pattern split in two (the same ranks and context) has two equally
  // overlapping candidates; the one that agrees with the truth more is the
  // likelier counterpart, so naming disagreements break the tie.
  std::vector<Evaluation::Pair> cands;
  for (std::size_t t = 0; t < truth.patterns.size(); ++t)
    for (std::size_t r = 0; r < reported.size(); ++r) {
      if (!context_agrees(truth.patterns[t].context, reported[r].contexts)) continue;
      Evaluation::Pair p;
      p.truth = t;
      p.reported = r;
      p.overlap = jaccard(truth.patterns[t].ranks, reported[r].ranks);
      if (p.overlap < kMinOverlap) continue;
      judge(truth.patterns[t], reported[r], p);
      cands.push_back(std::move(p));
    }
  std::stable_sort(cands.begin(), cands.end(), [](const auto& a, const auto& b) {
    if (a.overlap != b.overlap) return a.overlap > b.overlap;
    if (a.naming_errors.size() != b.naming_errors.size())
      return a.naming_errors.size() < b.naming_errors.size();
    return a.truth != b.truth ? a.truth < b.truth : a.reported < b.reported;
  });
  std::vector<bool> t_used(truth.patterns.size()), r_used(reported.size());
  for (Evaluation::Pair& c : cands) {
    if (t_used[c.truth] || r_used[c.reported]) continue;
    t_used[c.truth] = r_used[c.reported] = true;
    e.pairs.push_back(std::move(c));
  }
  std::sort(e.pairs.begin(), e.pairs.end(),
            [](const auto& a, const auto& b) { return a.truth < b.truth; });
  for (std::size_t t = 0; t < t_used.size(); ++t)
    if (!t_used[t]) e.missed.push_back(t);
  for (std::size_t r = 0; r < r_used.size(); ++r)
    if (!r_used[r]) e.spurious.push_back(r);
  e.precision = share(e.pairs.size(), reported.size());
  e.recall = share(e.pairs.size(), truth.patterns.size());
  const auto named = static_cast<std::size_t>(
      std::count_if(e.pairs.begin(), e.pairs.end(), [](const auto& p) { return p.named; }));
  e.naming = share(named, e.pairs.size());
  // Coverage: events in one reported pattern, and single events the truth
  // lists (each truth singleton takes up to its count per rank).
  e.events = cover.events;
  e.in_several = cover.in_several;
  std::map<std::pair<std::size_t, int32_t>, std::size_t> used;  // (singleton, rank) -> events
  for (const Result::Cover::Single& s : cover.singles) {
    const std::string ev = short_event(alphabet, s.symbol, mode);
    std::map<std::size_t, std::vector<int32_t>> left_over;  // count -> ranks
    s.ranks.for_each([&](int32_t rank) {
      std::size_t left = s.count;
      for (std::size_t k = 0; k < truth.singletons.size() && left > 0; ++k) {
        const TruthSingleton& ts = truth.singletons[k];
        if (!ts.ranks.contains(rank) || (ts.context != "*" && ts.context != s.context) ||
            (ts.event && *ts.event != ev))
          continue;
        std::size_t& u = used[{k, rank}];
        const std::size_t take =
            ts.count ? std::min(left, *ts.count - std::min(u, *ts.count)) : left;
        u += take;
        left -= take;
        e.listed_singles += take;
      }
      e.unlisted_singles += left;
      if (left > 0) left_over[left].push_back(rank);
    });
    for (auto& [count, ranks] : left_over)
      e.unlisted.push_back({Ranklist::from_ranks(std::move(ranks)), s.context, ev, count});
  }
  e.covered = cover.in_one + e.listed_singles;
  e.coverage = share(e.covered, e.events);
  return e;
}

void print_evaluation(std::ostream& out, const Evaluation& e, const Truth& truth,
                      const std::vector<Reported>& reported) {
  auto pct = [](double v) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << v * 100 << "%";
    return s.str();
  };
  const std::size_t named = static_cast<std::size_t>(
      std::count_if(e.pairs.begin(), e.pairs.end(), [](const auto& p) { return p.named; }));
  out << "truth " << truth.file << ": " << e.truth_patterns << " expected, " << e.reported_patterns
      << " reported, " << e.pairs.size() << " matched\n";
  for (const Evaluation::Pair& p : e.pairs) {
    const TruthPattern& t = truth.patterns[p.truth];
    const Reported& r = reported[p.reported];
    out << "  " << t.id << " = " << r.id << ": ranks " << human_ranks(r.ranks) << ", overlap "
        << pct(p.overlap) << ", " << r.shape << (p.named ? ", named" : ", misnamed");
    if (p.occurrences_agree)
      out << ", occurrences " << r.occurrences
          << (*p.occurrences_agree ? "" : " (expected " + std::to_string(*t.occurrences) + ")");
    if (p.roles_agree) out << (*p.roles_agree ? ", roles agree" : ", roles differ");
    out << "\n";
    for (const std::string& err : p.naming_errors) out << "    " << err << "\n";
  }
  for (std::size_t t : e.missed)
    out << "  " << truth.patterns[t].id << " missed: " << truth.patterns[t].shape << " on ranks "
        << human_ranks(truth.patterns[t].ranks) << " in " << truth.patterns[t].context << "\n";
  for (std::size_t r : e.spurious) {
    out << "  " << reported[r].id << " not expected: " << reported[r].shape << " on ranks "
        << human_ranks(reported[r].ranks) << " in ";
    for (std::size_t i = 0; i < reported[r].contexts.size(); ++i)
      out << (i ? ", " : "") << reported[r].contexts[i];
    out << "\n";
  }
  for (const Evaluation::Unlisted& u : e.unlisted)
    out << "  single " << u.event << " in " << u.context << " on ranks " << human_ranks(u.ranks)
        << ": " << u.count << (u.count == 1 ? " event" : " events") << " per rank, not listed\n";
  out << "precision " << pct(e.precision) << " (" << e.pairs.size() << " of " << e.reported_patterns
      << " reported)\n"
      << "recall " << pct(e.recall) << " (" << e.pairs.size() << " of " << e.truth_patterns
      << " expected)\n"
      << "naming " << pct(e.naming) << " (" << named << " of " << e.pairs.size() << " matched)\n"
      << "coverage " << pct(e.coverage) << " (" << e.covered << " of " << e.events << " events; "
      << e.listed_singles << " listed singles, " << e.unlisted_singles << " unlisted, "
      << e.in_several << " in several patterns)\n";
}

}  // namespace tracefold::patterns
