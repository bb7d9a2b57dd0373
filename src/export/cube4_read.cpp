// CUBE4 reader: tar members, the anchor XML and the sparse/dense metric
// parts, back into a Cube4Profile. Written to check what write_cubex()
// produces without CUBE's own tools, so it reads the subset CUBE files use
// for plain profiles and refuses the rest by name.

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "tracefold/cube4.hpp"

namespace tracefold {

std::vector<TarEntry> read_tar(const std::vector<uint8_t>& bytes, const std::string& source) {
  std::vector<TarEntry> out;
  std::size_t at = 0;
  while (at + 512 <= bytes.size()) {
    const uint8_t* h = bytes.data() + at;
    if (std::all_of(h, h + 512, [](uint8_t b) { return b == 0; })) return out;
    unsigned sum = 0;
    for (int i = 0; i < 512; ++i) sum += (i >= 148 && i < 156) ? ' ' : h[i];
    const unsigned stored = static_cast<unsigned>(
        std::strtoul(std::string(reinterpret_cast<const char*>(h + 148), 8).c_str(), nullptr, 8));
    if (sum != stored)
      throw Cube4Error(source + ": tar header at byte " + std::to_string(at) +
                       ": checksum mismatch");
    TarEntry e;
    e.name.assign(reinterpret_cast<const char*>(h), strnlen(reinterpret_cast<const char*>(h), 100));
    const uint64_t size =
        std::strtoull(std::string(reinterpret_cast<const char*>(h + 124), 12).c_str(), nullptr, 8);
    at += 512;
    if (size > bytes.size() - at)
      throw Cube4Error(source + ": tar member " + e.name + " is truncated");
    if (h[156] == '0' || h[156] == 0) {
      e.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                    bytes.begin() + static_cast<std::ptrdiff_t>(at + size));
      out.push_back(std::move(e));
    }
    at += (size + 511) / 512 * 512;
  }
  throw Cube4Error(source + ": tar archive has no end marker");
}

namespace {

// Just enough XML for anchor files: elements, attributes, text, the five
// predefined entities and numeric character references; no DTDs.
struct XmlNode {
  std::string tag, text;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<std::unique_ptr<XmlNode>> kids;
  const XmlNode* child(const std::string& t) const {
    for (const auto& k : kids)
      if (k->tag == t) return k.get();
    return nullptr;
  }
  std::string child_text(const std::string& t) const {
    const XmlNode* c = child(t);
    return c ? c->text : std::string();
  }
  const std::string* attr(const std::string& key) const {
    for (const auto& [k, v] : attrs)
      if (k == key) return &v;
    return nullptr;
  }
};

class XmlParser {
 public:
  XmlParser(const std::string& text, std::string source) : s_(text), source_(std::move(source)) {}

  std::unique_ptr<XmlNode> parse() {
    skip_misc();
    auto root = element();
    skip_misc();
    if (p_ != s_.size()) fail("text after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1;
    for (std::size_t i = 0; i < p_ && i < s_.size(); ++i) line += s_[i] == '\n';
    throw Cube4Error(source_ + ": line " + std::to_string(line) + ": " + what);
  }
  bool starts(const char* t) const { return s_.compare(p_, std::strlen(t), t) == 0; }
  void skip_ws() {
    while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
  }
  void skip_misc() {
    for (;;) {
      skip_ws();
      if (starts("<?")) {
        p_ = s_.find("?>", p_);
        if (p_ == std::string::npos) fail("unterminated <?");
        p_ += 2;
      } else if (starts("<!--")) {
        p_ = s_.find("-->", p_);
        if (p_ == std::string::npos) fail("unterminated comment");
        p_ += 3;
      } else {
        return;
      }
    }
  }
  std::string name() {
    const std::size_t b = p_;
    while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_' ||
                              s_[p_] == '-' || s_[p_] == ':' || s_[p_] == '.'))
      ++p_;
    if (b == p_) fail("expected a name");
    return s_.substr(b, p_ - b);
  }
  std::string unescape(const std::string& raw) const {
    std::string out;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '&') {
        out += raw[i];
        continue;
      }
      const std::size_t semi = raw.find(';', i);
      if (semi == std::string::npos) fail("unterminated entity");
      const std::string ent = raw.substr(i + 1, semi - i - 1);
      if (ent == "amp")
        out += '&';
      else if (ent == "lt")
        out += '<';
      else if (ent == "gt")
        out += '>';
      else if (ent == "quot")
        out += '"';
      else if (ent == "apos")
        out += '\'';
      else if (!ent.empty() && ent[0] == '#') {
        const long c = ent.size() > 1 && ent[1] == 'x' ? std::strtol(ent.c_str() + 2, nullptr, 16)
                                                       : std::strtol(ent.c_str() + 1, nullptr, 10);
        if (c <= 0 || c > 127) fail("character reference &" + ent + "; (only ASCII supported)");
        out += static_cast<char>(c);
      } else {
        fail("unknown entity &" + ent + ";");
      }
      i = semi;
    }
    return out;
  }
  std::unique_ptr<XmlNode> element() {
    if (!starts("<")) fail("expected an element");
    ++p_;
    auto n = std::make_unique<XmlNode>();
    n->tag = name();
    for (;;) {
      skip_ws();
      if (starts("/>")) {
        p_ += 2;
        return n;
      }
      if (starts(">")) {
        ++p_;
        break;
      }
      std::string key = name();
      skip_ws();
      if (!starts("=")) fail("expected = after attribute " + key);
      ++p_;
      skip_ws();
      if (p_ >= s_.size() || (s_[p_] != '"' && s_[p_] != '\'')) fail("expected a quoted value");
      const char q = s_[p_++];
      const std::size_t end = s_.find(q, p_);
      if (end == std::string::npos) fail("unterminated attribute value");
      n->attrs.emplace_back(key, unescape(s_.substr(p_, end - p_)));
      p_ = end + 1;
    }
    std::string text;
    for (;;) {
      if (p_ >= s_.size()) fail("element <" + n->tag + "> is not closed");
      if (starts("</")) {
        p_ += 2;
        const std::string closing = name();
        if (closing != n->tag) fail("<" + n->tag + "> closed by </" + closing + ">");
        skip_ws();
        if (!starts(">")) fail("expected >");
        ++p_;
        n->text = unescape(text);
        return n;
      }
      if (starts("<!--")) {
        skip_misc();
        continue;
      }
      if (starts("<")) {
        n->kids.push_back(element());
        continue;
      }
      text += s_[p_++];
    }
  }

  const std::string& s_;
  std::string source_;
  std::size_t p_ = 0;
};

int32_t int_attr(const XmlNode& n, const char* key, const std::string& source) {
  const std::string* v = n.attr(key);
  if (!v) throw Cube4Error(source + ": <" + n.tag + "> without " + key);
  return static_cast<int32_t>(std::strtol(v->c_str(), nullptr, 10));
}

struct Reader {
  Cube4Profile p;
  std::string src;
  std::vector<int32_t> metric_index;      // file id -> index in p.metrics
  std::vector<int32_t> cnode_index;       // file id -> index in p.cnodes
  std::vector<int32_t> rank_of_location;  // location id -> rank

  void metric(const XmlNode& n, int32_t parent) {
    Cube4Metric m;
    m.uniq_name = n.child_text("uniq_name");
    m.disp_name = n.child_text("disp_name");
    m.description = n.child_text("descr");
    m.unit = n.child_text("uom");
    m.parent = parent;
    const std::string dtype = n.child_text("dtype");
    if (dtype != "DOUBLE" && dtype != "FLOAT")
      throw Cube4Error(src + ": metric '" + m.uniq_name + "' has type " + dtype +
                       " (this reader takes DOUBLE and FLOAT)");
    const int32_t id = int_attr(n, "id", src);
    if (id < 0 || id > 1 << 20) throw Cube4Error(src + ": metric id " + std::to_string(id));
    if (metric_index.size() <= static_cast<std::size_t>(id)) metric_index.resize(id + 1, -1);
    const int32_t me = p.add_metric(std::move(m));
    metric_index[static_cast<std::size_t>(id)] = me;
    for (const auto& k : n.kids)
      if (k->tag == "metric") metric(*k, me);
  }

  void cnode(const XmlNode& n, int32_t parent) {
    const int32_t id = int_attr(n, "id", src);
    const int32_t region = int_attr(n, "calleeId", src);
    if (id < 0 || id > 1 << 24) throw Cube4Error(src + ": cnode id " + std::to_string(id));
    if (cnode_index.size() <= static_cast<std::size_t>(id)) cnode_index.resize(id + 1, -1);
    const int32_t me = p.add_cnode(region, parent);
    cnode_index[static_cast<std::size_t>(id)] = me;
    for (const auto& k : n.kids)
      if (k->tag == "cnode") cnode(*k, me);
  }

  void system_node(const XmlNode& n, bool top) {
    int32_t node = -1;
    if (top) {
      p.machine = n.child_text("name");
    } else {
      p.nodes.push_back(n.child_text("name"));
      node = static_cast<int32_t>(p.nodes.size() - 1);
    }
    for (const auto& k : n.kids) {
      if (k->tag == "systemtreenode") system_node(*k, false);
      if (k->tag != "locationgroup") continue;
      if (node < 0) throw Cube4Error(src + ": a process directly under the machine");
      const int32_t rank = std::atoi(k->child_text("rank").c_str());
      int threads = 0;
      for (const auto& loc : k->kids) {
        if (loc->tag != "location") continue;
        if (++threads > 1)
          throw Cube4Error(src + ": rank " + std::to_string(rank) +
                           " has several threads (this reader takes one per process)");
        const int32_t id = int_attr(*loc, "Id", src);
        if (id < 0 || id > 1 << 24) throw Cube4Error(src + ": location id " + std::to_string(id));
        if (rank_of_location.size() <= static_cast<std::size_t>(id))
          rank_of_location.resize(id + 1, -1);
        rank_of_location[static_cast<std::size_t>(id)] = rank;
      }
      if (rank < 0 || rank > 1 << 24) throw Cube4Error(src + ": rank " + std::to_string(rank));
      if (p.rank_node.size() <= static_cast<std::size_t>(rank)) p.rank_node.resize(rank + 1, -1);
      p.rank_node[static_cast<std::size_t>(rank)] = node;
    }
  }
};

template <typename T>
T take(const std::vector<uint8_t>& b, std::size_t& at, bool swap, const std::string& what) {
  if (sizeof(T) > b.size() - std::min(at, b.size())) throw Cube4Error(what + " is truncated");
  T v;
  uint8_t tmp[sizeof(T)];
  std::memcpy(tmp, b.data() + at, sizeof(T));
  if (swap) std::reverse(tmp, tmp + sizeof(T));
  std::memcpy(&v, tmp, sizeof(T));
  at += sizeof(T);
  return v;
}

}  // namespace

Cube4Profile parse_cubex(const std::vector<uint8_t>& bytes, const std::string& source) {
  const auto members = read_tar(bytes, source);
  auto find = [&](const std::string& name) -> const TarEntry* {
    for (const auto& m : members)
      if (m.name == name) return &m;
    return nullptr;
  };
  const TarEntry* anchor = find("anchor.xml");
  if (!anchor) throw Cube4Error(source + ": no anchor.xml in the archive");
  const std::string text(anchor->data.begin(), anchor->data.end());
  const std::string asrc = source + ":anchor.xml";
  const auto root = XmlParser(text, asrc).parse();
  if (root->tag != "cube") throw Cube4Error(asrc + ": root element is <" + root->tag + ">");
  const std::string* version = root->attr("version");
  if (!version || version->rfind("4.", 0) != 0)
    throw Cube4Error(asrc + ": not a CUBE 4 anchor (version " + (version ? *version : "none") +
                     ")");
  Reader r;
  r.src = asrc;
  r.p.nodes.clear();
  for (const auto& k : root->kids) {
    if (k->tag == "attr" && k->attr("key") && k->attr("value"))
      r.p.attributes.emplace_back(*k->attr("key"), *k->attr("value"));
  }
  const XmlNode* metrics = root->child("metrics");
  const XmlNode* program = root->child("program");
  const XmlNode* system = root->child("system");
  if (!metrics || !program || !system)
    throw Cube4Error(asrc + ": missing <metrics>, <program> or <system>");
  for (const auto& k : metrics->kids)
    if (k->tag == "metric") r.metric(*k, -1);
  for (const auto& k : program->kids) {
    if (k->tag != "region") continue;
    const int32_t id = int_attr(*k, "id", asrc);
    if (id != static_cast<int32_t>(r.p.regions.size()))
      throw Cube4Error(asrc + ": region ids are not 0, 1, 2, ... (found " + std::to_string(id) +
                       ")");
    Cube4Region reg;
    reg.name = k->child_text("name");
    reg.file = k->attr("mod") ? *k->attr("mod") : "";
    reg.line = int_attr(*k, "begin", asrc);
    reg.paradigm = k->child_text("paradigm");
    r.p.add_region(std::move(reg));
  }
  for (const auto& k : program->kids)
    if (k->tag == "cnode") r.cnode(*k, -1);
  for (const auto& k : system->kids)
    if (k->tag == "systemtreenode") r.system_node(*k, true);
  for (std::size_t i = 0; i < r.p.rank_node.size(); ++i)
    if (r.p.rank_node[i] < 0) throw Cube4Error(asrc + ": rank " + std::to_string(i) + " missing");
  for (std::size_t i = 0; i < r.cnode_index.size(); ++i)
    if (r.cnode_index[i] != static_cast<int32_t>(i))
      throw Cube4Error(asrc + ": call-tree node ids are not in depth-first order");
  const std::size_t nloc = r.rank_of_location.size();
  for (std::size_t id = 0; id < r.metric_index.size(); ++id) {
    const int32_t m = r.metric_index[id];
    if (m < 0) continue;
    const std::string base = std::to_string(id);
    const TarEntry* index = find(base + ".index");
    const TarEntry* data = find(base + ".data");
    if (!index && !data) continue;  // a metric without values
    if (!index || !data) throw Cube4Error(source + ": " + base + ".index/.data: one is missing");
    const std::string isrc = source + ":" + base + ".index";
    const std::string dsrc = source + ":" + base + ".data";
    if (index->data.size() < 18 || std::memcmp(index->data.data(), "CUBEX.INDEX", 11) != 0)
      throw Cube4Error(isrc + ": no CUBEX.INDEX header");
    std::size_t at = 11;
    const uint32_t mark = take<uint32_t>(index->data, at, false, isrc);
    const bool swap = mark != 1;
    if (swap && mark != 0x01000000u) throw Cube4Error(isrc + ": bad byte-order mark");
    take<uint16_t>(index->data, at, swap, isrc);
    const uint8_t format = index->data[at++];
    std::vector<uint32_t> rows;
    if (format == 1) {
      const uint32_t n = take<uint32_t>(index->data, at, swap, isrc);
      if (n > r.cnode_index.size()) throw Cube4Error(isrc + ": more rows than call-tree nodes");
      for (uint32_t i = 0; i < n; ++i) rows.push_back(take<uint32_t>(index->data, at, swap, isrc));
    } else if (format == 3) {
      for (uint32_t i = 0; i < r.cnode_index.size(); ++i) rows.push_back(i);
    } else {
      throw Cube4Error(isrc + ": index format " + std::to_string(format) +
                       " (this reader takes sparse 1 and dense 3)");
    }
    if (data->data.size() < 10 || std::memcmp(data->data.data(), "CUBEX.DATA", 10) != 0)
      throw Cube4Error(dsrc + ": no CUBEX.DATA header (compressed data is not read)");
    if (data->data.size() != 10 + rows.size() * nloc * sizeof(double))
      throw Cube4Error(dsrc + ": " + std::to_string(data->data.size() - 10) + " bytes of values, " +
                       std::to_string(rows.size()) + " rows of " + std::to_string(nloc) +
                       " locations need " + std::to_string(rows.size() * nloc * 8));
    std::size_t d = 10;
    for (uint32_t row : rows) {
      if (row >= r.cnode_index.size())
        throw Cube4Error(isrc + ": row for call-tree node " + std::to_string(row) +
                         ", which does not exist");
      for (std::size_t loc = 0; loc < nloc; ++loc) {
        const double v = take<double>(data->data, d, swap, dsrc);
        if (v != 0.0) r.p.values[{m, static_cast<int32_t>(row), r.rank_of_location[loc]}] = v;
      }
    }
  }
  r.p.validate();
  return r.p;
}

Cube4Profile read_cubex(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Cube4Error(path.string() + ": cannot open");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  return parse_cubex(bytes, path.string());
}

}  // namespace tracefold
