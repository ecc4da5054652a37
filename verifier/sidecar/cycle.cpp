#include "verifier/sidecar/cycle.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "probes/four_letter.hpp"
#include "verifier/commands/ensemble.hpp"
#include "verifier/judge/checks.hpp"

namespace zkverify::verifier {

using probes::Clock;

namespace {

// Another session's operations, all forwarded; what close does is the subclass's.
class ForwardingKeeper : public probes::Keeper {
 public:
  explicit ForwardingKeeper(std::shared_ptr<probes::Keeper> session) : session_(std::move(session)) {}
  probes::ZkError wait_connected(Clock::time_point deadline) override { return session_->wait_connected(deadline); }
  probes::SessionState state() const override { return session_->state(); }
  std::optional<std::int64_t> session_id() const override { return session_->session_id(); }
  std::string connected_server() const override { return session_->connected_server(); }
  std::chrono::milliseconds negotiated_timeout() const override { return session_->negotiated_timeout(); }
  void create(const std::string& path, const std::string& data, probes::CreateMode mode,
              Callback<probes::CreateResult> done) override {
    session_->create(path, data, mode, std::move(done));
  }
  void get(const std::string& path, Callback<probes::GetResult> done) override { session_->get(path, std::move(done)); }
  void set(const std::string& path, const std::string& data, std::int32_t version,
           Callback<probes::StatResult> done) override {
    session_->set(path, data, version, std::move(done));
  }
  void exists(const std::string& path, Callback<probes::StatResult> done) override { session_->exists(path, std::move(done)); }
  void children(const std::string& path, Callback<probes::ChildrenResult> done) override {
    session_->children(path, std::move(done));
  }
  void remove(const std::string& path, std::int32_t version, Callback<probes::DoneResult> done) override {
    session_->remove(path, version, std::move(done));
  }
  void sync(const std::string& path, Callback<probes::DoneResult> done) override { session_->sync(path, std::move(done)); }
  void multi(const std::vector<probes::MultiOp>& ops, Callback<probes::MultiResult> done) override {
    session_->multi(ops, std::move(done));
  }
  void get_acl(const std::string& path, Callback<probes::AclResult> done) override {
    session_->get_acl(path, std::move(done));
  }
  bool presents_credentials() const override { return session_->presents_credentials(); }
  void get_and_watch(const std::string& path, Callback<probes::GetResult> done,
                     std::function<void(probes::WatchNotice)> fired) override {
    session_->get_and_watch(path, std::move(done), std::move(fired));
  }
  probes::ZkError move_to(const std::string& server) override { return session_->move_to(server); }
  bool close_ends_session() const override { return session_->close_ends_session(); }
  void widen() override { session_->widen(); }

 protected:
  probes::Keeper& session() { return *session_; }

 private:
  std::shared_ptr<probes::Keeper> session_;
};

// A loan of the long-lived session: closing the loan does not close it (the lender does, at the end).
class LentSession final : public ForwardingKeeper {
 public:
  using ForwardingKeeper::ForwardingKeeper;
  bool close(Clock::time_point) override { return true; }
  bool close_ends_session() const override { return false; }
};

// A session the StoppableFactory keeps track of: its owner closes it as usual.
class TrackedSession final : public ForwardingKeeper {
 public:
  using ForwardingKeeper::ForwardingKeeper;
  bool close(Clock::time_point deadline) override { return session().close(deadline); }
};

bool is_finished(probes::SessionState state) {
  return state == probes::SessionState::expired || state == probes::SessionState::auth_failed ||
         state == probes::SessionState::closed;
}

}  // namespace

LocalSessionLender::LocalSessionLender(probes::KeeperFactory& keepers, probes::ServerAddress local)
    : keepers_(keepers), local_(std::move(local)) {}

LocalSessionLender::~LocalSessionLender() { close(Clock::now() + std::chrono::seconds(1)); }

std::unique_ptr<probes::Keeper> LocalSessionLender::open(const std::vector<probes::ServerAddress>& servers,
                                                         const probes::KeeperOptions& options,
                                                         probes::Keeper::Listener listener) {
  if (servers.size() != 1 || servers.front().name != local_.name) return keepers_.open(servers, options, std::move(listener));
  std::lock_guard lock(mutex_);
  if (!session_ || is_finished(session_->state())) {
    if (session_) session_->close(Clock::now());  // already over: abandons at once
    session_ = keepers_.open({local_}, options, nullptr);
  }
  return std::make_unique<LentSession>(session_);
}

StoppableFactory::StoppableFactory(probes::KeeperFactory& keepers) : keepers_(keepers) {}

std::unique_ptr<probes::Keeper> StoppableFactory::open(const std::vector<probes::ServerAddress>& servers,
                                                       const probes::KeeperOptions& options,
                                                       probes::Keeper::Listener listener) {
  std::shared_ptr<probes::Keeper> session = keepers_.open(servers, options, std::move(listener));
  std::lock_guard lock(mutex_);
  if (stopped_) session->close(Clock::now());  // abandoned at once: its operations answer `closing`
  std::erase_if(opened_, [](const auto& weak) { return weak.expired(); });
  if (!stopped_) opened_.push_back(session);
  return std::make_unique<TrackedSession>(std::move(session));
}

bool StoppableFactory::stop(Clock::time_point deadline) {
  std::vector<std::shared_ptr<probes::Keeper>> open;
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    for (const auto& weak : std::exchange(opened_, {}))
      if (auto session = weak.lock()) open.push_back(std::move(session));
  }
  return probes::close_all(open, deadline) == open.size();
}

bool LocalSessionLender::close(Clock::time_point deadline) {
  std::lock_guard lock(mutex_);
  if (!session_) return true;
  bool closed = session_->close(deadline);
  session_.reset();
  return closed;
}

namespace {

// --no-write's proof: the local server's own word on its Zab phase, asked after gather (so the server
// still sees one connection at a time): mntr's zk_peer_state, else the AdminServer's zabstate when
// it has an admin port. None when neither answers.
std::optional<LocalPhase> local_phase(const EnsembleOptions& options, const std::string& local,
                                      Clock::time_point deadline) {
  auto server = std::ranges::find(options.servers, local, &probes::ServerAddress::name);
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (server == options.servers.end() || left <= std::chrono::milliseconds(0)) return std::nullopt;
  probes::ProbeLimits limits;
  limits.deadline = deadline;
  limits.connect_timeout = left;
  limits.exchange_timeout = left;
  auto mntr = probes::ask_word(*server, "mntr", limits);
  if (mntr.error == probes::ProbeError::ok)
    if (auto state = parse_peer_state(mntr.reply)) return LocalPhase{SyncProof::peer_state, *state};
  if (!server->admin_port || Clock::now() >= deadline) return std::nullopt;
  auto zab = probes::ask_admin(*server, "zabstate", limits);
  if (zab.error != probes::ProbeError::ok) return std::nullopt;
  return zabstate_phase(zab.reply);
}

}  // namespace

CycleResult run_cycle(const EnsembleOptions& options, const std::string& local, probes::KeeperFactory& keepers) {
  auto started = Clock::now();
  auto facts = gather(options, keepers);
  CycleResult result;
  result.report = judge(facts);
  std::optional<LocalPhase> phase;
  if (options.no_write) phase = local_phase(options, local, started + options.timeout);
  result.readiness = judge_readiness(result.report, local, !options.no_write, phase);
  result.checked_at = std::chrono::system_clock::now();
  result.duration = Clock::now() - started;
  if (facts.round_trip)
    for (const auto& read : facts.round_trip->reads)
      if (read.server == local && read.error == probes::ZkError::ok)
        result.round_trip_seconds = std::chrono::duration<double>(read.latency).count();
  return result;
}

std::string choose_local(const std::vector<probes::ServerAddress>& servers, const std::string& local_flag,
                         const std::string& host_name) {
  if (!local_flag.empty()) {
    require_listed(servers, local_flag, "--local ");
    return local_flag;
  }
  auto named = std::ranges::find(servers, host_name, &probes::ServerAddress::name);
  if (named != servers.end()) return named->name;
  if (servers.size() == 1) return servers.front().name;
  std::vector<std::string> names;
  for (const auto& server : servers) names.push_back(server.name);
  throw_usage(fmt::format("--local not given and the host name '{}' is not in --servers (names: {}): pass --local NAME",
                          host_name, fmt::join(names, ",")));
}

void add_local_check_options(CLI::App& command, EnsembleOptions& options, std::string& local) {
  command.add_option("--local", local, "This pod's server, one of --servers (default: the host name)");
  add_admin_port_option(command, options.servers);
  add_auth_file_option(command, options.auth_file);
  add_namespace_option(command, options.namespace_path);
  command.add_flag("--no-write", options.no_write,
                   "No round trip: prove sync with the local mntr's zk_peer_state, else the AdminServer's zabstate "
                   "(with --admin-port), else the leader's zk_synced_followers, else srvr's mode");
}

}  // namespace zkverify::verifier
