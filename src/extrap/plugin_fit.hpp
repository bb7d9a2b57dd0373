// The plugin path's fitting of one field (plugin_fit.cpp), shared with its
// driver (plugin_path.cpp): the inputs, the plugin's sequences and the
// layouts they are fitted over.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "internal.hpp"
#include "tracefold/extrap/scale_model.hpp"

namespace tracefold::extrap::detail {

// A number per input (the same on every rank of an input), then fitted.
struct PerInput {
  std::vector<std::optional<int64_t>> v;
  bool conflict = false;
  void set(std::size_t k, int64_t x) {
    if (v[k] && *v[k] != x) conflict = true;
    v[k] = x;
  }
};

// The inputs and the plugin a field is fitted against; the structural
// numbers (trip and repeat counts) try the plugin's sequences first.
struct PluginFitter {
  const std::vector<ExtrapInput>& in;
  const ExtrapPlugin& plugin;
  const std::vector<PluginSequence>& seqs;
  const std::vector<std::vector<int64_t>>& sizes;  // per input
  const std::vector<int64_t>& target;
  int64_t world_target = 0;

  std::vector<int64_t> eval(int s, std::size_t k, int64_t rank) const {
    return seqs[static_cast<std::size_t>(s)].values({rank, in[k].trace.world_size, sizes[k]});
  }
  std::vector<int64_t> eval_target(int s, int64_t rank) const {
    return seqs[static_cast<std::size_t>(s)].values({rank, world_target, target});
  }

  // Fits per-input numbers over the sizes; nullopt when it does not fit.
  std::optional<int64_t> fit(const PerInput& p, std::string& formula) const {
    if (p.conflict) return std::nullopt;
    std::vector<Observation> obs;
    for (std::size_t k = 0; k < p.v.size(); ++k)
      if (p.v[k]) obs.push_back({sizes[k], *p.v[k]});
    if (obs.empty()) return std::nullopt;
    const ValueFit f = fit_value(obs, target);
    if (f.status != ValueFit::Status::kOk) return std::nullopt;
    formula = f.formula;
    return f.value;
  }

  // A structural number (trip count, repeat count): a constant, a constant
  // multiple of a one-number plugin sequence, else fitted over the sizes.
  std::optional<int64_t> fit_structure(const PerInput& p, std::string& formula) const {
    if (p.conflict) return std::nullopt;
    std::optional<int64_t> first;
    bool constant = true;
    for (const auto& x : p.v)
      if (x) {
        if (first && *first != *x) constant = false;
        if (!first) first = x;
      }
    if (!first) return std::nullopt;
    if (constant) {
      formula = std::to_string(*first);
      return first;
    }
    for (std::size_t s = 0; s < seqs.size(); ++s) {
      if (seqs[s].peers) continue;
      std::optional<int64_t> a;
      bool ok = true;
      for (std::size_t k = 0; ok && k < p.v.size(); ++k) {
        if (!p.v[k]) continue;
        const auto q = eval(static_cast<int>(s), k, 0);
        if (q.size() != 1 || q[0] == 0 || *p.v[k] % q[0] != 0) {
          ok = false;
          break;
        }
        const int64_t m = *p.v[k] / q[0];
        if (a && *a != m) ok = false;
        a = m;
      }
      const auto qt = eval_target(static_cast<int>(s), 0);
      if (ok && a && qt.size() == 1) {
        formula = (*a == 1 ? "" : std::to_string(*a) + "*") + seqs[s].name;
        return *a * qt[0];
      }
    }
    return fit(p, formula);
  }
};

/// One elastic of one node: a segmentation of every rank's values into
/// plugin sequences and fitted numbers, checked on every rank of every
/// input and evaluated on every rank of the target. `per_input[k]`: the
/// elastic in input k (nullptr: absent there, refused unless absent in
/// all); `peer`: values are relative peers; `structure`: trip or repeat
/// counts. Appends the laws to `explain`; throws ExtrapError.
Elastic fit_plugin_elastic(const PluginFitter& f, const std::vector<const Elastic*>& per_input,
                           const std::string& what, bool peer, bool structure,
                           std::vector<std::string>& explain);

}  // namespace tracefold::extrap::detail
