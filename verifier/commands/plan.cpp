// `zkverify plan --to FILE`: the steps from the list the servers hold to FILE's, one voter at a time,
// so that no state on the way can elect two leaders (model/judge/membership_plan.hpp).

#include <map>
#include <ostream>
#include <string>

#include "model/judge/membership_plan.hpp"
#include "model/render/plan_view.hpp"
#include "verifier/check/ensemble_check.hpp"
#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"
#include "verifier/store/zoo_cfg_file.hpp"

namespace zkverify::verifier {

namespace {

class PlanCommand final : public Command {
 public:
  std::string_view name() const override { return "plan"; }

  CLI::App& add_to(CLI::App& app) override {
    auto& command = *app.add_subcommand(
        "plan", "Print the steps from the membership the servers hold to --to's, one voter at a time");
    add_ensemble_options(command, options_, false);
    command
        .add_option("--to", to_,
                    "The zoo.cfg with the membership to reach (the new ConfigMap; its dynamic file when it names "
                    "one)")
        ->type_name("FILE")
        ->required();
    command.final_callback([this] { target_ = read_zoo_cfg_voter_names(to_); });
    return command;
  }

  // Exit 0 with a plan (or nothing to change), 1 when there is none (the reason says why), 2 when
  // the ensemble is critical: it reads the servers' lists without writing.
  int run(const Context& given) override {
    AuthenticatedContext authenticated(options_.connection, given);
    const auto& context = authenticated.context();
    auto probing = options_;
    probing.no_write = true;
    auto report = judge(gather(probing, context.executor, context.keepers, tls_client_of(context)));
    auto plan = plan_membership(report, target_);
    context.out << render_plan(plan, to_, options_.output);
    if (report.verdict == Verdict::critical) return kExitCritical;
    return plan.refusal.empty() ? kExitHealthy : kExitDegraded;
  }

 private:
  EnsembleOptions options_;
  std::string to_;
  std::map<int, std::string> target_;
};

}  // namespace

std::unique_ptr<Command> make_plan_command() { return std::make_unique<PlanCommand>(); }

}  // namespace zkverify::verifier
