// `zkverify order`: the order in which to restart the servers of a rolling upgrade, the leader last.

#include <optional>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "model/judge/id_collision.hpp"
#include "model/judge/restart_plan.hpp"
#include "model/render/restart_view.hpp"
#include "verifier/check/ensemble_check.hpp"
#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"

namespace zkverify::verifier {

namespace {

class OrderCommand final : public Command {
 public:
  std::string_view name() const override { return "order"; }

  CLI::App& add_to(CLI::App& app) override {
    auto& command = *app.add_subcommand("order", "Print the order in which to restart the servers, the leader last");
    add_ensemble_options(command, options_, false);
    add_to_option(command, returns_with_);
    return command;
  }

  // Exit 0 whenever the servers could be probed: the gate is quorum or safe-to-restart. 1 while
  // the servers' ids collide (no order is safe then), and with --to when a step of this order could
  // elect two leaders (or no server reported its list).
  int run(const Context& given) override {
    AuthenticatedContext authenticated(options_.connection, given);
    const auto& context = authenticated.context();
    auto probing = options_;
    probing.no_write = true;  // the order needs modes only
    auto report = judge(gather(probing, context.executor, context.keepers, tls_client_of(context)));
    auto steps = restart_order(report);
    std::optional<OrderTo> to;
    if (returns_with_) to = OrderTo{*returns_with_, first_split(report, steps, *returns_with_)};
    context.out << render_order(report, steps, options_.output, to);
    if (report.verdict != Verdict::healthy)
      context.err << fmt::format(
          "zkverify order: the ensemble is {} now; check it with zkverify quorum before restarting\n",
          to_string(report.verdict));
    if (auto collision = id_collision(report)) {
      context.err << fmt::format("zkverify order: no restart is safe now: {}\n", *collision);
      return kExitDegraded;
    }
    if (to && to->refusal) {
      context.err << fmt::format("zkverify order: restarting {} in this order onto --to's list is not safe: {}\n",
                                 to->refusal->server, to->refusal->reason);
      return kExitDegraded;
    }
    return kExitHealthy;
  }

 private:
  EnsembleOptions options_;
  std::optional<std::set<int>> returns_with_;  // the voters of --to's list
};

}  // namespace

std::unique_ptr<Command> make_order_command() { return std::make_unique<OrderCommand>(); }

}  // namespace zkverify::verifier
