#pragma once
// The fake keeper's completion thread, as the C client has one: tasks (completions and session
// events) run on it, never inside the call that started them, in the order posted once due. With
// reordering on, completions gathered for 20 ms run newest first (events keep their order).

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "model/facts/clock.hpp"

namespace zkverify::fake {

class Dispatcher {
 public:
  struct Task {
    bool completion = true;  // false: a session event, which keeps its place
    std::function<void()> run;
  };

  Dispatcher();   // starts the thread
  ~Dispatcher();  // stop()s
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Runs `task` on the thread `after` from now (once stopped: never, but it is kept until destroyed).
  void post(Task task, Clock::duration after);
  // Keeps `never` alive without ever running it (a callback of an operation that never completes).
  void keep(std::shared_ptr<void> never);
  void set_reorder(bool reorder);
  void set_delay(std::chrono::milliseconds delay);
  [[nodiscard]] std::chrono::milliseconds delay() const;
  [[nodiscard]] bool on_its_thread() const { return std::this_thread::get_id() == thread_.get_id(); }
  // Stops the thread; what it did not run and what it kept are destroyed here, without the lock
  // (destroying a callback may destroy a Keeper, which closes its session).
  void stop();

 private:
  void run();
  std::vector<Task> take_due_tasks();

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::multimap<Clock::time_point, Task> queue_;  // by due time; equal times in posting order
  std::vector<std::shared_ptr<void>> kept_;
  bool reorder_ = false;
  std::chrono::milliseconds delay_{0};
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest is in place
};

}  // namespace zkverify::fake
