// The process group of a distributed job: rendezvous through a TCPStore (rank 0 hosts it, or
// torchrun's agent does), then Gloo (CPU) or NCCL (CUDA) collectives, every wait bounded by
// trainer.dist_timeout. Collective failures become trainer::Error naming this rank.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/util/intrusive_ptr.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "trainer/engine/distributed/dist_env.h"
#include "trainer/engine/distributed/hang_watchdog.h"
#include "trainer/engine/distributed/stderr_location.h"
#include "trainer/engine/torch_compat.h"

namespace trainer::engine {

class ProcessGroup {
 public:
  // Says why waiting for the other ranks is pointless ("rank 1 (pid 7) exited with code 1"), or
  // nullopt; asked while the rendezvous waits.
  using PeerFailure = std::function<std::optional<std::string>()>;
  // What is known of rank r's output, as a block for an error ("" when nothing): for the ranks
  // trainer started, its last lines on stderr (local_ranks.h).
  using PeerOutput = std::function<std::string(int rank)>;

  // Throws trainer::Error when the rendezvous or the group cannot be made within the timeout.
  // Ranks a launcher started (torchrun, srun) publish where their stderr goes (stderr_location.h);
  // rank 0 reads every rank's, and names them when a collective fails or a rank hangs.
  ProcessGroup(const DistEnv& env, const DistOptions& options, const at::Device& device, PeerFailure peer_failure,
               PeerOutput peer_output = {});
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int local_rank() const { return local_rank_; }
  bool is_main() const { return rank_ == 0; }
  const std::string& backend_name() const { return backend_name_; }
  double timeout_seconds() const { return timeout_seconds_; }

  // The type a sum all-reduce of `dtype` values runs in: float32 for bfloat16 on Gloo (LibTorch
  // 1.13's Gloo has no bfloat16; on 2.x, summing in float32 keeps both versions' results the
  // same), `dtype` otherwise. Point-to-point and broadcast move bfloat16 as it is, bit for bit.
  at::ScalarType reduction_dtype(at::ScalarType dtype) const;
  // Starts a sum all-reduce of `tensor` in place; its type must be its own reduction_dtype.
  c10::intrusive_ptr<c10d::Work> allreduce_async(at::Tensor& tensor);
  // Waits for a collective; `what` names it in the error (a string is built only on failure: the
  // per-step waits pass literals).
  void wait(const c10::intrusive_ptr<c10d::Work>& work, std::string_view what);
  // The same where the name is made of values (a pipeline's micro-batch): `describe()` returns
  // it, called only when the wait fails.
  template <typename Describe>
  void wait_described(const c10::intrusive_ptr<c10d::Work>& work, const Describe& describe) {
    if (std::optional<std::string> problem = wait_problem(work)) fail(describe(), *problem);
  }
  // Any type: one that reduction_dtype widens is summed in the wider type and written back.
  void allreduce_sum(at::Tensor& tensor, std::string_view what);
  // Every rank ends with rank 0's values (in place).
  void broadcast_from_main(const std::vector<at::Tensor>& tensors, std::string_view what);
  void barrier(std::string_view what);
  // Point-to-point, as a pipeline's stages talk: starts sending `tensor` to rank `peer` (or
  // receiving into it from `peer`); a send and its receive name the same `tag`. Wait with wait().
  c10::intrusive_ptr<c10d::Work> send_async(at::Tensor& tensor, int peer, int tag);
  c10::intrusive_ptr<c10d::Work> recv_async(at::Tensor& tensor, int peer, int tag);
  // Throws the error of a failed wait for `what` (naming this rank, with the fix): for waits
  // outside the backend too (shared_memory_link.h).
  [[noreturn]] void fail(std::string_view what, const std::string& problem) const;
  // Rank 0's `value` on every rank (through the store).
  std::string share_string(const std::string& key, const std::string& value);
  // A second group over the same ranks and store, with its own connections (Gloo) or
  // communicator (NCCL), so that its collectives never queue behind this group's. Every rank
  // must call it, in the same order; `name` keeps its keys apart in the store.
  std::unique_ptr<ProcessGroup> sibling(const std::string& name) const;
  // A group of some of this group's ranks (`ranks`, which must hold this rank), with its own
  // connections; its ranks are their places in `ranks`. Every member calls it with the same
  // name and ranks; `name` keeps its keys apart in the store.
  std::unique_ptr<ProcessGroup> subgroup(const std::string& name, const std::vector<int>& ranks) const;

  // Starts this rank's hang watchdog on the group's store (hang_watchdog.h); it stops when the
  // returned object is destroyed, which must happen before this group's. Its error quotes a
  // silent rank's output (peer_output) or names where it went.
  std::unique_ptr<HangWatchdog> watch_for_hangs(double timeout_seconds) const;

 private:
  ProcessGroup(const ProcessGroup& parent, const std::string& name, const std::vector<int>& ranks);
  // What creating a backend needs, copied (a thread may create it after this object is gone).
  struct BackendSpec {
    std::string backend_name;
    std::string master_addr;
    int rank = 0;
    int world_size = 1;
    double timeout_seconds = 1800;
    c10::intrusive_ptr<c10d::Store> store;
    std::string name;   // a sibling's or subgroup's key space ("": the job's group)
    std::string where;  // for the error
    std::string fix;
  };
  BackendSpec backend_spec(const std::string& name, const std::string& where) const;
  static c10::intrusive_ptr<compat::CollectiveBackend> create_backend(const BackendSpec& spec);
  c10::intrusive_ptr<compat::CollectiveBackend> make_backend(const std::string& name, const std::string& where) const;
  // The job's group's backend, created while this thread watches `peer_failure` and the stop
  // signal: a rank that died (or a SIGTERM that came) before the connections were made ends the
  // wait at once instead of after trainer.dist_timeout.
  c10::intrusive_ptr<compat::CollectiveBackend> make_backend_watching(const std::string& where,
                                                                      const PeerFailure& peer_failure);
  at::Tensor on_the_wire(const at::Tensor& tensor) const;
  // Waits for `work`; what went wrong, or nullopt.
  std::optional<std::string> wait_problem(const c10::intrusive_ptr<c10d::Work>& work);
  // The fix of a failed wait: another rank ended or hangs, and where to read its error.
  std::string fix_text() const;

  int rank_ = 0;
  int world_size_ = 1;
  int local_rank_ = 0;
  double timeout_seconds_ = 1800;
  std::string backend_name_;
  std::string master_addr_;
  PeerOutput peer_output_;
  std::vector<StderrLocation> stderr_locations_;  // every rank's, on rank 0 of a launcher's job
  struct Handles;                                 // the store and the backend
  std::unique_ptr<Handles> handles_;
};

}  // namespace trainer::engine
