// The plugin registry and the built-in CG plugin (plugin.hpp).
#include "tracefold/extrap/plugin.hpp"

#include <mutex>

namespace tracefold::extrap {

namespace {

int64_t log2_exact(int64_t x) {
  int64_t l = 0;
  while ((int64_t{1} << l) < x) ++l;
  return l;
}

class CgPlugin final : public ExtrapPlugin {
 public:
  std::string name() const override { return "cg"; }
  std::string summary() const override {
    return "NPB CG: 2^k ranks in R rows of C = R or 2R columns; power-of-two row partners and "
           "the transpose partner";
  }
  std::vector<std::string> size_names() const override { return {"C", "R"}; }
  std::vector<int64_t> layout(int64_t world) const override {
    if (world < 1 || (world & (world - 1)) != 0)
      throw PluginError(std::to_string(world) +
                        " ranks: the cg pattern needs a power of two (2, 4, 8, ...)");
    const int64_t rows = int64_t{1} << (log2_exact(world) / 2);
    return {world / rows, rows};
  }
  std::vector<PluginSequence> sequences() const override {
    // The peer sequences come first: a segmentation tries sequences in
    // this order, and the numbers below would also match short runs of
    // plain values.
    return {
        {"row-down", "row*C + (col XOR 2^i), i = L-1 .. 0", true,
         [](const PluginContext& c) { return row_partners(c, true); }},
        {"row-up", "row*C + (col XOR 2^i), i = 0 .. L-1", true,
         [](const PluginContext& c) { return row_partners(c, false); }},
        {"transpose", "(r mod R)*R + r/R if C = R, else 2*(((r/2) mod R)*R + (r/2)/R) + r mod 2",
         true, [](const PluginContext& c) { return std::vector<int64_t>{transpose(c)}; }},
        {"levels-down", "L-1, ..., 1, 0", false,
         [](const PluginContext& c) { return levels(c, true, false); }},
        {"levels-up", "0, 1, ..., L-1", false,
         [](const PluginContext& c) { return levels(c, false, false); }},
        {"powers-down", "2^(L-1), ..., 2, 1", false,
         [](const PluginContext& c) { return levels(c, true, true); }},
        {"powers-up", "1, 2, ..., 2^(L-1)", false,
         [](const PluginContext& c) { return levels(c, false, true); }},
        {"L", "L = log2 C (the number of row partners)", false,
         [](const PluginContext& c) { return std::vector<int64_t>{log2_exact(c.sizes.at(0))}; }},
    };
  }

 private:
  static std::vector<int64_t> row_partners(const PluginContext& c, bool down) {
    const int64_t cols = c.sizes.at(0), l = log2_exact(cols);
    const int64_t row = c.rank / cols, col = c.rank % cols;
    std::vector<int64_t> out;
    for (int64_t k = 0; k < l; ++k) {
      const int64_t i = down ? l - 1 - k : k;
      out.push_back(row * cols + (col ^ (int64_t{1} << i)));
    }
    return out;
  }
  static int64_t transpose(const PluginContext& c) {
    const int64_t cols = c.sizes.at(0), rows = c.sizes.at(1), r = c.rank;
    if (cols == rows) return (r % rows) * rows + r / rows;
    return 2 * (((r / 2) % rows) * rows + r / 2 / rows) + r % 2;
  }
  static std::vector<int64_t> levels(const PluginContext& c, bool down, bool powers) {
    const int64_t l = log2_exact(c.sizes.at(0));
    std::vector<int64_t> out;
    for (int64_t k = 0; k < l; ++k) {
      const int64_t i = down ? l - 1 - k : k;
      out.push_back(powers ? int64_t{1} << i : i);
    }
    return out;
  }
};

struct Registry {
  std::mutex mutex;
  std::vector<std::shared_ptr<const ExtrapPlugin>> plugins;
};

Registry& registry() {
  // Built once, on first use: no order-of-initialisation question between
  // translation units that register plugins from static objects.
  static Registry* r = [] {
    auto* reg = new Registry;
    reg->plugins.push_back(make_cg_plugin());
    return reg;
  }();
  return *r;
}

}  // namespace

std::shared_ptr<const ExtrapPlugin> make_cg_plugin() {
  return std::make_shared<CgPlugin>();
}

void register_plugin(std::shared_ptr<const ExtrapPlugin> plugin) {
  if (!plugin) throw std::invalid_argument("register_plugin: null plugin");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& p : r.plugins)
    if (p->name() == plugin->name())
      throw std::invalid_argument("an extrapolation plugin named '" + plugin->name() +
                                  "' is registered already");
  r.plugins.push_back(std::move(plugin));
}

const ExtrapPlugin* find_plugin(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& p : r.plugins)
    if (p->name() == name) return p.get();
  return nullptr;
}

std::vector<const ExtrapPlugin*> registered_plugins() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<const ExtrapPlugin*> out;
  for (const auto& p : r.plugins) out.push_back(p.get());
  return out;
}

}  // namespace tracefold::extrap
