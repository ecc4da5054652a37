#include "fake_tree.hpp"

#include <chrono>
#include <cstdio>

namespace zkverify::fake {

namespace {

// A path ZooKeeper accepts: absolute, no empty segment, no trailing slash (but for a sequential
// node's prefix, which the server completes).
bool valid_path(const std::string& path, bool sequential) {
  if (path.empty() || path.front() != '/') return false;
  if (path == "/") return true;
  if (path.back() == '/' && !sequential) return false;
  return path.find("//") == std::string::npos;
}

// The descendants of `path` are the contiguous run of keys from here that start with its prefix.
Tree::const_iterator first_descendant(const Tree& tree, const std::string& prefix) {
  auto first = tree.lower_bound(prefix);
  return first != tree.end() && first->first == "/" ? std::next(first) : first;
}

std::string prefix_of_children(const std::string& path) { return path == "/" ? path : path + '/'; }

bool has_children(const Tree& tree, const std::string& path) {
  auto prefix = prefix_of_children(path);
  auto first = first_descendant(tree, prefix);
  return first != tree.end() && first->first.starts_with(prefix);
}

bool version_matches(const Node& node, std::int32_t version) { return version == -1 || version == node.stat.version; }

bool is_sequential(CreateMode mode) {
  return mode == CreateMode::persistent_sequential || mode == CreateMode::ephemeral_sequential;
}

bool is_ephemeral(CreateMode mode) { return mode == CreateMode::ephemeral || mode == CreateMode::ephemeral_sequential; }

std::string sequence_suffix(std::int64_t sequence) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%010lld", static_cast<long long>(sequence));
  return digits;
}

ZkError check_node(const Tree& tree, const std::string& path, std::int32_t version) {
  auto node = tree.find(path);
  if (node == tree.end()) return ZkError::no_node;
  return version_matches(node->second, version) ? ZkError::ok : ZkError::bad_version;
}

ZkError apply_one(Tree& tree, const MultiOp& op, std::int64_t session, Zxid zxid) {
  switch (op.kind) {
    case MultiOp::Kind::create: return create_node(tree, op.path, op.data, op.mode, session, zxid).error;
    case MultiOp::Kind::remove: return remove_node(tree, op.path, op.version);
    case MultiOp::Kind::set: return set_node(tree, op.path, op.data, op.version, zxid).error;
    case MultiOp::Kind::check: return check_node(tree, op.path, op.version);
  }
  return ZkError::unimplemented;
}

}  // namespace

bool allows(const Node& node, const std::optional<Credentials>& credentials, Need need) {
  if (!node.acl_owner) return true;
  if (need == Need::read && node.world_readable) return true;
  return credentials && auth_data(*credentials) == *node.acl_owner;
}

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

CreateResult create_node(Tree& tree, const std::string& path, const std::string& data, CreateMode mode,
                         std::int64_t session, Zxid zxid) {
  CreateResult result;
  if (!valid_path(path, is_sequential(mode)) || path == "/") {
    result.error = path == "/" ? ZkError::node_exists : ZkError::bad_arguments;
    return result;
  }
  auto parent = tree.find(parent_of(path));
  if (parent == tree.end()) {
    result.error = ZkError::no_node;
    return result;
  }
  if (parent->second.owner != 0) {
    result.error = ZkError::no_children_for_ephemerals;
    return result;
  }
  auto name = is_sequential(mode) ? path + sequence_suffix(parent->second.next_sequence) : path;
  if (tree.contains(name)) {
    result.error = ZkError::node_exists;
    return result;
  }
  if (is_sequential(mode)) ++parent->second.next_sequence;
  auto now = std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  auto owner = is_ephemeral(mode) ? session : 0;
  Node node{data, {zxid, zxid, 0, owner, now}, owner, 0, std::nullopt, false};
  result = {ZkError::ok, name, node.stat};
  tree.emplace(name, std::move(node));
  return result;
}

ZkError remove_node(Tree& tree, const std::string& path, std::int32_t version) {
  if (!valid_path(path, false) || path == "/") return ZkError::bad_arguments;
  auto node = tree.find(path);
  if (node == tree.end()) return ZkError::no_node;
  if (!version_matches(node->second, version)) return ZkError::bad_version;
  if (has_children(tree, path)) return ZkError::not_empty;
  tree.erase(node);
  return ZkError::ok;
}

StatResult set_node(Tree& tree, const std::string& path, const std::string& data, std::int32_t version, Zxid zxid) {
  auto node = tree.find(path);
  if (node == tree.end()) return {ZkError::no_node, {}};
  if (!version_matches(node->second, version)) return {ZkError::bad_version, {}};
  node->second.data = data;
  node->second.stat.mzxid = zxid;
  ++node->second.stat.version;
  return {ZkError::ok, node->second.stat};
}

GetResult read_node(const Tree& tree, const std::string& path) {
  auto node = tree.find(path);
  if (node == tree.end()) return {ZkError::no_node, {}, {}};
  return {ZkError::ok, node->second.data, node->second.stat};
}

ChildrenResult children_of(const Tree& tree, const std::string& path) {
  if (!tree.contains(path)) return {ZkError::no_node, {}};
  ChildrenResult result{ZkError::ok, {}};
  auto prefix = prefix_of_children(path);
  for (auto it = first_descendant(tree, prefix); it != tree.end() && it->first.starts_with(prefix); ++it)
    if (it->first.find('/', prefix.size()) == std::string::npos)
      result.children.push_back(it->first.substr(prefix.size()));
  return result;  // sorted: the map is
}

MultiResult apply_multi(Tree& tree, const std::vector<MultiOp>& ops, std::int64_t session, Zxid zxid) {
  Tree changed = tree;
  MultiResult result{ZkError::ok, {}};
  for (const auto& op : ops) {
    if (result.error != ZkError::ok) {
      result.each.push_back(ZkError::runtime_inconsistency);
      continue;
    }
    auto error = apply_one(changed, op, session, zxid);
    result.each.push_back(error);
    result.error = error;
  }
  if (result.error == ZkError::ok) tree = std::move(changed);
  return result;
}

}  // namespace zkverify::fake
