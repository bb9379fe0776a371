#include "trainer/options/sections.h"

namespace trainer::options {

// The primary config's own keys (configs/config.yaml). The root is open: a config tree may carry
// keys of its own (tags, paths, a name for the run) that only interpolations read.
std::vector<Section> root_sections() {
  Section root{"", "", false, "the primary config's keys (configs/config.yaml)", {}};
  root.options = {
      integer("seed", "42").at_least(0).means("seeds LibTorch, the data split and the synthetic data"),
      choice("precision", "32",
             {"32", "32-true", "64", "64-true", "16", "16-mixed", "bf16", "bf16-mixed", "16-true", "bf16-true"})
          .means("Lightning's precision (16 = 16-mixed, bf16 = bf16-mixed; on a CPU 16-mixed runs bf16-mixed)"),
      text("ckpt_path", "null").or_null().means("checkpoint to resume from or evaluate: last, best or a path"),
      flag("test_after_fit", "true").means("fit ends with a test of the best checkpoint"),
      choice("format", "safetensors", {"safetensors"}).means("trainer export: the weights' file format"),
      text("export_path", "null")
          .or_null()
          .means("trainer export: where the weights go (null: the export's run directory)"),
  };
  return {root};
}

// The tuner section: `trainer tune batch_size` (Lightning's batch-size finder).
std::vector<Section> tuner_sections() {
  Section tuner{"tuner", "", true, "trainer tune batch_size (Lightning's scale_batch_size)", {}};
  tuner.options = {
      choice("mode", "power", {"power", "binsearch"})
          .means("power: double until a trial fails; binsearch: then bisect"),
      integer("init_val", "2").at_least(1).means("the first batch size tried"),
      integer("max_trials", "25").at_least(1).means("most trials"),
      integer("steps_per_trial", "3").at_least(1).means("training steps per trial"),
      number("max_memory_mb", "null")
          .above(0)
          .or_null()
          .means("memory a trial may take in MiB (null: half the available memory on CPU, the device on CUDA)"),
  };
  return {tuner};
}

// The predict section: `trainer predict` (configs/config.yaml).
std::vector<Section> predict_sections() {
  Section predict{"predict", "", true, "trainer predict: what predictions.csv holds", {}};
  predict.options = {
      integer("top_k", "5").at_least(1).means("the k most likely classes of each sample, with their probabilities"),
  };
  return {predict};
}

// The pack section: `trainer data pack` (its flags --split, --output, --maxcount, --maxsize and
// --no-shuffle set these keys; absent from configs/config.yaml, as the tuner's).
std::vector<Section> pack_sections() {
  Section pack{"pack", "", true, "trainer data pack: writing a split of the data as tar shards (data=webdataset)", {}};
  pack.options = {
      choice("split", "train", {"train", "val", "test"}).means("the split of the data config that is written"),
      text("output", "null")
          .or_null()
          .means("the shards' file names, with one shard number: shards/train-%06d.tar (null: "
                 "<run dir>/shards/<split>-%06d.tar)"),
      integer("maxcount", "100000").at_least(1).means("most samples in one shard (as webdataset's ShardWriter)"),
      integer("maxsize", "3000000000")
          .at_least(1)
          .means("most bytes in one shard, unless one sample is larger (as webdataset's ShardWriter)"),
      flag("shuffle", "true")
          .means("samples are written in a random order drawn from seed (shards then mix the classes); false: the "
                 "data's own order"),
  };
  return {pack};
}

}  // namespace trainer::options
