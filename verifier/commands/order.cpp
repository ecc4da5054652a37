// `zkverify order`: the order in which to restart the servers of a rolling upgrade, the leader last.

#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/check/ensemble_check.hpp"
#include "model/judge/restart_plan.hpp"
#include "model/render/json_text.hpp"
#include "verifier/commands/options.hpp"

namespace zkverify::verifier {

namespace {

class OrderCommand final : public Command {
 public:
  std::string_view name() const override { return "order"; }

  CLI::App& add_to(CLI::App& app) override {
    auto& command = *app.add_subcommand("order", "Print the order in which to restart the servers, the leader last");
    add_ensemble_options(command, options_, false);
    return command;
  }

  // Exit 0 whenever the servers could be probed: the gate is quorum or safe-to-restart.
  int run(const Context& given) override {
    AuthenticatedContext authenticated(options_.auth_file, given);
    const auto& context = authenticated.context();
    auto probing = options_;
    probing.no_write = true;  // the order needs modes only
    auto report = judge(gather(probing, context.keepers));
    auto steps = restart_order(report);
    if (options_.output == OutputFormat::json) {
      nlohmann::json json{{"order", nlohmann::json::array()}, {"servers", nlohmann::json::array()}};
      for (const auto& step : steps) {
        json["order"].push_back(step.name);
        json["servers"].push_back({{"name", step.name}, {"reason", step.reason}});
      }
      json["verdict"] = to_string(report.verdict);
      context.out << json_text(json) << "\n";
    } else {
      for (const auto& step : steps) context.out << step.name << "\n";
    }
    if (report.verdict != Verdict::healthy)
      context.err << fmt::format("zkverify order: the ensemble is {} now; check it with zkverify quorum before restarting\n",
                                 to_string(report.verdict));
    return 0;
  }

 private:
  EnsembleOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_order_command() { return std::make_unique<OrderCommand>(); }

}  // namespace zkverify::verifier
