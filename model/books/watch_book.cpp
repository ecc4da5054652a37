#include "model/books/watch_book.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <span>

#include <fmt/format.h>

namespace zkverify {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

constexpr std::string_view kCounterPrefix = "counter-";

milliseconds since(Clock::time_point then, Moment now) { return duration_cast<milliseconds>(now.steady - then); }

// A counter's data as the number it holds; data that is not a number holds none of the writes.
long counter_value(const std::string& data) {
  long value = 0;
  std::from_chars(data.data(), data.data() + data.size(), value);
  return value;
}

}  // namespace

std::string_view to_string(WatchEventKind kind) {
  switch (kind) {
    case WatchEventKind::connected: return "connected";
    case WatchEventKind::disconnected: return "disconnected";
    case WatchEventKind::reconnected: return "reconnected";
    case WatchEventKind::expired: return "session-expired";
    case WatchEventKind::ephemeral_lost: return "ephemeral-lost";
    case WatchEventKind::write_failed: return "write-failed";
    case WatchEventKind::unavailable_start: return "unavailable-start";
    case WatchEventKind::unavailable_end: return "unavailable-end";
    case WatchEventKind::read_check: return "read-check";
    case WatchEventKind::stale_read: return "stale-read";
    case WatchEventKind::read_skipped: return "read-skipped";
    case WatchEventKind::swept: return "swept";
    case WatchEventKind::client_gone: return "client-gone";
    case WatchEventKind::client_back: return "client-back";
    case WatchEventKind::client_new: return "client-new";
  }
  return "unknown";
}

milliseconds unavailability_threshold(double rate) {
  return std::max(milliseconds(250), milliseconds(static_cast<long>(4000.0 / rate)));
}

WatchBook::WatchBook(std::vector<std::string> session_names, std::string run_path, double rate, Moment started)
    : started_(started), threshold_(unavailability_threshold(rate)) {
  for (auto& name : session_names) sessions_.emplace_back(std::move(name));
  totals_.sessions = static_cast<int>(sessions_.size());
  totals_.run_path = std::move(run_path);
}

const std::string& WatchBook::session_name(std::size_t session) const { return sessions_.at(session).name; }

std::string WatchBook::ephemeral_path(std::size_t session) const {
  return fmt::format("{}/session-{}", run_path(), session_name(session));
}

std::string WatchBook::counter_path(std::size_t session) const {
  return fmt::format("{}/{}{}", run_path(), kCounterPrefix, session_name(session));
}

bool WatchBook::is_counter_name(std::string_view child) { return child.starts_with(kCounterPrefix); }

std::vector<std::string> WatchBook::counter_paths() const {
  std::vector<std::string> paths;
  for (std::size_t session = 0; session < sessions_.size(); ++session) paths.push_back(counter_path(session));
  return paths;
}

void WatchBook::emit(Moment now, WatchEventKind kind, std::string session, std::string server, std::string detail,
                     milliseconds duration) {
  events_.push_back({now.wall, since(started_.steady, now), kind, std::move(session), std::move(server),
                     std::move(detail), duration, now.steady});
}

std::vector<WatchEvent> WatchBook::take_events() { return std::exchange(events_, {}); }

void WatchBook::session_changed(std::size_t index, const SessionEvent& event, Moment now) {
  if (closing_) return;
  auto& session = sessions_.at(index);
  if (event.state == SessionState::connected) {
    record_connection(index, event, now);
  } else if (event.state == SessionState::expired) {
    record_expiry(index, now);
  } else if (session.connected) {  // connecting to a server again
    session.connected = false;
    session.server.clear();
    session.lost_at = now.steady;
    emit(now, WatchEventKind::disconnected, session.name, "", "");
  }
}

void WatchBook::record_connection(std::size_t index, const SessionEvent& event, Moment now) {
  auto& session = sessions_[index];
  if (!session.ever_connected) {
    session.ever_connected = true;
    auto granted = event.granted_timeout;
    if (totals_.negotiated_timeout == milliseconds(0) || granted < totals_.negotiated_timeout)
      totals_.negotiated_timeout = granted;
    emit(now, WatchEventKind::connected, session.name, event.server,
         fmt::format("session timeout {}ms", granted.count()));
  } else if (session.lost_at || (session.connected && event.server != session.server)) {
    // Moved by the driver (Keeper::return_home), the C client says only where it arrived.
    auto away = session.lost_at ? since(*session.lost_at, now) : milliseconds(0);
    totals_.longest_disconnect = std::max(totals_.longest_disconnect, away);
    auto home = session.going_home && event.server == session.name ? "back on its own server " : "";
    emit(now, WatchEventKind::reconnected, session.name, event.server,
         fmt::format("{}after {}ms (session timeout {}ms)", home, away.count(), totals_.negotiated_timeout.count()),
         away);
    // Reconnects are when writes and ephemerals get lost, if ever (a server restarted, the leader
    // changed): look now.
    ephemeral_checks_.push_back(index);
    read_back_wanted_ = true;
  }
  session.connected = true;
  session.server = event.server;
  session.lost_at.reset();
  session.going_home = false;
  session.stays_put = false;
}

void WatchBook::record_expiry(std::size_t index, Moment now) {
  auto& session = sessions_[index];
  if (session.expired) return;
  session.expired = true;
  session.connected = false;
  ++totals_.sessions_expired;
  ++totals_.ephemerals_lost;
  emit(now, WatchEventKind::expired, session.name, "", "the server expired the session: its ephemeral znodes are gone");
  emit(now, WatchEventKind::ephemeral_lost, session.name, "", ephemeral_path(index));
}

std::vector<std::size_t> WatchBook::take_sessions_to_widen(Moment now) {
  std::vector<std::size_t> widen;
  for (std::size_t index = 0; index < sessions_.size(); ++index) {
    auto& session = sessions_[index];
    if (session.widened || session.expired || !session.lost_at || closing_) continue;
    if (since(*session.lost_at, now) * 3 < totals_.negotiated_timeout) continue;
    session.widened = true;
    widen.push_back(index);
  }
  return widen;
}

std::vector<std::size_t> WatchBook::take_sessions_to_bring_home(Moment now) {
  constexpr auto kRetry = std::chrono::seconds(2);
  std::vector<std::size_t> away;
  for (std::size_t index = 0; index < sessions_.size(); ++index) {
    auto& session = sessions_[index];
    if (closing_ || !session.connected || session.expired || session.server.empty() || session.server == session.name ||
        session.going_home || session.stays_put)
      continue;
    if (session.home_asked_at && now.steady - *session.home_asked_at < kRetry) continue;
    session.home_asked_at = now.steady;
    away.push_back(index);
  }
  return away;
}

// A session on its way home may have to widen again if its server fails it meanwhile.
void WatchBook::homecoming(std::size_t index, bool moving) {
  auto& session = sessions_.at(index);
  session.going_home = moving;
  session.stays_put = !moving;
  if (moving) session.widened = false;
}

std::vector<std::string> WatchBook::crowded_servers() const {
  std::map<std::string, int> held;
  for (const auto& session : sessions_)
    if (session.connected && !session.expired && !session.server.empty()) ++held[session.server];
  std::vector<std::string> crowded;
  for (const auto& [server, count] : held)
    if (count >= 2) crowded.push_back(server);
  return crowded;
}

std::vector<std::size_t> WatchBook::live_sessions() const {
  std::vector<std::size_t> live;
  for (std::size_t session = 0; session < sessions_.size(); ++session)
    if (!sessions_[session].expired) live.push_back(session);
  return live;
}

std::optional<std::size_t> WatchBook::connected_session() const {
  for (std::size_t session = 0; session < sessions_.size(); ++session)
    if (sessions_[session].connected && !sessions_[session].expired) return session;
  return std::nullopt;
}

std::optional<WatchBook::Write> WatchBook::start_write() {
  if (sessions_.empty()) return std::nullopt;
  long value = ++next_value_;
  // Through the sessions in turn; an expired session writes no more.
  for (std::size_t i = 0; i < sessions_.size(); ++i) {
    auto session = (static_cast<std::size_t>(value) + i) % sessions_.size();
    if (sessions_[session].expired) continue;
    ++totals_.writes_attempted;
    ++writes_in_flight_;
    return Write{session, value};
  }
  return std::nullopt;
}

void WatchBook::write_done(const Write& write, ZkError error, std::int32_t version, Moment now) {
  --writes_in_flight_;
  if (error == ZkError::ok) write_acked(write, version, now);
  else write_failed(write, error, now);
}

void WatchBook::write_failed(const Write& write, ZkError error, Moment now) {
  ++totals_.writes_failed;
  if (window_reported_) return;  // one failure tells the story of a window; the rest are counted
  window_reported_ = true;
  emit(now, WatchEventKind::write_failed, "", "", fmt::format("write {} failed: {}", write.value, to_string(error)));
}

void WatchBook::write_acked(const Write& write, std::int32_t version, Moment now) {
  auto& session = sessions_.at(write.session);
  ++totals_.writes_acked;
  session.acked.push_back(write.value);
  // One client's writes are applied in the order it sent them: each must move its counter forward.
  if (version <= session.last_version) {
    ++totals_.writes_out_of_order;
    emit(now, WatchEventKind::stale_read, session.name, "",
         fmt::format("write {} was applied as version {}, after version {}", write.value, version,
                     session.last_version));
  }
  session.last_version = std::max(session.last_version, version);
  if (last_ack_) {
    auto gap = since(*last_ack_, now);
    totals_.longest_unavailable = std::max(totals_.longest_unavailable, gap);
    longest_since_taken_ = std::max(longest_since_taken_, gap);
    if (window_open_)
      emit(now, WatchEventKind::unavailable_end, "", "", fmt::format("writes succeed again after {}ms", gap.count()),
           gap);
  }
  window_open_ = false;
  window_reported_ = false;
  last_ack_ = now.steady;
}

void WatchBook::tick(Moment now) {
  // Before the first acknowledgement there is no "again" to wait for.
  if (window_open_ || !last_ack_ || now.steady - *last_ack_ <= threshold_) return;
  window_open_ = true;
  emit(now, WatchEventKind::unavailable_start, "", "", "", since(*last_ack_, now));
}

std::chrono::milliseconds WatchBook::take_longest_unavailable(Moment now) {
  auto longest = longest_since_taken_;
  if (last_ack_) longest = std::max(longest, since(*last_ack_, now));  // the gap still open
  longest_since_taken_ = std::chrono::milliseconds(0);
  return longest;
}

void WatchBook::settle(Moment now) {
  if (window_open_) totals_.longest_unavailable = std::max(totals_.longest_unavailable, since(*last_ack_, now));
}

std::vector<std::size_t> WatchBook::take_ephemeral_checks() { return std::exchange(ephemeral_checks_, {}); }

bool WatchBook::take_read_back_wanted() { return std::exchange(read_back_wanted_, false); }

void WatchBook::ephemeral_checked(std::size_t index, ZkError error, Moment now) {
  // Any other error says nothing about the node; an expired session's loss is already counted.
  if (error != ZkError::no_node || sessions_.at(index).expired) return;
  ++totals_.ephemerals_lost;
  emit(now, WatchEventKind::ephemeral_lost, session_name(index), "", ephemeral_path(index));
}

WatchBook::AckedSoFar WatchBook::acked_so_far() const {
  AckedSoFar acked;
  for (const auto& session : sessions_) acked.per_session.push_back(session.acked.size());
  return acked;
}

// A counter holding value V holds every earlier write of its session too (the history is linear),
// so a write is missing exactly when its value is above the counter's.
void WatchBook::read_back_done(const AckedSoFar& before, const ServerRead& read, bool final, Moment now) {
  if (read.error != ZkError::ok) {
    emit(now, WatchEventKind::read_skipped, "", read.server,
         fmt::format("read-back not possible: {}", to_string(read.error)));
    return;
  }
  long missing = 0;
  long expected = 0;
  std::string first_missing;
  for (std::size_t s = 0; s < sessions_.size(); ++s) {
    auto present = counter_value(read.counters.at(s));
    auto acked = std::span(sessions_[s].acked).first(before.per_session.at(s));
    expected += static_cast<long>(acked.size());
    std::optional<long> lowest_missing;
    for (long value : acked) {
      if (value <= present) continue;
      ++missing;
      lowest_missing = std::min(value, lowest_missing.value_or(value));
    }
    if (lowest_missing && first_missing.empty())
      first_missing = fmt::format("write {} of session {}", *lowest_missing, sessions_[s].name);
  }
  ++totals_.read_checks;
  if (final) totals_.writes_lost = std::max(totals_.writes_lost, missing);
  if (missing == 0) {
    emit(now, WatchEventKind::read_check, "", read.server,
         fmt::format("{} acknowledged writes present{}", expected, final ? " (final)" : ""));
    return;
  }
  ++totals_.stale_reads;
  emit(now, WatchEventKind::stale_read, "", read.server,
       fmt::format("{} of {} acknowledged writes missing after sync (first: {})", missing, expected, first_missing));
}

void WatchBook::run_swept(const std::string& run, std::size_t counters, milliseconds age, Moment now) {
  emit(now, WatchEventKind::swept, "", "",
       fmt::format("removed {} and its {} counters: no session of its watch is left; created {}s before this run", run,
                   counters, age.count() / 1000));
}

void WatchBook::client_seen(WatchEventKind kind, std::string detail, Moment now) {
  emit(now, kind, "", "", std::move(detail));
}

}  // namespace zkverify
