#include "sim_loop.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "store/tls_session.hpp"

namespace kv::test {

using drive::LoopWaiter;
using drive::loop::Handoff;
using drive::loop::Transport;
using drive::loop::TransportEvents;

SimClock::SimClock(int64_t wall_start_us) : wall_start_us_(wall_start_us) {}

int64_t SimClock::wall_us() {
  const int64_t now = steady_ns();
  double wall =
      static_cast<double>(wall_start_us_) + static_cast<double>(now - 1'000'000'000) / 1e3;
  for (const Step& s : wall_steps_) {
    if (now < s.at_ns) continue;
    wall += static_cast<double>(s.us) + static_cast<double>(now - s.at_ns) / 1e3 * s.rate;
  }
  return static_cast<int64_t>(wall);
}

void SimClock::step_wall_at(int64_t at_ns, int64_t us) { wall_steps_.push_back({at_ns, us, 0}); }
void SimClock::slew_at(int64_t at_ns, double rate) { wall_steps_.push_back({at_ns, 0, rate}); }

void SimClock::workers_begin(size_t n) {
  std::lock_guard<std::mutex> l(mu_);
  participants_ += n;
}

void SimClock::worker_done() {
  std::lock_guard<std::mutex> l(mu_);
  --participants_;
  done_dirty_ = true;
  ++done_epoch_;
  cv_.notify_all();
}

void SimClock::advance() {
  if (blocked_ < participants_ || done_dirty_ || deadlines_.empty()) return;
  const int64_t t = *deadlines_.begin();
  if (t <= now_.load()) return;  // its waiter is about to wake
  now_.store(t, std::memory_order_release);
  cv_.notify_all();
}

void SimClock::sleep_until(int64_t until) {
  std::unique_lock<std::mutex> l(mu_);
  if (now_.load() >= until) return;
  ++blocked_;
  const auto it = deadlines_.insert(until);
  while (now_.load() < until) {
    advance();
    if (now_.load() >= until) break;
    cv_.wait(l);
  }
  deadlines_.erase(it);
  --blocked_;
}

bool SimClock::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& /*cv*/,
                          int64_t deadline_ns, const std::function<bool()>& done) {
  lock.unlock();
  std::unique_lock<std::mutex> l(mu_);
  bool result = false;
  for (;;) {
    done_dirty_ = false;
    const uint64_t epoch = done_epoch_;
    l.unlock();
    lock.lock();
    result = done();
    lock.unlock();
    l.lock();
    if (result || now_.load() >= deadline_ns) break;
    if (done_epoch_ != epoch) continue;  // a worker ended meanwhile: look again
    ++blocked_;
    const auto it = deadlines_.insert(deadline_ns);
    while (now_.load() < deadline_ns && done_epoch_ == epoch) {
      advance();
      if (now_.load() >= deadline_ns) break;
      cv_.wait(l);
    }
    deadlines_.erase(it);
    --blocked_;
  }
  l.unlock();
  lock.lock();
  return result;
}

namespace {

// One worker's loop in virtual time: its io_context's posted handlers, and the timed events its
// transports scheduled, in time order (ties in the order scheduled).
class SimWaiter final : public LoopWaiter {
 public:
  SimWaiter(SimClock& clock, boost::asio::io_context& io) : clock_(clock), io_(io) {}

  void wait(int64_t until) override {
    if (run_ready() > 0) return;
    const int64_t t = queue_.empty() ? until : std::min(until, queue_.top().at);
    clock_.sleep_until(t);
    run_ready();
  }
  size_t spin(int64_t due) override {
    if (const size_t n = run_ready(); n > 0) return n;
    wait(due);  // on time, exactly: virtual time has no oversleep to spin against
    return 1;
  }
  void at(int64_t at, std::function<void()> fn) override {
    queue_.push(Event{at, seq_++, std::move(fn)});
  }

 private:
  struct Event {
    int64_t at;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  size_t run_ready() {
    size_t n = io_.poll();
    while (!queue_.empty() && queue_.top().at <= clock_.steady_ns()) {
      const std::function<void()> fn = queue_.top().fn;
      queue_.pop();
      fn();
      n += 1 + io_.poll();
    }
    return n;
  }
  SimClock& clock_;
  boost::asio::io_context& io_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  uint64_t seq_ = 0;
};

// One link's connection to a SimStore: requests are parsed as they are written, and each
// reply is an event at the time the script says.
class FakeTransport final : public Transport {
 public:
  FakeTransport(SimStore& store, size_t server, SimClock& clock, TransportEvents& events,
                LoopWaiter& loop)
      : store_(store), server_(server), clock_(clock), ev_(events), loop_(loop) {}

  bool adopt(int /*fd*/, std::unique_ptr<drive::store::TlsSession> /*tls*/) override {
    return false;
  }
  void connect(const drive::SocketAddress& /*to*/, bool /*nodelay*/) override {
    loop_.at(clock_.steady_ns() + store_.connect_ns, [this, g = gen_] {
      if (g != gen_) return;
      if (store_.refuse_connects || static_cast<int>(server_) == store_.refuse_server) {
        ++store_.refused;
        ev_.on_connect_failed(clock_.steady_ns());
        return;
      }
      conn_ = store_.connect();
      ev_.on_connected(clock_.steady_ns());
    });
  }
  void start_reading() override {}
  ptrdiff_t write(std::string_view bytes, bool /*now_only*/) override {
    const int64_t now = clock_.steady_ns();
    in_.append(bytes);
    ev_.on_written(bytes.size(), now);
    parse(now);
    return static_cast<ptrdiff_t>(bytes.size());
  }
  bool writing() const override { return false; }
  void close() override {
    ++gen_;
    in_.clear();
    requests_ = 0;
    answered_ = 0;
    last_at_ = 0;
    stalled_ = false;
  }
  Handoff release(bool /*shutdown*/) override {
    close();
    return {};
  }

 private:
  // Whole requests from the front of in_ (memcached text: get KEY / set KEY F E N + data).
  void parse(int64_t now) {
    size_t pos = 0;
    for (;;) {
      const size_t eol = in_.find("\r\n", pos);
      if (eol == std::string::npos) break;
      const std::string_view line(in_.data() + pos, eol - pos);
      bool is_set = false;
      std::string key;
      size_t next = eol + 2;
      if (line.rfind("get ", 0) == 0) {
        key = line.substr(4);
      } else if (line.rfind("set ", 0) == 0) {
        is_set = true;
        const size_t k_end = line.find(' ', 4);
        key = line.substr(4, k_end - 4);
        const size_t len_at = line.rfind(' ');
        const size_t len = std::stoul(std::string(line.substr(len_at + 1)));
        if (in_.size() < next + len + 2) break;  // the data block is not all here
        next += len + 2;
      }
      pos = next;
      reply(is_set, key, now);
    }
    in_.erase(0, pos);
  }

  void reply(bool is_set, const std::string& key, int64_t now) {
    std::string r = store_.handle(server_, is_set, key);
    const int64_t service = store_.service(conn_, requests_++);
    if (stalled_ || service == SimStore::kNever) {
      stalled_ = true;  // a reply that never comes holds back every one after it
      return;
    }
    last_at_ = std::max(now + service, last_at_);
    const bool closes = store_.close_after > 0 && ++answered_ == store_.close_after;
    loop_.at(last_at_, [this, g = gen_, r = std::move(r), closes] {
      if (g != gen_) return;
      const int64_t t = clock_.steady_ns();
      if (!ev_.on_bytes(r, t, t)) return;
      if (closes && g == gen_) ev_.on_failed(t);  // the store closed the connection
    });
  }

  SimStore& store_;
  size_t server_;
  SimClock& clock_;
  TransportEvents& ev_;
  LoopWaiter& loop_;
  uint64_t gen_ = 0;
  size_t conn_ = 0;
  uint64_t requests_ = 0, answered_ = 0;
  int64_t last_at_ = 0;
  bool stalled_ = false;
  std::string in_;
};

class SimFactory final : public drive::loop::TransportFactory {
 public:
  SimFactory(SimStore& store, SimClock& clock) : store_(store), clock_(clock) {}
  std::unique_ptr<Transport> make(size_t server, TransportEvents& events,
                                  LoopWaiter& loop) override {
    return std::make_unique<FakeTransport>(store_, server, clock_, events, loop);
  }

 private:
  SimStore& store_;
  SimClock& clock_;
};

}  // namespace

std::unique_ptr<LoopWaiter> SimClock::waiter(boost::asio::io_context& io,
                                             drive::SpinMargin* /*lateness*/) {
  return std::make_unique<SimWaiter>(*this, io);
}

std::shared_ptr<drive::loop::TransportFactory> SimStore::transports(SimClock& clock) {
  return std::make_shared<SimFactory>(*this, clock);
}

size_t SimStore::connect() {
  ++connections;
  return next_conn_++;
}

std::string SimStore::handle(size_t server, bool is_set, const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  ++by_server.at(server);
  if (is_set) {
    ++cmd_set;
    keys_.insert(key);
    return "STORED\r\n";
  }
  ++cmd_get;
  if (keys_.count(key) == 0) return "END\r\n";
  ++get_hits;
  return "VALUE " + key + " 0 1\r\nx\r\nEND\r\n";
}

}  // namespace kv::test
