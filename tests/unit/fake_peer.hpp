#pragma once
// A misbehaving four-letter-word peer on 127.0.0.1, port 0, in its own thread: it answers, stalls,
// drips, floods, sends garbage or closes, per word. Counts concurrent connections.

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include <boost/asio.hpp>

namespace fake {

namespace asio = boost::asio;
using asio::ip::tcp;

enum class Behaviour { answer, stall, drip, flood, close_at_once };

struct Script {
  Behaviour behaviour = Behaviour::answer;
  std::string reply;  // for answer: sent, then the connection is closed
};

class Peer {
 public:
  explicit Peer(std::map<std::string, Script> scripts, Script otherwise = {Behaviour::answer, "unknown word\n"})
      : scripts_(std::move(scripts)), otherwise_(std::move(otherwise)), acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    asio::co_spawn(io_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Peer() {
    io_.stop();
    thread_.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  int max_concurrent() const { return max_concurrent_; }
  int connections() const { return total_; }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto socket = co_await acceptor_.async_accept(asio::use_awaitable);
      asio::co_spawn(io_, serve(std::move(socket)), asio::detached);
    }
  }

  asio::awaitable<void> serve(tcp::socket socket) {
    ++total_;
    int now = ++open_;
    max_concurrent_ = std::max(max_concurrent_.load(), now);
    struct Closing {
      std::atomic<int>& open;
      ~Closing() { --open; }
    } closing{open_};
    char word[4];
    boost::system::error_code ec;
    co_await asio::async_read(socket, asio::buffer(word), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
    auto it = scripts_.find(std::string(word, 4));
    const auto& script = it == scripts_.end() ? otherwise_ : it->second;
    asio::steady_timer timer(socket.get_executor());
    switch (script.behaviour) {
      case Behaviour::answer:
        co_await asio::async_write(socket, asio::buffer(script.reply), asio::redirect_error(asio::use_awaitable, ec));
        break;
      case Behaviour::stall:  // hold the connection open, say nothing
        timer.expires_after(std::chrono::hours(1));
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        break;
      case Behaviour::drip:  // a byte every 20ms, never done
        for (;;) {
          co_await asio::async_write(socket, asio::buffer("Z", 1), asio::redirect_error(asio::use_awaitable, ec));
          if (ec) break;
          timer.expires_after(std::chrono::milliseconds(20));
          co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        }
        break;
      case Behaviour::flood: {  // megabytes, without end
        std::string block(64 * 1024, 'x');
        while (!ec) co_await asio::async_write(socket, asio::buffer(block), asio::redirect_error(asio::use_awaitable, ec));
        break;
      }
      case Behaviour::close_at_once:
        break;
    }
    socket.close(ec);
  }

  std::map<std::string, Script> scripts_;
  Script otherwise_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<int> open_{0}, max_concurrent_{0}, total_{0};
};

}  // namespace fake
