#include "model/books/registration_log.hpp"

#include <algorithm>

namespace zkverify {

void RegistrationLog::look(const std::vector<ClientPathRead>& reads, Moment now) {
  for (const auto& read : reads)
    if (read.error == ZkError::ok || read.error == ZkError::no_node) look_at(read, now);
}

void RegistrationLog::look_at(const ClientPathRead& read, Moment now) {
  auto known = held_.find(read.path);
  bool first = known == held_.end();
  auto& held = held_[read.path];
  std::map<std::string, Held> now_held;
  for (const auto& registration : read.held) now_held[registration.path] = {registration.owner, now};
  if (first) {
    held = std::move(now_held);
    return;
  }
  for (const auto& [path, was] : held) {
    auto is = now_held.find(path);
    if (is == now_held.end() && !open_.contains(path)) {
      open_[path] = absences_.size();
      absences_.push_back({path, was.owner, was.seen, now, std::nullopt, 0});
    } else if (is != now_held.end() && is->second.owner != was.owner && !open_.contains(path)) {
      // A new holder, never seen missing: it went and came back between the two looks.
      absences_.push_back({path, was.owner, was.seen, now, now, is->second.owner});
    }
  }
  for (const auto& [path, is] : now_held) {
    auto open = open_.find(path);
    if (open == open_.end()) continue;
    auto& absence = absences_[open->second];
    absence.back = now;
    absence.owner_after = is.owner;
    open_.erase(open);
  }
  // A registration still missing stays in `held` (with its last holder) until it is back.
  for (const auto& [path, was] : held)
    if (!now_held.contains(path) && open_.contains(path)) now_held.emplace(path, was);
  held = std::move(now_held);
}

}  // namespace zkverify
