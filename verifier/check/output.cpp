#include "verifier/check/output.hpp"

#include <chrono>
#include <utility>

#include "probes/actor.hpp"

namespace zkverify::verifier {

// The actor: the only code that writes to the given streams once the Output exists.
class Output::Writer final : public probes::ActorCore {
 public:
  Writer(probes::Executor& executor, std::ostream& out, std::ostream& err)
      : ActorCore(executor), out_(out), err_(err) {}

  // On the strand. After the stop nothing is written: the streams may be gone.
  void write(Channel channel, const std::string& text) {
    if (stopping()) return;
    auto& stream = channel == Channel::out ? out_ : err_;
    stream << text << std::flush;
  }

 private:
  std::ostream& out_;
  std::ostream& err_;
};

Output::Output(probes::Executor& executor, std::ostream& out, std::ostream& err)
    : writer_(std::make_shared<Writer>(executor, out, err)) {}

Output::~Output() {
  if (!finished_) finish(Clock::now() + std::chrono::seconds(1));
}

void Output::hand_over(const std::shared_ptr<Writer>& writer, Channel channel, std::string text) {
  if (text.empty()) return;
  probes::tell(writer, [channel, text = std::move(text)](Writer& self) { self.write(channel, text); });
}

void Output::say(Channel channel, std::string text) const { hand_over(writer_, channel, std::move(text)); }

// The writer, shared: it drops what comes after its stop.
Output::Sayer Output::sayer() const {
  return [writer = writer_](Channel channel, std::string text) { hand_over(writer, channel, std::move(text)); };
}

// The strand runs what was told before the question first: its answer means all of it is written.
bool Output::written(Clock::time_point deadline) {
  out_stream_.flush();
  err_stream_.flush();
  return probes::ask(
             writer_, [](Writer&) { return true; }, deadline)
      .has_value();
}

bool Output::finish(Clock::time_point deadline) {
  finished_ = true;
  out_stream_.flush();
  err_stream_.flush();
  return writer_->stop_and_wait(deadline);
}

int Output::LineBuffer::sync() {
  if (!pending_.empty()) output_.say(channel_, std::exchange(pending_, {}));
  return 0;
}

Output::LineBuffer::int_type Output::LineBuffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  pending_.push_back(traits_type::to_char_type(c));
  hand_over_lines();
  return c;
}

std::streamsize Output::LineBuffer::xsputn(const char* text, std::streamsize count) {
  pending_.append(text, static_cast<std::size_t>(count));
  hand_over_lines();
  return count;
}

void Output::LineBuffer::hand_over_lines() {
  auto end = pending_.rfind('\n');
  if (end == std::string::npos) return;
  output_.say(channel_, pending_.substr(0, end + 1));
  pending_.erase(0, end + 1);
}

}  // namespace zkverify::verifier
