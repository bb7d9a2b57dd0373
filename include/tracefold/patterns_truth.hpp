// Evaluation of `tracefold patterns` against a ground truth (`--truth FILE`):
// the truth file's format, the one-to-one matching of expected and reported
// patterns, and the figures the seed (004, Section IV) judges a recovery by,
// precision and recall, with naming accuracy and coverage besides
// (docs/patterns.md, "Evaluation against a ground truth").
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tracefold/patterns.hpp"
#include "tracefold/ranklist.hpp"

namespace tracefold::patterns {

/// A bad truth file; what() reads `FILE:LINE: message`.
class TruthError : public std::runtime_error {
 public:
  TruthError(const std::string& file, std::size_t line, const std::string& message);
  const std::string& file() const { return file_; }
  std::size_t line() const { return line_; }

 private:
  std::string file_;
  std::size_t line_;
};

/// Ranks of one role of a pattern and the events each of them makes there,
/// in short form (`send(+1)`, `recv(-1)`, `allreduce`), as a set.
struct Role {
  Ranklist ranks;
  std::vector<std::string> events;  ///< sorted, each once
};

/// One expected communication pattern.
struct TruthPattern {
  std::string id;
  std::size_t line = 0;  ///< of its `pattern` line
  std::string context;   ///< the function it lies in; "*": any
  Ranklist ranks;
  std::optional<std::size_t> occurrences;
  std::string shape;  ///< a shape's name as the listing gives it: `2-D halo`
  /// Parameters that must agree, as the listing gives them (`grid`, `3x2`).
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<Role> roles;  ///< optional per-role event signatures
};

/// Events the truth expects in no pattern (a set-up broadcast, a final
/// reduction): they count as covered.
struct TruthSingleton {
  std::string id;
  std::size_t line = 0;
  std::string context;  ///< "*": any
  Ranklist ranks;
  std::optional<std::string> event;  ///< short form; none: any event
  std::optional<std::size_t> count;  ///< per rank; none: any number
};

struct Truth {
  std::string file;
  std::vector<TruthPattern> patterns;
  std::vector<TruthSingleton> singletons;
};

/// Reads a truth file (docs/patterns.md gives the format). Throws
/// TruthError naming `file` and the line for anything it does not accept.
Truth parse_truth(std::istream& in, const std::string& file);
/// parse_truth on the file at `path` (TruthError if it cannot be read).
Truth load_truth(const std::string& path);

/// Ranks written as the truth file writes them: `0-3,5,8-9` (an en dash,
/// as the listing prints ranges, also serves). Throws std::invalid_argument.
Ranklist parse_rank_ranges(const std::string& text);

/// The short form of a symbol: its family and partner, no communicator or
/// tag (`send(+1)`, `recv(any)`, `allreduce`).
std::string short_event(const Alphabet& alphabet, Symbol s, PeerMode mode);

/// A global pattern as the evaluation sees it.
struct Reported {
  std::string id;  ///< `G1`, `G2`, ... as the listing numbers them
  Ranklist ranks;
  std::vector<std::string> contexts;  ///< of its per-process patterns, sorted
  /// The most common occurrence count of its ranks' first patterns (ties:
  /// the larger).
  std::size_t occurrences = 0;
  std::string shape;  ///< `unclassified` when none
  std::vector<std::pair<std::string, std::string>> params;
  /// Per rank of the pattern, the short events of its per-process
  /// patterns in it.
  std::vector<Role> roles;
};

/// The global patterns of `r` as the evaluation sees them.
std::vector<Reported> reported_patterns(const Result& r, PeerMode mode);

/// The result of comparing reported patterns with a truth.
struct Evaluation {
  struct Pair {
    std::size_t truth = 0, reported = 0;  ///< indices
    double overlap = 0;                   ///< Jaccard index of the rank sets
    bool named = false;                   ///< shape and every given parameter agree
    /// What disagrees: `shape ring, expected 2-D halo`, `grid 2x3, expected 3x2`.
    std::vector<std::string> naming_errors;
    std::optional<bool> occurrences_agree;  ///< when the truth gives them
    std::optional<bool> roles_agree;        ///< when the truth gives roles
  };
  std::vector<Pair> pairs;
  std::vector<std::size_t> missed;    ///< truth patterns matched by none
  std::vector<std::size_t> spurious;  ///< reported patterns matching none
  std::size_t truth_patterns = 0, reported_patterns = 0;
  double precision = 0;  ///< matched reported / reported (1 when none reported)
  double recall = 0;     ///< matched truth / truth (1 when the truth is empty)
  double naming = 0;     ///< named pairs / pairs (1 when no pairs)
  /// Events in exactly one reported pattern or among the truth's
  /// singletons, of all events.
  double coverage = 0;
  std::size_t events = 0, covered = 0, in_several = 0, listed_singles = 0, unlisted_singles = 0;
  /// The single events no truth singleton takes, by context and event,
  /// one entry per count a rank has left.
  struct Unlisted {
    Ranklist ranks;
    std::string context, event;
    std::size_t count = 0;  ///< per rank
  };
  std::vector<Unlisted> unlisted;
};

/// Least rank-set overlap (Jaccard index) for a truth pattern and a
/// reported one to be matched.
inline constexpr double kMinOverlap = 0.5;

/// Matches one to one and computes the figures: the candidate pairs are
/// those whose contexts agree (the truth's context is one of the reported
/// pattern's, or `*`) and whose rank sets overlap by at least kMinOverlap;
/// they are taken greedily by overlap (largest first), ties by fewer naming
/// disagreements, then by truth order, then by reported order, each
/// pattern at most once.
Evaluation evaluate(const Truth& truth, const std::vector<Reported>& reported,
                    const Result::Cover& cover, const Alphabet& alphabet, PeerMode mode);

/// The evaluation as text (the listing's `truth` section).
void print_evaluation(std::ostream& out, const Evaluation& e, const Truth& truth,
                      const std::vector<Reported>& reported);

}  // namespace tracefold::patterns
