// Datatype ids of the recorder (internal).
//
// A derived datatype is named by when it was made: the n-th type a rank
// constructs through a wrapped constructor gets id kFirstDerivedDatatype + n
// (counting types first seen in a call too, below). A replay that issues
// the same constructors in the same order therefore gives its types the
// same ids, whatever handles its MPI library hands out.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <unordered_map>

namespace tracefold::record {

class DatatypeRegistry {
 public:
  struct Entry {
    int64_t id = 0;
    int size = 0;      // MPI_Type_size, read once: not free on every call
    int64_t refs = 0;  // 0: predefined (never dropped)
  };

  /// A handle used by a call. A derived one that no wrapped constructor
  /// made (before MPI_Init, or by an unwrapped function) is numbered at its
  /// first use, so its holder still agrees with a replay of the same calls.
  const Entry& lookup(MPI_Datatype t);
  /// The handle a constructor returned. Usually new; a handle that is still
  /// live keeps its id (MPI_Type_create_f90_* hand out cached types).
  const Entry& created(MPI_Datatype t);
  /// MPI_Type_get_contents returned `t`: for derived types MPI hands out a
  /// reference the program must free, often the same handle as the original.
  void retained(MPI_Datatype t);
  /// MPI_Type_free(t): the entry it had. The handle is forgotten with its
  /// last reference, as the MPI library may then reuse it for another type.
  Entry freed(MPI_Datatype t);

 private:
  Entry& add(MPI_Datatype t, int64_t refs);
  std::unordered_map<MPI_Datatype, Entry> live_;
  int64_t next_id_ = 0;
};

/// The rank's registry (guarded by the recorder's lock).
DatatypeRegistry& datatype_registry();

}  // namespace tracefold::record
