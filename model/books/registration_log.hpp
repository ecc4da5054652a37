#pragma once
// The clients' registrations as a live follower saw them (the watch engine with --clients): when a
// look first missed one, and when a later look found it held again, by which session. Fed each
// look's reads and the time; what the absences mean is the judge's (model/judge/client_changes).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/facts/clock.hpp"
#include "model/facts/registrations.hpp"

namespace zkverify {

// One registration missing from a look, and held again at a later one (or not yet). A registration
// held by a new session at a look that never missed it went and came back between two looks: its
// `gone` is then that look's time too.
struct RegistrationAbsence {
  std::string path;
  std::int64_t owner_before = 0;  // the session that held it before it went
  Moment last_held;               // the last look that saw it held by owner_before
  Moment gone;                    // the first look that missed it
  std::optional<Moment> back;     // the first look that found it held again
  std::int64_t owner_after = 0;   // by which session (0 until back)
};

class RegistrationLog {
 public:
  // One look. Only the paths it could read (ok, or no_node: nothing there) count; the first look
  // that reads a path only remembers its registrations (one missing then is not an absence).
  void look(const std::vector<ClientPathRead>& reads, Moment now);
  [[nodiscard]] const std::vector<RegistrationAbsence>& absences() const { return absences_; }

 private:
  struct Held {
    std::int64_t owner = 0;
    Moment seen;
  };
  void look_at(const ClientPathRead& read, Moment now);

  std::map<std::string, std::map<std::string, Held>> held_;  // by --clients path, by registration
  std::map<std::string, std::size_t> open_;                  // registration -> its absence not yet over
  std::vector<RegistrationAbsence> absences_;
};

}  // namespace zkverify
