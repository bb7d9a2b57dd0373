// Checks the readers of every file format share: what a well-formed trace,
// raw log or partial must hold beyond its grammar (docs/format.md, "Errors").
#pragma once

#include <string>
#include <string_view>

#include "tracefold/event.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

/// Empty if `node` has every field its operation requires (required_fields)
/// for all of its ranks; else says which field is missing (and for which
/// ranks, when only some lack it).
std::string missing_required_field(const Node& node);
/// The same for one event of a raw log.
std::string missing_required_field(const Event& event);
/// A module name of a call-site frame: non-empty, valid UTF-8, without
/// spaces or control characters (a path as the loader reports it).
bool valid_module_name(std::string_view name);
/// Empty if every frame of `site` has a valid module name; else which one
/// does not.
std::string invalid_site(const CallSite& site);

}  // namespace tracefold
