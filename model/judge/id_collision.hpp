#pragma once
// Whether the servers' ids collide: the one condition under which no restart verdict is given at all.
// Two servers voting as one id break the arithmetic every restart rule counts with (the leader counts
// one vote for the id, whichever of them sends it), and a restart is what lets the second one in:
// a server started on the leader's id never joins until that leader steps down.

#include <optional>
#include <string>

#include "model/judge/report.hpp"

namespace zkverify {

// Why restarting anything now is not safe because of server ids, or none: two listed servers report
// one id (proved two servers or not), or a listed server that does not serve has the leader's id or
// may have a listed one (the membership has no place for it and it names no id of its own).
std::optional<std::string> id_collision(const Report& report);

}  // namespace zkverify
