// Expressions on the calling rank that generated benchmarks share (C and
// coNCePTuaL): which ranks run a statement (a predicate built from a
// ranklist) and whom a call talks to (a peer offset as arithmetic on the
// rank and the communicator size). Internal to src/benchgen.
#pragma once

#include <cstdint>
#include <string>

#include "tracefold/ranklist.hpp"

namespace tracefold::benchgen {

/// Spelling of the operators, so one builder serves C and coNCePTuaL.
struct ExprSyntax {
  std::string rank = "rank";
  std::string size = "size";
  std::string and_op = "&&";
  std::string or_op = "||";
  std::string not_op = "!";
  std::string mod = "%";
  std::string eq = "==";
  std::string ne = "!=";
  std::string truth = "1";
  std::string falsity = "0";

  static ExprSyntax c() { return {}; }
  /// coNCePTuaL: `t`, `num_tasks`, `/\`, `\/`, `not`, `mod`, `=`, `<>`.
  static ExprSyntax conceptual();
};

/// A predicate that holds for the ranks of `ranks` among `universe` and
/// fails for the other ranks of `universe` (ranks outside it do not
/// matter); `world` is the number of ranks. It reads as the ranklist's
/// regular sections (`rank % 4 == 3 && rank >= 4`), or as the negation of
/// its complement when that is shorter (`rank != 0`); `truth` when every
/// rank of the universe is in.
std::string rank_predicate(const Ranklist& ranks, const Ranklist& universe, int32_t world,
                           const ExprSyntax& syn = {});

/// The peer at relative offset `offset` ((peer - me) mod size, as traces
/// store peers) as arithmetic on the caller's rank and size in the
/// communicator: `rank`, `(rank + 1) % size`, `(rank + size - 1) % size`.
/// `rank`/`size` are the names to use (the syntax's by default).
std::string peer_expression(int64_t offset, int64_t comm_size, const ExprSyntax& syn = {},
                            const std::string& rank = "", const std::string& size = "");

}  // namespace tracefold::benchgen
