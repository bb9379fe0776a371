#include "trainer/engine/distributed/shared_memory_link.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <new>
#include <random>
#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>

#include "trainer/engine/distributed/process_group.h"

namespace trainer::engine {
namespace {

constexpr uint64_t kMagic = 0x3170697065726e74ULL;  // "trnepip1", little-endian
constexpr size_t kLine = 64;                        // a cache line: counters and slots start on one

size_t round_up(size_t bytes) { return (bytes + kLine - 1) / kLine * kLine; }

// One counter on its own cache line, so that the two ends never write the same line.
struct alignas(kLine) Counter {
  std::atomic<uint32_t> value{0};
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "counters shared between processes must be lock-free");
static_assert(sizeof(Counter) == kLine);

// Each slot starts with its message's tag and size.
struct SlotHeader {
  int64_t tag;
  uint64_t bytes;
};

long futex(std::atomic<uint32_t>& word, int operation, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), operation, value, timeout, nullptr, 0);
}

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// Whether process `pid` has ended: gone, or a zombie its parent has not yet reaped.
bool ended(int pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;  // no /proc: kill() alone says
  const size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  const char state = line[close + 2];
  return state == 'Z' || state == 'X';
}

}  // namespace

struct SharedMemoryLink::Header {
  uint64_t magic;
  uint64_t slot_bytes;
  uint64_t slots;
  std::atomic<int32_t> pid[2];  // by end
  Counter written[2];           // by ring: messages written into it
  Counter read[2];              // by ring: messages read out of it
  Counter bell[2];              // by end: moves when a message or a free slot comes in for it
  Counter sleeping[2];          // by end: 1 while it sleeps on its bell
};

namespace {

size_t slot_stride(size_t slot_bytes) { return kLine + round_up(slot_bytes); }

}  // namespace

size_t SharedMemoryLink::file_bytes(size_t slot_bytes, int slots) {
  return round_up(sizeof(Header)) + 2 * static_cast<size_t>(slots) * slot_stride(slot_bytes);
}

SharedMemoryLink::SharedMemoryLink(void* base, size_t bytes, End end, size_t slot_bytes, int slots, std::string name)
    : base_(base), mapped_bytes_(bytes), end_(end), slot_bytes_(slot_bytes), slots_(slots), name_(std::move(name)) {}

std::unique_ptr<SharedMemoryLink> SharedMemoryLink::create(const std::string& name, size_t slot_bytes, int slots,
                                                           std::string& why) {
  const size_t bytes = file_bytes(slot_bytes, slots);
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    why = errno_text("cannot create /dev/shm" + name);
    return nullptr;
  }
  auto give_up = [&](const std::string& what) -> std::unique_ptr<SharedMemoryLink> {
    why = errno_text(what);
    close(fd);
    shm_unlink(name.c_str());
    return nullptr;
  };
  // Reserves the pages: beyond a tmpfs's size a write to a mapping is a SIGBUS, not an error.
  if (const int error = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); error != 0) {
    errno = error;
    return give_up("cannot reserve " + std::to_string(bytes >> 10) + " KiB in /dev/shm");
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return give_up("cannot map /dev/shm" + name);
  close(fd);
  auto* header = new (base) Header{};
  header->slot_bytes = slot_bytes;
  header->slots = static_cast<uint64_t>(slots);
  header->pid[0].store(static_cast<int32_t>(getpid()));
  header->magic = kMagic;
  return std::unique_ptr<SharedMemoryLink>(new SharedMemoryLink(base, bytes, End::kCreator, slot_bytes, slots, name));
}

std::unique_ptr<SharedMemoryLink> SharedMemoryLink::open(const std::string& name, size_t slot_bytes, int slots,
                                                         std::string& why) {
  const size_t bytes = file_bytes(slot_bytes, slots);
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) {
    why = errno_text("cannot open /dev/shm" + name + " (the neighbouring stage runs on another host?)");
    return nullptr;
  }
  struct stat status {};
  if (fstat(fd, &status) != 0 || static_cast<size_t>(status.st_size) != bytes) {
    why = "/dev/shm" + name + " has " + std::to_string(status.st_size) + " bytes, not the " + std::to_string(bytes) +
          " expected";
    close(fd);
    return nullptr;
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    why = errno_text("cannot map /dev/shm" + name);
    return nullptr;
  }
  auto* header = static_cast<Header*>(base);
  if (header->magic != kMagic || header->slot_bytes != slot_bytes || header->slots != static_cast<uint64_t>(slots)) {
    why = "/dev/shm" + name + " was made for other messages";
    munmap(base, bytes);
    return nullptr;
  }
  header->pid[1].store(static_cast<int32_t>(getpid()));
  return std::unique_ptr<SharedMemoryLink>(new SharedMemoryLink(base, bytes, End::kOpener, slot_bytes, slots, name));
}

SharedMemoryLink::~SharedMemoryLink() {
  if (end_ == End::kCreator) unlink_name();
  munmap(base_, mapped_bytes_);
}

void SharedMemoryLink::unlink_name() {
  if (unlinked_) return;
  unlinked_ = true;
  shm_unlink(name_.c_str());
}

int SharedMemoryLink::peer_pid() const {
  return static_cast<const Header*>(base_)->pid[end_ == End::kCreator ? 1 : 0].load();
}

unsigned char* SharedMemoryLink::slot(int ring, uint32_t index) const {
  const size_t position =
      static_cast<size_t>(ring) * static_cast<size_t>(slots_) + index % static_cast<uint32_t>(slots_);
  return static_cast<unsigned char*>(base_) + round_up(sizeof(Header)) + position * slot_stride(slot_bytes_);
}

void SharedMemoryLink::ring_peer() {
  auto* header = static_cast<Header*>(base_);
  const int peer = end_ == End::kCreator ? 1 : 0;
  header->bell[peer].value.fetch_add(1);
  if (header->sleeping[peer].value.load() != 0) futex(header->bell[peer].value, FUTEX_WAKE, 1, nullptr);
}

void SharedMemoryLink::send(const at::Tensor& tensor, int tag) {
  if (!tensor.is_cpu() || !tensor.is_contiguous() || !fits(tensor.nbytes())) {
    throw std::logic_error("SharedMemoryLink::send: a contiguous CPU tensor of at most the slot's bytes");
  }
  queued_.push_back({tensor, tag});
  flush();
}

bool SharedMemoryLink::flush() {
  auto* header = static_cast<Header*>(base_);
  const int ring = end_ == End::kCreator ? 0 : 1;
  while (!queued_.empty()) {
    const uint32_t written = header->written[ring].value.load(std::memory_order_relaxed);  // only this end writes it
    if (written - header->read[ring].value.load(std::memory_order_acquire) >= static_cast<uint32_t>(slots_)) {
      return false;
    }
    const Queued& message = queued_.front();
    unsigned char* place = slot(ring, written);
    const SlotHeader slot_header{message.tag, static_cast<uint64_t>(message.tensor.nbytes())};
    std::memcpy(place, &slot_header, sizeof slot_header);
    std::memcpy(place + kLine, message.tensor.data_ptr(), message.tensor.nbytes());
    header->written[ring].value.store(written + 1, std::memory_order_release);
    queued_.pop_front();
    ring_peer();
  }
  return true;
}

bool SharedMemoryLink::try_receive(at::Tensor& into, int tag) {
  auto* header = static_cast<Header*>(base_);
  const int ring = end_ == End::kCreator ? 1 : 0;
  const uint32_t read = header->read[ring].value.load(std::memory_order_relaxed);  // only this end writes it
  if (header->written[ring].value.load(std::memory_order_acquire) == read) return false;
  const unsigned char* place = slot(ring, read);
  SlotHeader slot_header{};
  std::memcpy(&slot_header, place, sizeof slot_header);
  if (slot_header.tag != tag || slot_header.bytes != into.nbytes() || !into.is_cpu() || !into.is_contiguous()) {
    throw std::logic_error("SharedMemoryLink: message " + std::to_string(slot_header.tag) + " of " +
                           std::to_string(slot_header.bytes) + " bytes arrived where " + std::to_string(tag) + " of " +
                           std::to_string(into.nbytes()) + " was expected");
  }
  std::memcpy(into.data_ptr(), place + kLine, slot_header.bytes);
  header->read[ring].value.store(read + 1, std::memory_order_release);
  ring_peer();
  return true;
}

uint32_t SharedMemoryLink::doorbell() const {
  return static_cast<const Header*>(base_)->bell[end_ == End::kCreator ? 0 : 1].value.load();
}

void SharedMemoryLink::sleep(uint32_t seen, std::chrono::microseconds longest) const {
  auto* header = static_cast<Header*>(base_);
  const int own = end_ == End::kCreator ? 0 : 1;
  std::atomic<uint32_t>& bell = header->bell[own].value;
  // A short spin first: the other stage's message is often microseconds away, and a futex
  // wake-up costs tens of them.
  constexpr auto kSpin = std::chrono::microseconds(20);
  const auto start = std::chrono::steady_clock::now();
  while (bell.load(std::memory_order_acquire) == seen) {
    if (std::chrono::steady_clock::now() - start >= std::min<std::chrono::microseconds>(kSpin, longest)) break;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  if (bell.load() != seen) return;
  // The waker moves the bell, then looks at `sleeping`; this end sets `sleeping`, then looks at
  // the bell again (futex_wait compares it too): one of the two sees the other.
  header->sleeping[own].value.store(1);
  if (bell.load() == seen) {
    const auto remaining =
        longest - std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
    if (remaining.count() > 0) {
      timespec timeout{static_cast<time_t>(remaining.count() / 1000000),
                       static_cast<long>(remaining.count() % 1000000) * 1000};
      futex(bell, FUTEX_WAIT, seen, &timeout);
    }
  }
  header->sleeping[own].value.store(0);
}

std::optional<std::string> SharedMemoryLink::peer_problem() const {
  const int pid = peer_pid();
  if (pid > 0 && ended(pid)) return "its process (pid " + std::to_string(pid) + ") has ended";
  return std::nullopt;
}

PipelineLinks connect_pipeline_links(ProcessGroup& group, int previous_rank, size_t previous_bytes, int next_rank,
                                     size_t next_bytes, int most_slots) {
  // A slot for every message a batch sends one way (most_slots), as far as kLinkBudget lets a
  // pair's two rings go; both ends of a pair compute the same count from the same size.
  constexpr size_t kLinkBudget = size_t{256} << 20;
  const auto slots_for = [&](size_t bytes) {
    return static_cast<int>(std::clamp<size_t>(kLinkBudget / (2 * std::max<size_t>(bytes, 1)), 2,
                                               static_cast<size_t>(std::max(2, most_slots))));
  };
  std::random_device random;
  const std::string token =
      group.share_string("pipeline/shared-memory", std::to_string(getpid()) + "-" + std::to_string(random()));
  auto name_of = [&](int rank) { return "/trainer-pipeline-" + token + "-" + std::to_string(rank); };
  PipelineLinks links;
  std::string why;
  if (next_rank >= 0)
    links.next = SharedMemoryLink::create(name_of(group.rank()), next_bytes, slots_for(next_bytes), why);
  group.barrier("pipeline shared-memory files");
  if (previous_rank >= 0)
    links.previous = SharedMemoryLink::open(name_of(previous_rank), previous_bytes, slots_for(previous_bytes), why);
  // Each end must see the other's process, to notice when it ends (ranks in other PID namespaces
  // sharing a /dev/shm would not).
  const auto peer_invisible = [&](const std::unique_ptr<SharedMemoryLink>& link) {
    if (!link || !link->peer_problem()) return false;
    why = "the other stage's process (pid " + std::to_string(link->peer_pid()) + ") is not visible from here";
    return true;
  };
  if (peer_invisible(links.previous)) links.previous.reset();
  group.barrier("pipeline shared-memory files opened");
  if (peer_invisible(links.next)) links.next.reset();
  // Per rank: whether it has a next stage, and how many ends of that link are mapped.
  const int64_t world = group.world_size();
  at::Tensor flags = at::zeros({2, world}, at::TensorOptions().dtype(at::kDouble));
  if (next_rank >= 0) flags[0][group.rank()] = 1.0;
  if (links.next) flags[1][group.rank()] += 1.0;
  if (links.previous) flags[1][previous_rank] += 1.0;
  group.allreduce_sum(flags, "pipeline shared-memory agreement");
  if (links.next) {
    if (flags[1][group.rank()].item<double>() == 2.0) {
      links.next->unlink_name();
    } else {
      links.next.reset();
    }
  }
  if (links.previous && flags[1][previous_rank].item<double>() != 2.0) links.previous.reset();
  int64_t pairs = 0;
  int64_t connected = 0;
  for (int64_t r = 0; r < world; ++r) {
    pairs += flags[0][r].item<double>() > 0 ? 1 : 0;
    connected += flags[1][r].item<double>() == 2.0 ? 1 : 0;
  }
  links.all_connected = connected == pairs;
  const size_t slot_bytes = next_rank >= 0 ? next_bytes : previous_bytes;
  const std::string slot_text = slot_bytes >= (1 << 20) ? std::to_string(slot_bytes >> 20) + " MiB"
                                                        : std::to_string((slot_bytes + 1023) >> 10) + " KiB";
  links.summary = std::to_string(connected) + " of " + std::to_string(pairs) +
                  " pair(s) of neighbouring stages through shared memory (this rank's " +
                  (next_rank >= 0 ? "next" : "previous") + " link: two rings of " +
                  std::to_string(slots_for(slot_bytes)) + " slots of " + slot_text + ")";
  if (!links.all_connected) {
    links.summary += "; the others through the process group" + (why.empty() ? std::string() : " (" + why + ")");
  }
  return links;
}

}  // namespace trainer::engine
