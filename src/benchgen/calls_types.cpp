// Derived datatypes, user-defined reduction operations and communicators
// made from groups (gen.hpp). The trace does not record a type's layout
// (strides, displacements, subarray shapes): it records the constructor,
// its counts and block lengths, the old types and the new type's size. The
// generated code calls the same constructor with the same counts and lays
// the blocks one after the other, so the type has the recorded size and
// an extent that covers it without overlaps (it can receive too).
#include <algorithm>

#include "gen.hpp"

namespace tracefold::benchgen {

namespace {

// Largest value of a scalar field, or of any element of a list field, over
// the whole trace (0 when it has none).
int64_t largest(const Trace& t, FieldId f, bool is_list) {
  int64_t best = 0;
  for (const Node& n : t.nodes) {
    const Elastic* e = n.field(f);
    if (!e) continue;
    for (const ElasticEntry& en : e->entries()) {
      if (en.values.is_histogram()) continue;
      for (auto c = en.values.cursor(); !c.done();) {
        const int64_t v = c.next();
        if (!is_list) {
          if (!is_sentinel(v)) best = std::max(best, v);
          continue;
        }
        for (int64_t k = 0; k < v && !c.done(); ++k) {
          const int64_t x = c.next();
          if (!is_sentinel(x)) best = std::max(best, x);
        }
      }
    }
  }
  return best;
}

}  // namespace

std::string Gen::types_prelude() const {
  const FieldId newtype = scalar_field("newtype"), dtypes = list_field("dtypes");
  const int64_t top = std::max({largest(t, newtype, false), largest(t, dtype, false),
                                largest(t, rdtype, false), largest(t, dtypes, true)});
  const int64_t type_ids = std::max<int64_t>(top - kFirstDerivedType + 1, 1);
  const int64_t op_ids = std::max<int64_t>(largest(t, redop, false) - kFirstUserOp + 1, 1);
  std::string out =
      "\n/* Derived datatypes by trace id (" + std::to_string(kFirstDerivedType) +
      " up), as this program made them;\n   reduction operations of the traced program's own "
      "(id " +
      std::to_string(kFirstUserOp) + " up). */\n#define TYPE_IDS " + std::to_string(type_ids) +
      "\n#define USER_OPS " + std::to_string(op_ids) + "\n#define FIRST_TYPE " +
      std::to_string(kFirstDerivedType) + "\n#define FIRST_OP " + std::to_string(kFirstUserOp) +
      "\n";
  out += R"(static MPI_Datatype made_type[TYPE_IDS];
static int made_refs[TYPE_IDS];
static MPI_Op user_ops[USER_OPS];
static int user_made[USER_OPS];
HELPER MPI_Datatype derived_type(long id) {
  long k = id - FIRST_TYPE;
  return k >= 0 && k < TYPE_IDS && made_refs[k] > 0 ? made_type[k] : MPI_BYTE;
}
/* The values a benchmark reduces mean nothing: the operation leaves them
   as they are, which is associative and commutative. */
static void user_op_fn(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)in;
  (void)inout;
  (void)len;
  (void)type;
}
HELPER MPI_Op user_op(long id) {
  long k = id - FIRST_OP;
  if (k < 0 || k >= USER_OPS) return MPI_SUM;
  if (!user_made[k]) {
    PMPI_Op_create(user_op_fn, 1, &user_ops[k]);
    user_made[k] = 1;
  }
  return user_ops[k];
}
HELPER void type_made(long id, MPI_Datatype t) {
  long k = id - FIRST_TYPE;
  if (k < 0 || k >= TYPE_IDS) return;
  if (made_refs[k] > 0 && made_type[k] == t) {
    ++made_refs[k]; /* a cached type handed out again (MPI_Type_create_f90_*) */
    return;
  }
  made_type[k] = t;
  made_refs[k] = 1;
}
HELPER MPI_Aint extent_of(MPI_Datatype t) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(t, &lb, &extent);
  return extent;
}
HELPER void type_commit(long id) {
  long k = id - FIRST_TYPE;
  MPI_Datatype t = derived_type(id);
  MPI_Type_commit(&t);
  if (k >= 0 && k < TYPE_IDS && made_refs[k] > 0) made_type[k] = t;
}
/* MPI counts the references MPI_Type_get_contents hands out; the id is
   forgotten with the last one. */
HELPER void type_free(long id) {
  long k = id - FIRST_TYPE;
  MPI_Datatype t = derived_type(id);
  MPI_Type_free(&t);
  if (k >= 0 && k < TYPE_IDS && made_refs[k] > 0 && --made_refs[k] == 0)
    made_type[k] = MPI_DATATYPE_NULL;
}
/* MPI_Type_get_contents of type `id`: the derived types it returns are
   references the program frees later, under the ids of the list. */
HELPER void type_contents(long id, const int *ids) {
  MPI_Datatype t = derived_type(id);
  int ni = 0, na = 0, nd = 0, combiner = 0;
  PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
  if (combiner == MPI_COMBINER_NAMED) {
    MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    return;
  }
  int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
  MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
  MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
  MPI_Type_get_contents(t, ni, na, nd, ints, addrs, types);
  for (int j = 0; ids && j < nd && j < list_len(ids); ++j)
    if (ids[j] >= FIRST_TYPE) type_made(ids[j], types[j]);
  free(ints);
  free(addrs);
  free(types);
}
/* Displacements that lay the blocks one after the other, in elements of
   the old type (lens NULL: every block is `blocklen` long). */
HELPER int *packed_buf;
HELPER MPI_Aint *hpacked_buf;
HELPER int *packed(int n, const int *lens, int blocklen) {
  packed_buf = realloc(packed_buf, sizeof(int) * (size_t)(n + 1));
  int at = 0;
  for (int k = 0; k < n; ++k) {
    packed_buf[k] = at;
    at += lens ? lens[k] : blocklen;
  }
  return packed_buf;
}
HELPER MPI_Aint *hpacked(int n, const int *lens, int blocklen, MPI_Aint extent) {
  const int *d = packed(n, lens, blocklen);
  hpacked_buf = realloc(hpacked_buf, sizeof(MPI_Aint) * (size_t)(n + 1));
  for (int k = 0; k < n; ++k) hpacked_buf[k] = (MPI_Aint)d[k] * extent;
  return hpacked_buf;
}
HELPER MPI_Datatype *types_buf;
HELPER MPI_Datatype *types_of(int n, const int *ids) {
  types_buf = realloc(types_buf, sizeof(MPI_Datatype) * (size_t)(n + 1));
  for (int k = 0; k < n; ++k) types_buf[k] = ids && k < list_len(ids) ? dtype_of(ids[k]) : MPI_BYTE;
  return types_buf;
}
HELPER MPI_Aint *struct_displs(int n, const int *lens, const MPI_Datatype *types) {
  hpacked_buf = realloc(hpacked_buf, sizeof(MPI_Aint) * (size_t)(n + 1));
  MPI_Aint at = 0;
  for (int k = 0; k < n; ++k) {
    hpacked_buf[k] = at;
    at += (MPI_Aint)lens[k] * extent_of(types[k]);
  }
  return hpacked_buf;
}
/* n-dimensional constructors: `elements` of the old type along the first
   dimension, the others of extent 1. */
HELPER void type_subarray(int ndims, int elements, MPI_Datatype old, MPI_Datatype *made) {
  int sizes[32], starts[32];
  if (ndims < 1) ndims = 1;
  if (ndims > 32) ndims = 32;
  for (int d = 0; d < ndims; ++d) {
    sizes[d] = d == 0 ? elements : 1;
    starts[d] = 0;
  }
  MPI_Type_create_subarray(ndims, sizes, sizes, starts, MPI_ORDER_C, old, made);
}
HELPER void type_darray(int ndims, int elements, MPI_Datatype old, MPI_Datatype *made) {
  int gsizes[32], distribs[32], dargs[32], psizes[32];
  if (ndims < 1) ndims = 1;
  if (ndims > 32) ndims = 32;
  for (int d = 0; d < ndims; ++d) {
    gsizes[d] = d == 0 ? elements : 1;
    distribs[d] = MPI_DISTRIBUTE_NONE;
    dargs[d] = MPI_DISTRIBUTE_DFLT_DARG;
    psizes[d] = 1;
  }
  MPI_Type_create_darray(1, 0, ndims, gsizes, distribs, dargs, psizes, MPI_ORDER_C, old, made);
}
/* MPI_Comm_create(_group) with the recorded members of the new
   communicator: each rank passes the group it is in (the empty group when
   none). */
HELPER void comm_create(MPI_Comm parent, const int *groups, int with_tag, int tag, MPI_Comm *made) {
  int n = 0;
  const int *want = my_group(groups, &n);
  MPI_Group world_group, g = MPI_GROUP_EMPTY;
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  if (n > 0) PMPI_Group_incl(world_group, n, want, &g);
  if (with_tag)
    MPI_Comm_create_group(parent, g, tag, made);
  else
    MPI_Comm_create(parent, g, made);
  if (g != MPI_GROUP_EMPTY) PMPI_Group_free(&g);
  PMPI_Group_free(&world_group);
}
)";
  return out;
}

bool Gen::call_types(std::size_t i, const Ranklist& U, const std::string& counter) {
  const Node& n = t.nodes[i];
  const std::string& op = OpTable::name(n.key.op);
  const OpTraits& tr = op_traits(n.key.op);
  static const FieldId newtype = scalar_field("newtype"), newsize = scalar_field("newsize"),
                       blocklen = scalar_field("blocklen"), blocklens = list_field("blocklens"),
                       dtypes = list_field("dtypes"), precision = scalar_field("precision"),
                       range = scalar_field("range");
  auto emit = [&](const std::string& s) { body << line() << s << "\n"; };
  auto S = [&](FieldId f, Kind k, const std::string& otherwise) {
    const std::string v = scalar(i, f, k, U, counter);
    return v.empty() ? otherwise : v;
  };
  auto need = [&](FieldId f, Kind k) {
    const std::string v = scalar(i, f, k, U, counter);
    if (v.empty()) fail(i, "the trace does not record its " + FieldTable::name(f));
    return v;
  };
  switch (tr.family) {
    case OpFamily::kTypeCreate: {
      if (tr.variant == OpVariant::kLegacy)
        fail(i, "a datatype constructor removed in MPI-3 (the recorder never records it)");
      const std::string id = need(newtype, Kind::kInt);
      const std::string old = S(dtype, Kind::kDtype, "MPI_BYTE");
      const std::string cnt = S(count, Kind::kInt, "0");
      const std::string bl = S(blocklen, Kind::kInt, "1");
      std::string make;
      if (op == "MPI_Type_contiguous") {
        make = op + "(" + cnt + ", " + old + ", &nt);";
      } else if (op == "MPI_Type_vector") {
        make = op + "(" + cnt + ", " + bl + ", " + bl + ", " + old + ", &nt);";
      } else if (op == "MPI_Type_create_hvector") {
        make = op + "(" + cnt + ", " + bl + ", (MPI_Aint)" + bl + " * extent_of(" + old + "), " +
               old + ", &nt);";
      } else if (op == "MPI_Type_indexed" || op == "MPI_Type_create_hindexed") {
        const std::string lens = list(i, blocklens, U);
        if (lens.empty()) fail(i, "the trace does not record its block lengths");
        make = "const int *bl = " + lens + "; " + op + "(" + cnt + ", bl, " +
               (op == "MPI_Type_indexed" ? "packed(" + cnt + ", bl, 0)"
                                         : "hpacked(" + cnt + ", bl, 0, extent_of(" + old + "))") +
               ", " + old + ", &nt);";
      } else if (op == "MPI_Type_create_indexed_block") {
        make = op + "(" + cnt + ", " + bl + ", packed(" + cnt + ", NULL, " + bl + "), " + old +
               ", &nt);";
      } else if (op == "MPI_Type_create_hindexed_block") {
        make = op + "(" + cnt + ", " + bl + ", hpacked(" + cnt + ", NULL, " + bl + ", extent_of(" +
               old + ")), " + old + ", &nt);";
      } else if (op == "MPI_Type_create_struct") {
        const std::string lens = list(i, blocklens, U), ids = list(i, dtypes, U);
        if (lens.empty() || ids.empty()) fail(i, "the trace does not record its blocks' types");
        make = "const int *bl = " + lens + "; MPI_Datatype *ty = types_of(" + cnt + ", " + ids +
               "); " + op + "(" + cnt + ", bl, struct_displs(" + cnt + ", bl, ty), ty, &nt);";
      } else if (op == "MPI_Type_create_subarray" || op == "MPI_Type_create_darray") {
        // The shape is not recorded: the new type's size over the old
        // type's gives the elements.
        const int64_t nsize = max_of(i, newsize, false), osize = max_of(i, dsize, false);
        if (nsize <= 0 || osize <= 0 || nsize % osize != 0)
          fail(i, "its new type's size is not a whole number of old elements");
        make = std::string(op == "MPI_Type_create_subarray" ? "type_subarray(" : "type_darray(") +
               S(ndims, Kind::kInt, "1") + ", " + std::to_string(nsize / osize) + ", " + old +
               ", &nt);";
      } else if (op == "MPI_Type_create_resized") {
        make = op + "(" + old + ", 0, extent_of(" + old + "), &nt);";
      } else if (op == "MPI_Type_dup") {
        make = op + "(" + old + ", &nt);";
      } else if (op == "MPI_Type_create_f90_integer") {
        make = op + "(" + S(range, Kind::kInt, "MPI_UNDEFINED") + ", &nt);";
      } else if (op == "MPI_Type_create_f90_real" || op == "MPI_Type_create_f90_complex") {
        make = op + "(" + S(precision, Kind::kInt, "MPI_UNDEFINED") + ", " +
               S(range, Kind::kInt, "MPI_UNDEFINED") + ", &nt);";
      } else {
        return false;
      }
      emit("{");
      ++depth;
      emit("MPI_Datatype nt = MPI_DATATYPE_NULL;");
      emit(make);
      emit("type_made(" + id + ", nt);");
      --depth;
      emit("}");
      return true;
    }
    case OpFamily::kTypeCommit:
      emit("type_commit(" + need(dtype, Kind::kInt) + ");");
      return true;
    case OpFamily::kTypeFree:
      emit("type_free(" + need(dtype, Kind::kInt) + ");");
      return true;
    case OpFamily::kTypeQuery: {
      const std::string ty = S(dtype, Kind::kDtype, "MPI_BYTE");
      if (op == "MPI_Type_get_contents") {
        const std::string ids = list(i, dtypes, U);
        emit("type_contents(" + need(dtype, Kind::kInt) + ", " + (ids.empty() ? "NULL" : ids) +
             ");");
      } else if (op == "MPI_Type_get_envelope") {
        emit("{ int ni, na, nd, comb; " + op + "(" + ty + ", &ni, &na, &nd, &comb); }");
      } else if (op == "MPI_Type_size") {
        emit("{ int sz; " + op + "(" + ty + ", &sz); }");
      } else if (op == "MPI_Type_size_x") {
        emit("{ MPI_Count sz; " + op + "(" + ty + ", &sz); }");
      } else if (op == "MPI_Type_get_extent" || op == "MPI_Type_get_true_extent") {
        emit("{ MPI_Aint lb, ext; " + op + "(" + ty + ", &lb, &ext); }");
      } else if (op == "MPI_Type_get_extent_x" || op == "MPI_Type_get_true_extent_x") {
        emit("{ MPI_Count lb, ext; " + op + "(" + ty + ", &lb, &ext); }");
      } else {
        return false;
      }
      return true;
    }
    case OpFamily::kCommCreate:
    case OpFamily::kCommCreateGroup: {
      // The members of each communicator the call made are in the trace's
      // communicator table.
      std::string C = scalar(i, comm, Kind::kComm, U, counter);
      if (C.empty()) C = "MPI_COMM_WORLD";
      const Elastic* e = n.field(newcomm);
      std::vector<const CommGroup*> groups;
      if (e)
        for (const ElasticEntry& en : e->entries())
          for (auto c = en.values.cursor(); !c.done();) {
            const int64_t id = c.next();
            if (is_sentinel(id)) continue;
            auto g = t.comms.all().find(id);
            if (g == t.comms.all().end())
              fail(i, "communicator " + std::to_string(id) + " it makes is not in the trace");
            for (const CommGroup& m : g->second)
              if (std::find(groups.begin(), groups.end(), &m) == groups.end()) groups.push_back(&m);
          }
      const std::string table = fresh(site_name(i) + "_groups");
      decls << "static const int " << table << "[] = {" << groups.size();
      for (const CommGroup* g : groups) {
        decls << ", " << g->members.size();
        for (int32_t m : g->members) decls << ", " << m;
      }
      decls << "};\n";
      const std::string id = S(newcomm, Kind::kInt, "TF_NULL");
      std::string made = "comm_ref(" + id + ")";
      for (const auto& [cid, cname] : comm_names)
        if (id == std::to_string(cid)) made = "&" + cname;
      emit("comm_create(" + C + ", " + table + ", " +
           (tr.family == OpFamily::kCommCreateGroup ? "1, " + S(tag, Kind::kTag, "0") : "0, 0") +
           ", " + made + ");");
      return true;
    }
    default:
      return false;
  }
}

}  // namespace tracefold::benchgen
