#include "probes/keeper.hpp"

namespace zkverify::probes {

CreateResult create_now(Keeper& keeper, const std::string& path, const std::string& data, CreateMode mode,
                        Clock::time_point deadline) {
  Expect<CreateResult> created;
  keeper.create(path, data, mode, created.callback());
  return created.await(deadline);
}

GetResult get_now(Keeper& keeper, const std::string& path, Clock::time_point deadline) {
  Expect<GetResult> read;
  keeper.get(path, read.callback());
  return read.await(deadline);
}

StatResult exists_now(Keeper& keeper, const std::string& path, Clock::time_point deadline) {
  Expect<StatResult> found;
  keeper.exists(path, found.callback());
  return found.await(deadline);
}

ZkError remove_now(Keeper& keeper, const std::string& path, Clock::time_point deadline) {
  Expect<DoneResult> removed;
  keeper.remove(path, -1, removed.callback());
  return removed.await(deadline).error;
}

ZkError remove_all_now(Keeper& keeper, const std::vector<std::string>& paths, Clock::time_point deadline) {
  std::vector<Expect<DoneResult>> removals(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) keeper.remove(paths[i], -1, removals[i].callback());
  ZkError first = ZkError::ok;
  for (auto& removal : removals) {
    auto error = removal.await(deadline).error;
    if (error != ZkError::ok && error != ZkError::no_node && first == ZkError::ok) first = error;
  }
  return first;
}

AclResult get_acl_now(Keeper& keeper, const std::string& path, Clock::time_point deadline) {
  Expect<AclResult> read;
  keeper.get_acl(path, read.callback());
  return read.await(deadline);
}

std::unique_ptr<Keeper> CredentialedFactory::open(const std::vector<ServerAddress>& servers,
                                                  const KeeperOptions& options, Keeper::Listener listener) {
  if (options.credentials || !credentials_) return inner_.open(servers, options, std::move(listener));
  auto with_credentials = options;
  with_credentials.credentials = credentials_;
  return inner_.open(servers, with_credentials, std::move(listener));
}

GetResult get_and_watch_now(Keeper& keeper, const std::string& path, std::function<void(WatchNotice)> fired,
                            Clock::time_point deadline) {
  Expect<GetResult> read;
  keeper.get_and_watch(path, read.callback(), std::move(fired));
  return read.await(deadline);
}

ChildrenResult children_and_watch_now(Keeper& keeper, const std::string& path, std::function<void(WatchNotice)> fired,
                                      Clock::time_point deadline) {
  Expect<ChildrenResult> read;
  keeper.children_and_watch(path, read.callback(), std::move(fired));
  return read.await(deadline);
}

namespace {

// Every close is started first (a deadline already passed only starts it), then each is waited for
// until the same deadline: together they end by it, with no thread of ours per session.
std::size_t close_each(const std::vector<Keeper*>& sessions, Clock::time_point deadline) {
  auto now = Clock::now();
  for (auto* session : sessions)
    if (session) session->close(now);
  std::size_t closed = 0;
  for (auto* session : sessions)
    if (session && session->close(deadline)) ++closed;
  return closed;
}

}  // namespace

std::size_t close_all(std::vector<std::unique_ptr<Keeper>>& sessions, Clock::time_point deadline) {
  std::vector<Keeper*> each;
  for (auto& session : sessions) each.push_back(session.get());
  return close_each(each, deadline);
}

std::size_t close_all(const std::vector<std::shared_ptr<Keeper>>& sessions, Clock::time_point deadline) {
  std::vector<Keeper*> each;
  for (const auto& session : sessions) each.push_back(session.get());
  return close_each(each, deadline);
}

std::optional<int> creator_id(const Keeper& keeper) {
  auto id = keeper.session_id();
  if (!id) return std::nullopt;
  return static_cast<int>((static_cast<std::uint64_t>(*id) >> 56) & 0xffu);
}

}  // namespace zkverify::probes
