#include "probes/client_reads.hpp"

#include <algorithm>
#include <memory>
#include <set>

namespace zkverify::probes {

namespace {

std::string child_path(const std::string& parent, const std::string& child) {
  return parent == "/" ? "/" + child : parent + "/" + child;
}

struct PathRound {
  Expect<GetResult> node;
  Expect<ChildrenResult> children;
};

// The children's stats, read together; only the ephemeral ones are registrations.
std::vector<Registration> held_children(Keeper& session, const std::string& parent,
                                        const std::vector<std::string>& children, Clock::time_point deadline) {
  std::vector<Expect<StatResult>> stats(children.size());
  for (std::size_t i = 0; i < children.size(); ++i)
    session.exists(child_path(parent, children[i]), stats[i].callback());
  std::vector<Registration> held;
  for (std::size_t i = 0; i < children.size(); ++i) {
    auto stat = stats[i].await(deadline);
    if (stat.error != ZkError::ok || stat.stat.ephemeral_owner == 0) continue;
    held.push_back(
        {child_path(parent, children[i]), stat.stat.ephemeral_owner, stat.stat.ctime.time_since_epoch().count(), ""});
  }
  return held;
}

std::string parent_path(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

}  // namespace

FollowRound follow_round(Keeper& session, const std::vector<std::string>& paths, const std::function<void()>& changed,
                         Clock::time_point deadline) {
  std::set<std::string> watched(paths.begin(), paths.end());
  for (const auto& path : paths) watched.insert(parent_path(path));
  FollowRound round;
  // The watches first, then the reads: a change between the two still fires one.
  for (const auto& path : watched)
    if (children_and_watch_now(
            session, path, [changed](const WatchNotice&) { changed(); }, deadline)
            .error == ZkError::ok)
      ++round.watching;
  round.reads = read_client_paths(session, paths, deadline);
  return round;
}

std::vector<ClientPathRead> read_client_paths(Keeper& session, const std::vector<std::string>& paths,
                                              Clock::time_point deadline) {
  std::vector<PathRound> rounds(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    session.get(paths[i], rounds[i].node.callback());
    session.children(paths[i], rounds[i].children.callback());
  }
  std::vector<ClientPathRead> reads;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    auto& read = reads.emplace_back();
    read.path = paths[i];
    auto node = rounds[i].node.await(deadline);
    auto children = rounds[i].children.await(deadline);
    read.error = node.error;
    if (node.error != ZkError::ok) continue;
    read.data = node.data;
    if (node.stat.ephemeral_owner != 0)
      read.held.push_back({paths[i], node.stat.ephemeral_owner, node.stat.ctime.time_since_epoch().count(), node.data});
    if (children.error != ZkError::ok) {
      read.error = children.error;
      continue;
    }
    auto held = held_children(session, paths[i], children.children, deadline);
    read.held.insert(read.held.end(), held.begin(), held.end());
    std::ranges::sort(read.held, {}, &Registration::path);
  }
  return reads;
}

}  // namespace zkverify::probes
