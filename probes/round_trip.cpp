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

// Creates the namespace (if missing), the probe node, and the marker (if asked and missing), all
// through the writer. Returns false when the reads have nothing to look for.
bool write_through(ZkSession& writer, const RoundTripPlan& plan, RoundTrip& trip) {
  bool creates = plan.write || plan.marker_content;
  if (creates) {
    trip.namespace_error = writer.create(plan.namespace_path, {}, 0, plan.deadline);
    if (trip.namespace_error == ZkError::node_exists) trip.namespace_error = ZkError::ok;
    if (trip.namespace_error != ZkError::ok) {
      trip.write_error = ZkError::not_attempted;
      return false;
    }
  }
  if (plan.marker_content)
    trip.marker_create_error = writer.create(plan.marker_path, *plan.marker_content, 0, plan.deadline);
  if (!plan.write) return !plan.marker_path.empty();

  Zxid czxid;
  trip.write_error = writer.create(plan.namespace_path + std::string(kRoundTripPrefix), plan.payload,
                                   ZOO_EPHEMERAL_SEQUENTIAL, plan.deadline, &trip.path, &czxid);
  if (trip.write_error != ZkError::ok) return false;
  trip.write_zxid = czxid;
  return true;
}

}  // namespace

RoundTrip run_round_trip(const RoundTripPlan& plan) {
  RoundTrip trip;
  if (plan.servers.empty() || plan.writer >= plan.servers.size()) return trip;
  trip.writer = plan.servers[plan.writer].name;
  trip.marker_path = plan.marker_path;

  std::vector<std::unique_ptr<ZkSession>> sessions;
  for (const auto& server : plan.servers)
    sessions.push_back(std::make_unique<ZkSession>(server.endpoint(), plan.session_timeout));
  trip.reads.resize(plan.servers.size());
  for (std::size_t i = 0; i < plan.servers.size(); ++i) trip.reads[i].server = plan.servers[i].name;

  auto& writer = *sessions[plan.writer];
  auto connected = writer.wait_connected(plan.deadline);
  if (connected != ZkError::ok) {
    if (plan.write) trip.write_error = connected;
    else trip.reads[plan.writer].error = connected;
    return trip;
  }
  if (!write_through(writer, plan, trip)) return trip;

  std::vector<std::string> paths;
  if (plan.write) paths.push_back(trip.path);
  if (!plan.marker_path.empty()) paths.push_back(plan.marker_path);

  std::vector<std::vector<std::shared_ptr<ZkSession::PendingOp>>> pending(sessions.size());
  std::vector<Clock::time_point> started(sessions.size());
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    auto& read = trip.reads[i];
    read.error = sessions[i]->wait_connected(plan.deadline);
    read.session_server_id = creator_id(*sessions[i]);
    if (read.error != ZkError::ok) continue;
    started[i] = Clock::now();
    pending[i] = sessions[i]->start_sync_and_read(plan.namespace_path, paths);
  }
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    if (pending[i].empty()) continue;
    auto& read = trip.reads[i];
    std::size_t next = 0;
    if (plan.write) {
      NodeRead node;
      read.error = sessions[i]->await_read(pending[i][next++], plan.deadline, node);
      read.latency = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started[i]);
      if (read.error == ZkError::ok) {
        read.bytes_match = node.data == plan.payload;
        read.read_mzxid = node.mzxid;
      }
    }
    if (!plan.marker_path.empty()) {
      NodeRead marker;
      read.marker_error = sessions[i]->await_read(pending[i][next], plan.deadline, marker);
      if (!plan.write) read.error = read.marker_error == ZkError::no_node ? ZkError::ok : read.marker_error;
      if (read.marker_error == ZkError::ok) {
        read.marker_czxid = marker.czxid;
        read.marker_data = std::move(marker.data);
      }
    }
  }

  if (plan.write) trip.delete_error = writer.remove(trip.path, plan.deadline);
  return trip;
}

}  // namespace zkverify::probes
