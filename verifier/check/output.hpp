#pragma once
// The process's standard output and error, owned by one actor (ARCHITECTURE.md, "Actors"): text
// is written whole, in the order it was handed over, whichever thread handed it over. The
// command's thread writes through out() and err(), streams that hand over each complete line as
// it is written (a piece that must stay together goes in one insertion); other threads (a watch's
// events) say() whole pieces. run_command_line makes the one Output of a run and finishes it.

#include <functional>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

#include "model/facts/clock.hpp"
#include "probes/executor.hpp"

namespace zkverify::verifier {

enum class Channel { out, err };

class Output {
 public:
  Output(probes::Executor& executor, std::ostream& out, std::ostream& err);
  ~Output();  // finish()es, one second at most, when nobody did
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  // From any thread: `text`, written whole on `channel` after everything handed over before it.
  void say(Channel channel, std::string text) const;
  // say(), as a function that may outlive this Output (a watch's sink): text said after the end is
  // dropped.
  using Sayer = std::function<void(Channel, std::string)>;
  [[nodiscard]] Sayer sayer() const;
  // The command's thread's streams (one thread at a time).
  std::ostream& out() { return out_stream_; }
  std::ostream& err() { return err_stream_; }
  // The streams' partial lines handed over, then a wait until everything handed over so far is
  // written (before a child process writes to the same descriptors, say); false at `deadline`.
  bool written(Clock::time_point deadline);
  // As written(), and the end: later text is dropped (the streams given may be gone by then).
  bool finish(Clock::time_point deadline);

 private:
  class Writer;
  static void hand_over(const std::shared_ptr<Writer>& writer, Channel channel, std::string text);
  // Hands each complete line over as it comes, the rest at a flush.
  class LineBuffer final : public std::streambuf {
   public:
    LineBuffer(const Output& output, Channel channel) : output_(output), channel_(channel) {}
    int sync() override;

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* text, std::streamsize count) override;

   private:
    void hand_over_lines();
    const Output& output_;
    const Channel channel_;
    std::string pending_;
  };

  std::shared_ptr<Writer> writer_;
  LineBuffer out_buffer_{*this, Channel::out};
  LineBuffer err_buffer_{*this, Channel::err};
  std::ostream out_stream_{&out_buffer_};
  std::ostream err_stream_{&err_buffer_};
  bool finished_ = false;
};

}  // namespace zkverify::verifier
