#pragma once
// Creating a node with the C client on every server line: create, then exists on the same session
// for the new node's stat. create2 (one round trip) is 3.5+: a 3.4 server answers it ZUNIMPLEMENTED
// and drops the connection, and a create sent after that answer may or may not have been applied
// when the connection went (a real 3.4.13 applied some): resending it could create a node twice.
// The exists is a local read of the same server, a fraction of the write's cost.

#include <memory>
#include <string>
#include "probes/io.hpp"

#include "probes/c_session.hpp"

namespace zkverify::probes::c_client {

struct PlainCreate {
  std::string path, data;
  CreateMode mode = CreateMode::persistent;
  ACL_vector* acl = nullptr;  // a static of the C client's
};

// On the session's strand: the create, then its stat. Never resent: a create whose outcome is
// unknown (connection_loss) is the caller's to check.
void create_then_stat(const std::shared_ptr<CSession>& session, const PlainCreate& create,
                      Keeper::Callback<CreateResult> done);

}  // namespace zkverify::probes::c_client
