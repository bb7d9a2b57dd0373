// CUBE4 writer: the profile model, anchor.xml and the tar layout of a
// .cubex file (format notes in include/tracefold/cube4.hpp).

#include "tracefold/cube4.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tracefold {

int32_t Cube4Profile::add_metric(Cube4Metric m) {
  if (m.parent < -1 || m.parent >= static_cast<int32_t>(metrics.size()))
    throw Cube4Error("cube: metric '" + m.uniq_name + "' has parent " + std::to_string(m.parent) +
                     ", not a metric added before it");
  metrics.push_back(std::move(m));
  return static_cast<int32_t>(metrics.size() - 1);
}

int32_t Cube4Profile::add_region(Cube4Region r) {
  regions.push_back(std::move(r));
  return static_cast<int32_t>(regions.size() - 1);
}

int32_t Cube4Profile::add_cnode(int32_t region, int32_t parent) {
  if (region < 0 || region >= static_cast<int32_t>(regions.size()))
    throw Cube4Error("cube: call-tree node refers to region " + std::to_string(region) + " of " +
                     std::to_string(regions.size()));
  if (parent < -1 || parent >= static_cast<int32_t>(cnodes.size()))
    throw Cube4Error("cube: call-tree node has parent " + std::to_string(parent) +
                     ", not a node added before it");
  cnodes.push_back({region, parent});
  return static_cast<int32_t>(cnodes.size() - 1);
}

void Cube4Profile::set_ranks(int32_t ranks) {
  nodes.assign(1, "node 0");
  rank_node.assign(static_cast<std::size_t>(std::max(ranks, 0)), 0);
}

void Cube4Profile::add(int32_t metric, int32_t cnode, int32_t rank, double v) {
  values[{metric, cnode, rank}] += v;
}

double Cube4Profile::value(int32_t metric, int32_t cnode, int32_t rank) const {
  const auto it = values.find({metric, cnode, rank});
  return it == values.end() ? 0.0 : it->second;
}

void Cube4Profile::validate() const {
  const auto nm = static_cast<int32_t>(metrics.size());
  const auto nc = static_cast<int32_t>(cnodes.size());
  const auto nr = static_cast<int32_t>(rank_node.size());
  if (metrics.empty()) throw Cube4Error("cube: no metrics (CUBE needs at least one)");
  if (cnodes.empty()) throw Cube4Error("cube: no call-tree nodes (CUBE needs at least one)");
  if (rank_node.empty()) throw Cube4Error("cube: no ranks (call set_ranks)");
  for (int32_t i = 0; i < nm; ++i) {
    const auto& m = metrics[static_cast<std::size_t>(i)];
    // Parents before children keeps the tree acyclic by construction.
    if (m.parent < -1 || m.parent >= i)
      throw Cube4Error("cube: metric " + std::to_string(i) + " ('" + m.uniq_name +
                       "') has parent " + std::to_string(m.parent) +
                       ", which is not an earlier metric");
    if (m.uniq_name.empty()) throw Cube4Error("cube: metric " + std::to_string(i) + " has no name");
    for (int32_t j = 0; j < i; ++j)
      if (metrics[static_cast<std::size_t>(j)].uniq_name == m.uniq_name)
        throw Cube4Error("cube: metrics " + std::to_string(j) + " and " + std::to_string(i) +
                         " share the unique name '" + m.uniq_name + "'");
  }
  for (int32_t i = 0; i < nc; ++i) {
    const auto& c = cnodes[static_cast<std::size_t>(i)];
    if (c.region < 0 || c.region >= static_cast<int32_t>(regions.size()))
      throw Cube4Error("cube: call-tree node " + std::to_string(i) + " refers to region " +
                       std::to_string(c.region) + " of " + std::to_string(regions.size()));
    if (c.parent < -1 || c.parent >= i)
      throw Cube4Error("cube: call-tree node " + std::to_string(i) + " has parent " +
                       std::to_string(c.parent) + ", which is not an earlier node");
  }
  for (int32_t r = 0; r < nr; ++r) {
    const int32_t n = rank_node[static_cast<std::size_t>(r)];
    if (n < 0 || n >= static_cast<int32_t>(nodes.size()))
      throw Cube4Error("cube: rank " + std::to_string(r) + " is on node " + std::to_string(n) +
                       " of " + std::to_string(nodes.size()));
  }
  for (const auto& [key, v] : values) {
    const auto [m, c, r] = key;
    if (m < 0 || m >= nm || c < 0 || c >= nc || r < 0 || r >= nr)
      throw Cube4Error("cube: value for metric " + std::to_string(m) + ", call-tree node " +
                       std::to_string(c) + ", rank " + std::to_string(r) +
                       " is outside the profile (" + std::to_string(nm) + " metrics, " +
                       std::to_string(nc) + " nodes, " + std::to_string(nr) + " ranks)");
  }
}

namespace {

std::vector<std::vector<int32_t>> children_of(const std::vector<int32_t>& parents) {
  std::vector<std::vector<int32_t>> kids(parents.size() + 1);
  for (std::size_t i = 0; i < parents.size(); ++i)
    kids[static_cast<std::size_t>(parents[i] + 1)].push_back(static_cast<int32_t>(i));
  return kids;  // kids[0]: the roots; kids[i + 1]: children of i
}

std::vector<int32_t> cnode_parents(const Cube4Profile& p) {
  std::vector<int32_t> parents;
  for (const auto& c : p.cnodes) parents.push_back(c.parent);
  return parents;
}

// CUBE reads a metric's rows in this depth-first order (what cubelib
// calls the exclusive metric's enumeration), so ids are given in it.
void depth_first(const std::vector<std::vector<int32_t>>& kids, int32_t node,
                 std::vector<int32_t>& order) {
  order.push_back(node);
  for (int32_t k : kids[static_cast<std::size_t>(node + 1)]) depth_first(kids, k, order);
}

std::string escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

void put_metric(std::ostream& x, const Cube4Profile& p,
                const std::vector<std::vector<int32_t>>& kids, int32_t i) {
  const auto& m = p.metrics[static_cast<std::size_t>(i)];
  x << "<metric id=\"" << i << "\" type=\"EXCLUSIVE\">\n"
    << "<disp_name>" << escape(m.disp_name.empty() ? m.uniq_name : m.disp_name) << "</disp_name>\n"
    << "<uniq_name>" << escape(m.uniq_name) << "</uniq_name>\n"
    << "<dtype>DOUBLE</dtype>\n"
    << "<uom>" << escape(m.unit) << "</uom>\n"
    << "<url></url>\n"
    << "<descr>" << escape(m.description) << "</descr>\n";
  for (int32_t k : kids[static_cast<std::size_t>(i + 1)]) put_metric(x, p, kids, k);
  x << "</metric>\n";
}

void put_cnode(std::ostream& x, const Cube4Profile& p,
               const std::vector<std::vector<int32_t>>& kids, const std::vector<int32_t>& id_of,
               int32_t i) {
  x << "<cnode id=\"" << id_of[static_cast<std::size_t>(i)] << "\" calleeId=\""
    << p.cnodes[static_cast<std::size_t>(i)].region << "\">\n";
  for (int32_t k : kids[static_cast<std::size_t>(i + 1)]) put_cnode(x, p, kids, id_of, k);
  x << "</cnode>\n";
}

template <typename T>
void append(std::vector<uint8_t>& out, const T& v) {
  const auto* b = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), b, b + sizeof v);
}

// One ustar member: 512-byte header, data padded to 512 bytes.
void tar_member(std::vector<uint8_t>& out, const std::string& name,
                const std::vector<uint8_t>& data) {
  if (name.size() >= 100) throw Cube4Error("cube: member name too long: " + name);
  uint8_t h[512] = {};
  std::memcpy(h, name.data(), name.size());
  auto octal = [&](std::size_t at, std::size_t width, uint64_t v) {
    std::snprintf(reinterpret_cast<char*>(h + at), width, "%0*llo", static_cast<int>(width - 1),
                  static_cast<unsigned long long>(v));
  };
  octal(100, 8, 0644);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, data.size());
  // A fixed time stamp: the same profile gives the same bytes.
  octal(136, 12, 0);
  h[156] = '0';
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (uint8_t b : h) sum += b;
  std::snprintf(reinterpret_cast<char*>(h + 148), 8, "%06o", sum);
  h[155] = ' ';
  out.insert(out.end(), h, h + 512);
  out.insert(out.end(), data.begin(), data.end());
  out.resize(out.size() + (512 - data.size() % 512) % 512, 0);
}

}  // namespace

std::vector<int32_t> cube4_cnode_order(const Cube4Profile& profile) {
  const auto kids = children_of(cnode_parents(profile));
  std::vector<int32_t> order;
  order.reserve(profile.cnodes.size());
  for (int32_t root : kids[0]) depth_first(kids, root, order);
  return order;
}

std::string cube4_anchor_xml(const Cube4Profile& p) {
  p.validate();
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<cube version=\"4.4\">\n";
  x << "<attr key=\"Creator\" value=\"tracefold\"/>\n";
  for (const auto& [k, v] : p.attributes)
    x << "<attr key=\"" << escape(k) << "\" value=\"" << escape(v) << "\"/>\n";
  x << "<doc>\n<mirrors>\n</mirrors>\n</doc>\n<metrics>\n";
  std::vector<int32_t> metric_parents;
  for (const auto& m : p.metrics) metric_parents.push_back(m.parent);
  const auto metric_kids = children_of(metric_parents);
  for (int32_t root : metric_kids[0]) put_metric(x, p, metric_kids, root);
  x << "</metrics>\n<program>\n";
  for (std::size_t i = 0; i < p.regions.size(); ++i) {
    const auto& r = p.regions[i];
    x << "<region id=\"" << i << "\" mod=\"" << escape(r.file) << "\" begin=\""
      << (r.line > 0 ? r.line : -1) << "\" end=\"-1\">\n"
      << "<name>" << escape(r.name) << "</name>\n"
      << "<mangled_name>" << escape(r.name) << "</mangled_name>\n"
      << "<paradigm>" << escape(r.paradigm) << "</paradigm>\n"
      << "<role>function</role>\n<url></url>\n<descr></descr>\n</region>\n";
  }
  const auto order = cube4_cnode_order(p);
  std::vector<int32_t> id_of(p.cnodes.size());
  for (std::size_t k = 0; k < order.size(); ++k)
    id_of[static_cast<std::size_t>(order[k])] = static_cast<int32_t>(k);
  const auto cnode_kids = children_of(cnode_parents(p));
  for (int32_t root : cnode_kids[0]) put_cnode(x, p, cnode_kids, id_of, root);
  x << "</program>\n<system>\n";
  x << "<systemtreenode Id=\"0\">\n<name>" << escape(p.machine)
    << "</name>\n<class>machine</class>\n";
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    x << "<systemtreenode Id=\"" << n + 1 << "\">\n<name>" << escape(p.nodes[n])
      << "</name>\n<class>node</class>\n";
    for (std::size_t r = 0; r < p.rank_node.size(); ++r) {
      if (p.rank_node[r] != static_cast<int32_t>(n)) continue;
      // Location (group) ids are the ranks: the data's columns are ranks.
      x << "<locationgroup Id=\"" << r << "\">\n<name>rank " << r << "</name>\n<rank>" << r
        << "</rank>\n<type>process</type>\n"
        << "<location Id=\"" << r << "\">\n<name>master thread</name>\n<rank>0</rank>\n"
        << "<type>thread</type>\n</location>\n</locationgroup>\n";
    }
    x << "</systemtreenode>\n";
  }
  x << "</systemtreenode>\n<topologies>\n</topologies>\n</system>\n</cube>\n";
  return x.str();
}

std::vector<uint8_t> cubex_bytes(const Cube4Profile& p) {
  const std::string anchor = cube4_anchor_xml(p);  // validates
  std::vector<uint8_t> out;
  tar_member(out, "anchor.xml", std::vector<uint8_t>(anchor.begin(), anchor.end()));
  const auto order = cube4_cnode_order(p);
  std::vector<int32_t> id_of(p.cnodes.size());
  for (std::size_t k = 0; k < order.size(); ++k)
    id_of[static_cast<std::size_t>(order[k])] = static_cast<int32_t>(k);
  const std::size_t ranks = p.rank_node.size();
  // Rows per metric, by file id (the map keeps them sorted).
  std::vector<std::map<int32_t, std::vector<double>>> rows(p.metrics.size());
  for (const auto& [key, v] : p.values) {
    const auto [m, c, r] = key;
    if (v == 0.0) continue;
    auto& row = rows[static_cast<std::size_t>(m)][id_of[static_cast<std::size_t>(c)]];
    row.resize(ranks, 0.0);
    row[static_cast<std::size_t>(r)] = v;
  }
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    std::vector<uint8_t> index(11), data(10);
    std::memcpy(index.data(), "CUBEX.INDEX", 11);
    std::memcpy(data.data(), "CUBEX.DATA", 10);
    append(index, uint32_t{1});  // byte-order mark
    append(index, uint16_t{0});  // index version
    append(index, uint8_t{1});   // sparse: the listed nodes only
    append(index, static_cast<uint32_t>(rows[m].size()));
    for (const auto& [id, row] : rows[m]) {
      append(index, static_cast<uint32_t>(id));
      for (double v : row) append(data, v);
    }
    tar_member(out, std::to_string(m) + ".index", index);
    tar_member(out, std::to_string(m) + ".data", data);
  }
  out.resize(out.size() + 1024, 0);  // two zero blocks end the archive
  return out;
}

void write_cubex(const Cube4Profile& profile, const std::filesystem::path& path) {
  std::vector<uint8_t> bytes;
  try {
    bytes = cubex_bytes(profile);
  } catch (const Cube4Error& ex) {
    throw Cube4Error(path.string() + ": " + ex.what());
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Cube4Error(path.string() + ": cannot create: " + std::strerror(errno));
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Cube4Error(path.string() + ": write failed: " + std::strerror(errno));
}

}  // namespace tracefold
