#include "trainer/engine/distributed/process_group.h"

#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "trainer/engine/distributed/watcher_exit.h"
#include "trainer/engine/stop_signal.h"
#include "trainer/engine/torch_compat.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::engine {

struct ProcessGroup::Handles {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<compat::CollectiveBackend> backend;
};

namespace {

using Clock = std::chrono::steady_clock;

std::string message_of(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) return c10_error->what_without_backtrace();
  return error.what();
}

std::vector<uint8_t> bytes_of(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

// "Rank 1's stderr went to ...", from the places rank 0 collected ("" when not known here).
std::string where_stderr_went(int rank, const std::vector<StderrLocation>& locations) {
  if (rank < 0 || static_cast<size_t>(rank) >= locations.size()) return {};
  return "Rank " + std::to_string(rank) + "'s stderr went to " +
         describe_stderr_location(locations[static_cast<size_t>(rank)], StderrLocation::of_this_process()) + ".";
}

bool is_loopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0; }

// Ends the start-up on SIGINT or SIGTERM: nothing has run yet, and the handler only records it.
void throw_if_stopped(const std::string& where, const std::string& when) {
  if (const int signal = stop_signal_received()) {
    throw Error(where,
                "stopped by signal " + std::to_string(signal) + " (" + strsignal(signal) + ") " + when +
                    "; nothing had run yet",
                "Run the command again to start the job.");
  }
}

// Bounds the rendezvous from a thread of its own: a store call can block in a read that never
// returns (something that accepts connections but is no TCPStore holds the port), where neither
// trainer.dist_timeout nor SIGTERM/SIGINT would end the process. Past the timeout (a few seconds
// after the waits' own deadline), or 2 s after a stop signal the blocked thread did not act on,
// it prints the error and ends the process: nothing has run yet.
class RendezvousGuard {
 public:
  RendezvousGuard(std::string where, std::string meeting, double timeout_seconds)
      : thread_([this, where = std::move(where), meeting = std::move(meeting), timeout_seconds] {
          watch(where, meeting, timeout_seconds);
        }) {}
  ~RendezvousGuard() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  RendezvousGuard(const RendezvousGuard&) = delete;
  RendezvousGuard& operator=(const RendezvousGuard&) = delete;

 private:
  void watch(const std::string& where, const std::string& meeting, double timeout_seconds) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000.0)) +
                          std::chrono::seconds(5);
    std::optional<Clock::time_point> stopped_at;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!changed_.wait_for(lock, std::chrono::milliseconds(50), [this] { return done_; })) {
      const int signal = stop_signal_received();
      if (signal != 0 && !stopped_at) stopped_at = Clock::now();
      std::string problem;
      if (stopped_at && Clock::now() - *stopped_at >= std::chrono::seconds(2)) {
        problem = "stopped by signal " + std::to_string(signal) + " (" + strsignal(signal) +
                  ") while waiting on the rendezvous store, which never answered; nothing had run yet";
      } else if (Clock::now() >= deadline) {
        problem = "the rendezvous store at " + meeting + " did not answer within trainer.dist_timeout (" +
                  std::to_string(static_cast<long long>(timeout_seconds)) +
                  " s): whatever listens there accepts connections but is not a rendezvous store";
      }
      if (problem.empty()) continue;
      log::error(where + ": " + problem);
      // The rendezvous thread is blocked in a read: nothing else can end it.
      exit_from_watcher(where + ": " + problem +
                        ". Fix: give the job a free port (MASTER_PORT, or trainer.master_port; under torchrun "
                        "with LibTorch 1.13, MASTER_PORT + 1 too), and check MASTER_ADDR.");
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  bool done_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace

ProcessGroup::ProcessGroup(const DistEnv& env, const DistOptions& options, const at::Device& device,
                           PeerFailure peer_failure, PeerOutput peer_output)
    : rank_(env.rank),
      world_size_(env.world_size),
      local_rank_(env.local_rank),
      timeout_seconds_(options.timeout_seconds),
      master_addr_(env.master_addr),
      peer_output_(std::move(peer_output)),
      handles_(std::make_unique<Handles>()) {
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(options.timeout_seconds * 1000.0));
  backend_name_ = options.backend.empty() ? (device.is_cuda() ? "nccl" : "gloo") : options.backend;
  // torchrun's agent (PyTorch 2.x) hosts a TCPStore at MASTER_PORT whose protocol LibTorch 1.13's
  // client does not speak: its first request went unanswered until the timeout in a test here.
  // There rank 0 serves a store of its own on the next port, as without the agent.
  const bool join_agent = env.agent_store && compat::tcpstore_client_speaks_torchrun_2();
  const int port = env.agent_store && !join_agent ? env.master_port + 1 : env.master_port;
  const std::string meeting =
      env.store_file.empty() ? env.master_addr + ":" + std::to_string(port) : "file " + env.store_file;
  const std::string where = "distributed rendezvous (rank " + std::to_string(rank_) + " of " +
                            std::to_string(world_size_) + ", " + meeting + ")";
  std::optional<RendezvousGuard> guard;
  guard.emplace(where, meeting, options.timeout_seconds);
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(port);
  store_options.isServer = rank_ == 0 && !join_agent;
  store_options.numWorkers = static_cast<size_t>(world_size_);
  store_options.waitWorkers = false;  // waited for below, watching for a failed peer
  store_options.timeout = timeout;
  try {
    // Ranks trainer started on this machine meet through a private file (local_ranks.h): a TCPStore
    // server would listen on every interface. torchrun and srun jobs keep theirs.
    c10::intrusive_ptr<c10d::Store> base;
    if (!env.store_file.empty()) {
      base = c10::make_intrusive<c10d::FileStore>(env.store_file, world_size_);
      base->setTimeout(timeout);
    } else {
      base = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
    }
    const char* restart = std::getenv("TORCHELASTIC_RESTART_COUNT");
    handles_->store =
        c10::make_intrusive<c10d::PrefixStore>(std::string("trainer/") + (restart != nullptr ? restart : "0"), base);
  } catch (const std::exception& error) {
    throw_if_stopped(where, "while the ranks met");  // a signal interrupts the store's connect (EINTR)
    const std::string message = message_of(error);
    if (store_options.isServer && message.find("ddress already in use") != std::string::npos) {
      throw Error(where,
                  "port " + std::to_string(port) +
                      (port != env.master_port ? " (MASTER_PORT + 1, where rank 0 serves its own store beside "
                                                 "torchrun's agent with this LibTorch)"
                                               : "") +
                      " is taken on this node (another job's rendezvous?): " + message,
                  "Give this job another port: MASTER_PORT (or trainer.master_port) set to a free one.");
    }
    throw Error(where, "cannot reach the TCPStore: " + message,
                "Check MASTER_ADDR/MASTER_PORT (trainer.master_addr, trainer.master_port) and that rank 0 runs; "
                "the wait is bounded by trainer.dist_timeout.");
  }
  // A launcher's ranks say where their output goes: nobody else knows (trainer's own ranks write
  // through rank 0, which quotes them).
  const bool launched_elsewhere = env.store_file.empty();
  if (launched_elsewhere) {
    handles_->store->set("stderr/" + std::to_string(rank_), bytes_of(StderrLocation::of_this_process().encode()));
  }
  // Every rank checks in; a failed peer (seen by our launcher) ends the wait at once.
  handles_->store->add("joined", 1);
  const auto deadline = Clock::now() + timeout;
  while (true) {
    const int64_t joined = handles_->store->add("joined", 0);
    if (joined >= world_size_) break;
    if (peer_failure) {
      if (std::optional<std::string> failure = peer_failure()) {
        throw Error(where, *failure + " before all ranks joined", "See that rank's error above.");
      }
    }
    throw_if_stopped(where, "before all ranks joined");
    if (Clock::now() >= deadline) {
      throw Error(where,
                  "only " + std::to_string(joined) + " of " + std::to_string(world_size_) + " ranks joined within " +
                      std::to_string(static_cast<long long>(options.timeout_seconds)) + " s",
                  "Start every rank (WORLD_SIZE of them) with the same MASTER_ADDR and MASTER_PORT, or raise "
                  "trainer.dist_timeout.");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (launched_elsewhere && rank_ == 0) {
    for (int r = 0; r < world_size_; ++r) {  // set before each rank joined
      const std::vector<uint8_t> bytes = handles_->store->get("stderr/" + std::to_string(r));
      stderr_locations_.push_back(StderrLocation::decode(std::string(bytes.begin(), bytes.end())));
    }
  }
  guard.reset();  // every rank met: the collectives' own timeouts bound what follows
  handles_->backend = make_backend_watching(where, peer_failure);
  log::info("distributed: rank " + std::to_string(rank_) + " of " + std::to_string(world_size_) + " (" + backend_name_ +
            ", rendezvous " + meeting + ", " + (env.source.empty() ? "environment" : env.source) + ")");
}

ProcessGroup::~ProcessGroup() = default;

std::unique_ptr<HangWatchdog> ProcessGroup::watch_for_hangs(double timeout_seconds) const {
  // Copies: the watchdog's thread asks from its own thread.
  PeerOutput peer_output = peer_output_;
  std::vector<StderrLocation> locations = stderr_locations_;
  auto output_of = [peer_output, locations](int rank) {
    return peer_output ? peer_output(rank) : where_stderr_went(rank, locations);
  };
  return std::make_unique<HangWatchdog>(handles_->store, rank_, world_size_, timeout_seconds, std::move(output_of));
}

std::string ProcessGroup::fix_text() const {
  std::string text = "Another rank ended or hangs: see its own error";
  if (!stderr_locations_.empty()) {
    text += ". Where each rank's stderr went: " +
            describe_stderr_locations(stderr_locations_, StderrLocation::of_this_process());
  } else if (rank_ == 0) {
    text += " (when trainer started the ranks, the job's error names it and quotes its last lines)";
  } else {
    text += " (rank 0's error names it)";
  }
  return text + ". Waits are bounded by trainer.dist_timeout (now " +
         std::to_string(static_cast<long long>(timeout_seconds_)) +
         " s). If the job wrote a checkpoint, resume with ckpt_path=last and the same hydra.run.dir.";
}

ProcessGroup::BackendSpec ProcessGroup::backend_spec(const std::string& name, const std::string& where) const {
  return {backend_name_, master_addr_, rank_, world_size_, timeout_seconds_, handles_->store, name, where, fix_text()};
}

c10::intrusive_ptr<compat::CollectiveBackend> ProcessGroup::create_backend(const BackendSpec& spec) {
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(spec.timeout_seconds * 1000.0));
  // Each group has its own key space in the store: "gloo"/"nccl", plus the name of a sibling.
  const std::string prefix = spec.backend_name + (spec.name.empty() ? "" : "/" + spec.name);
  try {
    if (spec.backend_name == "gloo") {
      auto gloo_options = c10d::ProcessGroupGloo::Options::create(timeout);
      const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
      if (interface != nullptr && interface[0] != '\0') {
        gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
      } else if (is_loopback(spec.master_addr)) {
        gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      } else {
        gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      return c10::make_intrusive<c10d::ProcessGroupGloo>(c10::make_intrusive<c10d::PrefixStore>(prefix, spec.store),
                                                         spec.rank, spec.world_size, gloo_options);
    }
#ifdef USE_C10D_NCCL
    auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
    nccl_options->timeout = timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(c10::make_intrusive<c10d::PrefixStore>(prefix, spec.store),
                                                       spec.rank, spec.world_size, nccl_options);
#else
    throw Error("trainer.process_group_backend", "this LibTorch has no NCCL",
                "Use trainer.process_group_backend=gloo, or build against a CUDA LibTorch.");
#endif
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    throw Error(spec.where, "cannot create the " + spec.backend_name + " process group: " + message_of(error),
                spec.fix);
  }
}

c10::intrusive_ptr<compat::CollectiveBackend> ProcessGroup::make_backend(const std::string& name,
                                                                         const std::string& where) const {
  return create_backend(backend_spec(name, where));
}

c10::intrusive_ptr<compat::CollectiveBackend> ProcessGroup::make_backend_watching(const std::string& where,
                                                                                  const PeerFailure& peer_failure) {
  // Gloo's and NCCL's constructors connect every pair of ranks and wait, up to the timeout, for a
  // peer that joined and then died (or was stopped) before its connections were made. They run
  // on a thread of their own while this one watches for that; on a failure this thread throws and
  // leaves that one behind, waiting in the constructor on its own copies until the process exits.
  struct Pending {
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    c10::intrusive_ptr<compat::CollectiveBackend> backend;
    std::exception_ptr error;
  };
  auto pending = std::make_shared<Pending>();
  BackendSpec spec = backend_spec("", where);
  std::thread([pending, spec = std::move(spec)] {
    c10::intrusive_ptr<compat::CollectiveBackend> backend;
    std::exception_ptr error;
    try {
      backend = create_backend(spec);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(pending->mutex);
    pending->backend = std::move(backend);
    pending->error = error;
    pending->done = true;
    pending->finished.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(pending->mutex);
  while (!pending->finished.wait_for(lock, std::chrono::milliseconds(50), [&] { return pending->done; })) {
    lock.unlock();
    if (peer_failure) {
      if (std::optional<std::string> failure = peer_failure()) {
        throw Error(where, *failure + " before the ranks' connections were made", "See that rank's error above.");
      }
    }
    throw_if_stopped(where, "while the ranks connected");
    lock.lock();
  }
  if (pending->error) std::rethrow_exception(pending->error);
  return pending->backend;
}

ProcessGroup::ProcessGroup(const ProcessGroup& parent, const std::string& name, const std::vector<int>& ranks)
    : rank_(ranks.empty() ? parent.rank_
                          : static_cast<int>(std::find(ranks.begin(), ranks.end(), parent.rank_) - ranks.begin())),
      world_size_(ranks.empty() ? parent.world_size_ : static_cast<int>(ranks.size())),
      local_rank_(parent.local_rank_),
      timeout_seconds_(parent.timeout_seconds_),
      backend_name_(parent.backend_name_),
      master_addr_(parent.master_addr_),
      peer_output_(parent.peer_output_),
      stderr_locations_(parent.stderr_locations_),
      handles_(std::make_unique<Handles>()) {
  handles_->store = parent.handles_->store;
  handles_->backend = make_backend(name, "distributed group '" + name + "' (rank " + std::to_string(rank_) + " of " +
                                             std::to_string(world_size_) + ")");
}

std::unique_ptr<ProcessGroup> ProcessGroup::sibling(const std::string& name) const {
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(*this, name, {}));
}

std::unique_ptr<ProcessGroup> ProcessGroup::subgroup(const std::string& name, const std::vector<int>& ranks) const {
  if (std::find(ranks.begin(), ranks.end(), rank_) == ranks.end()) {
    throw std::logic_error("ProcessGroup::subgroup: rank " + std::to_string(rank_) + " is not among its ranks");
  }
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(*this, name, ranks));
}

void ProcessGroup::fail(std::string_view what, const std::string& problem) const {
  throw Error("distributed " + std::string(what) + " (rank " + std::to_string(rank_) + " of " +
                  std::to_string(world_size_) + ")",
              problem, fix_text());
}

at::ScalarType ProcessGroup::reduction_dtype(at::ScalarType dtype) const {
  return dtype == at::kBFloat16 && backend_name_ == "gloo" ? at::kFloat : dtype;
}

// What Gloo is handed for a copy (send, receive, broadcast): bfloat16 as float16 of the same
// bits (LibTorch 1.13's Gloo refuses bfloat16; a copy never looks at the values).
at::Tensor ProcessGroup::on_the_wire(const at::Tensor& tensor) const {
  return tensor.scalar_type() == at::kBFloat16 && backend_name_ == "gloo" ? tensor.view(at::kHalf) : tensor;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::allreduce_async(at::Tensor& tensor) {
  if (reduction_dtype(tensor.scalar_type()) != tensor.scalar_type()) {
    throw std::logic_error("ProcessGroup::allreduce_async: a " + std::string(c10::toString(tensor.scalar_type())) +
                           " tensor on " + backend_name_ + " must be reduced as its reduction_dtype");
  }
  std::vector<at::Tensor> tensors{tensor};
  try {
    return handles_->backend->allreduce(tensors);
  } catch (const std::exception& error) {
    fail("all-reduce", message_of(error));
  }
}

std::optional<std::string> ProcessGroup::wait_problem(const c10::intrusive_ptr<c10d::Work>& work) {
  try {
    work->wait();
  } catch (const std::exception& error) {
    return message_of(error);
  }
  return std::nullopt;
}

void ProcessGroup::wait(const c10::intrusive_ptr<c10d::Work>& work, std::string_view what) {
  if (std::optional<std::string> problem = wait_problem(work)) fail(what, *problem);
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::send_async(at::Tensor& tensor, int peer, int tag) {
  std::vector<at::Tensor> tensors{on_the_wire(tensor)};
  try {
    return handles_->backend->send(tensors, peer, tag);
  } catch (const std::exception& error) {
    fail("send to rank " + std::to_string(peer), message_of(error));
  }
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::recv_async(at::Tensor& tensor, int peer, int tag) {
  std::vector<at::Tensor> tensors{on_the_wire(tensor)};
  try {
    return handles_->backend->recv(tensors, peer, tag);
  } catch (const std::exception& error) {
    fail("receive from rank " + std::to_string(peer), message_of(error));
  }
}

void ProcessGroup::allreduce_sum(at::Tensor& tensor, std::string_view what) {
  const at::ScalarType wide = reduction_dtype(tensor.scalar_type());
  if (wide == tensor.scalar_type()) {
    wait(allreduce_async(tensor), what);
    return;
  }
  at::Tensor widened = tensor.to(wide);
  wait(allreduce_async(widened), what);
  tensor.copy_(widened);
}

void ProcessGroup::broadcast_from_main(const std::vector<at::Tensor>& tensors, std::string_view what) {
  for (const at::Tensor& tensor : tensors) {
    std::vector<at::Tensor> one{on_the_wire(tensor)};
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    try {
      wait(handles_->backend->broadcast(one, options), what);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& error) {
      fail(what, message_of(error));
    }
  }
}

void ProcessGroup::barrier(std::string_view what) {
  try {
    wait(handles_->backend->barrier(), what);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    fail(what, message_of(error));
  }
}

std::string ProcessGroup::share_string(const std::string& key, const std::string& value) {
  try {
    if (rank_ == 0) handles_->store->set("shared/" + key, bytes_of(value));
    const std::vector<uint8_t> bytes = handles_->store->get("shared/" + key);
    return std::string(bytes.begin(), bytes.end());
  } catch (const std::exception& error) {
    fail("store read of '" + key + "'", message_of(error));
  }
}

}  // namespace trainer::engine
