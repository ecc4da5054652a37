#pragma once
// The one concurrency model of zkverify's I/O objects (ARCHITECTURE.md, "Actors").
//
// A long-lived I/O object (a session, the watch engine, the restart poller, a probe run, the HTTP
// server, a TLS relay, a child process) keeps its state in an Actor: a strand of the process's
// executor, and state that only handlers running on that strand touch. Nothing else locks it:
//   - other threads post to it (tell), or post a question and wait for the answer until a
//     deadline (ask);
//   - a call that blocks (zookeeper_init, zookeeper_close, a check that waits on sessions) runs on
//     one of the executor's workers and posts its result back (offload);
//   - every handler, timer wait, coroutine and offloaded call holds a Task: a shared reference to
//     the actor that also counts it as work in progress;
//   - stop() posts the actor's own on_stop() (cancel its timers, close its sockets, refuse new
//     work); the actor is stopped once its last Task has ended, and stop()'s future says so.
// A caller that stops waiting at a deadline abandons the actor. Nothing is freed under its running
// handlers: whatever they use, the actor owns (they hold it through their Tasks).

#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include "probes/io.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include "model/facts/clock.hpp"
#include "probes/executor.hpp"

namespace zkverify::probes {

class ActorCore;

// One piece of an actor's work in progress, and the actor kept alive while it lasts. Copies count
// separately; the actor's stop completes when the last one of them all has gone.
class Task {
 public:
  Task() = default;
  explicit Task(std::shared_ptr<ActorCore> core);
  Task(const Task& other);
  Task(Task&& other) noexcept = default;
  Task& operator=(Task other) noexcept;
  ~Task();

  [[nodiscard]] ActorCore* get() const { return core_.get(); }

 private:
  void release() noexcept;
  std::shared_ptr<ActorCore> core_;
};

class ActorCore : public std::enable_shared_from_this<ActorCore> {
 public:
  using Strand = boost::asio::strand<boost::asio::any_io_executor>;

  explicit ActorCore(Executor& executor);
  virtual ~ActorCore() = default;
  ActorCore(const ActorCore&) = delete;
  ActorCore& operator=(const ActorCore&) = delete;

  [[nodiscard]] const Strand& strand() const { return strand_; }
  [[nodiscard]] Executor& executor() const { return executor_; }
  [[nodiscard]] bool on_strand() const { return strand_.running_in_this_thread(); }
  // On the strand: whether stop() has run its on_stop().
  [[nodiscard]] bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  // A Task of this actor (a handler, a timer wait, a coroutine, an offloaded call holds one).
  [[nodiscard]] Task task() { return Task(shared_from_this()); }

  // From any thread: runs on_stop() on the strand (once), and returns a future that is ready once
  // every Task has ended. Waiting for it with a deadline is safe: see the file's comment.
  std::shared_future<void> stop();
  // stop(), waited for until `deadline`; true when the actor had stopped by then.
  bool stop_and_wait(Clock::time_point deadline);

 protected:
  // On the strand, once, when stop() is posted: end what keeps Tasks alive (timers, sockets).
  virtual void on_stop() {}

 private:
  friend class Task;
  void task_ended() noexcept;

  Executor& executor_;
  Strand strand_;
  std::atomic<std::size_t> tasks_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> stopped_{false};
  std::promise<void> stopped_promise_;
  std::shared_future<void> stopped_future_ = stopped_promise_.get_future().share();
};

// The helpers below take the actor as a shared_ptr of its own type (a class derived from ActorCore).

// From any thread: runs `handler(actor)` on the actor's strand, holding a Task.
template <class A, class Handler>
void tell(const std::shared_ptr<A>& actor, Handler handler) {
  boost::asio::post(actor->strand(),
                    [actor, task = actor->task(), handler = std::move(handler)]() mutable { handler(*actor); });
}

// From a thread that is not the actor's strand nor an executor thread (the command's thread, a
// worker): `question(actor)` run on the strand, its answer awaited until `deadline`; none when the
// deadline came first (the question still runs, later, on what the actor owns). On the strand
// itself it answers at once.
template <class A, class Question>
auto ask(const std::shared_ptr<A>& actor, Question question, Clock::time_point deadline)
    -> std::optional<std::invoke_result_t<Question&, A&>> {
  using R = std::invoke_result_t<Question&, A&>;
  if (actor->on_strand()) return question(*actor);
  // An executor thread that waited here would hold one of the few threads the strand needs.
  if (actor->executor().io().get_executor().running_in_this_thread())
    throw std::logic_error("an actor was asked from an executor thread (tell it instead)");
  auto promise = std::make_shared<std::promise<R>>();
  auto answer = promise->get_future();
  tell(actor, [promise, question = std::move(question)](A& self) mutable { promise->set_value(question(self)); });
  if (answer.wait_until(deadline) != std::future_status::ready) return std::nullopt;
  return answer.get();
}

// ask() for a question the strand answers at once (it holds no handler that blocks): a missed
// deadline means the executor is stuck, a bug (zkverify::Error, internal).
template <class A, class Question>
auto ask_now(const std::shared_ptr<A>& actor, Question question) {
  auto answer = ask(actor, std::move(question), Clock::now() + std::chrono::seconds(10));
  if (!answer) throw std::logic_error("an actor did not answer within 10 s: the executor is stuck");
  return std::move(*answer);
}

// `blocking()` on one of the executor's workers (never on the strand), then `then(actor, result)`
// on the strand; both hold a Task. For a `blocking` that returns nothing, `then(actor)`.
template <class A, class Blocking, class Then>
void offload(const std::shared_ptr<A>& actor, Blocking blocking, Then then) {
  actor->executor().run_blocking([actor, task = actor->task(), blocking = std::move(blocking),
                                  then = std::move(then)]() mutable {
    if constexpr (std::is_void_v<std::invoke_result_t<Blocking&>>) {
      blocking();
      boost::asio::post(actor->strand(), [actor, task, then]() mutable { then(*actor); });
    } else {
      auto result = std::make_shared<std::invoke_result_t<Blocking&>>(blocking());
      boost::asio::post(actor->strand(), [actor, task, then, result]() mutable { then(*actor, std::move(*result)); });
    }
  });
}

}  // namespace zkverify::probes
