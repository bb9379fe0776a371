// Data loading alone, our side of bench/loader_bench.py: the trainer's BatchLoader
// (include/trainer/data/batch_loader.h) over Fashion-MNIST's training split held in memory as
// uint8, exactly as `trainer fit` sets it up on CPU (shuffled EpochSampler, batch 128, per-batch
// normalisation (x/255 - mean)/std to float32, prefetch 4), iterated for a number of epochs with
// nothing done to the batches. Each epoch prints one JSON line:
//   {"epoch": N, "seconds": S, "samples": K, "batches": B}
// S runs from start_epoch (which starts the worker threads) to the end-of-epoch nullopt.
//
//   loader_bench --root /usr/share/datasets/fashion-mnist --workers 2 --epochs 3
//                [--batch 128] [--threads T] [--prefetch 4]
// --threads sets the intra-op threads of the consuming thread (what the training step would
// use); the loader's workers use one each, as in the trainer.
//
// With --image-folder DIR (bench/image_loader_bench.py): the training split of data=image_folder
// over DIR, as `trainer fit data=image_folder data.augment=imagenet data.image_size=S` sets it up
// (every file read and decoded to RGB, RandomResizedCrop(S) + RandomHorizontalFlip on the loader's
// threads, collated to uint8, normalised per channel with ImageNet's mean and std), val_fraction 0.
// Like `trainer`, it raises glibc's mmap and trim thresholds first (engine_c_abi.cpp's runtime
// tuning; TRAINER_MALLOC_TUNING=0 leaves them), so a batch's buffer is reused memory, not a fresh
// mapping. With --decode-only as well: the decoder's ceiling, every file read and decoded on this one
// thread and nothing else, printed as {"epoch": N, "seconds": S, "samples": K, "batches": 0}.
//
// With --shards PATTERN instead of --image-folder (bench/webdataset_bench.py): the training split
// of data=webdataset over those tar shards, set up as `trainer fit data=webdataset
// data.augment=imagenet data.image_size=S data.shuffle_buffer=B` sets it up (one rank's share,
// read in its stream order). Every epoch line also carries "open_seconds": how long opening the
// dataset took (listing the folder; counting the shards' samples and reading their labels).
#include <malloc.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include <ATen/Parallel.h>

#include "trainer/data/batch_loader.h"
#include "trainer/data/datasets.h"
#include "trainer/data/image_folder_dataset.h"
#include "trainer/data/sampler.h"
#include "trainer/data/webdataset_dataset.h"
#include "trainer/image/image_decoder.h"
#include "trainer/image/image_folder.h"

namespace {

struct Args {
  std::string root = "/usr/share/datasets/fashion-mnist";
  int workers = 0;
  int epochs = 3;
  int64_t batch = 128;
  int threads = 0;  // 0: LibTorch's default
  int prefetch = 4;
  std::string image_folder;  // data=image_folder over this root instead of Fashion-MNIST
  std::string shards;        // data=webdataset over these shards instead
  int64_t shuffle_buffer = 1000;
  int image_size = 64;
  bool decode_only = false;
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "loader_bench: %s\nusage: loader_bench --root DIR [--workers N] [--epochs E] "
               "[--batch B] [--threads T] [--prefetch P] [--image-folder DIR [--image-size S] [--decode-only]] "
               "[--shards PATTERN [--shuffle-buffer B]]\n",
               problem.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--decode-only") {
      args.decode_only = true;
      continue;
    }
    if (i + 1 >= argc) usage(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--root") {
      args.root = value;
    } else if (flag == "--workers") {
      args.workers = std::stoi(value);
    } else if (flag == "--epochs") {
      args.epochs = std::stoi(value);
    } else if (flag == "--batch") {
      args.batch = std::stoll(value);
    } else if (flag == "--threads") {
      args.threads = std::stoi(value);
    } else if (flag == "--prefetch") {
      args.prefetch = std::stoi(value);
    } else if (flag == "--image-folder") {
      args.image_folder = value;
    } else if (flag == "--shards") {
      args.shards = value;
    } else if (flag == "--shuffle-buffer") {
      args.shuffle_buffer = std::stoll(value);
    } else if (flag == "--image-size") {
      args.image_size = std::stoi(value);
    } else {
      usage("unknown option " + flag);
    }
  }
  if (args.workers < 0 || args.epochs < 1 || args.batch < 1) usage("bad --workers/--epochs/--batch");
  return args;
}

// The decoder alone on one thread: every file of the folder read and decoded to RGB, per epoch.
int decode_only(const Args& args) {
  const std::vector<std::string> files = trainer::image::list_image_files(args.image_folder, "--image-folder");
  trainer::image::DecodeRequest request;
  request.channels = 3;
  std::vector<uint8_t> buffer;
  trainer::image::Image image;
  for (int epoch = 0; epoch < args.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    int64_t pixels = 0;
    for (const std::string& file : files) {
      trainer::image::read_image(file, request, buffer, image);
      pixels += static_cast<int64_t>(image.height) * image.width;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("{\"epoch\": %d, \"seconds\": %.6f, \"samples\": %lld, \"batches\": 0, \"pixels\": %lld}\n", epoch,
                seconds, static_cast<long long>(files.size()), static_cast<long long>(pixels));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(argc, argv);
    const char* malloc_tuning = std::getenv("TRAINER_MALLOC_TUNING");
    if (malloc_tuning == nullptr || std::string(malloc_tuning) != "0") {
      mallopt(M_MMAP_THRESHOLD, 32 << 20);
      mallopt(M_TRIM_THRESHOLD, 1 << 30);
    }
    if (args.threads > 0) at::set_num_threads(args.threads);

    if (args.decode_only) return decode_only(args);
    // The data config's defaults (configs/data/fashion_mnist.yaml): val_fraction 0.1, seed 42.
    trainer::data::DataOptions data;
    data.name = "fashion_mnist";
    data.root = args.root;
    data.batch_size = args.batch;
    data.num_workers = args.workers;
    std::shared_ptr<const trainer::data::Dataset> train;
    const auto opening = std::chrono::steady_clock::now();
    if (args.image_folder.empty() && args.shards.empty()) {
      train = trainer::data::load_fashion_mnist(data).train;
    } else {  // configs/data/image_folder.yaml (or webdataset.yaml) with augment=imagenet, image_size=S
      data.name = args.shards.empty() ? "image_folder" : "webdataset";
      data.root = args.image_folder;
      data.shards = {args.shards};
      data.shuffle_buffer = args.shuffle_buffer;
      data.val_fraction = 0;
      data.channels = 3;
      data.image_size = args.image_size;
      data.augment_preset = "imagenet";
      data.mean = {0.485, 0.456, 0.406};
      data.std = {0.229, 0.224, 0.225};
      train = args.shards.empty() ? trainer::data::load_image_folder(data).train
                                  : trainer::data::load_webdataset(data).train;
    }
    // A stream deals itself to the ranks and reads its share in its own order (trainer_setup.cpp).
    std::shared_ptr<const trainer::data::Dataset> share = train->rank_share(0, 1, /*training=*/true);
    if (share) train = share;
    const double open_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - opening).count();

    trainer::data::LoaderOptions options = trainer::data::make_loader_options(data, at::kCPU, /*training=*/true);
    options.prefetch_batches = args.prefetch;
    trainer::data::BatchLoader loader(
        train, trainer::data::EpochSampler(train->size(), /*shuffle=*/share == nullptr, data.seed), options);

    for (int epoch = 0; epoch < args.epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      loader.start_epoch(epoch);
      int64_t samples = 0;
      int64_t batches = 0;
      while (auto batch = loader.next()) {
        samples += batch->targets.size(0);
        ++batches;
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("{\"epoch\": %d, \"seconds\": %.6f, \"samples\": %lld, \"batches\": %lld, \"open_seconds\": %.6f}\n",
                  epoch, seconds, static_cast<long long>(samples), static_cast<long long>(batches), open_seconds);
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "loader_bench: %s\n", error.what());
    return 1;
  }
}
