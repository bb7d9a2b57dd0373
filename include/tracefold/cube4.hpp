// CUBE4 profiles (`.cubex`), the format Scalasca and Score-P write and the
// CUBE GUI opens: a metric tree, a call tree and a system tree, and one
// value per (metric, call-tree node, location). No MPI here.
//
// A `.cubex` file is a POSIX tar archive holding
//   anchor.xml       the three trees (CUBE anchor syntax, version 4.4);
//   M.index, M.data  the values of metric with id M: the index lists the
//                    call-tree nodes that have values (sparse form), the
//                    data holds, for each of them in that order, one double
//                    per location.
// Binary parts are written in this machine's byte order; the index starts
// with the number 1 so readers can tell which.
//
// Values are exclusive in both trees, as CUBE stores an EXCLUSIVE metric:
// a metric's value leaves out its child metrics and a call path's value
// leaves out its callees. CUBE adds them up when a node is collapsed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tracefold {

class Cube4Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Cube4Metric {
  std::string uniq_name;     ///< unique key, e.g. "late_sender"
  std::string disp_name;     ///< shown in the GUI, e.g. "Late Sender"
  std::string description;   ///< one sentence, shown as the metric's info
  std::string unit = "sec";  ///< CUBE unit of measure: "sec", "occ", "bytes"
  int32_t parent = -1;       ///< index of the parent metric, -1 for a root
};

/// A code region a call-tree node stands for (a function or an MPI call).
struct Cube4Region {
  std::string name;
  std::string file;              ///< source file ("" when unknown)
  int32_t line = -1;             ///< first line, -1 when unknown
  std::string paradigm = "mpi";  ///< "mpi", "user", "compiler", ...
};

/// A call path: `region` called from the path `parent` (-1 for a root).
struct Cube4Cnode {
  int32_t region = 0;
  int32_t parent = -1;
};

/// The whole profile. Fill it through the add_* helpers (which check the
/// references) or directly; write_cubex() validates it again.
struct Cube4Profile {
  std::vector<Cube4Metric> metrics;
  std::vector<Cube4Region> regions;
  std::vector<Cube4Cnode> cnodes;
  /// System tree: machine → nodes → one process per rank → one thread.
  std::string machine = "tracefold";
  std::vector<std::string> nodes{"node 0"};
  /// Per rank (index = MPI rank): index into `nodes`. Its size is the
  /// number of ranks (= locations, one thread each).
  std::vector<int32_t> rank_node;
  /// Sparse values by (metric, cnode, rank); absent means 0.
  std::map<std::tuple<int32_t, int32_t, int32_t>, double> values;
  /// Free-form key/value pairs written as the cube's attributes.
  std::vector<std::pair<std::string, std::string>> attributes;

  /// Appends and returns the new index; a parent must already exist.
  int32_t add_metric(Cube4Metric m);
  int32_t add_region(Cube4Region r);
  int32_t add_cnode(int32_t region, int32_t parent = -1);
  /// `ranks` ranks, all on one node.
  void set_ranks(int32_t ranks);
  /// Adds `v` to the value of (metric, cnode, rank).
  void add(int32_t metric, int32_t cnode, int32_t rank, double v);
  double value(int32_t metric, int32_t cnode, int32_t rank) const;
  /// Throws Cube4Error naming the first wrong reference.
  void validate() const;
};

/// Call-tree nodes in the order the file stores them: depth first, children
/// in the order they were added, roots in order. Element k is the index in
/// `profile.cnodes` of the node written with id k.
std::vector<int32_t> cube4_cnode_order(const Cube4Profile& profile);

/// The anchor.xml text.
std::string cube4_anchor_xml(const Cube4Profile& profile);

/// Writes `path` (a .cubex tar archive). Throws Cube4Error naming the file
/// if it cannot be written, or what is wrong with the profile.
void write_cubex(const Cube4Profile& profile, const std::filesystem::path& path);
/// The archive's bytes.
std::vector<uint8_t> cubex_bytes(const Cube4Profile& profile);

/// One file of a tar archive.
struct TarEntry {
  std::string name;
  std::vector<uint8_t> data;
};
/// Reads a POSIX tar archive (regular files only). Throws Cube4Error.
std::vector<TarEntry> read_tar(const std::vector<uint8_t>& bytes, const std::string& source);

/// Reads a .cubex written by write_cubex (or another writer using sparse
/// or dense indexes, uncompressed DOUBLE/FLOAT data, one thread per process):
/// call-tree nodes come back in file order (see cube4_cnode_order), zero
/// values are not stored. Throws Cube4Error naming the file and part.
Cube4Profile read_cubex(const std::filesystem::path& path);
Cube4Profile parse_cubex(const std::vector<uint8_t>& bytes, const std::string& source);

}  // namespace tracefold
