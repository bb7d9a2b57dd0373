// Datatypes of a replay (datatypes.hpp).
#include "datatypes.hpp"

#include <algorithm>
#include <vector>

#include "mpi_ids.hpp"

namespace tracefold::replay_detail {

namespace {

FieldId scalar(const char* n) {
  return FieldTable::intern(n, FieldKind::kScalar);
}
FieldId list(const char* n) {
  return FieldTable::intern(n, FieldKind::kList);
}

int as_int(int64_t v, int otherwise) {
  return v == kAbsent || v < 0 ? otherwise : static_cast<int>(v);
}

std::vector<int> ints_of(const Event& ev, FieldId f) {
  std::vector<int> out;
  if (const FieldValue* v = ev.find(f))
    for (int64_t x : v->list) out.push_back(static_cast<int>(std::max<int64_t>(x, 0)));
  return out;
}

MPI_Aint extent_of(MPI_Datatype t) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(t, &lb, &extent);
  return extent;
}

}  // namespace

TypeReplay::TypeReplay()
    : dtype_(scalar("dtype")),
      dsize_(scalar("dsize")),
      count_(scalar("count")),
      ndims_(scalar("ndims")),
      newtype_(scalar("newtype")),
      newsize_(scalar("newsize")),
      dtypes_(list("dtypes")),
      dsizes_(list("dsizes")),
      blocklen_(scalar("blocklen")),
      blocklens_(list("blocklens")),
      precision_(scalar("precision")),
      range_(scalar("range")) {}

MPI_Datatype TypeReplay::by_id(int64_t id, int64_t size) {
  if (id == kAbsent) return MPI_BYTE;
  std::size_t n = 0;
  const MPI_Datatype* named = mpi_ids::named_datatypes(n);
  if (id >= 1 && static_cast<std::size_t>(id) <= n) return named[id - 1];
  // Probabilistic replay receives by another rank's events, whose ids
  // number that rank's types: the size decides there.
  auto m = made_.find(id);
  if (m != made_.end() && (size == kAbsent || size == m->second.size)) return m->second.handle;
  // Any type of the recorded size moves the same bytes.
  if (size == kAbsent || size < 0) size = 1;
  auto key = std::make_pair(id, size);
  auto it = standins_.find(key);
  if (it != standins_.end()) return it->second;
  MPI_Datatype t;
  PMPI_Type_contiguous(static_cast<int>(size), MPI_BYTE, &t);
  PMPI_Type_commit(&t);
  standins_.emplace(key, t);
  return t;
}

MPI_Datatype TypeReplay::type_of(const Event& ev, FieldId id_field, FieldId size_field) {
  return by_id(ev.get(id_field), ev.get(size_field));
}

void TypeReplay::release() {
  for (auto& [key, t] : standins_) PMPI_Type_free(&t);
  standins_.clear();
}

std::string TypeReplay::replay(const Event& ev, const std::string& op) {
  const bool constructor = op != "MPI_Type_commit" && op != "MPI_Type_free" &&
                           op.rfind("MPI_Type_get_", 0) != 0 && op.rfind("MPI_Type_size", 0) != 0;
  if (constructor) {
    if (ev.get(newtype_) == kAbsent) {
      legacy(ev, op);
      return {};
    }
    return construct(ev, op);
  }
  const int64_t id = ev.get(dtype_);
  if (id == kAbsent) {
    legacy(ev, op);
    return {};
  }
  MPI_Datatype t = type_of(ev, dtype_, dsize_);
  if (op == "MPI_Type_commit") {
    MPI_Type_commit(&t);
  } else if (op == "MPI_Type_free") {
    auto m = made_.find(id);
    if (m != made_.end()) {
      // MPI counts references itself (MPI_Type_get_contents hands out
      // more); the handle leaves the table with the last one.
      MPI_Datatype copy = m->second.handle;
      MPI_Type_free(&copy);
      if (--m->second.refs <= 0) made_.erase(m);
    } else if (id > static_cast<int64_t>(mpi_ids::kFirstDerivedDatatype) - 1) {
      MPI_Type_free(&t);
      standins_.erase({id, ev.get(dsize_) == kAbsent || ev.get(dsize_) < 0 ? 1 : ev.get(dsize_)});
    } else {
      return "frees predefined datatype " + std::to_string(id) + ": not replayed";
    }
  } else if (op == "MPI_Type_get_envelope") {
    int ni = 0, na = 0, nd = 0, combiner = 0;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
  } else if (op == "MPI_Type_get_contents") {
    int ni = 0, na = 0, nd = 0, combiner = 0;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED) return "decodes a predefined datatype: not replayed";
    std::vector<int> ints(static_cast<std::size_t>(ni) + 1);
    std::vector<MPI_Aint> addrs(static_cast<std::size_t>(na) + 1);
    std::vector<MPI_Datatype> types(static_cast<std::size_t>(nd) + 1);
    MPI_Type_get_contents(t, ni, na, nd, ints.data(), addrs.data(), types.data());
    // The program owns a reference to each derived type returned (and
    // frees it later), under the id the recorder gave it: the original's,
    // or a new one when the recorder had forgotten the handle (its type
    // was freed but lives on inside the decoded one).
    const FieldValue* ids = ev.find(dtypes_);
    for (int k = 0; k < nd && ids && static_cast<std::size_t>(k) < ids->list.size(); ++k) {
      const int64_t rid = ids->list[static_cast<std::size_t>(k)];
      if (rid < mpi_ids::kFirstDerivedDatatype) continue;
      const MPI_Datatype got = types[static_cast<std::size_t>(k)];
      Made& m = made_[rid];
      if (m.handle == got) {
        ++m.refs;
      } else {
        int size = 0;
        PMPI_Type_size(got, &size);
        m = Made{got, 1, size};
      }
    }
  } else if (op == "MPI_Type_get_extent") {
    MPI_Aint lb, extent;
    MPI_Type_get_extent(t, &lb, &extent);
  } else if (op == "MPI_Type_get_extent_x") {
    MPI_Count lb, extent;
    MPI_Type_get_extent_x(t, &lb, &extent);
  } else if (op == "MPI_Type_get_true_extent") {
    MPI_Aint lb, extent;
    MPI_Type_get_true_extent(t, &lb, &extent);
  } else if (op == "MPI_Type_get_true_extent_x") {
    MPI_Count lb, extent;
    MPI_Type_get_true_extent_x(t, &lb, &extent);
  } else if (op == "MPI_Type_size") {
    int size;
    MPI_Type_size(t, &size);
  } else if (op == "MPI_Type_size_x") {
    MPI_Count size;
    MPI_Type_size_x(t, &size);
  } else {
    return "unknown datatype call";
  }
  return {};
}

// Block lengths are the recorded ones and displacements lay the blocks one
// after the other: the new type has the recorded size (sizes do not depend
// on displacements), and no overlaps, so it can receive too.
std::string TypeReplay::construct(const Event& ev, const std::string& op) {
  const int64_t old_id = ev.get(dtype_);
  MPI_Datatype old = type_of(ev, dtype_, dsize_);
  const int count = as_int(ev.get(count_), 0);
  const int blocklen = as_int(ev.get(blocklen_), 1);
  const MPI_Aint old_extent = old_id == kAbsent ? 1 : extent_of(old);
  std::vector<int> blocklens = ints_of(ev, blocklens_);
  blocklens.resize(static_cast<std::size_t>(count), 0);
  // Elements per block laid one after the other, for the n-dimensional
  // constructors: the recorded size over the old type's.
  const int64_t newsize = ev.get(newsize_), oldsize = ev.get(dsize_);
  const int elements = newsize > 0 && oldsize > 0 && newsize % oldsize == 0
                           ? static_cast<int>(newsize / oldsize)
                           : 1;
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (op == "MPI_Type_contiguous") {
    MPI_Type_contiguous(count, old, &t);
  } else if (op == "MPI_Type_vector") {
    MPI_Type_vector(count, blocklen, blocklen, old, &t);
  } else if (op == "MPI_Type_create_hvector") {
    MPI_Type_create_hvector(count, blocklen, blocklen * old_extent, old, &t);
  } else if (op == "MPI_Type_indexed" || op == "MPI_Type_create_hindexed") {
    std::vector<int> displs(blocklens.size());
    std::vector<MPI_Aint> hdispls(blocklens.size());
    int at = 0;
    for (std::size_t k = 0; k < blocklens.size(); ++k) {
      displs[k] = at;
      hdispls[k] = at * old_extent;
      at += blocklens[k];
    }
    if (op == "MPI_Type_indexed")
      MPI_Type_indexed(count, blocklens.data(), displs.data(), old, &t);
    else
      MPI_Type_create_hindexed(count, blocklens.data(), hdispls.data(), old, &t);
  } else if (op == "MPI_Type_create_indexed_block" || op == "MPI_Type_create_hindexed_block") {
    std::vector<int> displs(static_cast<std::size_t>(count));
    std::vector<MPI_Aint> hdispls(displs.size());
    for (std::size_t k = 0; k < displs.size(); ++k) {
      displs[k] = static_cast<int>(k) * blocklen;
      hdispls[k] = displs[k] * old_extent;
    }
    if (op == "MPI_Type_create_indexed_block")
      MPI_Type_create_indexed_block(count, blocklen, displs.data(), old, &t);
    else
      MPI_Type_create_hindexed_block(count, blocklen, hdispls.data(), old, &t);
  } else if (op == "MPI_Type_create_struct") {
    const FieldValue* ids = ev.find(dtypes_);
    const FieldValue* sizes = ev.find(dsizes_);
    std::vector<MPI_Datatype> types(static_cast<std::size_t>(count), MPI_BYTE);
    std::vector<MPI_Aint> displs(types.size());
    MPI_Aint at = 0;
    for (std::size_t k = 0; k < types.size(); ++k) {
      if (ids && k < ids->list.size())
        types[k] = by_id(ids->list[k], sizes && k < sizes->list.size() ? sizes->list[k] : kAbsent);
      displs[k] = at;
      at += blocklens[k] * extent_of(types[k]);
    }
    MPI_Type_create_struct(count, blocklens.data(), displs.data(), types.data(), &t);
  } else if (op == "MPI_Type_create_subarray") {
    const int ndims = as_int(ev.get(ndims_), 1);
    std::vector<int> sizes(static_cast<std::size_t>(std::max(ndims, 1)), 1),
        starts(sizes.size(), 0);
    sizes[0] = elements;
    MPI_Type_create_subarray(ndims, sizes.data(), sizes.data(), starts.data(), MPI_ORDER_C, old,
                             &t);
  } else if (op == "MPI_Type_create_darray") {
    const int ndims = as_int(ev.get(ndims_), 1);
    const auto n = static_cast<std::size_t>(std::max(ndims, 1));
    std::vector<int> gsizes(n, 1), distribs(n, MPI_DISTRIBUTE_NONE),
        dargs(n, MPI_DISTRIBUTE_DFLT_DARG), psizes(n, 1);
    gsizes[0] = elements;
    MPI_Type_create_darray(1, 0, ndims, gsizes.data(), distribs.data(), dargs.data(), psizes.data(),
                           MPI_ORDER_C, old, &t);
  } else if (op == "MPI_Type_create_resized") {
    MPI_Type_create_resized(old, 0, old_extent, &t);
  } else if (op == "MPI_Type_dup") {
    MPI_Type_dup(old, &t);
  } else if (op == "MPI_Type_create_f90_real") {
    MPI_Type_create_f90_real(as_int(ev.get(precision_), MPI_UNDEFINED),
                             as_int(ev.get(range_), MPI_UNDEFINED), &t);
  } else if (op == "MPI_Type_create_f90_complex") {
    MPI_Type_create_f90_complex(as_int(ev.get(precision_), MPI_UNDEFINED),
                                as_int(ev.get(range_), MPI_UNDEFINED), &t);
  } else if (op == "MPI_Type_create_f90_integer") {
    MPI_Type_create_f90_integer(as_int(ev.get(range_), MPI_UNDEFINED), &t);
  } else {
    return "unknown datatype constructor";
  }
  if (t == MPI_DATATYPE_NULL) return "the constructor made no type";
  int size = 0;
  PMPI_Type_size(t, &size);
  Made& m = made_[ev.get(newtype_)];
  if (m.handle == t) {
    ++m.refs;  // a cached type handed out again (MPI_Type_create_f90_*)
  } else {
    m = Made{t, 1, size};
  }
  if (newsize != kAbsent && size != newsize)
    return "made a type of " + std::to_string(size) + " bytes, recorded " + std::to_string(newsize);
  return {};
}

// Traces from before constructors recorded their types: constructors are
// issued on bytes (their types carry no messages), commits and frees take
// the oldest type made.
void TypeReplay::legacy(const Event& ev, const std::string& op) {
  if (op == "MPI_Type_commit") {
    for (auto& [t, committed] : legacy_) {
      if (committed) continue;
      MPI_Type_commit(&t);
      committed = true;
      return;
    }
    MPI_Datatype t;
    PMPI_Type_contiguous(1, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    legacy_.push_back({t, true});
  } else if (op == "MPI_Type_free") {
    if (legacy_.empty()) {
      MPI_Datatype t;
      PMPI_Type_contiguous(1, MPI_BYTE, &t);
      MPI_Type_free(&t);
      return;
    }
    MPI_Type_free(&legacy_.front().first);
    legacy_.pop_front();
  } else {
    const int count = as_int(ev.get(count_), 1);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (op == "MPI_Type_contiguous") {
      MPI_Type_contiguous(count, MPI_BYTE, &t);
    } else if (op == "MPI_Type_vector") {
      MPI_Type_vector(count, 1, 1, MPI_BYTE, &t);
    } else if (op == "MPI_Type_create_subarray") {
      const int ndims = std::max(as_int(ev.get(ndims_), 1), 1);
      std::vector<int> sizes(static_cast<std::size_t>(ndims), 1), starts(sizes.size(), 0);
      MPI_Type_create_subarray(ndims, sizes.data(), sizes.data(), starts.data(), MPI_ORDER_C,
                               MPI_BYTE, &t);
    } else {
      return;
    }
    legacy_.push_back({t, false});
  }
}

}  // namespace tracefold::replay_detail
