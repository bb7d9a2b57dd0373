// Trace ids of predefined MPI datatypes and reduction operations (internal,
// shared by the recorder and replay).
//
// The recorder numbers named handles by their position in these lists (from
// 1) and other handles from 1000 (datatypes) or 100 (ops) in order of first
// use; replay maps the ids back. Keep the lists in the recorder's order.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace tracefold::mpi_ids {

inline constexpr int64_t kFirstDerivedDatatype = 1000;
inline constexpr int64_t kFirstUserOp = 100;

inline const MPI_Datatype* named_datatypes(std::size_t& n) {
  static const MPI_Datatype named[] = {MPI_CHAR,
                                       MPI_SIGNED_CHAR,
                                       MPI_UNSIGNED_CHAR,
                                       MPI_BYTE,
                                       MPI_SHORT,
                                       MPI_UNSIGNED_SHORT,
                                       MPI_INT,
                                       MPI_UNSIGNED,
                                       MPI_LONG,
                                       MPI_UNSIGNED_LONG,
                                       MPI_LONG_LONG,
                                       MPI_UNSIGNED_LONG_LONG,
                                       MPI_FLOAT,
                                       MPI_DOUBLE,
                                       MPI_LONG_DOUBLE,
                                       MPI_C_BOOL,
                                       MPI_INT8_T,
                                       MPI_INT16_T,
                                       MPI_INT32_T,
                                       MPI_INT64_T,
                                       MPI_UINT8_T,
                                       MPI_UINT16_T,
                                       MPI_UINT32_T,
                                       MPI_UINT64_T,
                                       MPI_C_DOUBLE_COMPLEX,
                                       MPI_PACKED,
                                       MPI_FLOAT_INT,
                                       MPI_DOUBLE_INT,
                                       MPI_2INT,
                                       MPI_INTEGER,
                                       MPI_REAL,
                                       MPI_DOUBLE_PRECISION,
                                       MPI_LOGICAL,
                                       MPI_CHARACTER,
                                       MPI_COMPLEX,
                                       MPI_DOUBLE_COMPLEX,
                                       MPI_2DOUBLE_PRECISION,
                                       MPI_2INTEGER,
                                       MPI_2REAL};
  n = sizeof(named) / sizeof(named[0]);
  return named;
}

inline const MPI_Op* named_ops(std::size_t& n) {
  static const MPI_Op named[] = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                                 MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                                 MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
  n = sizeof(named) / sizeof(named[0]);
  return named;
}

}  // namespace tracefold::mpi_ids
