// `zkverify safe-to-restart NAME...`: exit 0 when restarting NAME now (several: all of them at once,
// as when a StatefulSet is deleted) keeps a quorum of synced voters (and, with --state, records each
// in the ledger's restart round, so the leader goes last, and as in flight until it is seen back, so
// concurrent approvals count it as going down); 1 when not.

#include <algorithm>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/judge/restart_plan.hpp"
#include "model/judge/restart_round.hpp"
#include "model/render/restart_view.hpp"
#include "verifier/check/ensemble_check.hpp"
#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"

namespace zkverify::verifier {

namespace {

class SafeToRestartCommand final : public Command {
 public:
  std::string_view name() const override { return "safe-to-restart"; }

  CLI::App& add_to(CLI::App& app) override {
    auto& command = *app.add_subcommand("safe-to-restart",
                                        "Exit 0 if restarting NAME (or all NAMEs at once) now keeps a quorum of synced "
                                        "voters; 1 if not, with the reason");
    command
        .add_option("NAME", names_,
                    "The server to restart, as named in --servers; several: restarted together (a StatefulSet deleted)")
        ->type_name("")
        ->required();
    add_ensemble_options(command, options_, true);
    add_state_option(command, state_file_,
                     "Ledger file: remembers which servers this restart round has approved, so the leader can go last");
    add_to_option(command, returns_with_);
    command.final_callback([this] {
      for (const auto& name : names_) require_listed(options_.servers, name, "");
    });
    return command;
  }

  // With --state, the ledger's lock is held from the read of the restart round to the record of this
  // approval (check_and_record's decision), so two concurrent calls decide one after the other, and the
  // second counts the first's server as going down; its wait comes out of --timeout.
  int run(const Context& given) override {
    AuthenticatedContext authenticated(options_.connection, given);
    const auto& context = authenticated.context();
    LedgerUse ledger{state_file_, false};
    RestartSafety safety;
    check_and_record(options_, ledger, context, [&](const Report& report, Ledger& next) {
      auto now = std::chrono::system_clock::now();
      std::set<std::string> others_going;  // approved by other calls, not yet back
      for (const auto& name : going_down(next, "", now))
        if (std::ranges::find(names_, name) == names_.end()) others_going.insert(name);
      safety = restart_safety(report, names_, next.restarted, others_going);
      if (safety.safe && returns_with_)
        if (auto refusal = membership_refusal(report, names_, *returns_with_)) safety = *refusal;
      if (!safety.safe) return;
      for (const auto& name : names_) {
        record_restarted(next, name, report.servers);  // the round: the leader goes after the others
        approve_in_flight(next, report, name, iso_now());
      }
    });
    context.out << render_safety(names_, safety, options_.output);
    return safety.safe ? kExitHealthy : kExitDegraded;
  }

 private:
  std::vector<std::string> names_;
  EnsembleOptions options_;
  std::optional<std::string> state_file_;
  std::optional<std::set<int>> returns_with_;  // the voters of --to's list
};

}  // namespace

std::unique_ptr<Command> make_safe_to_restart_command() { return std::make_unique<SafeToRestartCommand>(); }

}  // namespace zkverify::verifier
