#include "trainer/engine/tuner/trial_memory_meter.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include "trainer/engine/torch_compat.h"
#include "trainer/util/error.h"

#if TRAINER_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace trainer::engine {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Wraps the CPU allocator in use and counts the bytes its allocations hold, now and at the peak.
// Allocations keep the raw-pointer form (data == context, one deleter for all) because LibTorch's
// oneDNN glue allocates and frees through raw_allocate/raw_deallocate; the size of each live
// allocation sits in a table. A tensor made while the meter was installed is counted down whenever
// it dies, even after the previous allocator is back, so the one instance lives for the whole
// process. A pointer the table does not know (made before the meter) is just freed.
class CountingCpuAllocator final : public c10::Allocator {
 public:
  static CountingCpuAllocator& instance() {
    static auto* allocator = new CountingCpuAllocator();  // never destroyed: see above
    return *allocator;
  }

  // Wraps `inner`; false when it has no raw deleter to free through.
  bool wrap(c10::Allocator* inner) {
    if (inner == this) return true;
    if (inner->raw_deleter() == nullptr) return false;
    inner_ = inner;
    inner_delete_ = inner->raw_deleter();
    return true;
  }
  c10::Allocator* inner() const { return inner_; }
  long long live() const { return live_.load(std::memory_order_relaxed); }
  long long peak() const { return peak_.load(std::memory_order_relaxed); }
  // A new trial: the peak starts from what is held now; allocations above `cap` bytes held in
  // all (0: no cap) are refused.
  void start_trial(long long cap) {
    peak_.store(live(), std::memory_order_relaxed);
    cap_.store(cap, std::memory_order_relaxed);
    refused_.store(false, std::memory_order_relaxed);
  }
  // Whether an allocation was refused for the cap since the trial started.
  bool refused() const { return refused_.load(std::memory_order_relaxed); }
  void clear_cap() { cap_.store(0, std::memory_order_relaxed); }

  c10::DataPtr allocate(size_t bytes) TRAINER_ALLOCATE_CONST override {
    const long long size = static_cast<long long>(bytes);
    const long long now = live_.fetch_add(size, std::memory_order_relaxed) + size;
    raise_peak(now);
    const long long cap = cap_.load(std::memory_order_relaxed);
    if (cap > 0 && now > cap) {
      live_.fetch_sub(size, std::memory_order_relaxed);
      refused_.store(true, std::memory_order_relaxed);
      // The wording of LibTorch's own CPU allocator failure, which callers recognise.
      TORCH_CHECK(false, "DefaultCPUAllocator: not enough memory: tensors would take ", static_cast<double>(now) / kMiB,
                  " MiB in all, above the batch-size trial's limit");
    }
    void* data = nullptr;
    try {
      data = inner_->raw_allocate(bytes);
    } catch (...) {
      live_.fetch_sub(size, std::memory_order_relaxed);
      throw;
    }
    if (data == nullptr) {
      live_.fetch_sub(size, std::memory_order_relaxed);
    } else {
      std::lock_guard<std::mutex> lock(mutex_);
      sizes_[data] = size;
    }
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
#if TRAINER_ALLOCATOR_HAS_COPY_DATA
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
#endif

 private:
  static void release(void* data) {
    CountingCpuAllocator& self = instance();
    if (data == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(self.mutex_);
      auto found = self.sizes_.find(data);
      if (found != self.sizes_.end()) {
        self.live_.fetch_sub(found->second, std::memory_order_relaxed);
        self.sizes_.erase(found);
      }
    }
    self.inner_delete_(data);
  }
  void raise_peak(long long now) const {
    long long seen = peak_.load(std::memory_order_relaxed);
    while (now > seen && !peak_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }

  c10::Allocator* inner_ = nullptr;
  c10::DeleterFnPtr inner_delete_ = nullptr;
  mutable std::mutex mutex_;
  mutable std::unordered_map<void*, long long> sizes_;
  mutable std::atomic<long long> live_{0};
  mutable std::atomic<long long> peak_{0};
  std::atomic<long long> cap_{0};
  mutable std::atomic<bool> refused_{false};
};

// SetCPUAllocator replaces only an allocator registered with a priority at or below its own.
constexpr uint8_t kPriority = std::numeric_limits<uint8_t>::max();

}  // namespace

TrialMemoryMeter::TrialMemoryMeter(const c10::Device& device) : device_(device) {
  if (!device_.is_cpu()) return;
  CountingCpuAllocator& counting = CountingCpuAllocator::instance();
  if (!counting.wrap(c10::GetCPUAllocator())) {
    throw Error("batch size search", "the CPU allocator in use has no raw deleter, so trial memory cannot be counted",
                "Run the search with LibTorch's default CPU allocator.");
  }
  c10::SetCPUAllocator(&counting, kPriority);
}

TrialMemoryMeter::~TrialMemoryMeter() {
  if (!device_.is_cpu()) return;
  CountingCpuAllocator::instance().clear_cap();
  c10::SetCPUAllocator(CountingCpuAllocator::instance().inner(), kPriority);
}

void TrialMemoryMeter::start(double limit_mb) {
  if (device_.is_cpu()) {
    CountingCpuAllocator& counting = CountingCpuAllocator::instance();
    baseline_ = counting.live();
    counting.start_trial(limit_mb > 0 ? baseline_ + static_cast<long long>(limit_mb * kMiB) : 0);
    return;
  }
#if TRAINER_WITH_CUDA
  c10::cuda::CUDACachingAllocator::emptyCache();
  c10::cuda::CUDACachingAllocator::resetPeakStats(device_.index());
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_.index());
  baseline_ = stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].current;
#endif
}

double TrialMemoryMeter::peak_mb() const {
  long long peak = baseline_;
  if (device_.is_cpu()) {
    peak = CountingCpuAllocator::instance().peak();
  } else {
#if TRAINER_WITH_CUDA
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_.index());
    peak = stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
#endif
  }
  return static_cast<double>(std::max(0LL, peak - baseline_)) / kMiB;
}

bool TrialMemoryMeter::refused() const { return device_.is_cpu() && CountingCpuAllocator::instance().refused(); }

double default_cpu_trial_limit_mb() {
  std::FILE* file = std::fopen("/proc/meminfo", "r");
  if (file == nullptr) return 0;
  char line[256];
  double mb = 0;
  while (std::fgets(line, sizeof line, file) != nullptr) {
    if (std::strncmp(line, "MemAvailable:", 13) == 0) {
      mb = std::strtod(line + 13, nullptr) / 1024.0 / 2.0;
      break;
    }
  }
  std::fclose(file);
  return mb;
}

}  // namespace trainer::engine
