#include "trainer/engine/distributed/pipeline_stage.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include <ATen/ATen.h>
#include <torch/cuda.h>
#include <torch/utils.h>

#include "trainer/engine/precision/autocast_guard.h"
#include "trainer/models/pipeline_split.h"
#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"
#include "trainer/util/fixed_text.h"

namespace trainer::engine {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// Tags keep a stage pair's messages apart: a micro-batch's activation and its gradient, an
// evaluation's activation, a checkpoint's tensors.
int forward_tag(int microbatch) { return 2 * microbatch; }
int backward_tag(int microbatch) { return 2 * microbatch + 1; }
constexpr int kEvaluationTag = 1 << 20;
constexpr int kGatherTag = 1 << 21;
// How many receives a stage keeps posted beyond the one it waits for (train_batch).
constexpr size_t kReceivesAhead = 1;

}  // namespace

bool pipeline_strategy(const config::ConfigView& root) {
  return root.has("trainer") && options::OptionReader(root.sub("trainer")).choice("strategy") == "pipeline";
}

PipelineOptions PipelineOptions::from_config(const config::ConfigView& root, int processes) {
  PipelineOptions o;
  const options::OptionReader p = options::OptionReader(root.sub("trainer")).sub("pipeline");
  o.stages = p.get<std::optional<int>>("stages").value_or(processes);
  if (o.stages < 2 || processes % o.stages != 0) {
    throw Error(p.where("stages"),
                std::to_string(processes) + " processes (trainer.devices) do not make whole pipelines of " +
                    std::to_string(o.stages) + " stages",
                "Use trainer.pipeline.stages=N with N >= 2 dividing trainer.devices.");
  }
  o.split_points = p.texts("split_points");
  o.balance_time = p.choice("balance") == "time";
  if (o.balance_time && !o.split_points.empty()) {
    throw Error(p.where("balance"), "balance=time cuts the model where trainer.pipeline.split_points already does",
                "Give one: split_points=null to cut by measured time, or drop balance=time to cut at the named "
                "modules.");
  }
  o.microbatches = p.get<std::optional<int>>("microbatches").value_or(2 * o.stages);
  o.schedule = pipeline_schedule_kind(p.choice("schedule"));
  const std::string transport = p.choice("transport");
  o.transport = transport == "shared_memory"   ? PipelineOptions::Transport::kSharedMemory
                : transport == "process_group" ? PipelineOptions::Transport::kProcessGroup
                                               : PipelineOptions::Transport::kAuto;
  return o;
}

PipelineStage::PipelineStage(models::Model& model, const std::string& model_name, const PipelineOptions& options,
                             ProcessGroup& group, int stage, int first_rank, Precision precision, at::Device device)
    : model_(model),
      model_name_(model_name),
      options_(options),
      group_(group),
      stage_(stage),
      first_rank_(first_rank),
      precision_(precision),
      device_(device),
      units_(model.pipeline_units()),
      receives_ahead_(group.backend_name() == "gloo" ? kReceivesAhead : 0) {
  if (units_.empty()) {
    throw Error("trainer.strategy=pipeline",
                "the " + model_name + " model cannot be cut into stages: it does not list its pieces in forward order",
                "Use model=mlp, cnn or resnet, or give your model's class a pipeline_units() (models/model.h); "
                "for data parallelism use trainer.strategy=ddp.");
  }
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  for (const models::PipelineUnit& unit : units_) {
    names.push_back(unit.name);
    int64_t count = 0;
    for (const auto& [name, module] : unit.modules) count += models::parameter_count(*module);
    sizes.push_back(count);
  }
  if (!options_.split_points.empty()) {
    if (static_cast<int>(options_.split_points.size()) != options_.stages - 1) {
      throw Error("trainer.pipeline.split_points",
                  std::to_string(options_.split_points.size()) + " split point(s) make " +
                      std::to_string(options_.split_points.size() + 1) + " stages, but the pipeline has " +
                      std::to_string(options_.stages),
                  "Give " + std::to_string(options_.stages - 1) +
                      " module names, one where each stage after the first starts, or null to balance by parameters.");
    }
    first_ = models::split_at_names(names, options_.split_points, model_name);
  } else {
    first_ = models::split_by_parameters(sizes, options_.stages, model_name);
  }
  first_.push_back(units_.size());
  count_parameters();
  check_every_tensor_in_a_piece();
}

void PipelineStage::check_every_tensor_in_a_piece() const {
  std::unordered_set<const c10::TensorImpl*> in_pieces;
  for (const models::PipelineUnit& unit : units_) {
    for (const auto& [name, module] : unit.modules) {
      for (const at::Tensor& p : module->parameters()) in_pieces.insert(p.unsafeGetTensorImpl());
      for (const at::Tensor& b : module->buffers()) in_pieces.insert(b.unsafeGetTensorImpl());
    }
  }
  auto check = [&](const std::string& name, const at::Tensor& tensor) {
    if (!tensor.defined() || in_pieces.count(tensor.unsafeGetTensorImpl()) > 0) return;
    throw Error("trainer.strategy=pipeline",
                "the " + model_name_ + " model's tensor " + name +
                    " belongs to none of the pieces it lists for a pipeline (pipeline_units()), so no stage would "
                    "hold or train it",
                "List the module that owns " + name +
                    " in the PipelineUnit whose forward uses it (models/model.h), or train with "
                    "trainer.strategy=ddp.");
  };
  for (const auto& parameter : model_.named_parameters(/*recurse=*/true)) check(parameter.key(), parameter.value());
  for (const auto& buffer : model_.named_buffers(/*recurse=*/true)) check(buffer.key(), buffer.value());
}

bool PipelineStage::placed_piece(size_t piece) const {
  return placed_ && piece >= first_[static_cast<size_t>(stage_)] && piece < first_[static_cast<size_t>(stage_) + 1];
}

void PipelineStage::place() {
  placed_ = true;
  for (size_t u = first_[static_cast<size_t>(stage_)]; u < first_[static_cast<size_t>(stage_) + 1]; ++u) {
    for (const auto& [name, module] : units_[u].modules) module->to(device_);
  }
}

at::Tensor PipelineStage::piece_by_piece(const at::Tensor& input,
                                         const std::function<at::Tensor(size_t piece, const at::Tensor& x)>& step) {
  at::Tensor x = input;
  for (size_t u = 0; u < units_.size(); ++u) {
    const bool visiting = !placed_piece(u) && !device_.is_cpu();
    auto leave = [&] {
      for (const auto& [name, module] : units_[u].modules) {
        for (at::Tensor& p : module->parameters()) p.mutable_grad() = at::Tensor();
        if (visiting) module->to(at::kCPU);
      }
    };
    if (visiting) {
      for (const auto& [name, module] : units_[u].modules) module->to(device_);
    }
    try {
      x = step(u, x);
    } catch (...) {
      leave();
      throw;
    }
    leave();
  }
  return x;
}

void PipelineStage::count_parameters() {
  parameter_counts_.clear();
  for (int s = 0; s < options_.stages; ++s) {
    int64_t count = 0;
    for (const at::Tensor& p : tensors_of(s, true)) count += p.numel();
    parameter_counts_.push_back(count);
  }
}

std::string PipelineStage::balance_by_time(const at::Tensor& microbatch) {
  if (!released_.empty() || placed_) throw std::logic_error("balance_by_time after place or release_others");
  const bool training = model_.is_training();
  model_.eval();  // running statistics stay, dropout draws nothing
  const bool cuda = microbatch.is_cuda();
  auto synchronize = [cuda] {
    if (cuda) torch::cuda::synchronize();
  };
  constexpr int kRuns = 3;  // after one warm-up; the median is kept
  std::vector<double> each(units_.size(), 0.0);
  piece_by_piece(microbatch, [&](size_t u, const at::Tensor& x) {
    std::vector<double> runs;
    at::Tensor next;
    for (int run = 0; run <= kRuns; ++run) {
      at::Tensor input = x.detach();
      if (u > 0 && input.is_floating_point()) input.requires_grad_();  // later stages send gradients back
      synchronize();
      const auto begin = Clock::now();
      at::Tensor y;
      {
        AutocastGuard autocast(precision_.device, precision_.autocast_dtype, precision_.autocast);
        y = units_[u].forward(input.clone());  // a piece may work in place on its input
      }
      if (y.requires_grad()) y.backward(at::ones_like(y));
      synchronize();
      if (run > 0) runs.push_back(seconds(begin));
      next = y.detach();
    }
    std::sort(runs.begin(), runs.end());
    each[u] = runs[runs.size() / 2];
    return next;
  });
  for (at::Tensor& p : model_.parameters()) p.mutable_grad() = at::Tensor();
  model_.train(training);
  at::Tensor times = at::tensor(each, at::TensorOptions().dtype(at::kDouble));
  if (cuda) times = times.to(microbatch.device());
  group_.allreduce_sum(times, "pipeline balance=time: the pieces' times");
  times = times.cpu() / static_cast<double>(group_.world_size());
  std::vector<int64_t> nanoseconds;
  std::string text;
  piece_seconds_.clear();
  for (size_t u = 0; u < units_.size(); ++u) {
    const double t = times[static_cast<int64_t>(u)].item<double>();
    piece_seconds_.push_back(t);
    nanoseconds.push_back(static_cast<int64_t>(std::llround(t * 1e9)));
    text += (u == 0 ? "" : ", ") + units_[u].name + " " + fixed_text(1000.0 * t, 3) + " ms";
  }
  first_ = models::split_by_parameters(nanoseconds, options_.stages, model_name_);
  first_.push_back(units_.size());
  count_parameters();
  return text;
}

void PipelineStage::release_others() {
  torch::NoGradGuard no_grad;
  if (released_.empty()) {
    released_.resize(static_cast<size_t>(options_.stages));
    std::unordered_set<const c10::TensorImpl*> own;  // a tensor shared with this stage stays
    for (const at::Tensor& tensor : tensors_of(stage_, false)) own.insert(tensor.unsafeGetTensorImpl());
    for (int s = 0; s < options_.stages; ++s) {
      if (s == stage_) continue;
      for (const at::Tensor& tensor : tensors_of(s, false)) {
        released_[static_cast<size_t>(s)].push_back({tensor, tensor.sizes().vec()});
        if (own.count(tensor.unsafeGetTensorImpl()) == 0) released_set_.insert(tensor.unsafeGetTensorImpl());
      }
    }
  }
  for (auto& tensors : released_) {
    for (Released& r : tensors) {
      if (!released(r.tensor)) continue;
      r.tensor.set_data(at::empty({0}, r.tensor.options()));
      r.tensor.mutable_grad() = at::Tensor();  // a probe's backward may have left one
    }
  }
}

bool PipelineStage::released(const at::Tensor& tensor) const {
  return tensor.defined() && released_set_.count(tensor.unsafeGetTensorImpl()) > 0;
}

std::vector<at::Tensor> PipelineStage::tensors_of(int stage, bool parameters_only) const {
  std::vector<at::Tensor> tensors;
  for (size_t u = first_[static_cast<size_t>(stage)]; u < first_[static_cast<size_t>(stage) + 1]; ++u) {
    for (const auto& [name, module] : units_[u].modules) {
      for (const at::Tensor& p : module->parameters()) tensors.push_back(p);
      if (parameters_only) continue;
      for (const at::Tensor& b : module->buffers()) tensors.push_back(b);
    }
  }
  return tensors;
}

std::vector<at::Tensor> PipelineStage::buffers() const {
  std::vector<at::Tensor> tensors;
  for (size_t u = first_[static_cast<size_t>(stage_)]; u < first_[static_cast<size_t>(stage_) + 1]; ++u) {
    for (const auto& [name, module] : units_[u].modules) {
      for (const at::Tensor& b : module->buffers()) tensors.push_back(b);
    }
  }
  return tensors;
}

std::string PipelineStage::describe(int stage) const {
  const auto s = static_cast<size_t>(stage);
  const int64_t count = parameter_count(stage);
  const std::string& first = units_[first_[s]].name;
  const std::string& last = units_[first_[s + 1] - 1].name;
  std::string measured;
  if (!piece_seconds_.empty()) {
    double total = 0;
    for (size_t u = first_[s]; u < first_[s + 1]; ++u) total += piece_seconds_[u];
    measured = ", " + fixed_text(1000.0 * total, 3) + " ms forward + backward a micro-batch";
  }
  return "stage " + std::to_string(stage) + " of " + std::to_string(options_.stages) + ": " + first +
         (first == last ? "" : " .. " + last) + " (" + models::with_thousands_separators(count) + " parameters" +
         measured + ")";
}

at::Tensor PipelineStage::run_pieces(const at::Tensor& input) {
  AutocastGuard autocast(precision_.device, precision_.autocast_dtype, precision_.autocast);
  at::Tensor x = input;
  for (size_t u = first_[static_cast<size_t>(stage_)]; u < first_[static_cast<size_t>(stage_) + 1]; ++u) {
    x = units_[u].forward(x);
  }
  return x;
}

void PipelineStage::probe_shapes(const at::Tensor& one_sample) {
  torch::NoGradGuard no_grad;
  const bool training = model_.is_training();
  model_.eval();
  AutocastGuard autocast(precision_.device, precision_.autocast_dtype, precision_.autocast);
  const size_t first = first_[static_cast<size_t>(stage_)];
  const size_t last = first_[static_cast<size_t>(stage_) + 1] - 1;
  piece_by_piece(one_sample, [&](size_t u, const at::Tensor& x) {
    if (u == first) {
      input_shape_.assign(x.sizes().begin() + 1, x.sizes().end());
      input_dtype_ = x.scalar_type();
    }
    at::Tensor y = units_[u].forward(x);
    if (u == last) {
      output_shape_.assign(y.sizes().begin() + 1, y.sizes().end());
      output_dtype_ = y.scalar_type();
    }
    return y;
  });
  model_.train(training);
}

void PipelineStage::probe_step(const at::Tensor& inputs, const std::function<at::Tensor(const at::Tensor&)>& loss) {
  piece_by_piece(inputs, [&](size_t u, const at::Tensor& x) {
    at::Tensor input = x.detach();
    if (u > 0 && input.is_floating_point()) input.requires_grad_();
    at::Tensor y;
    at::Tensor objective;
    {
      AutocastGuard autocast(precision_.device, precision_.autocast_dtype, precision_.autocast);
      y = units_[u].forward(input.clone());  // a piece may work in place on its input
      if (u + 1 == units_.size()) objective = loss(y);
    }
    if (objective.defined()) {
      objective.backward();
    } else if (y.requires_grad()) {
      y.backward(at::ones_like(y));
    }
    return y.detach();
  });
}

at::Tensor PipelineStage::forward_whole(const at::Tensor& inputs) {
  AutocastGuard autocast(precision_.device, precision_.autocast_dtype, precision_.autocast);
  return piece_by_piece(inputs, [&](size_t u, const at::Tensor& x) { return units_[u].forward(x); });
}

PipelineStage::Result PipelineStage::train_batch(const at::Tensor& inputs, const at::Tensor& targets,
                                                 const LossFn& loss, double objective_factor, const ScaleFn& scale,
                                                 const std::function<void(bool last)>& before_backward) {
  const auto start = Clock::now();
  const int64_t batch = targets.size(0);
  const int m = static_cast<int>(std::min<int64_t>(options_.microbatches, batch));
  std::vector<int64_t> offset(static_cast<size_t>(m) + 1, 0);
  for (int i = 0; i < m; ++i)
    offset[static_cast<size_t>(i) + 1] = offset[static_cast<size_t>(i)] + batch / m + (i < batch % m ? 1 : 0);
  std::vector<at::Tensor> leaf(static_cast<size_t>(m)), output(static_cast<size_t>(m));
  std::vector<at::Tensor> losses, outputs;
  std::vector<c10::intrusive_ptr<c10d::Work>> sends;
  std::vector<at::Tensor> sent;  // kept alive until their sends finish
  const std::vector<PipelineAction> actions = pipeline_actions(options_.schedule, stage_, options_.stages, m);
  // On Gloo, receives are posted ahead of the actions that need them (kReceivesAhead beyond the
  // one awaited, from the batch's start). Gloo writes a message from the sender's own thread only
  // when the receiver has already asked for it; a receive posted after the send instead costs a
  // round trip through the sender's event-loop thread, which must first get a core its compute
  // thread is using (measured: 1-7 ms a message on 2 cores). NCCL ignores the tags and runs a pair's
  // sends and receives in the order both sides issue them: there each receive is posted when it
  // is awaited, in the schedule's order.
  // A message whose pair of stages has a shared-memory link, and that fits its slots, goes
  // through it (both ends decide alike from its size), never through the process group.
  struct Receive {
    size_t action = 0;
    at::Tensor buffer;
    c10::intrusive_ptr<c10d::Work> work;
    SharedMemoryLink* link = nullptr;
  };
  std::vector<Receive> receives;
  for (size_t k = 0; k < actions.size(); ++k) {
    const bool forward = actions[k].kind == PipelineAction::Kind::kForward;
    if (forward ? !is_first() : !is_last())
      receives.push_back({k, {}, {}, forward ? link_previous_.get() : link_next_.get()});
  }
  size_t posted = 0;
  auto post_until = [&](size_t count) {
    for (; posted < std::min(count, receives.size()); ++posted) {
      Receive& r = receives[posted];
      const PipelineAction& action = actions[r.action];
      const auto i = static_cast<size_t>(action.microbatch);
      const bool forward = action.kind == PipelineAction::Kind::kForward;
      std::vector<int64_t> shape{offset[i + 1] - offset[i]};
      const std::vector<int64_t>& sample = forward ? input_shape_ : output_shape_;
      shape.insert(shape.end(), sample.begin(), sample.end());
      r.buffer =
          at::empty(shape, at::TensorOptions().dtype(forward ? input_dtype_ : output_dtype_).device(targets.device()));
      if (r.link != nullptr && r.link->fits(r.buffer.nbytes())) continue;  // received when awaited
      r.link = nullptr;
      r.work = forward ? group_.recv_async(r.buffer, peer(stage_ - 1), forward_tag(action.microbatch))
                       : group_.recv_async(r.buffer, peer(stage_ + 1), backward_tag(action.microbatch));
    }
  };
  post_until(receives_ahead_);
  size_t next_receive = 0;
  // The next receive's buffer (receives come in action order), once it has arrived.
  auto receive = [&](const PipelineAction& action) {
    post_until(next_receive + 1 + receives_ahead_);
    Receive& r = receives[next_receive++];
    const bool forward = action.kind == PipelineAction::Kind::kForward;
    const auto describe = [&] {
      return "pipeline receive of micro-batch " + std::to_string(action.microbatch) +
             (forward ? "'s activations from stage " + std::to_string(stage_ - 1)
                      : "'s gradients from stage " + std::to_string(stage_ + 1));
    };
    if (r.link != nullptr) {
      receive_through(*r.link, r.buffer, forward ? forward_tag(action.microbatch) : backward_tag(action.microbatch),
                      describe);
    } else {
      group_.wait_described(r.work, describe);
      r.work.reset();
    }
    return std::move(r.buffer);
  };
  for (const PipelineAction& action : actions) {
    const auto i = static_cast<size_t>(action.microbatch);
    const int64_t n = offset[i + 1] - offset[i];
    if (action.kind == PipelineAction::Kind::kForward) {
      at::Tensor x;
      if (is_first()) {
        x = inputs.narrow(0, offset[i], n);
      } else {
        leaf[i] = receive(action).requires_grad_();
        x = leaf[i].clone();  // the stage's first piece may work in place
      }
      const auto busy = Clock::now();
      at::Tensor y = run_pieces(x);
      if (is_last()) {
        const at::Tensor l = loss(y, targets.narrow(0, offset[i], n));
        const double share = static_cast<double>(n) / static_cast<double>(batch);
        losses.push_back(l.detach() * share);
        outputs.push_back(y.detach());
        output[i] = scale(l * (share * objective_factor));
      } else {
        output[i] = y;
      }
      forward_seconds_ += seconds(busy);  // the loss counts; the send is communication, not compute
      if (!is_last()) {
        at::Tensor message = y.detach().contiguous();
        if (link_next_ && link_next_->fits(message.nbytes())) {
          link_next_->send(message, forward_tag(action.microbatch));
        } else {
          sent.push_back(std::move(message));
          sends.push_back(group_.send_async(sent.back(), peer(stage_ + 1), forward_tag(action.microbatch)));
        }
      }
      continue;
    }
    at::Tensor gradient;
    if (!is_last()) gradient = receive(action);
    if (before_backward) before_backward(action.microbatch + 1 == m);
    const auto busy = Clock::now();
    if (is_last()) {
      output[i].backward();
    } else {
      output[i].backward(gradient);
    }
    backward_seconds_ += seconds(busy);
    if (!is_first()) {
      at::Tensor message = leaf[i].grad().contiguous();
      if (link_previous_ && link_previous_->fits(message.nbytes())) {
        link_previous_->send(message, backward_tag(action.microbatch));
      } else {
        sent.push_back(std::move(message));
        sends.push_back(group_.send_async(sent.back(), peer(stage_ - 1), backward_tag(action.microbatch)));
      }
    }
    output[i] = at::Tensor();
    leaf[i] = at::Tensor();
  }
  for (const auto& work : sends) group_.wait(work, "pipeline send");
  flush_links();
  total_seconds_ += seconds(start);
  ++batches_timed_;
  Result result;
  if (is_last()) {
    result.loss = losses.size() == 1 ? losses[0] : at::stack(losses).sum();
    result.outputs = outputs.size() == 1 ? outputs[0] : at::cat(outputs);
  }
  return result;
}

std::string PipelineStage::connect_links(int64_t largest_microbatch) {
  const auto bytes = [&](const std::vector<int64_t>& shape, c10::ScalarType dtype) {
    int64_t numel = largest_microbatch;
    for (const int64_t size : shape) numel *= size;
    return static_cast<size_t>(numel) * c10::elementSize(dtype);
  };
  const size_t previous_bytes = is_first() ? 0 : bytes(input_shape_, input_dtype_);
  const size_t next_bytes = is_last() ? 0 : bytes(output_shape_, output_dtype_);
  PipelineLinks links =
      connect_pipeline_links(group_, is_first() ? -1 : peer(stage_ - 1), previous_bytes,
                             is_last() ? -1 : peer(stage_ + 1), next_bytes, std::max(2, options_.microbatches));
  if (options_.transport == PipelineOptions::Transport::kSharedMemory && !links.all_connected) {
    throw Error("trainer.pipeline.transport=shared_memory",
                "not every pair of neighbouring stages could share memory: " + links.summary,
                "Run the stages on one host with room in /dev/shm, or use transport=auto (the process group where "
                "shared memory cannot be had).");
  }
  link_previous_ = std::move(links.previous);
  link_next_ = std::move(links.next);
  return links.summary;
}

template <typename Describe>
void PipelineStage::receive_through(SharedMemoryLink& link, at::Tensor& into, int tag, const Describe& describe) {
  const auto start = Clock::now();
  auto last_check = start;
  for (;;) {
    const uint32_t seen = link.doorbell();
    const bool queued = (link_previous_ && !link_previous_->flush()) | (link_next_ && !link_next_->flush());
    if (link.try_receive(into, tag)) return;
    const auto now = Clock::now();
    if (now - last_check >= std::chrono::milliseconds(50)) {
      last_check = now;
      if (std::optional<std::string> problem = link.peer_problem())
        group_.fail(describe(), "the other stage ended: " + *problem);
      if (seconds(start) > group_.timeout_seconds()) {
        group_.fail(describe(), "nothing arrived through shared memory within trainer.dist_timeout");
      }
    }
    // While a send waits for room in the other link's ring, its room is polled.
    link.sleep(seen, queued ? std::chrono::microseconds(200) : std::chrono::microseconds(50000));
  }
}

void PipelineStage::flush_links() {
  const auto start = Clock::now();
  for (SharedMemoryLink* link : {link_previous_.get(), link_next_.get()}) {
    if (link == nullptr) continue;
    for (;;) {
      const uint32_t seen = link->doorbell();
      if (link->flush()) break;
      if (std::optional<std::string> problem = link->peer_problem()) {
        group_.fail("pipeline send", "the other stage ended: " + *problem);
      }
      if (seconds(start) > group_.timeout_seconds()) {
        group_.fail("pipeline send", "no room freed in the shared-memory ring within trainer.dist_timeout");
      }
      link->sleep(seen, std::chrono::microseconds(50000));
    }
  }
}

at::Tensor PipelineStage::forward_only(const at::Tensor& inputs) {
  at::Tensor x = inputs;
  if (!is_first()) {
    std::vector<int64_t> shape{inputs.size(0)};
    shape.insert(shape.end(), input_shape_.begin(), input_shape_.end());
    x = at::empty(shape, at::TensorOptions().dtype(input_dtype_).device(inputs.device()));
    group_.wait(group_.recv_async(x, peer(stage_ - 1), kEvaluationTag),
                "pipeline receive of an evaluation batch from stage " + std::to_string(stage_ - 1));
  }
  at::Tensor y = run_pieces(x);
  if (is_last()) return y;
  y = y.contiguous();
  group_.wait(group_.send_async(y, peer(stage_ + 1), kEvaluationTag),
              "pipeline send of an evaluation batch to stage " + std::to_string(stage_ + 1));
  return {};
}

void PipelineStage::gather_to_first() {
  torch::NoGradGuard no_grad;
  if (is_first()) {
    for (int s = 1; s < options_.stages; ++s) {
      int tag = kGatherTag;
      const bool was_released = !released_.empty();
      for (at::Tensor& tensor : tensors_of(s, false)) {
        std::vector<int64_t> shape = tensor.sizes().vec();
        if (was_released) shape = released_[static_cast<size_t>(s)][static_cast<size_t>(tag - kGatherTag)].shape;
        // Received on the device (NCCL's), kept where the tensor lives (the host, for another
        // stage's): stage 0's device never holds the whole model.
        at::Tensor received = at::empty(shape, tensor.options().device(device_));
        group_.wait(group_.recv_async(received, peer(s), tag++),
                    "pipeline receive of stage " + std::to_string(s) + "'s weights for the checkpoint");
        tensor.set_data(tensor.device() == device_ ? received : received.to(tensor.device()));
      }
    }
    return;
  }
  int tag = kGatherTag;
  for (const at::Tensor& tensor : tensors_of(stage_, false)) {
    at::Tensor contiguous = tensor.detach().contiguous();
    group_.wait(group_.send_async(contiguous, peer(0), tag++), "pipeline send of this stage's weights to stage 0");
  }
}

}  // namespace trainer::engine
