#pragma once
// The fake ensemble's data tree: znodes, their ACLs as far as digest authentication goes, and the
// operations on them as a server applies them (create with sequence numbers, set with versions,
// remove of a leaf, multi all or nothing). Pure: the fake keeper takes its lock around these.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/facts/credentials.hpp"
#include "model/facts/session.hpp"

namespace zkverify::fake {

struct Node {
  std::string data;
  NodeStat stat;
  std::int64_t owner = 0;          // the session of an ephemeral node; 0 for a persistent one
  std::int64_t next_sequence = 0;  // the suffix of this node's next sequential child
  // The ACL: none is open to all; else digest-only for these credentials ("USER:PASSWORD").
  std::optional<std::string> acl_owner;
  bool world_readable = false;
};

// Which permission an operation needs, on which node (ZooKeeper's checks, simplified).
enum class Need { read, write, create, remove };

// The ACL of `node` lets a session with `credentials` do what it needs.
bool allows(const Node& node, const std::optional<Credentials>& credentials, Need need);

// Every path to its node; "/" always exists.
using Tree = std::map<std::string, Node>;

std::string parent_of(const std::string& path);

CreateResult create_node(Tree& tree, const std::string& path, const std::string& data, CreateMode mode,
                         std::int64_t session, Zxid zxid);
ZkError remove_node(Tree& tree, const std::string& path, std::int32_t version);
StatResult set_node(Tree& tree, const std::string& path, const std::string& data, std::int32_t version, Zxid zxid);
GetResult read_node(const Tree& tree, const std::string& path);
ChildrenResult children_of(const Tree& tree, const std::string& path);
// All or nothing, answered as the server does: the operations before the failing one ok, the
// failing one its error, the ones after it runtime_inconsistency.
MultiResult apply_multi(Tree& tree, const std::vector<MultiOp>& ops, std::int64_t session, Zxid zxid);

}  // namespace zkverify::fake
