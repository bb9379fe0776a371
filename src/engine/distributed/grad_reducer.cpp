#include "trainer/engine/distributed/grad_reducer.h"

#include <chrono>
#include <cstdio>
#include <mutex>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "trainer/engine/stop_signal.h"
#include "trainer/util/error.h"

namespace trainer::engine {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

struct GradReducer::State {
  struct Bucket {
    std::vector<size_t> members;  // parameter indices
    std::vector<int64_t> offsets;
    int64_t numel = 0;  // gradients only; bucket 0 holds two more elements, the flags
    at::Tensor flat;
    int pending = 0;
    bool launched = false;
    c10::intrusive_ptr<c10d::Work> work;
    Clock::time_point launch_time;
    std::shared_ptr<std::atomic<int64_t>> done_ns = std::make_shared<std::atomic<int64_t>>(0);
  };

  ProcessGroup* group = nullptr;
  std::vector<at::Tensor> parameters;
  std::vector<size_t> bucket_of;
  std::vector<Bucket> buckets;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;  // held: the hooks live on them
  std::function<LocalFlags()> local_flags;
  std::mutex mutex;  // hooks run on the autograd engine's threads
  bool sync = false;
  bool in_backward = false;
  bool stop = false;
  bool out_of_time = false;
  at::Tensor flags;  // a view of bucket 0's last two elements (after finish)
  Clock::time_point backward_start;
  Timing timing;

  void on_gradient_ready(size_t index) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!in_backward || !sync) return;
    Bucket& bucket = buckets[bucket_of[index]];
    if (bucket.launched) return;
    if (--bucket.pending == 0) launch(bucket_of[index]);
  }

  void launch(size_t b) {
    Bucket& bucket = buckets[b];
    for (size_t i = 0; i < bucket.members.size(); ++i) {
      const at::Tensor& p = parameters[bucket.members[i]];
      at::Tensor slice = bucket.flat.narrow(0, bucket.offsets[i], p.numel());
      const at::Tensor& grad = p.grad();
      if (grad.defined()) {
        slice.copy_(grad.reshape(-1));
      } else {
        slice.zero_();
      }
    }
    if (b == 0) {
      const LocalFlags local = local_flags ? local_flags() : LocalFlags{};
      bucket.flat.narrow(0, bucket.numel, 1).fill_(local.stop ? 1.0 : 0.0);
      bucket.flat.narrow(0, bucket.numel + 1, 1).fill_(local.out_of_time ? 1.0 : 0.0);
    }
    bucket.launched = true;
    bucket.launch_time = Clock::now();
    bucket.done_ns->store(0);
    bucket.work = group->allreduce_async(bucket.flat);
    try {
      auto done = bucket.done_ns;
      bucket.work->getFuture()->addCallback([done](c10::ivalue::Future&) {
        done->store(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
      });
    } catch (const std::exception&) {
      // No future on this backend: completion is timed when finish() sees it.
    }
  }
};

GradReducer::GradReducer(ProcessGroup& group, const std::vector<at::Tensor>& parameters, double bucket_cap_mb,
                         std::function<LocalFlags()> local_flags)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.group = &group;
  s.local_flags = std::move(local_flags);
  for (const at::Tensor& p : parameters) {
    if (p.requires_grad()) s.parameters.push_back(p);
  }
  s.bucket_of.assign(s.parameters.size(), 0);
  const auto cap_bytes = static_cast<int64_t>(bucket_cap_mb * 1024.0 * 1024.0);
  // Reverse order: backward produces the last layers' gradients first.
  int64_t bytes = 0;
  for (size_t k = s.parameters.size(); k-- > 0;) {
    const at::Tensor& p = s.parameters[k];
    const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
    bool fresh = s.buckets.empty();
    if (!fresh) {
      const at::Tensor& first = s.parameters[s.buckets.back().members.front()];
      fresh = bytes + size > cap_bytes || first.scalar_type() != p.scalar_type() || first.device() != p.device();
    }
    if (fresh) {
      s.buckets.emplace_back();
      bytes = 0;
    }
    State::Bucket& bucket = s.buckets.back();
    bucket.members.push_back(k);
    bucket.offsets.push_back(bucket.numel);
    bucket.numel += p.numel();
    bytes += size;
    s.bucket_of[k] = s.buckets.size() - 1;
  }
  for (size_t b = 0; b < s.buckets.size(); ++b) {
    State::Bucket& bucket = s.buckets[b];
    const at::Tensor& first = s.parameters[bucket.members.front()];
    // bfloat16 gradients on Gloo are summed in float32 (process_group.h); the copies in and out
    // convert.
    bucket.flat = at::zeros({bucket.numel + (b == 0 ? 2 : 0)},
                            first.options().dtype(group.reduction_dtype(first.scalar_type())).requires_grad(false));
  }
  std::weak_ptr<State> weak = state_;
  struct ReadyHook final : torch::autograd::FunctionPostHook {
    ReadyHook(std::weak_ptr<State> owner, size_t i) : state(std::move(owner)), index(i) {}
    torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                              const torch::autograd::variable_list& /*inputs*/) override {
      if (auto locked = state.lock()) locked->on_gradient_ready(index);
      return outputs;
    }
    std::weak_ptr<State> state;
    size_t index;
  };
  for (size_t k = 0; k < s.parameters.size(); ++k) {
    std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::grad_accumulator(s.parameters[k]);
    if (!accumulator) {
      throw Error("distributed gradient reducer", "parameter " + std::to_string(k) + " has no gradient accumulator",
                  "Only leaf parameters that require gradients can be trained data-parallel.");
    }
    accumulator->add_post_hook(std::make_unique<ReadyHook>(weak, k));
    s.accumulators.push_back(std::move(accumulator));
  }
}

GradReducer::~GradReducer() = default;

void GradReducer::prepare(bool sync) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.sync = sync;
  s.in_backward = true;
  s.backward_start = Clock::now();
  for (State::Bucket& bucket : s.buckets) {
    bucket.pending = static_cast<int>(bucket.members.size());
    bucket.launched = false;
    bucket.work.reset();
  }
}

void GradReducer::finish() {
  State& s = *state_;
  const auto backward_end = Clock::now();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.in_backward = false;
    for (size_t b = 0; b < s.buckets.size(); ++b) {
      if (!s.buckets[b].launched) s.launch(b);  // parameters without a gradient this step
    }
  }
  const double world = static_cast<double>(s.group->world_size());
  for (size_t b = 0; b < s.buckets.size(); ++b) {
    State::Bucket& bucket = s.buckets[b];
    const auto wait_start = Clock::now();
    s.group->wait(bucket.work, "gradient all-reduce");
    const auto wait_end = Clock::now();
    s.timing.wait_seconds += seconds_between(wait_start, wait_end);
    const int64_t done_ns = bucket.done_ns->load();
    const Clock::time_point done =
        done_ns > 0 ? Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(done_ns)))
                    : wait_end;
    s.timing.comm_seconds += std::max(0.0, seconds_between(bucket.launch_time, done));
    s.timing.hidden_seconds += std::max(0.0, seconds_between(bucket.launch_time, std::min(done, backward_end)));
    bucket.work.reset();
    bucket.flat.div_(world);
    for (size_t i = 0; i < bucket.members.size(); ++i) {
      at::Tensor& p = s.parameters[bucket.members[i]];
      at::Tensor slice = bucket.flat.narrow(0, bucket.offsets[i], p.numel()).view(p.sizes());
      if (p.grad().defined()) {
        p.mutable_grad().copy_(slice);
      } else {
        p.mutable_grad() = slice.to(p.scalar_type(), /*non_blocking=*/false, /*copy=*/true);
      }
    }
  }
  s.timing.backward_seconds += seconds_between(s.backward_start, backward_end);
  ++s.timing.steps;
  if (!s.buckets.empty()) {
    State::Bucket& first = s.buckets.front();
    s.flags = first.flat.narrow(0, first.numel, 2);
    if (!s.flags.is_cuda()) {  // CPU: a plain memory read, no device to wait for
      at::Tensor values = s.flags.to(at::kDouble);
      s.stop = values.data_ptr<double>()[0] > 0.0;
      s.out_of_time = values.data_ptr<double>()[1] > 0.0;
    }
  }
}

bool GradReducer::stop_requested() const {
  const State& s = *state_;
  const bool stop = s.flags.defined() && s.flags.is_cuda() ? s.flags[0].item<double>() > 0.0 : s.stop;
  // A peer's stop is this job's stop too: the result says interrupted, not failed (engine_c_abi.h).
  if (stop) record_stop_from_peer();
  return stop;
}

bool GradReducer::out_of_time() const {
  const State& s = *state_;
  if (s.flags.defined() && s.flags.is_cuda()) return s.flags[1].item<double>() > 0.0;
  return s.out_of_time;
}

size_t GradReducer::bucket_count() const { return state_->buckets.size(); }

GradReducer::Timing GradReducer::timing() const { return state_->timing; }

std::string GradReducer::describe_timing() const {
  const Timing t = timing();
  if (t.steps == 0) return "gradient all-reduce: no synchronised step";
  char text[320];
  std::snprintf(text, sizeof(text),
                "gradient all-reduce: %zu bucket(s), %lld steps; per step %.2f ms in flight, %.2f ms waited for "
                "after backward (backward %.2f ms); %.0f%% of the all-reduce time hidden behind backward",
                bucket_count(), static_cast<long long>(t.steps), 1e3 * t.comm_seconds / t.steps,
                1e3 * t.wait_seconds / t.steps, 1e3 * t.backward_seconds / t.steps,
                t.comm_seconds > 0 ? 100.0 * t.hidden_seconds / t.comm_seconds : 0.0);
  return text;
}

void broadcast_module_state(ProcessGroup& group, const std::vector<at::Tensor>& parameters,
                            const std::vector<at::Tensor>& buffers) {
  std::vector<at::Tensor> all;
  for (const at::Tensor& t : parameters) all.push_back(t.detach());
  for (const at::Tensor& t : buffers) all.push_back(t.detach());
  group.broadcast_from_main(all, "broadcast of rank 0's parameters and buffers");
}

}  // namespace trainer::engine
