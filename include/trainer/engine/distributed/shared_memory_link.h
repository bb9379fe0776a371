// A channel in shared memory between two neighbouring pipeline stages on one host's CPUs
// (trainer.pipeline.transport): a micro-batch's activations go one way and its gradients the
// other through two rings of fixed slots in one mapped file, with no thread between the two
// training threads. The sender copies a tensor into the next free slot (or queues it while the
// ring is full) and rings the receiver's doorbell, a futex it sleeps on after a short spin.
// Messages arrive in the order they were sent; each names its tag, which the receiver checks.
// The file is unlinked once both ends have mapped it, so a killed job leaves nothing in /dev/shm.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

namespace trainer::engine {

class ProcessGroup;

class SharedMemoryLink {
 public:
  // Which end: the creator (the lower rank) sends on ring 0 and receives on ring 1.
  enum class End { kCreator, kOpener };

  // Creates the file `name` (shm_open's, "/trainer-...") with two rings of `slots` slots of
  // `slot_bytes` each, its pages reserved up front so that a full /dev/shm is an error here and
  // never a SIGBUS later. nullptr, with `why` set, when it cannot.
  static std::unique_ptr<SharedMemoryLink> create(const std::string& name, size_t slot_bytes, int slots,
                                                  std::string& why);
  // Maps the file another process created, after checking it was made for the same sizes.
  static std::unique_ptr<SharedMemoryLink> open(const std::string& name, size_t slot_bytes, int slots,
                                                std::string& why);
  ~SharedMemoryLink();
  SharedMemoryLink(const SharedMemoryLink&) = delete;
  SharedMemoryLink& operator=(const SharedMemoryLink&) = delete;

  // Removes the file's name (the mappings stay): the creator calls it once the opener has mapped
  // the file, or has given up.
  void unlink_name();

  size_t slot_bytes() const { return slot_bytes_; }
  int slots() const { return slots_; }
  // Whether a message of `bytes` goes through this link (both ends decide alike from the size).
  bool fits(size_t bytes) const { return bytes <= slot_bytes_; }
  // The other end's process id (0 until it has mapped the file).
  int peer_pid() const;

  // Copies `tensor` (contiguous, on the CPU) into the outgoing ring, or queues it, kept alive,
  // while the ring is full; queued messages go out from flush().
  void send(const at::Tensor& tensor, int tag);
  // Writes queued messages while the ring has room; true when none is left.
  bool flush();
  bool has_queued() const { return !queued_.empty(); }
  // Copies the next incoming message into `into` (contiguous, on the CPU) when one has arrived:
  // true; false when none has. The message must have `tag` and `into`'s size: anything else
  // means the two ends' schedules disagree (std::logic_error).
  bool try_receive(at::Tensor& into, int tag);

  // This end's doorbell: read it before checking for work, then sleep() on the value read, so
  // that a message or a freed slot that came in between is never slept through.
  uint32_t doorbell() const;
  // Waits until the doorbell moves from `seen`, or at most `longest`: spins a few microseconds,
  // then sleeps on the futex.
  void sleep(uint32_t seen, std::chrono::microseconds longest) const;
  // What is wrong with the other end ("pid 7 has ended"), or nullopt while it runs.
  std::optional<std::string> peer_problem() const;

 private:
  struct Header;  // the file's first bytes: sizes, process ids, the rings' counters, the doorbells
  // The file's size: the header, then each ring's slots.
  static size_t file_bytes(size_t slot_bytes, int slots);
  SharedMemoryLink(void* base, size_t bytes, End end, size_t slot_bytes, int slots, std::string name);
  unsigned char* slot(int ring, uint32_t index) const;
  void write(const at::Tensor& tensor, int tag);
  void ring_peer();

  void* base_ = nullptr;
  size_t mapped_bytes_ = 0;
  End end_;
  size_t slot_bytes_ = 0;
  int slots_ = 0;
  std::string name_;
  bool unlinked_ = false;
  struct Queued {
    at::Tensor tensor;
    int tag;
  };
  std::deque<Queued> queued_;
};

// A stage's links to its neighbours (null where there is none, or where shared memory could not
// be had) and a line saying what was made.
struct PipelineLinks {
  std::unique_ptr<SharedMemoryLink> previous;
  std::unique_ptr<SharedMemoryLink> next;
  bool all_connected = false;  // every neighbouring pair of the job has its link
  std::string summary;
};

// Every rank of `group` calls it together. Rank r makes the file of its link to rank
// `next_rank` (-1: none), sized for `next_bytes` a message; it opens its previous neighbour's
// (`previous_rank`, -1: none) sized `previous_bytes`. A ring has a slot for each of up to
// `most_slots` messages (at least 2), fewer where 256 MiB a pair would not hold them. A pair whose ends cannot both map
// the file (another host, /dev/shm full or missing) keeps to the process group; the ranks agree on that through it.
PipelineLinks connect_pipeline_links(ProcessGroup& group, int previous_rank, size_t previous_bytes, int next_rank,
                                     size_t next_bytes, int most_slots);

}  // namespace trainer::engine
