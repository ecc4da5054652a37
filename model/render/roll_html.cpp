// render_roll_html: the roll's report page. Inline CSS and SVG only, so the file works offline and
// can be attached to a change ticket as it is.

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "model/facts/time_text.hpp"
#include "model/judge/client_changes.hpp"
#include "model/render/html_text.hpp"
#include "model/render/roll_view.hpp"

namespace zkverify {

namespace {

using std::chrono::milliseconds;

constexpr int kLeft = 150, kWidth = 1100, kLaneHeight = 18, kLaneGap = 10, kTop = 30;

// Horizontal position of a time (ms since the roll started).
struct Scale {
  long duration_ms;
  [[nodiscard]] double x(long ms) const {
    return kLeft + static_cast<double>(std::clamp(ms, 0L, duration_ms)) * (kWidth - kLeft - 10) /
                       static_cast<double>(std::max(duration_ms, 1L));
  }
};

std::string rect(const Scale& scale, long from, long until, int y, const char* css_class, const std::string& title) {
  return fmt::format(R"(<rect class="{}" x="{:.1f}" y="{}" width="{:.1f}" height="{}"><title>{}</title></rect>)",
                     css_class, scale.x(from), y, std::max(scale.x(until) - scale.x(from), 1.5), kLaneHeight,
                     html_escaped(title));
}

std::string lane_label(int y, const std::string& text) {
  return fmt::format(R"(<text x="5" y="{}">{}</text>)", y + 13, html_escaped(text));
}

std::string server_lanes(const RollRecord& roll, const Scale& scale, int& y) {
  std::string svg;
  for (const auto& server : roll.servers) {
    svg += fmt::format(R"(<g class="lane" data-server="{}">)", html_escaped(server)) + lane_label(y, server);
    svg += rect(scale, 0, roll.duration_ms, y, "serving", server + ": serving");
    for (const auto& step : roll.steps) {
      if (step.server != server) continue;
      long back = step.down ? step.down->until_ms : step.span.from_ms;
      if (step.down) svg += rect(scale, step.down->from_ms, step.down->until_ms, y, "down", server + ": down");
      svg += rect(scale, back, step.span.until_ms, y, "catching-up", server + ": catching up (until healthy in a row)");
    }
    svg += "</g>";
    y += kLaneHeight + kLaneGap;
  }
  return svg;
}

std::string leader_lane(const RollRecord& roll, const Scale& scale, int& y) {
  std::string svg = R"(<g class="lane-leader">)" + lane_label(y, "leader");
  svg += rect(scale, 0, roll.duration_ms, y, "leader", "a leader");
  for (const auto& step : roll.steps) {
    if (step.leaderless)
      svg += rect(scale, step.leaderless->from_ms, step.leaderless->until_ms, y, "down", "no leader (election)");
    svg += fmt::format(R"(<text class="small" x="{:.1f}" y="{}">{}</text>)", scale.x(step.span.from_ms) + 2, y + 13,
                       html_escaped(step.leader_after.value_or("-")));
  }
  y += kLaneHeight + kLaneGap;
  return svg + "</g>";
}

std::string watch_lanes(const RollRecord& roll, const Scale& scale, int& y) {
  std::string writes = R"(<g class="lane-writes">)" + lane_label(y, "writes unavailable");
  std::string sessions = R"(<g class="lane-sessions">)" + lane_label(y + kLaneHeight + kLaneGap, "session events");
  for (const auto& event : roll.events) {
    long at = event.elapsed.count();
    if (event.kind == WatchEventKind::unavailable_end)
      writes += rect(scale, at - event.duration.count(), at, y, "down",
                     fmt::format("writes unavailable for {}", format_duration(event.duration)));
    if (event.kind == WatchEventKind::disconnected || event.kind == WatchEventKind::reconnected ||
        event.kind == WatchEventKind::expired)
      sessions += rect(scale, at, at, y + kLaneHeight + kLaneGap, to_string(event.kind).data(),
                       fmt::format("{} {} {}", to_string(event.kind), event.session, event.server));
  }
  y += 2 * (kLaneHeight + kLaneGap);
  return writes + "</g>" + sessions + "</g>";
}

// A --clients registration's lane label: "broker 9", "controller", or the path (its end when long).
std::string client_label(const std::string& path) {
  auto name = client_short_name(path);
  return name.size() <= 22 ? name : ".." + name.substr(name.size() - 20);
}

// Where `path` was missing during `step`, as the watch saw it live; else the whole step (the window
// it went in, as the step's two looks bound it), to its end or, gone, the roll's.
Window missing_window(const RollStep& step, const std::string& path, bool gone, long roll_end) {
  auto seen = std::ranges::find(step.client_absences, path, &ClientAbsenceWindow::path);
  if (seen == step.client_absences.end()) return {step.span.from_ms, gone ? roll_end : step.span.until_ms};
  return {seen->from_ms, gone ? roll_end : seen->until_ms.value_or(step.span.until_ms)};
}

// One registration's lane: held (with its session) from the roll's start or from the step that
// added it; each step that renewed it marked from when it went to when it was held again (the
// whole step where the watch did not see it), with the sessions before and after; and gone from
// the step that lost it.
std::string client_lane(const RollRecord& roll, const Scale& scale, const std::string& path, int y) {
  std::string svg =
      fmt::format(R"(<g class="lane-client" data-path="{}">)", html_escaped(path)) + lane_label(y, client_label(path));
  bool held = false;
  long held_since = 0;
  std::string owner;
  auto hold_until = [&](long until) {
    if (held) svg += rect(scale, held_since, until, y, "held", client_name(path) + ": held by session " + owner);
    held = false;
  };
  for (const auto& step : roll.steps)
    for (const auto& delta : step.client_changes) {
      if (delta.path != path) continue;
      if (owner.empty() && delta.change != RegistrationChange::added) {
        held = true;
        owner = session_text(delta.before.owner);
      }
      if (delta.change == RegistrationChange::kept) continue;
      auto missing = missing_window(step, path, delta.change == RegistrationChange::gone, roll.duration_ms);
      hold_until(delta.change == RegistrationChange::added ? step.span.from_ms : missing.from_ms);
      if (delta.change == RegistrationChange::gone) {
        svg += rect(scale, missing.from_ms, missing.until_ms, y, "down",
                    fmt::format("{}: gone during the step on {} (it was held by session {})", client_name(path),
                                step.server, session_text(delta.before.owner)));
        continue;
      }
      if (delta.change == RegistrationChange::renewed)
        svg +=
            rect(scale, missing.from_ms, missing.until_ms, y, "renewed",
                 fmt::format("{}: session {} ended during the step on {}; held by session {} after", client_name(path),
                             session_text(delta.before.owner), step.server, session_text(delta.after.owner)));
      held = true;
      held_since = delta.change == RegistrationChange::added ? step.span.until_ms : missing.until_ms;
      owner = session_text(delta.after.owner);
    }
  hold_until(roll.duration_ms);
  return svg + "</g>";
}

// A lane per --clients registration any step compared, in path order.
std::string client_lanes(const RollRecord& roll, const Scale& scale, int& y) {
  std::set<std::string> paths;
  for (const auto& step : roll.steps)
    for (const auto& delta : step.client_changes) paths.insert(delta.path);
  std::string svg;
  for (const auto& path : paths) {
    svg += client_lane(roll, scale, path, y);
    y += kLaneHeight + kLaneGap;
  }
  return svg;
}

std::string step_marks(const RollRecord& roll, const Scale& scale, int height) {
  std::string svg;
  for (const auto& step : roll.steps)
    svg +=
        fmt::format(R"(<line class="step" x1="{0:.1f}" x2="{0:.1f}" y1="12" y2="{1}"/><text class="small" x="{2:.1f}" )"
                    R"(y="10">{3}</text>)",
                    scale.x(step.span.from_ms), height, scale.x(step.span.from_ms) + 2, html_escaped(step.server));
  return svg;
}

std::string timeline(const RollRecord& roll) {
  Scale scale{std::max(roll.duration_ms, 1L)};
  int y = kTop;
  std::string lanes = server_lanes(roll, scale, y) + leader_lane(roll, scale, y) + watch_lanes(roll, scale, y);
  lanes += client_lanes(roll, scale, y);
  return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" )"
                     R"(aria-label="timeline of the roll">{}{}<text class="small" x="{}" y="{}">0</text>)"
                     R"(<text class="small" x="{}" y="{}">{}</text></svg>)",
                     kWidth, y + 20, lanes, step_marks(roll, scale, y), kLeft, y + 12, kWidth - 60, y + 12,
                     format_duration(milliseconds(roll.duration_ms)));
}

std::string steps_table(const nlohmann::json& json) {
  std::string rows;
  for (const auto& step : json["steps"])
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} &rarr; {}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{} &rarr; {}</td></tr>",
        html_escaped(step["server"].get<std::string>()), step["command_status"].get<int>(),
        step["downtime_ms"].is_null() ? "-" : std::to_string(step["downtime_ms"].get<long>()),
        html_escaped(step["leader_before"].get<std::string>()), html_escaped(step["leader_after"].get<std::string>()),
        step["longest_leaderless_ms"].get<long>(), step["longest_unavailable_ms"].get<long>(),
        html_escaped(step["verdict"].get<std::string>()),
        html_escaped(step["version_before"].is_string() ? step["version_before"].get<std::string>() : "?"),
        html_escaped(step["version_after"].is_string() ? step["version_after"].get<std::string>() : "?"));
  return "<table id=\"steps\"><tr><th>server</th><th>COMMAND</th><th>down (ms)</th><th>leader</th><th>without a leader "
         "(ms)</th><th>longest write-unavailability (ms)</th><th>verdict</th><th>version</th></tr>" +
         rows + "</table>";
}

}  // namespace

std::string render_roll_html(const RollRecord& roll) {
  auto json = to_json(roll);
  std::string findings;
  for (const auto& f : json["findings"])
    findings += "<li>" +
                html_escaped(f["severity"].get<std::string>() + " " + f["code"].get<std::string>() + ": " +
                             f["message"].get<std::string>()) +
                "</li>";
  for (const auto& step : json["steps"])
    for (const auto* list : {&step["findings"], &step["check_findings"]})
      for (const auto& f : *list)
        findings += "<li>" +
                    html_escaped(f["severity"].get<std::string>() + " " + f["code"].get<std::string>() + ": " +
                                 f["message"].get<std::string>()) +
                    "</li>";
  if (!json["refused"].is_null())
    findings += "<li>" +
                html_escaped("not started: " + json["refused"]["server"].get<std::string>() + ": " +
                             json["refused"]["reason"].get<std::string>()) +
                "</li>";
  return fmt::format(
      R"(<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>zkverify roll: {0}</title><style>)"
      R"(body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse}}td,th{{border:1px solid #bbb;padding:3px 8px}})"
      R"(.serving,.leader{{fill:#5b5}}.down{{fill:#d33}}.catching-up{{fill:#e90}}.disconnected{{fill:#e90}})"
      R"(.reconnected{{fill:#5b5}}.expired{{fill:#000}}.held{{fill:#69c}}.renewed{{fill:#c3c}}.step{{stroke:#333;stroke-dasharray:4 3}}text{{font-size:12px}})"
      R"(.small{{font-size:10px}}</style></head><body><h1>zkverify roll: <span id="verdict">{0}</span></h1>)"
      R"(<p id="summary">{1}</p>{2}<h2>Steps</h2>{3}<h2>Findings</h2><ul id="findings">{4}</ul>)"
      R"(<p>Writes acknowledged: <span id="writes-acked">{5}</span>, lost: <span id="writes-lost">{6}</span>; sessions )"
      R"(expired: <span id="sessions-expired">{7}</span>.</p></body></html>)",
      html_escaped(json["verdict"].get<std::string>()), html_escaped(json["summary"].get<std::string>()),
      timeline(roll), steps_table(json), findings.empty() ? "<li>none</li>" : findings, roll.totals.writes_acked,
      roll.totals.writes_lost, roll.totals.sessions_expired);
}

}  // namespace zkverify
