// The model summary fit opens with: top-level modules, their types and counts, the totals.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/callbacks/model_summary.h"

#include <catch2/catch.hpp>
#include <torch/nn/modules/linear.h>

#include "trainer/models/sync_batch_norm.h"

using trainer::engine::model_summary;
using trainer::engine::short_count;

CATCH_TEST_CASE("short_count writes Lightning's short parameter counts") {
  CATCH_CHECK(short_count(0) == "0");
  CATCH_CHECK(short_count(950) == "950");
  CATCH_CHECK(short_count(12730) == "12.7 K");
  CATCH_CHECK(short_count(11173962) == "11.2 M");
  CATCH_CHECK(short_count(1300000000) == "1.3 B");
}

CATCH_TEST_CASE("model_summary lists each top-level module and the trainable, frozen and total counts") {
  struct Net : torch::nn::Module {
    torch::nn::Linear hidden{nullptr}, head{nullptr};
    Net() {
      hidden = register_module("hidden", torch::nn::Linear(784, 16));  // 12,560
      head = register_module("head", torch::nn::Linear(16, 10));       // 170
      head->weight.set_requires_grad(false);                           // 160 frozen
    }
  };
  Net net;
  const std::string table = model_summary(net);
  CATCH_CHECK(table.find("  | Name   | Type   | Params\n") == 0);
  CATCH_CHECK(table.find("0 | hidden | Linear | 12.6 K\n") != std::string::npos);
  CATCH_CHECK(table.find("1 | head   | Linear | 170\n") != std::string::npos);
  CATCH_CHECK(table.find("12.6 K    Trainable params\n") != std::string::npos);
  CATCH_CHECK(table.find("160       Non-trainable params\n") != std::string::npos);
  CATCH_CHECK(table.find("12.7 K    Total params\n") != std::string::npos);
  CATCH_CHECK(table.find("0.051     Total estimated model params size (MB)\n") != std::string::npos);
}

CATCH_TEST_CASE("model_summary names template modules by their dimension") {
  struct Net : torch::nn::Module {
    Net() { register_module("bn", trainer::models::SyncBatchNorm2d(4)); }
  };
  Net net;
  CATCH_CHECK(model_summary(net).find("0 | bn   | SyncBatchNorm2d | 8\n") != std::string::npos);
}
