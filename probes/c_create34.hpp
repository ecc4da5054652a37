#pragma once
// Creating a node on a 3.4 server, which knows no create2: create, then exists for the stat. A 3.4
// server answers the create2 it does not know with ZUNIMPLEMENTED and drops the connection: a create
// sent right after that answer is lost with it (connection_loss, never applied), so it is sent once
// more when the session is back, by a deadline.

#include <memory>
#include <string>
#include "probes/io.hpp"

#include "probes/c_requests.hpp"

namespace zkverify::probes::c_client {

struct PlainCreate {
  std::shared_ptr<SessionCore> core;
  std::shared_ptr<HandleSlot> slot;
  std::string path, data;
  CreateMode mode = CreateMode::persistent;
  ACL_vector* acl = nullptr;             // a static of the C client's
  Clock::time_point reconnect_deadline;  // the retry after a dropped connection waits until then
};

// The create, then its stat; with `may_retry`, a create lost with the connection is sent once more
// after the session reconnected (by create.reconnect_deadline).
void create_then_stat(const std::shared_ptr<const PlainCreate>& create, bool may_retry,
                      Keeper::Callback<CreateResult> done);

}  // namespace zkverify::probes::c_client
