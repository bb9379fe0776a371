// The model-checkpoint callback's top-k bookkeeping (Lightning's ModelCheckpoint).
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/checkpoint/checkpoint_policy.h"

#include <catch2/catch.hpp>

using trainer::engine::CheckpointOptions;
using trainer::engine::TopKEntry;
using trainer::engine::update_top_k;

CATCH_TEST_CASE("top-k keeps the best k (mode max), drops the rest, and versions a repeated name") {
  CheckpointOptions options;
  options.dirpath = "/run/checkpoints";
  options.filename = "epoch_{epoch:03d}";
  options.save_top_k = 2;
  options.mode_max = true;
  std::vector<TopKEntry> top;
  std::vector<std::string> dropped;
  CATCH_CHECK(update_top_k(top, options, 0.5, 0, 10, {}, dropped) == "/run/checkpoints/epoch_000.ckpt");
  CATCH_CHECK(update_top_k(top, options, 0.7, 1, 20, {}, dropped) == "/run/checkpoints/epoch_001.ckpt");
  CATCH_CHECK(dropped.empty());
  CATCH_CHECK(update_top_k(top, options, 0.4, 2, 30, {}, dropped).empty());  // worse than both
  CATCH_CHECK(update_top_k(top, options, 0.6, 3, 40, {}, dropped) == "/run/checkpoints/epoch_003.ckpt");
  CATCH_REQUIRE(dropped.size() == 1);
  CATCH_CHECK(dropped[0] == "/run/checkpoints/epoch_000.ckpt");
  CATCH_REQUIRE(top.size() == 2);
  CATCH_CHECK(top[0].score == 0.7);  // best first
  CATCH_CHECK(top[1].score == 0.6);
  // A metric field takes the value it was scored with.
  options.filename = "e{epoch}-{val/acc:.2f}";
  top.clear();
  CATCH_CHECK(update_top_k(top, options, 0.9, 4, 60, {{"val/acc", 0.912}}, dropped) == "/run/checkpoints/e4-0.91.ckpt");
  // Same epoch again (a mid-epoch checkpoint): the name gets -v1.
  options.filename = "best";
  top = {{0.7, "/run/checkpoints/best.ckpt"}};
  CATCH_CHECK(update_top_k(top, options, 0.8, 3, 50, {}, dropped) == "/run/checkpoints/best-v1.ckpt");
  // The top k full: the file pushed out gives its name to the new one, which replaces it (as
  // Lightning's version counter; it was best-v2.ckpt, and best.ckpt deleted).
  dropped.clear();
  CATCH_CHECK(update_top_k(top, options, 0.75, 4, 60, {}, dropped) == "/run/checkpoints/best.ckpt");
  CATCH_CHECK(dropped.empty());
  CATCH_REQUIRE(top.size() == 2);
  CATCH_CHECK(top[0].path == "/run/checkpoints/best-v1.ckpt");
  CATCH_CHECK(top[1].path == "/run/checkpoints/best.ckpt");
  CATCH_CHECK(top[1].score == 0.75);
}

CATCH_TEST_CASE("top-k: mode min, save_top_k=-1 keeps all, 0 keeps none") {
  CheckpointOptions options;
  options.dirpath = "d";
  options.mode_max = false;
  options.save_top_k = -1;
  std::vector<TopKEntry> top;
  std::vector<std::string> dropped;
  for (int epoch = 0; epoch < 4; ++epoch) update_top_k(top, options, 1.0 + epoch, epoch, epoch, {}, dropped);
  CATCH_CHECK(top.size() == 4);
  CATCH_CHECK(top.front().score == 1.0);  // lowest is best
  CATCH_CHECK(dropped.empty());
  options.save_top_k = 0;
  CATCH_CHECK(update_top_k(top, options, 0.1, 5, 5, {}, dropped).empty());
}
