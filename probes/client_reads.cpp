#include "probes/client_reads.hpp"

#include <algorithm>
#include <memory>
#include <set>

#include "probes/notice_wait.hpp"

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

// A child watch on each of `paths`, the first to fire settling `change`; how many were set.
int watch_children(Keeper& session, const std::set<std::string>& paths, const std::shared_ptr<NoticeWait>& change,
                   Clock::time_point deadline) {
  int watching = 0;
  for (const auto& path : paths)
    if (children_and_watch_now(
            session, path, [change](WatchNotice notice) { change->notice(std::move(notice)); }, deadline)
            .error == ZkError::ok)
      ++watching;
  return watching;
}

// Whether every registration in `awaited` is held again, by whichever session.
bool all_back(const std::vector<ClientPathRead>& reads, const std::vector<std::string>& awaited) {
  return std::ranges::all_of(awaited, [&](const std::string& path) {
    return std::ranges::any_of(reads, [&](const ClientPathRead& read) {
      return std::ranges::find(read.held, path, &Registration::path) != read.held.end();
    });
  });
}

}  // namespace

std::vector<ClientPathRead> await_registrations(Keeper& session, const std::vector<std::string>& paths,
                                                const std::vector<std::string>& awaited, Clock::time_point deadline,
                                                StopSignals* signals, int nth) {
  std::set<std::string> parents;
  for (const auto& path : awaited) parents.insert(parent_path(path));
  while (true) {
    // The watches first, then the read: a registration made between the two still fires one.
    auto change = std::make_shared<NoticeWait>();
    auto watching = watch_children(session, parents, change, deadline);
    auto reads = read_client_paths(session, paths, deadline);
    // No watch set (the session ended, or the parents are gone): nothing could say they came back.
    if (all_back(reads, awaited) || watching == 0 || Clock::now() >= deadline) return reads;
    if (!change->wait(deadline, signals, nth)) return reads;
  }
}

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
