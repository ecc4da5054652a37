#include "probes/round_trip.hpp"

#include <memory>

#include <zookeeper/zookeeper.h>

namespace zkverify::probes {

namespace {

std::optional<int> creator_id(const ZkSession& session) {
  auto id = session.session_id();
  if (!id) return std::nullopt;
  return static_cast<int>((static_cast<std::uint64_t>(*id) >> 56) & 0xff);
}

}  // namespace

RoundTrip run_round_trip(const RoundTripPlan& plan) {
  RoundTrip trip;
  if (plan.servers.empty() || plan.writer >= plan.servers.size()) return trip;
  trip.writer = plan.servers[plan.writer].name;

  std::vector<std::unique_ptr<ZkSession>> sessions;
  for (const auto& server : plan.servers)
    sessions.push_back(std::make_unique<ZkSession>(server.endpoint(), plan.session_timeout));
  trip.reads.resize(plan.servers.size());
  for (std::size_t i = 0; i < plan.servers.size(); ++i) trip.reads[i].server = plan.servers[i].name;

  auto& writer = *sessions[plan.writer];
  trip.write_error = writer.wait_connected(plan.deadline);
  if (trip.write_error != ZkError::ok) return trip;

  trip.namespace_error = writer.create(plan.namespace_path, {}, 0, plan.deadline);
  if (trip.namespace_error == ZkError::node_exists) trip.namespace_error = ZkError::ok;
  if (trip.namespace_error != ZkError::ok) {
    trip.write_error = ZkError::not_attempted;
    return trip;
  }

  Zxid czxid;
  trip.write_error = writer.create(plan.namespace_path + std::string(kRoundTripPrefix), plan.payload,
                                   ZOO_EPHEMERAL_SEQUENTIAL, plan.deadline, &trip.path, &czxid);
  if (trip.write_error != ZkError::ok) return trip;
  trip.write_zxid = czxid;

  std::vector<std::shared_ptr<ZkSession::PendingOp>> pending(sessions.size());
  std::vector<Clock::time_point> started(sessions.size());
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    auto& read = trip.reads[i];
    read.error = sessions[i]->wait_connected(plan.deadline);
    read.session_server_id = creator_id(*sessions[i]);
    if (read.error != ZkError::ok) continue;
    started[i] = Clock::now();
    pending[i] = sessions[i]->start_sync_and_read(trip.path);
  }
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    if (!pending[i]) continue;
    auto& read = trip.reads[i];
    NodeRead node;
    read.error = sessions[i]->await_read(pending[i], plan.deadline, node);
    read.latency = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started[i]);
    if (read.error != ZkError::ok) continue;
    read.bytes_match = node.data == plan.payload;
    read.read_mzxid = node.mzxid;
  }

  trip.delete_error = writer.remove(trip.path, plan.deadline);
  return trip;
}

}  // namespace zkverify::probes
