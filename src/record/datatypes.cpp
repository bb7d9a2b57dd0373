// The recorder's datatype ids and the Call methods that record datatypes.
#include "datatypes.hpp"

#include <vector>

#include "mpi_ids.hpp"
#include "recorder_impl.hpp"

namespace tracefold::record {

namespace {
FieldId list_field(const char* n) {
  return FieldTable::intern(n, FieldKind::kList);
}
FieldId scalar_field(const char* n) {
  return FieldTable::intern(n, FieldKind::kScalar);
}
const FieldId kNewtype = scalar_field("newtype"), kNewsize = scalar_field("newsize"),
              kDtypes = list_field("dtypes"), kDsizes = list_field("dsizes");

int64_t named_id(MPI_Datatype t) {
  std::size_t n = 0;
  const MPI_Datatype* named = mpi_ids::named_datatypes(n);
  for (std::size_t i = 0; i < n; ++i)
    if (named[i] == t) return static_cast<int64_t>(i) + 1;
  return -1;
}
}  // namespace

const FieldId kBlocklen = scalar_field("blocklen"), kBlocklens = list_field("blocklens"),
              kPrecision = scalar_field("precision"), kRange = scalar_field("range");

DatatypeRegistry::Entry& DatatypeRegistry::add(MPI_Datatype t, int64_t refs) {
  Entry e;
  PMPI_Type_size(t, &e.size);
  const int64_t named = named_id(t);
  if (named > 0) {
    e.id = named;
  } else {
    e.id = mpi_ids::kFirstDerivedDatatype + next_id_++;
    e.refs = refs;
  }
  return live_[t] = e;
}

const DatatypeRegistry::Entry& DatatypeRegistry::lookup(MPI_Datatype t) {
  auto it = live_.find(t);
  return it != live_.end() ? it->second : add(t, 1);
}

const DatatypeRegistry::Entry& DatatypeRegistry::created(MPI_Datatype t) {
  auto it = live_.find(t);
  if (it == live_.end()) return add(t, 1);
  if (it->second.refs > 0) ++it->second.refs;
  return it->second;
}

void DatatypeRegistry::retained(MPI_Datatype t) {
  auto it = live_.find(t);
  if (it == live_.end()) {
    add(t, 1);
  } else if (it->second.refs > 0) {
    ++it->second.refs;
  }
}

DatatypeRegistry::Entry DatatypeRegistry::freed(MPI_Datatype t) {
  auto it = live_.find(t);
  if (it == live_.end()) {
    add(t, 1);
    it = live_.find(t);
  }
  Entry e = it->second;
  if (e.refs > 0 && --it->second.refs == 0) live_.erase(it);
  return e;
}

namespace {
// A datatype's id and size as the registry gave them (see HandleCache).
struct TypeIds {
  int64_t id = 0;
  int64_t size = 0;
};
TRACEFOLD_STATIC_TLS constinit thread_local HandleCache<TypeIds> tl_type_ids;
}  // namespace

void Call::datatype(FieldId id_field, FieldId size_field, MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return;
  Recorder& r = recorder();
  const uintptr_t h = HandleCache<TypeIds>::bits(type);
  TypeIds ids;
  if (const TypeIds* known = tl_type_ids.find(h, r.registry_gen.load(std::memory_order_acquire))) {
    ids = *known;
  } else {
    std::lock_guard lock(r.mu);
    const auto& e = r.types.lookup(type);
    ids = {e.id, e.size};
    tl_type_ids.put(h, r.registry_gen.load(std::memory_order_relaxed), ids);
  }
  ev_.set(id_field, ids.id);
  ev_.set(size_field, ids.size);
}

void Call::type_freed(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return;
  hold();
  // The handle may come back for another type: the threads' caches refill.
  recorder().registry_changed();
  const auto e = datatype_registry().freed(type);
  ev_.set(kDtype, e.id);
  ev_.set(kDsize, e.size);
}

void Call::newtype(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return;
  hold();
  recorder().registry_changed();
  const auto& e = datatype_registry().created(type);
  ev_.set(kNewtype, e.id);
  ev_.set(kNewsize, e.size);
}

void Call::datatypes(int n, const MPI_Datatype* types) {
  if (n < 0 || (n > 0 && !types)) return;
  hold();
  std::vector<int64_t> ids(static_cast<std::size_t>(n)), sizes(ids.size());
  for (int i = 0; i < n; ++i) {
    const auto& e = datatype_registry().lookup(types[i]);
    ids[static_cast<std::size_t>(i)] = e.id;
    sizes[static_cast<std::size_t>(i)] = e.size;
  }
  set_list(kDtypes, std::move(ids));
  set_list(kDsizes, std::move(sizes));
}

void Call::contents(MPI_Datatype type, int max_types, const MPI_Datatype* types) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return;
  if (combiner == MPI_COMBINER_NAMED || nd > max_types || !types) return;
  hold();
  recorder().registry_changed();
  std::vector<int64_t> ids(static_cast<std::size_t>(nd));
  for (int i = 0; i < nd; ++i) {
    datatype_registry().retained(types[i]);
    ids[static_cast<std::size_t>(i)] = datatype_registry().lookup(types[i]).id;
  }
  set_list(kDtypes, std::move(ids));
}

void Call::int_list(FieldId f, int n, const int* values) {
  if (n < 0 || (n > 0 && !values)) return;
  set_list(f, std::vector<int64_t>(values, values + n));
}

}  // namespace tracefold::record
