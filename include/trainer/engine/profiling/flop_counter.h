// FLOPs of what actually runs, for the throughput monitor's FLOP/s and MFU: while a FlopCounter
// lives, a thread-local RecordFunction observer reads the input shapes of matrix products and
// convolutions dispatched on this thread and counts them by the rule PyTorch's profiler
// (with_flops) and FlopCounterMode use: 2*M*N*K per matrix product, 2*N*Cout*Hout*Wout*(Cin/groups)*kh*kw
// per convolution. Only the outermost such operator counts, so aten::linear is not counted again
// for the aten::addmm it calls, aten::convolution not again for mkldnn_convolution, nor an op for
// autocast's re-dispatch of itself. Elementwise ops, norms and pooling are left out.
// Works for any model, TorchScript ones included: it sees operators, not module types.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace trainer::engine {

class FlopCounter {
 public:
  FlopCounter();   // starts counting on this thread (an inner counter pauses an outer one)
  ~FlopCounter();  // stops
  FlopCounter(const FlopCounter&) = delete;
  FlopCounter& operator=(const FlopCounter&) = delete;

  int64_t total() const;
  // The part of total() in convolutions (cuDNN's on CUDA, where MFU's peak differs).
  int64_t convolution_total() const { return state_.convolution; }
  // FLOPs per counted operator name ("aten::linear", "aten::convolution", ...).
  const std::map<std::string, int64_t>& by_operator() const { return counts_; }

  // The observer's per-thread bookkeeping (public for the callbacks in flop_counter.cpp).
  struct State {
    std::map<std::string, int64_t>* counts = nullptr;
    int depth = 0;            // counted operators open on this thread
    int64_t convolution = 0;  // FLOPs of the convolutions among counts
  };

 private:
  std::map<std::string, int64_t> counts_;
  State state_;
  State* previous_ = nullptr;
  uint64_t handle_ = 0;
};

// "0.47 MFLOPs", "1.11 GFLOPs", "312 TFLOPs" (the unit scaled to the value; `suffix` follows "FLOP").
std::string flops_text(double flops, const std::string& suffix = "s");

}  // namespace trainer::engine
