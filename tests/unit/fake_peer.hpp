#pragma once
// A misbehaving four-letter-word peer on 127.0.0.1, port 0, in its own thread: it answers, stalls,
// drips, floods, sends garbage, resets or closes, per word. An HTTP request ("GET ") is read whole
// first, so the same peer plays a misbehaving AdminServer. Counts concurrent connections. And
// `Unaccepting`: a port whose connections are never established.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include <boost/asio.hpp>

namespace fake {

namespace asio = boost::asio;
using asio::ip::tcp;

// answer: the reply, then close. stall: say nothing, hold the connection. drip: the reply at once,
// then a byte every `every` (20ms unless set), never done (with an HTTP status line and half a header:
// slow headers). flood: megabytes without end. close_at_once: close without a byte. reset: the reply,
// then an abortive close (RST) in the middle of what should follow. chunks_forever: the reply (a
// chunked response's header), then a 1 KiB chunk every 5ms, never the last chunk. stream: the reply,
// then `total` bytes made lazily from one 64 KiB block (a 1 GiB reply costs no 1 GiB), then close.
enum class Behaviour { answer, answer_late, stall, drip, flood, close_at_once, reset, chunks_forever, stream };

struct Script {
  Behaviour behaviour = Behaviour::answer;
  std::string reply;                     // sent first (answer, drip, reset, chunks_forever, stream)
  std::chrono::milliseconds every{20};   // drip: the pause between two bytes; answer_late: before the reply
  std::uint64_t total = 0;               // stream: how many bytes follow the reply
  std::function<void()> before_reply{};  // runs on the peer's thread just before the reply is sent
};

class Peer {
 public:
  explicit Peer(std::map<std::string, Script> scripts, Script otherwise = {Behaviour::answer, "unknown word\n"})
      : scripts_(std::move(scripts)),
        otherwise_(std::move(otherwise)),
        acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    asio::co_spawn(io_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Peer() {
    io_.stop();
    thread_.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  int max_concurrent() const { return max_concurrent_; }
  // From now on a connection beyond `most` open at once is closed at once, unread and unanswered,
  // as ZooKeeper's maxClientCnxns does (0: no limit). Those cut off are counted.
  void limit_connections(int most) { limit_ = most; }
  int cut_off() const { return cut_off_; }
  int connections() const { return total_; }
  // Until `count` connections were made, or the deadline; true when they were.
  bool wait_for_connections(int count, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(connected_mutex_);
    return connected_.wait_until(lock, deadline, [&] { return total_ >= count; });
  }
  // How many times `word` was asked (its four bytes read), and a wait until it was `count` times.
  int asked(const std::string& word) {
    std::lock_guard lock(connected_mutex_);
    return asked_[word];
  }
  bool wait_for_asked(const std::string& word, int count, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(connected_mutex_);
    return connected_.wait_until(lock, deadline, [&] { return asked_[word] >= count; });
  }
  // Bytes written after the replies by stream and flood: how far a client read before it hung up.
  std::uint64_t bytes_streamed() const { return streamed_; }
  // From the next connection on, `word` gets `script` (a server that goes down, or restarts). Waits
  // until the peer's thread made the change.
  void replace_script(const std::string& word, Script script) {
    on_peer_thread([&] {
      choosers_.erase(word);
      scripts_[word] = std::move(script);
    });
  }
  // From the next connection on, the nth ask of `word` (1, 2, ... from now) gets the script `choose(n)`
  // returns, called on the peer's thread: a fake that advances on the client's own requests (attempt
  // 3 finds the server down), never on a test's thread racing the client.
  void choose_script(const std::string& word, std::function<Script(int nth)> choose) {
    on_peer_thread([&] {
      choosers_[word] = std::move(choose);
      chosen_[word] = 0;
    });
  }
  // choose_script for a fixed sequence: the nth ask gets sequence[n - 1], the last one from then on.
  void script_sequence(const std::string& word, std::vector<Script> sequence) {
    choose_script(word, [sequence = std::move(sequence)](int nth) {
      return sequence.at(std::min<std::size_t>(static_cast<std::size_t>(nth), sequence.size()) - 1);
    });
  }

 private:
  template <class Change>
  void on_peer_thread(Change change) {
    std::promise<void> done;
    asio::post(io_, [&] {
      change();
      done.set_value();
    });
    done.get_future().wait();
  }

  Script script_for(const std::string& word) {
    if (auto chooser = choosers_.find(word); chooser != choosers_.end()) return chooser->second(++chosen_[word]);
    auto it = scripts_.find(word);
    return it == scripts_.end() ? otherwise_ : it->second;
  }

  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto socket = co_await acceptor_.async_accept(asio::use_awaitable);
      asio::co_spawn(io_, serve(std::move(socket)), asio::detached);
    }
  }

  asio::awaitable<void> serve(tcp::socket socket) {
    {
      std::lock_guard lock(connected_mutex_);
      ++total_;
    }
    connected_.notify_all();
    int now = ++open_;
    max_concurrent_ = std::max(max_concurrent_.load(), now);
    struct Closing {
      std::atomic<int>& open;
      ~Closing() { --open; }
    } closing{open_};
    if (limit_ > 0 && now > limit_) {
      ++cut_off_;
      co_return;  // the socket closes as it goes
    }
    char word[4];
    boost::system::error_code ec;
    co_await asio::async_read(socket, asio::buffer(word), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
    {
      std::lock_guard lock(connected_mutex_);
      ++asked_[std::string(word, 4)];
    }
    connected_.notify_all();
    if (std::string(word, 4) == "GET ") {  // the rest of the request: unread bytes would make close() a reset
      std::string request;
      co_await asio::async_read_until(socket, asio::dynamic_buffer(request), "\r\n\r\n",
                                      asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
    }
    auto script = script_for(std::string(word, 4));  // a copy: replace_script may run meanwhile
    co_await perform(socket, script);
    socket.close(ec);
  }

  asio::awaitable<void> perform(tcp::socket& socket, const Script& script) {
    boost::system::error_code ec;
    asio::steady_timer timer(socket.get_executor());
    if (script.behaviour == Behaviour::answer_late) {  // a server slow to answer, then an answer
      timer.expires_after(script.every);
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    if (script.before_reply) script.before_reply();
    if (script.behaviour != Behaviour::stall && script.behaviour != Behaviour::flood)
      co_await asio::async_write(socket, asio::buffer(script.reply), asio::redirect_error(asio::use_awaitable, ec));
    switch (script.behaviour) {
      case Behaviour::answer:
      case Behaviour::answer_late: break;
      case Behaviour::stall:  // hold the connection open, say nothing
        timer.expires_after(std::chrono::hours(1));
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        break;
      case Behaviour::drip:  // a byte every 20ms, never done
        for (;;) {
          co_await asio::async_write(socket, asio::buffer("Z", 1), asio::redirect_error(asio::use_awaitable, ec));
          if (ec) break;
          timer.expires_after(script.every);
          co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        }
        break;
      case Behaviour::flood: {  // megabytes, without end
        std::string block(64 * 1024, 'x');
        while (!ec) {
          auto n =
              co_await asio::async_write(socket, asio::buffer(block), asio::redirect_error(asio::use_awaitable, ec));
          streamed_ += n;
        }
        break;
      }
      case Behaviour::stream: {  // `total` bytes, one block at a time: never the whole reply in memory
        std::string block(64 * 1024, 'x');
        for (std::uint64_t left = script.total; left > 0 && !ec;) {
          auto size = static_cast<std::size_t>(std::min<std::uint64_t>(left, block.size()));
          auto n = co_await asio::async_write(socket, asio::buffer(block.data(), size),
                                              asio::redirect_error(asio::use_awaitable, ec));
          streamed_ += n;
          left -= n;
        }
        break;
      }
      case Behaviour::close_at_once: break;
      case Behaviour::reset:  // SO_LINGER 0: close() sends RST instead of FIN
        socket.set_option(asio::socket_base::linger(true, 0), ec);
        break;
      case Behaviour::chunks_forever: {
        std::string chunk = "400\r\n" + std::string(1024, 'c') + "\r\n";
        while (!ec) {
          co_await asio::async_write(socket, asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
          timer.expires_after(std::chrono::milliseconds(5));
          co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        }
        break;
      }
    }
  }

  std::map<std::string, Script> scripts_;
  std::map<std::string, std::function<Script(int)>> choosers_;  // win over scripts_
  std::map<std::string, int> chosen_;                           // asks since each chooser was set
  Script otherwise_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<int> open_{0}, max_concurrent_{0}, total_{0}, limit_{0}, cut_off_{0};
  std::mutex connected_mutex_;
  std::map<std::string, int> asked_;  // guarded by connected_mutex_
  std::condition_variable connected_;
  std::atomic<std::uint64_t> streamed_{0};
};

// A port on 127.0.0.1 that listens but whose connections are never established: its accept queue
// (backlog 0) is filled by a connection of its own and never drained, so the kernel drops every
// further SYN and a connect waits until its own deadline.
class Unaccepting {
 public:
  Unaccepting() : listener_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(listener_, 0) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      throw std::runtime_error("Unaccepting: cannot listen");
    port_ = ntohs(address.sin_port);
    // Fill the queue: connect until a connection is not established within 200ms.
    for (int tries = 0; tries < 16; ++tries) {
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      fillers_.push_back(fd);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&address), length) == 0) continue;
      pollfd writable{fd, POLLOUT, 0};
      if (::poll(&writable, 1, 200) == 0) return;  // this one hangs: so will the next
    }
    throw std::runtime_error("Unaccepting: every connection was established");
  }
  ~Unaccepting() {
    for (int fd : fillers_) ::close(fd);
    ::close(listener_);
  }
  Unaccepting(const Unaccepting&) = delete;
  Unaccepting& operator=(const Unaccepting&) = delete;
  std::uint16_t port() const { return port_; }

 private:
  int listener_;
  std::vector<int> fillers_;
  std::uint16_t port_ = 0;
};

}  // namespace fake
