// trainer.strategy=pipeline: this process's stage of a model cut into stages (GPipe and 1F1B,
// pipeline_schedule.h). Every process builds the whole model on the host from the same seed and
// takes only its stage's pieces (models::PipelineUnit) to its device (place): a model larger than
// one device still starts. Each then frees the other stages' weights (release_others), runs only
// its stage's pieces and optimises only their parameters. A batch is cut
// into micro-batches: activations go forward and their gradients backward with point-to-point
// sends and receives on the job's process group (Gloo on CPU, NCCL on CUDA), or, between
// neighbouring stages on one host's CPUs, through shared memory (shared_memory_link.h). Loss and
// metrics come out of the last stage.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include "trainer/config/config_view.h"
#include "trainer/engine/distributed/pipeline_schedule.h"
#include "trainer/engine/distributed/process_group.h"
#include "trainer/engine/distributed/shared_memory_link.h"
#include "trainer/models/model.h"

namespace trainer::engine {

// trainer.pipeline, resolved against trainer.devices.
struct PipelineOptions {
  int stages = 2;
  std::vector<std::string> split_points;  // empty: balanced by parameter count, or by time
  bool balance_time = false;              // balance=time: by measured forward + backward time
  int microbatches = 4;
  PipelineScheduleKind schedule = PipelineScheduleKind::kOneFOneB;
  // transport: how a micro-batch's activations and gradients travel between stages on the CPU.
  enum class Transport { kAuto, kSharedMemory, kProcessGroup };
  Transport transport = Transport::kAuto;

  // `processes`: the job's process count. Throws trainer::Error naming the key for a value that
  // does not fit it (the launcher's schema check says the same before any job runs).
  static PipelineOptions from_config(const config::ConfigView& root, int processes);
};

// Whether trainer.strategy is pipeline.
bool pipeline_strategy(const config::ConfigView& root);

class PipelineStage {
 public:
  // The forward of one piece of the stage, under the training precision (autocast).
  struct Precision {
    c10::DeviceType device = c10::DeviceType::CPU;
    c10::ScalarType autocast_dtype = c10::ScalarType::BFloat16;
    bool autocast = false;
  };
  using LossFn = std::function<at::Tensor(const at::Tensor& outputs, const at::Tensor& targets)>;
  // The objective's backward: `objective` times the loss scale when loss scaling is on.
  using ScaleFn = std::function<at::Tensor(const at::Tensor& objective)>;

  // Stage `stage` of the pipeline whose stage 0 is rank `first_rank` of `group` (stage s at
  // first_rank + s), whose pieces run on `device`. The model is on the host until place().
  // Throws trainer::Error when the model cannot be cut as asked (or has a tensor that belongs to
  // none of its pieces: no stage would take it to its device).
  PipelineStage(models::Model& model, const std::string& model_name, const PipelineOptions& options,
                ProcessGroup& group, int stage, int first_rank, Precision precision, at::Device device);

  // Takes this stage's pieces to the device; the others stay on the host (after balance_by_time,
  // which may move the cut).
  void place();

  int stage() const { return stage_; }
  int stages() const { return options_.stages; }
  bool is_first() const { return stage_ == 0; }
  bool is_last() const { return stage_ + 1 == options_.stages; }
  const PipelineOptions& options() const { return options_; }

  // This stage's parameters and buffers (the ones it trains and keeps), and those of stage `s`.
  std::vector<at::Tensor> parameters() const { return tensors_of(stage_, true); }
  std::vector<at::Tensor> buffers() const;
  std::vector<at::Tensor> tensors_of(int stage, bool parameters_only) const;
  // "stage 1 of 2: layers.4 .. layers.7 (33,034 parameters)", with its measured milliseconds
  // after balance_by_time.
  std::string describe(int stage) const;
  // balance=time without split_points: times every piece's forward and backward on `microbatch`
  // (one micro-batch of inputs; in eval mode, so neither running statistics nor random draws move,
  // and the gradients it leaves are cleared), averages the times over the job's processes so that
  // all cut alike, and cuts the model to make the largest stage's time as small as can be. Call
  // before parameters() is read. Returns "conv1 0.31 ms, layer1.0 0.52 ms, ..." (the averages).
  std::string balance_by_time(const at::Tensor& microbatch);
  // Parameters of stage `s` (counted before any release).
  int64_t parameter_count(int stage) const { return parameter_counts_[static_cast<size_t>(stage)]; }

  // Frees the other stages' parameters and buffers: each becomes an empty tensor of its dtype and
  // device (its shape is kept here), so that this process holds only its own stage's weights,
  // gradients and optimizer state. Call after the processes have agreed on the initial weights;
  // again after gather_to_first, whose copies it frees.
  void release_others();
  // Whether `tensor` is one of the released ones (a checkpoint load skips them).
  bool released(const at::Tensor& tensor) const;

  // Records the shapes each stage receives and sends, from one sample through the whole model
  // (every process holds it): call once before training or evaluating.
  void probe_shapes(const at::Tensor& one_sample);
  // Before release_others: one training step of `inputs` through the whole model, each piece's
  // forward and backward under the training precision, the last one's through `loss` (whatever
  // the precision cannot run throws here, before training), leaving no gradients.
  void probe_step(const at::Tensor& inputs, const std::function<at::Tensor(const at::Tensor& outputs)>& loss);
  // Before release_others: the whole model's forward of `inputs` (for counting its FLOPs).
  at::Tensor forward_whole(const at::Tensor& inputs);
  // On the CPU, unless transport=process_group: maps shared-memory links to the neighbouring
  // stages, sized for micro-batches of up to `largest_microbatch` samples (every rank of the
  // group calls it together, after probe_shapes). Returns what was made, for the log; throws
  // trainer::Error when transport=shared_memory and a pair could not have one.
  std::string connect_links(int64_t largest_microbatch);

  // One batch through the schedule: every micro-batch's forward and backward. Gradients
  // accumulate into this stage's parameters. The last stage returns the batch's loss (the
  // micro-batches' losses weighted by their share of the batch: the loss of the whole batch) and
  // outputs; the other stages return undefined tensors. `objective_factor` multiplies the loss
  // before backward (1 / accumulate_grad_batches).
  struct Result {
    at::Tensor loss;
    at::Tensor outputs;
  };
  // `before_backward(last)` runs before each micro-batch's backward, `last` for the batch's last
  // one (a data-parallel reducer all-reduces only the gradients that backward completes).
  Result train_batch(const at::Tensor& inputs, const at::Tensor& targets, const LossFn& loss, double objective_factor,
                     const ScaleFn& scale, const std::function<void(bool last)>& before_backward = {});
  // Forward only (evaluation, no micro-batches): the outputs on the last stage, else undefined.
  at::Tensor forward_only(const at::Tensor& inputs);

  // Sends this stage's parameters and buffers to rank `first_rank` (stage 0), which copies every
  // stage's into its own model (its released tensors hold them again until the next
  // release_others): before stage 0 writes the whole model to a checkpoint.
  void gather_to_first();

  // Measured over train_batch calls: this stage's own compute (its forwards, with the loss on the
  // last stage, and its backwards; sends and receives excluded) and the wall time from each
  // batch's start to the end of this stage's part of it, in seconds. Host time: on a GPU it
  // counts the launches, not the kernels (nothing synchronises the device per action).
  double forward_seconds() const { return forward_seconds_; }
  double backward_seconds() const { return backward_seconds_; }
  double busy_seconds() const { return forward_seconds_ + backward_seconds_; }
  double schedule_seconds() const { return total_seconds_; }
  int64_t batches_timed() const { return batches_timed_; }

 private:
  at::Tensor run_pieces(const at::Tensor& input);
  // Runs `step(u, x)` for every piece u of the whole model in order (x: the previous step's
  // result, `input` first) on the device, one piece at a time: a piece on the host goes to the
  // device for its step and back after it, so the device never holds more than this stage and
  // one other piece. Leaves no gradients on the pieces it moved.
  at::Tensor piece_by_piece(const at::Tensor& input,
                            const std::function<at::Tensor(size_t piece, const at::Tensor& x)>& step);
  bool placed_piece(size_t piece) const;
  void check_every_tensor_in_a_piece() const;
  // Waits for the next message through `link` (into `into`), writing queued sends of both links
  // meanwhile; a peer that ended or trainer.dist_timeout is a trainer::Error naming `describe()`.
  template <typename Describe>
  void receive_through(SharedMemoryLink& link, at::Tensor& into, int tag, const Describe& describe);
  // Waits until both links have written every queued send.
  void flush_links();
  int peer(int stage) const { return first_rank_ + stage; }

  void count_parameters();

  models::Model& model_;
  std::string model_name_;
  PipelineOptions options_;
  ProcessGroup& group_;
  int stage_ = 0;
  int first_rank_ = 0;
  Precision precision_;
  at::Device device_;
  bool placed_ = false;  // place() was called: this stage's pieces are on device_
  std::vector<models::PipelineUnit> units_;
  size_t receives_ahead_ = 0;                        // receives posted beyond the one awaited (Gloo only; train_batch)
  std::unique_ptr<SharedMemoryLink> link_previous_;  // to stage - 1 (train_batch), or null
  std::unique_ptr<SharedMemoryLink> link_next_;      // to stage + 1, or null
  std::vector<size_t> first_;                        // first piece of each stage, plus units_.size()
  std::vector<int64_t> parameter_counts_;
  std::vector<double> piece_seconds_;  // balance_by_time's measurement, else empty
  // The other stages' tensors (by stage, in tensors_of order) and their shapes, once released.
  struct Released {
    at::Tensor tensor;
    std::vector<int64_t> shape;
  };
  std::vector<std::vector<Released>> released_;
  std::unordered_set<const c10::TensorImpl*> released_set_;
  std::vector<int64_t> input_shape_;  // one sample's input to this stage (without batch)
  c10::ScalarType input_dtype_ = c10::ScalarType::Float;
  std::vector<int64_t> output_shape_;  // one sample's output of this stage (the next one's input)
  c10::ScalarType output_dtype_ = c10::ScalarType::Float;
  double forward_seconds_ = 0;
  double backward_seconds_ = 0;
  double total_seconds_ = 0;
  int64_t batches_timed_ = 0;
};

}  // namespace trainer::engine
