// `zkverify quorum`: probe every server, make the round trip, judge, compare with the ledger,
// render; with --wait, until healthy --stable times in a row. The gate between manual steps.

#include <algorithm>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/time_text.hpp"
#include "verifier/check/ensemble_check.hpp"
#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"

namespace zkverify::verifier {

namespace {

struct QuorumOptions : EnsembleOptions {
  std::optional<std::string> state_file;          // --state FILE: the ledger
  bool reset_state = false;                       // --reset-state: forget the ledger first
  std::optional<std::chrono::milliseconds> wait;  // --wait DURATION
  std::chrono::milliseconds interval{1000};       // --interval
  int stable = 3;                                 // --stable N
  bool verbose = false;                           // --verbose: text ends with where the time went
  bool trace = false;                             // --trace: and with the timeline of the last check
};

// "(no-quorum, unreachable zoo-1)": what keeps an attempt from being healthy.
std::string what_fails(const Report& report) {
  std::vector<std::string> parts;
  for (const auto& finding : report.findings) {
    if (finding.severity == Severity::info) continue;
    parts.push_back(finding.server.empty() ? std::string(to_string(finding.code))
                                           : fmt::format("{} {}", to_string(finding.code), finding.server));
  }
  return parts.empty() ? "" : fmt::format(" ({})", fmt::join(parts, ", "));
}

bool has_data_loss(const Report& report) {
  return std::ranges::any_of(report.findings, [](const Finding& f) { return f.code == FindingCode::data_loss; });
}

class QuorumCommand final : public Command {
 public:
  QuorumCommand() { options_.verdict_words_only = true; }

  std::string_view name() const override { return "quorum"; }

  CLI::App& add_to(CLI::App& app) override {
    auto& command = *app.add_subcommand(
        "quorum", "Exit 0 only when the ensemble is healthy: 1 degraded, 2 critical, 64 usage error");
    add_ensemble_options(command, options_, true);
    add_clients_option(command, options_.client_paths);
    add_state_option(command, options_.state_file,
                     "Ledger file: remembers zxids, the durability marker, membership; a regression is critical "
                     "(data-loss)");
    // Typed only: a variable or a file would forget the ledger on every run.
    command.add_flag("--reset-state", options_.reset_state, "Forget the ledger (says what it forgets) and start over")
        ->configurable(false);
    add_duration_option(command, "--wait", options_.wait,
                        "Repeat the check until healthy --stable times in a row, or this long has passed");
    add_duration_option(command, "--interval", options_.interval, "Pause between --wait attempts (default 1s)");
    command.add_option_function<int>(
        "--stable",
        [this](int stable) {
          if (stable < 1) throw_usage(fmt::format("--stable {}: must be at least 1", stable));
          options_.stable = stable;
        },
        "Healthy checks in a row that end --wait (default 3)");
    command.add_flag("--verbose", options_.verbose,
                     "Text output ends with where the time went (probe, connect, write, read_back, cleanup, total)");
    command.add_flag("--trace", options_.trace,
                     "Output ends with the check's timeline: each connection, TLS handshake, word, session wait, "
                     "write, sync and read, per server, in ms from the start (JSON: \"timeline\")");
    command.final_callback([this] {
      if (options_.reset_state && !options_.state_file) throw_usage("--reset-state needs --state FILE");
    });
    return command;
  }

  int run(const Context& given) override {
    auto started = Clock::now();
    AuthenticatedContext authenticated(options_.connection, given);
    const auto& context = authenticated.context();
    LedgerUse ledger{options_.state_file, options_.reset_state};
    auto report = options_.wait ? wait_until_stable(context, ledger) : check_and_record(options_, ledger, context);
    // The command's, not only the last check's: the ledger's lock, and with --wait every attempt.
    if (report.timings)
      report.timings->total = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
    context.out << render(report, options_.output, options_.verbose, options_.trace) << std::flush;
    return exit_code(report.verdict);
  }

 private:
  // Checks until healthy --stable times in a row, data loss, or --wait is over; one progress line
  // per attempt on stderr. The report is the last attempt's.
  Report wait_until_stable(const Context& context, LedgerUse& ledger) const {
    auto started = Clock::now();
    auto give_up = started + *options_.wait;
    int streak = 0;
    for (int attempt = 1;; ++attempt) {
      auto report = check_and_record(options_, ledger, context);
      streak = report.verdict == Verdict::healthy ? streak + 1 : 0;
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
      context.err << fmt::format("zkverify: [{:>7}] attempt {}: {}{}, healthy {}/{} in a row\n",
                                 format_duration(elapsed), attempt, to_string(report.verdict), what_fails(report),
                                 streak, options_.stable)
                  << std::flush;
      if (streak >= options_.stable) return report;
      if (has_data_loss(report)) {  // lost data does not come back by waiting
        context.err << "zkverify: data loss: not waiting any longer\n";
        return report;
      }
      // The whole --wait is used: the last pause may be shorter than --interval, so that one more
      // attempt starts at the end of --wait (and takes up to --timeout of its own).
      if (Clock::now() >= give_up) {
        context.err << fmt::format("zkverify: --wait {} is over\n", format_duration(*options_.wait));
        return report;
      }
      context.executor.stop().wait_until(std::min(Clock::now() + options_.interval, give_up));
    }
  }

  QuorumOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_quorum_command() { return std::make_unique<QuorumCommand>(); }

}  // namespace zkverify::verifier
