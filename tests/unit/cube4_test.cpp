// CUBE4 (.cubex) writer, checked by parsing what it wrote: the tar layout,
// the anchor XML and the binary index/data parts, byte by byte where the
// format fixes them; and with the system's tar and xmllint.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tracefold/cube4.hpp"

namespace tracefold {
namespace {

namespace fs = std::filesystem;

// Metric tree time > {late_sender, barrier}, visits; call tree
// main > {a > c, b}, with c added last so file order differs from
// insertion order; 3 ranks on 2 nodes.
Cube4Profile sample() {
  Cube4Profile p;
  const int32_t time = p.add_metric({"time", "Time", "Total time", "sec", -1});
  p.add_metric(
      {"late_sender", "Late Sender", "Waiting in a receive <before> the send & more", "sec", time});
  p.add_metric({"barrier", "Wait at Barrier", "", "sec", time});
  p.add_metric({"visits", "Visits", "Calls", "occ", -1});
  p.add_region({"main", "app.c", 10, "user"});
  p.add_region({"MPI_Recv", "", -1, "mpi"});
  p.add_region({"MPI_Barrier", "", -1, "mpi"});
  p.add_region({"solve", "app.c", 40, "user"});
  const int32_t main = p.add_cnode(0);
  const int32_t a = p.add_cnode(3, main);  // solve
  const int32_t b = p.add_cnode(2, main);  // MPI_Barrier from main
  const int32_t c = p.add_cnode(1, a);     // MPI_Recv from solve
  p.nodes = {"hostA", "hostB"};
  p.rank_node = {0, 1, 0};
  p.add(1, c, 1, 0.2);
  p.add(1, c, 1, 0.05);  // accumulates
  p.add(2, b, 0, 0.125);
  p.add(2, b, 2, 0.5);
  p.add(0, main, 0, 1.0);
  p.add(0, a, 2, 3.0);
  p.add(3, c, 0, 40);
  p.add(3, c, 1, 40);
  p.add(3, c, 2, 40);
  return p;
}

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("tracefold-cube4-" + std::to_string(::getpid()) + name);
}

TEST(Cube4, CnodeOrderIsDepthFirst) {
  const auto order = cube4_cnode_order(sample());
  EXPECT_EQ(order, (std::vector<int32_t>{0, 1, 3, 2}));
}

TEST(Cube4, RoundTripKeepsTreesAndValues) {
  const Cube4Profile p = sample();
  const fs::path path = temp_file("roundtrip.cubex");
  write_cubex(p, path);
  const Cube4Profile q = read_cubex(path);
  fs::remove(path);

  ASSERT_EQ(q.metrics.size(), 4u);
  EXPECT_EQ(q.metrics[0].uniq_name, "time");
  EXPECT_EQ(q.metrics[1].uniq_name, "late_sender");
  EXPECT_EQ(q.metrics[1].parent, 0);
  EXPECT_EQ(q.metrics[1].description, "Waiting in a receive <before> the send & more");
  EXPECT_EQ(q.metrics[2].parent, 0);
  EXPECT_EQ(q.metrics[3].unit, "occ");
  EXPECT_EQ(q.metrics[3].parent, -1);
  ASSERT_EQ(q.regions.size(), 4u);
  EXPECT_EQ(q.regions[0].file, "app.c");
  EXPECT_EQ(q.regions[0].line, 10);
  EXPECT_EQ(q.regions[1].line, -1);
  EXPECT_EQ(q.regions[3].name, "solve");

  // Nodes come back in file (depth-first) order.
  const auto order = cube4_cnode_order(p);
  ASSERT_EQ(q.cnodes.size(), p.cnodes.size());
  std::vector<int32_t> file_id(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) file_id[order[k]] = static_cast<int32_t>(k);
  for (std::size_t i = 0; i < p.cnodes.size(); ++i) {
    const auto& orig = p.cnodes[i];
    const auto& back = q.cnodes[file_id[i]];
    EXPECT_EQ(back.region, orig.region) << "node " << i;
    EXPECT_EQ(back.parent, orig.parent < 0 ? -1 : file_id[orig.parent]) << "node " << i;
  }

  EXPECT_EQ(q.machine, "tracefold");
  EXPECT_EQ(q.nodes, (std::vector<std::string>{"hostA", "hostB"}));
  EXPECT_EQ(q.rank_node, (std::vector<int32_t>{0, 1, 0}));

  ASSERT_EQ(q.values.size(), p.values.size());
  for (const auto& [key, v] : p.values) {
    const auto [m, c, r] = key;
    EXPECT_DOUBLE_EQ(q.value(m, file_id[c], r), v) << m << "/" << c << "/" << r;
  }
  EXPECT_DOUBLE_EQ(q.value(1, file_id[3], 1), 0.25);
}

TEST(Cube4, BinaryPartsHaveTheDocumentedLayout) {
  const auto bytes = cubex_bytes(sample());
  ASSERT_EQ(bytes.size() % 512, 0u);
  const auto members = read_tar(bytes, "sample");
  std::vector<std::string> names;
  for (const auto& m : members) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"anchor.xml", "0.index", "0.data", "1.index", "1.data",
                                             "2.index", "2.data", "3.index", "3.data"}));
  // Metric 2 (barrier): one row, for MPI_Barrier from main (file id 3).
  const auto& index = members[5].data;
  ASSERT_EQ(index.size(), 11u + 4 + 2 + 1 + 4 + 4);
  EXPECT_EQ(std::string(index.begin(), index.begin() + 11), "CUBEX.INDEX");
  uint32_t one = 0, n = 0, id = 0;
  uint16_t version = 1;
  std::memcpy(&one, index.data() + 11, 4);
  std::memcpy(&version, index.data() + 15, 2);
  std::memcpy(&n, index.data() + 18, 4);
  std::memcpy(&id, index.data() + 22, 4);
  EXPECT_EQ(one, 1u);
  EXPECT_EQ(version, 0u);
  EXPECT_EQ(index[17], 1);  // sparse
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(id, 3u);
  const auto& data = members[6].data;
  ASSERT_EQ(data.size(), 10u + 3 * 8);
  EXPECT_EQ(std::string(data.begin(), data.begin() + 10), "CUBEX.DATA");
  double row[3];
  std::memcpy(row, data.data() + 10, sizeof row);
  EXPECT_EQ(row[0], 0.125);
  EXPECT_EQ(row[1], 0.0);
  EXPECT_EQ(row[2], 0.5);
  // The same profile gives the same bytes (fixed tar time stamps).
  EXPECT_EQ(cubex_bytes(sample()), bytes);
}

TEST(Cube4, AnchorNamesEverything) {
  const std::string xml = cube4_anchor_xml(sample());
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u);
  EXPECT_NE(xml.find("<cube version=\"4.4\">"), std::string::npos);
  EXPECT_NE(xml.find("<metric id=\"1\" type=\"EXCLUSIVE\">"), std::string::npos);
  EXPECT_NE(xml.find("&lt;before&gt; the send &amp; more"), std::string::npos);
  EXPECT_NE(xml.find("<cnode id=\"2\" calleeId=\"1\">"), std::string::npos);
  EXPECT_NE(xml.find("<locationgroup Id=\"1\">"), std::string::npos);
  EXPECT_NE(xml.find("<name>hostB</name>"), std::string::npos);
}

TEST(Cube4, SystemToolsAcceptTheArchive) {
  const fs::path path = temp_file("tools.cubex");
  write_cubex(sample(), path);
  const std::string list = path.string() + ".list";
  ASSERT_EQ(std::system(("tar tf '" + path.string() + "' > '" + list + "'").c_str()), 0);
  std::ifstream in(list);
  std::string first, line;
  std::getline(in, first);
  int count = 1;
  while (std::getline(in, line)) ++count;
  EXPECT_EQ(first, "anchor.xml");
  EXPECT_EQ(count, 9);
  const fs::path dir = path.string() + ".d";
  fs::create_directories(dir);
  ASSERT_EQ(std::system(("tar xf '" + path.string() + "' -C '" + dir.string() + "'").c_str()), 0);
  EXPECT_EQ(std::system(("xmllint --noout '" + (dir / "anchor.xml").string() + "'").c_str()), 0)
      << "xmllint (Debian: libxml2-utils) rejected or is missing";
  EXPECT_EQ(fs::file_size(dir / "1.data"), 10u + 3 * 8);
  fs::remove_all(dir);
  fs::remove(list);
  fs::remove(path);
}

TEST(Cube4, BadProfilesAreRefusedByName) {
  Cube4Profile p = sample();
  p.add(7, 0, 0, 1.0);
  try {
    cubex_bytes(p);
    FAIL() << "metric 7 accepted";
  } catch (const Cube4Error& ex) {
    EXPECT_NE(std::string(ex.what()).find("metric 7"), std::string::npos) << ex.what();
  }
  Cube4Profile dup = sample();
  dup.metrics.push_back({"time", "Again", "", "sec", -1});
  EXPECT_THROW(cube4_anchor_xml(dup), Cube4Error);
  Cube4Profile p2;
  EXPECT_THROW(p2.add_cnode(0), Cube4Error);  // no region 0
  EXPECT_THROW(write_cubex(sample(), "/nonexistent-dir/x.cubex"), Cube4Error);
}

TEST(Cube4, ReaderRefusesCorruptArchives) {
  auto bytes = cubex_bytes(sample());
  auto bad = bytes;
  bad[0] ^= 0x20;  // anchor.xml's name: the header checksum no longer matches
  EXPECT_THROW(parse_cubex(bad, "x"), Cube4Error);
  // Shorten metric 1's data part by editing its size field: its rows no
  // longer add up (the reader names the member).
  const auto members = read_tar(bytes, "x");
  std::size_t at = 0;
  for (const auto& m : members) {
    if (m.name == "1.data") break;
    at += 512 + (m.data.size() + 511) / 512 * 512;
  }
  std::snprintf(reinterpret_cast<char*>(bytes.data() + at + 124), 12, "%011o", 10 + 8);
  unsigned sum = 0;
  std::memset(bytes.data() + at + 148, ' ', 8);
  for (int i = 0; i < 512; ++i) sum += bytes[at + i];
  std::snprintf(reinterpret_cast<char*>(bytes.data() + at + 148), 8, "%06o", sum);
  try {
    parse_cubex(bytes, "x");
    FAIL() << "short data accepted";
  } catch (const Cube4Error& ex) {
    EXPECT_NE(std::string(ex.what()).find("1.data"), std::string::npos) << ex.what();
  }
}

}  // namespace
}  // namespace tracefold
