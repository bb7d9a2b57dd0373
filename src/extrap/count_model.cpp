// The statistical model of data-dependent count vectors (--model-counts):
// an all-to-all whose per-peer counts come from the program's data (a
// bucketed sort's key exchange) has no law of the grid, so its vectors at
// the target are drawn from a distribution fitted over the inputs.
// docs/extrapolate.md ("Lossy extrapolation: data-dependent counts")
// states the model.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "internal.hpp"
#include "tracefold/extrap/timing_models.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold::extrap::detail {

namespace {

FieldId field_id(const char* name) {
  return FieldTable::intern(name, FieldKind::kList);
}

// One input's vectors: counts[(e * P + i) * P + j] is what rank i sends to
// rank j in its e-th call.
struct InputVectors {
  int64_t ranks = 0, calls = 0;
  std::vector<int64_t> counts;
};

// Every rank's list values of `f`, call by call, as one matrix per call;
// nullopt with `why` when the field is missing on a rank, a call has no
// vector of the world's size, or the ranks make different numbers of calls.
std::optional<InputVectors> read_vectors(const ExtrapInput& in, const Node& node, FieldId f,
                                         std::string& why) {
  const int32_t p = in.trace.world_size;
  const Elastic* e = node.field(f);
  if (!e || node.ranks.size() != static_cast<std::size_t>(p)) {
    why = "not every rank makes the call";
    return std::nullopt;
  }
  InputVectors v;
  v.ranks = p;
  std::vector<std::vector<int64_t>> rows(static_cast<std::size_t>(p));
  for (const auto& entry : e->entries())
    entry.ranks.for_each([&](int32_t r) {
      if (r < p) rows[static_cast<std::size_t>(r)] = entry.values.to_vector();
    });
  for (int32_t r = 0; r < p; ++r) {
    const auto& row = rows[static_cast<std::size_t>(r)];
    if (row.size() % static_cast<std::size_t>(p + 1) != 0) {
      why = "rank " + std::to_string(r) + "'s vectors do not hold one count per rank";
      return std::nullopt;
    }
    const auto calls = static_cast<int64_t>(row.size() / static_cast<std::size_t>(p + 1));
    if (r == 0) v.calls = calls;
    if (calls != v.calls) {
      why = "ranks 0 and " + std::to_string(r) + " make the call " + std::to_string(v.calls) +
            " and " + std::to_string(calls) + " times";
      return std::nullopt;
    }
  }
  v.counts.assign(static_cast<std::size_t>(v.calls * p * p), 0);
  for (int32_t r = 0; r < p; ++r)
    for (int64_t c = 0; c < v.calls; ++c) {
      const auto* at = rows[static_cast<std::size_t>(r)].data() + c * (p + 1);
      if (at[0] != p || std::any_of(at + 1, at + 1 + p, [](int64_t x) { return x < 0; })) {
        why = "rank " + std::to_string(r) + "'s call " + std::to_string(c + 1) +
              " has no vector of " + std::to_string(p) + " counts";
        return std::nullopt;
      }
      std::copy(at + 1, at + 1 + p, v.counts.begin() + (c * p + r) * p);
    }
  return v;
}

// Whether `displs` holds the running sums of `counts` (call by call, rank by
// rank), as a program that packs its blocks back to back passes them.
bool running_sums(const InputVectors& counts, const InputVectors& displs) {
  const int64_t p = counts.ranks;
  if (displs.calls != counts.calls) return false;
  for (int64_t row = 0; row < counts.calls * p; ++row) {
    int64_t sum = 0;
    for (int64_t j = 0; j < p; ++j) {
      const auto at = static_cast<std::size_t>(row * p + j);
      if (displs.counts[at] != sum) return false;
      sum += counts.counts[at];
    }
  }
  return true;
}

// What the model is fitted to in one input.
struct Moments {
  double total = 0;  // elements a rank sends a call, mean over ranks and calls
  double cv = 0;     // spread of one peer's count around its rank's mean, over the mean
  int64_t least = 0, most = 0;
};

Moments moments(const InputVectors& v) {
  Moments m;
  const int64_t p = v.ranks, rows = v.calls * p;
  double sq = 0;
  m.least = v.counts.empty() ? 0 : v.counts[0];
  for (int64_t row = 0; row < rows; ++row) {
    const auto* at = v.counts.data() + row * p;
    const double sum = static_cast<double>(std::accumulate(at, at + p, int64_t{0}));
    m.total += sum;
    for (int64_t j = 0; j < p; ++j) {
      const double d = static_cast<double>(at[j]) - sum / static_cast<double>(p);
      sq += d * d;
      m.least = std::min(m.least, at[j]);
      m.most = std::max(m.most, at[j]);
    }
  }
  if (rows == 0) return m;
  m.total /= static_cast<double>(rows);
  const double mean = m.total / static_cast<double>(p);
  m.cv = mean > 0 ? std::sqrt(sq / static_cast<double>(rows * p)) / mean : 0.0;
  return m;
}

uint64_t mix(uint64_t z) {  // splitmix64's finalizer: a counter-based generator
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double uniform(uint64_t key) {  // in (0, 1)
  return (static_cast<double>(mix(key) >> 11) + 0.5) / 9007199254740992.0;
}

// `n` non-negative whole numbers summing to `sum`, each drawn around
// sum / n with relative spread `cv` (normal, cut at zero, then scaled to
// the sum; the units left over go to the largest remainders).
std::vector<int64_t> draw(int64_t n, int64_t sum, double cv, uint64_t key) {
  std::vector<double> x(static_cast<std::size_t>(n));
  const double mean = static_cast<double>(sum) / static_cast<double>(n);
  double total = 0;
  for (int64_t d = 0; d < n; ++d) {
    const uint64_t k = key * 0x100000001B3ull + static_cast<uint64_t>(d) * 2;
    const double z =
        std::sqrt(-2.0 * std::log(uniform(k))) * std::cos(6.283185307179586 * uniform(k + 1));
    x[static_cast<std::size_t>(d)] = std::max(0.0, mean * (1.0 + cv * z));
    total += x[static_cast<std::size_t>(d)];
  }
  std::vector<int64_t> out(static_cast<std::size_t>(n), 0);
  if (total <= 0) {
    for (int64_t d = 0; d < sum; ++d) ++out[static_cast<std::size_t>(d % n)];
    return out;
  }
  std::vector<std::pair<double, int64_t>> rest;
  int64_t given = 0;
  for (int64_t d = 0; d < n; ++d) {
    const double share = x[static_cast<std::size_t>(d)] * static_cast<double>(sum) / total;
    out[static_cast<std::size_t>(d)] = static_cast<int64_t>(std::floor(share));
    given += out[static_cast<std::size_t>(d)];
    rest.emplace_back(share - std::floor(share), d);
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (int64_t i = 0; given < sum; ++i, ++given)
    ++out[static_cast<std::size_t>(rest[static_cast<std::size_t>(i % n)].second)];
  return out;
}

// Where the model's draws go at p ranks: the first repeats * period
// ranks in `period` classes (rank i in class i mod period), the `rest`
// ranks after them each on its own.
struct CountLayout {
  int64_t period = 1, repeats = 1, rest = 0;
};

// The largest divisor of p up to kCountModelPeriod, when it gives at least
// kCountModelMinPeriod draws (or p itself is smaller): no rank over. A
// rank count with no such divisor (a prime above 64) would otherwise get a
// period so short that every peer got the same count; there the period
// from kCountModelMinPeriod to kCountModelPeriod that leaves the fewest
// ranks over (the longest on ties).
CountLayout count_layout(int64_t p) {
  for (int64_t d = std::min(p, kCountModelPeriod); d >= 1; --d)
    if (p % d == 0) {
      if (d >= std::min(p, kCountModelMinPeriod)) return {d, p / d, 0};
      break;
    }
  CountLayout best{kCountModelMinPeriod, p / kCountModelMinPeriod, p % kCountModelMinPeriod};
  for (int64_t g = kCountModelMinPeriod; g <= kCountModelPeriod; ++g)
    if (p % g <= best.rest) best = {g, p / g, p % g};
  return best;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : "%.3g", v);
  return buf;
}

}  // namespace

bool has_count_vectors(OpId op) {
  return op_traits(op).family == OpFamily::kAlltoallv;
}

bool is_count_vector(FieldId f) {
  static const FieldId c = field_id("counts"), d = field_id("displs"), rc = field_id("rcounts"),
                       rd = field_id("rdispls");
  return f == c || f == d || f == rc || f == rd;
}

std::string count_vector_refusal(const std::vector<ExtrapInput>& in,
                                 const std::vector<const Node*>& nodes, const std::string& label,
                                 FieldId f, int64_t target) {
  std::string seen;
  for (std::size_t k = 0; k < in.size(); ++k) {
    std::string why;
    const auto v = read_vectors(in[k], *nodes[k], f, why);
    if (!v) continue;
    const Moments m = moments(*v);
    seen += std::string(seen.empty() ? "" : "; ") + in[k].name + ": " + number(m.least) + " to " +
            number(m.most) + " to one peer, " + number(m.total) + " a rank in all";
  }
  return label + ", field " + FieldTable::name(f) +
         ": the per-peer counts differ from rank to rank and from call to call" +
         (seen.empty() ? std::string() : " (" + seen + ")") +
         ": they follow the program's data, not the grid, so no law gives them at " +
         std::to_string(target) +
         " ranks. --model-counts draws them from a statistical model instead (each rank's "
         "total and the spread of its per-peer counts, fitted as laws in the rank count; "
         "senders and receivers agree) and marks the output lossy (docs/extrapolate.md, "
         "Lossy extrapolation: data-dependent counts)";
}

std::vector<std::pair<FieldId, Elastic>> model_count_vectors(const std::vector<ExtrapInput>& in,
                                                             const std::vector<const Node*>& nodes,
                                                             const std::string& label,
                                                             const Node& target_node, int64_t p,
                                                             uint64_t seed,
                                                             std::vector<std::string>& explain) {
  static const FieldId counts_f = field_id("counts"), displs_f = field_id("displs"),
                       rcounts_f = field_id("rcounts"), rdispls_f = field_id("rdispls");
  std::vector<TimePoint> totals, spreads;
  std::string seen;
  for (std::size_t k = 0; k < in.size(); ++k) {
    std::string why;
    const auto fail = [&](const std::string& field) {
      throw CountModelError(in[k].name + ": " + label + ", field " + field + ": " + why +
                            ": the count model needs every rank to make the call equally often "
                            "on the world, with one count per rank");
    };
    const auto c = read_vectors(in[k], *nodes[k], counts_f, why);
    if (!c) fail("counts");
    if (nodes[k]->field(rcounts_f)) {
      const auto rc = read_vectors(in[k], *nodes[k], rcounts_f, why);
      if (!rc) fail("rcounts");
      const int64_t q = c->ranks;
      for (int64_t e = 0; e < c->calls; ++e)
        for (int64_t i = 0; i < q; ++i)
          for (int64_t j = 0; j < q; ++j)
            if (rc->counts[static_cast<std::size_t>((e * q + j) * q + i)] !=
                c->counts[static_cast<std::size_t>((e * q + i) * q + j)])
              throw CountModelError(in[k].name + ": " + label + ", field rcounts: in call " +
                                    std::to_string(e + 1) + " rank " + std::to_string(j) +
                                    " expects other than rank " + std::to_string(i) +
                                    " sends it: the count model needs the receive counts to be "
                                    "the send counts seen from the receiver (one datatype)");
    }
    for (const auto& [df, cf] : {std::pair{displs_f, counts_f}, std::pair{rdispls_f, rcounts_f}}) {
      if (!nodes[k]->field(df)) continue;
      const auto d = read_vectors(in[k], *nodes[k], df, why);
      const auto cc = cf == counts_f ? c : read_vectors(in[k], *nodes[k], cf, why);
      if (!d || !cc || !running_sums(*cc, *d))
        throw CountModelError(in[k].name + ": " + label + ", field " + FieldTable::name(df) +
                              ": the displacements are not the running sums of " +
                              FieldTable::name(cf) +
                              ": the count model lays the blocks out back to back only");
    }
    const Moments m = moments(*c);
    totals.push_back({static_cast<double>(c->ranks), m.total});
    spreads.push_back({static_cast<double>(c->ranks), m.cv});
    seen += std::string(seen.empty() ? "" : ", ") + number(m.total) + " (cv " + number(m.cv) +
            ") at " + std::to_string(c->ranks);
  }
  // Every target rank makes the call equally often (the exact count fit
  // said how often).
  int64_t calls = -1;
  for (const auto& e : target_node.count.entries()) {
    if (calls >= 0 && e.values.sum() != calls)
      throw CountModelError(label +
                            ": the target's ranks make the call different numbers of "
                            "times: the count model needs them to make it equally often");
    calls = e.values.sum();
  }
  if (target_node.ranks.size() != static_cast<std::size_t>(p))
    throw CountModelError(label +
                          ": not every target rank makes the call: the count model needs "
                          "an all-to-all over every rank");
  const ModelFit total_fit = choose_time_model(totals).best;
  const bool flat_cv =
      std::all_of(spreads.begin(), spreads.end(), [](const TimePoint& t) { return t.value == 0; });
  const ModelFit cv_fit = flat_cv ? ModelFit{} : choose_time_model(spreads).best;
  const double total = std::max(0.0, std::round(total_fit.at(static_cast<double>(p))));
  const double cv = flat_cv ? 0.0 : std::max(0.0, cv_fit.at(static_cast<double>(p)));
  const CountLayout lay = count_layout(p);
  const int64_t g = lay.period, q = lay.repeats, r = lay.rest;
  // Body rank i sends draw (j - i) mod g to body rank j: a circulant of
  // period g, so every body rank sends and receives q times the g draws,
  // and ranks i, i + g, ... share one vector (the output stays small). The
  // r ranks over (only when no divisor of p gives enough draws) exchange
  // `flat` with every body rank and the rest of the total among themselves,
  // again a circulant: every rank still sends and receives the same total.
  int64_t flat = 0, per_period = 0, per_rest = 0, sent = 0;
  if (r == 0) {
    per_period =
        static_cast<int64_t>(std::llround(total * static_cast<double>(g) / static_cast<double>(p)));
    sent = per_period * q;
  } else {
    // A rank sends r * flat + q * per_period (body) or q * g * flat +
    // per_rest (rest): the total nearest the fitted one of the first form
    // whose per_rest is not negative.
    const auto t = static_cast<int64_t>(total);
    flat = t / p;
    const int64_t down = r * flat + q * ((t - r * flat) / q), up = down + q;
    sent = down >= q * g * flat && t - down <= up - t ? down : up;
    per_period = (sent - r * flat) / q;
    per_rest = sent - q * g * flat;
  }
  std::vector<std::vector<int64_t>> draws, rest_draws;  // [call][d]
  for (int64_t e = 0; e < calls; ++e) {
    const uint64_t key = mix(seed + static_cast<uint64_t>(e) * 0x9E37ull);
    draws.push_back(draw(g, per_period, cv, key));
    if (r > 0) rest_draws.push_back(draw(r, per_rest, cv, mix(key ^ 0x5EEDull)));
  }
  // Row a of the circulant of `v` (n values): what a sends the others, or
  // with `receive` what it expects from them.
  const auto circulant_row = [](const std::vector<int64_t>& v, int64_t a, bool receive) {
    const auto n = static_cast<int64_t>(v.size());
    std::vector<int64_t> row(v.size());
    for (int64_t j = 0; j < n; ++j) {
      const int64_t off = receive ? (a - j) : (j - a);
      row[static_cast<std::size_t>(j)] = v[static_cast<std::size_t>(((off % n) + n) % n)];
    }
    return row;
  };
  auto vectors = [&](bool receive) {
    Elastic out;
    for (int64_t a = 0; a < g + r; ++a) {
      const bool body = a < g;
      std::vector<ValueSeq::Run> runs;
      for (int64_t e = 0; e < calls; ++e) {
        runs.push_back({{p}, 1});
        if (body) {
          runs.push_back({circulant_row(draws[static_cast<std::size_t>(e)], a, receive),
                          static_cast<uint64_t>(q)});
          if (r > 0) runs.push_back({{flat}, static_cast<uint64_t>(r)});
        } else {
          runs.push_back({{flat}, static_cast<uint64_t>(q * g)});
          runs.push_back(
              {circulant_row(rest_draws[static_cast<std::size_t>(e)], a - g, receive), 1});
        }
      }
      const Ranklist ranks =
          body ? Ranklist::from_sections({{static_cast<int32_t>(a),
                                           {{static_cast<int32_t>(q), static_cast<int32_t>(g)}}}})
               : Ranklist::single(static_cast<int32_t>(q * g + a - g));
      out.entries().push_back({ValueSeq::from_runs(std::move(runs), false), ranks});
    }
    return out;
  };
  std::vector<std::pair<FieldId, Elastic>> fields;
  fields.emplace_back(counts_f, vectors(false));
  if (std::any_of(nodes.begin(), nodes.end(), [](const Node* n) { return n->field(rcounts_f); }))
    fields.emplace_back(rcounts_f, vectors(true));
  const bool displs = std::any_of(nodes.begin(), nodes.end(), [](const Node* n) {
    return n->field(displs_f) || n->field(rdispls_f);
  });
  const std::string gs = std::to_string(g);
  const std::string rs = std::to_string(r) + (r == 1 ? " rank" : " ranks");
  const std::string first = std::to_string(q * g);
  const std::string layout =
      r == 0
          ? std::string()
          : "; " + std::to_string(p) + " has no divisor from " +
                std::to_string(kCountModelMinPeriod) + " to " + std::to_string(kCountModelPeriod) +
                ", so the first " + first + " ranks take the draws, and the " + rs +
                " over (from rank " + first + (r == 1 ? ") exchanges " : ") exchange ") +
                std::to_string(flat) + " with each of them and " + std::to_string(per_rest) +
                " a call among themselves (" + std::to_string(r) +
                (r == 1 ? " seeded draw" : " seeded draws") + ", rank " + first +
                " + t sending draw (u - t) mod " + std::to_string(r) + " to rank " + first +
                " + u)";
  explain.push_back("    counts: modelled (lossy): a rank sends [" + total_fit.formula() +
                    "] elements a call (inputs: " + seen + "), each peer's count spread by cv [" +
                    (flat_cv ? std::string("0") : cv_fit.formula()) + "]; at " + std::to_string(p) +
                    " ranks " + number(static_cast<double>(sent)) + " a rank (" +
                    number(static_cast<double>(sent) / static_cast<double>(p)) +
                    " a peer on average, cv " + number(cv) + "): " + gs +
                    " seeded draws a call, rank i sending draw (j - i) mod " + gs + " to rank j" +
                    layout + "; rcounts the same seen from the receiver" +
                    (displs ? "; displs and rdispls left out (the inputs' are the running sums "
                              "of the counts)"
                            : ""));
  if (static_cast<double>(sent) != total && total > 0) {
    const std::string off =
        r == 0 ? std::to_string(g) + " draws repeated " + std::to_string(q) +
                     " times give a rank a multiple of " + std::to_string(q) + " elements"
               : std::to_string(g) + " draws repeated " + std::to_string(q) + " times and " + rs +
                     " over that receive " + std::to_string(flat) + " each give a rank " +
                     std::to_string(r * flat) + " plus a multiple of " + std::to_string(q) +
                     " elements";
    // Within 5 % the totals keep their meaning; beyond, the counts are
    // mostly zeros that the period cannot place.
    if (std::abs(static_cast<double>(sent) - total) > 0.05 * total)
      throw CountModelError(label + ", field counts: at " + std::to_string(p) +
                            " ranks the count model's " + off + ", " +
                            number(static_cast<double>(sent)) + " against the fitted " +
                            number(total) + " (" + number(total / static_cast<double>(p)) +
                            " a peer): too few elements a peer for the model; extrapolate to "
                            "fewer ranks, or record the program with more data a rank");
    explain.push_back("    counts: " + number(static_cast<double>(sent)) + " a rank instead of " +
                      number(total) + ": " + off);
  }
  return fields;
}

}  // namespace tracefold::extrap::detail
