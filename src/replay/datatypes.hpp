// Datatypes of a replay (internal).
//
// The recorder names a derived datatype by the order in which the rank made
// it (src/record/datatypes.hpp). The replay issues every recorded
// constructor again, in the same order, with the types the original built
// from and block lengths that give the recorded size, so a recording of the
// replay names its types as the original did; messages then use those
// types. A derived type no recorded constructor made (before MPI_Init, or by
// a function the recorder does not wrap) is stood in for by a contiguous
// type of the recorded size, built with PMPI_ as a recorder would not see it
// being made either.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "tracefold/event.hpp"

namespace tracefold::replay_detail {

class TypeReplay {
 public:
  TypeReplay();
  TypeReplay(const TypeReplay&) = delete;
  TypeReplay& operator=(const TypeReplay&) = delete;

  /// The type for the id in `id_field` (its recorded size in `size_field`).
  MPI_Datatype type_of(const Event& ev, FieldId id_field, FieldId size_field);
  /// A type constructor, MPI_Type_commit, MPI_Type_free or a decoder,
  /// replayed. Returns "" or why the replay differs from the record.
  std::string replay(const Event& ev, const std::string& op);
  /// Before MPI_Finalize: frees the stand-ins.
  void release();

 private:
  struct Made {
    MPI_Datatype handle = MPI_DATATYPE_NULL;
    int64_t refs = 0;
    int64_t size = 0;
  };
  MPI_Datatype by_id(int64_t id, int64_t size);
  std::string construct(const Event& ev, const std::string& op);
  void legacy(const Event& ev, const std::string& op);

  FieldId dtype_, dsize_, count_, ndims_, newtype_, newsize_, dtypes_, dsizes_, blocklen_,
      blocklens_, precision_, range_;
  std::unordered_map<int64_t, Made> made_;
  std::map<std::pair<int64_t, int64_t>, MPI_Datatype> standins_;
  // Traces recorded before constructors carried their types: the types
  // made, oldest first, and whether each was committed.
  std::deque<std::pair<MPI_Datatype, bool>> legacy_;
};

}  // namespace tracefold::replay_detail
