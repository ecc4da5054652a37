// `zkverify safe-to-restart NAME`: exit 0 when restarting NAME now keeps a quorum of synced voters
// (and, with --state, records it in the ledger's restart round, so the leader goes last); 1 when not.

#include <ostream>

#include <nlohmann/json.hpp>

#include "verifier/commands/command.hpp"
#include "verifier/commands/ensemble.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/judge/restart_plan.hpp"
#include "verifier/store/ledger_file.hpp"

namespace zkverify::verifier {

namespace {

class SafeToRestartCommand final : public Command {
 public:
  std::string_view name() const override { return "safe-to-restart"; }

  CLI::App& add_to(CLI::App& app) override {
    auto& command = *app.add_subcommand(
        "safe-to-restart", "Exit 0 if restarting NAME now keeps a quorum of synced voters; 1 if not, with the reason");
    command.add_option("NAME", name_, "The server to restart, as named in --servers")->required();
    add_ensemble_options(command, options_, true);
    add_state_option(command, state_file_,
                     "Ledger file: remembers which servers this restart round has approved, so the leader can go last");
    command.final_callback([this] { require_listed(options_.servers, name_, ""); });
    return command;
  }

  int run(const Context& context) override {
    auto restarted = restarted_this_round(state_file_, options_.timeout);
    auto report = judge(gather(options_, context.keepers));
    auto safety = restart_safety(report, name_, restarted);
    if (safety.safe && state_file_) record_restart(*state_file_, name_, report.servers, iso_now(), options_.timeout);
    if (options_.output == OutputFormat::json)
      context.out << nlohmann::json{{"server", name_}, {"safe", safety.safe}, {"reason", safety.reason}}.dump(2) << "\n";
    else
      context.out << (safety.safe ? "safe: " : "not safe: ") << safety.reason << "\n";
    return safety.safe ? kExitHealthy : kExitDegraded;
  }

 private:
  std::string name_;
  EnsembleOptions options_;
  std::optional<std::string> state_file_;
};

}  // namespace

std::unique_ptr<Command> make_safe_to_restart_command() { return std::make_unique<SafeToRestartCommand>(); }

}  // namespace zkverify::verifier
