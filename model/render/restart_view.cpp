#include "model/render/restart_view.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "model/render/json_text.hpp"

namespace zkverify {

std::string render_order(const Report& report, const std::vector<RestartStep>& steps, OutputFormat output,
                         const std::optional<OrderTo>& to) {
  if (output == OutputFormat::json) {
    nlohmann::json json{{"order", nlohmann::json::array()}, {"servers", nlohmann::json::array()}};
    for (const auto& step : steps) {
      json["order"].push_back(step.name);
      json["servers"].push_back({{"name", step.name}, {"reason", step.reason}});
    }
    json["verdict"] = to_string(report.verdict);
    if (to) {
      json["to"] = {{"voters", to->voters}, {"refusal", nullptr}};
      if (to->refusal) json["to"]["refusal"] = {{"server", to->refusal->server}, {"reason", to->refusal->reason}};
    }
    return json_text(json) + "\n";
  }
  std::string text;
  for (const auto& step : steps) text += step.name + "\n";
  return text;
}

std::string render_safety(const std::vector<std::string>& servers, const RestartSafety& safety, OutputFormat output) {
  if (output == OutputFormat::json)
    return json_text({{"server", fmt::format("{}", fmt::join(servers, ","))},
                      {"safe", safety.safe},
                      {"reason", safety.reason}}) +
           "\n";
  return (safety.safe ? "safe: " : "not safe: ") + safety.reason + "\n";
}

}  // namespace zkverify
