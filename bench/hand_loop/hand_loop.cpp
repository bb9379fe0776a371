// The peer of `trainer fit` (default configuration) in bench/engine_bench.sh: the plain LibTorch
// loop a careful user would write for the same job. Same data (Fashion-MNIST, gzipped IDX files,
// the same 54k/6k train/val split), same model (--model mlp: MLP 784-256-128-10, ReLU, dropout
// 0.2; --model cnn: configs/model/cnn.yaml's two blocks of 3x3 conv without bias, batch norm, ReLU
// and 2x2 max pool (32, 64 channels), then 3136-128-10 with dropout 0.25; LibTorch's default
// init drawn right after torch::manual_seed(seed)), LibTorch's Adam lr 1e-3, batch 128, cross
// entropy, and the trainer's engine start-up tuning: its intra-op threads, its malloc settings and
// OpenBLAS on one thread beside ATen's pool (src/engine/blas_threads.cpp, compiled in).
//
// Per epoch: randperm shuffle, index_select uint8 batches from tensors held in memory, normalise,
// step; the loss is summed on the device and read once at the end of the epoch (no per-step
// .item()); a validation pass (loss + accuracy); then the model and the optimizer state are
// written with torch::save (the peer of the trainer's checkpointing; --save=model writes the
// model only, --save=none nothing).
//
// Output (stdout, one line each, parsed by bench/engine_bench.py):
//   first training step done X s after the process started (clock Y s since main)
//   epoch N done in S s (train T s, val V s) at t=W s: train/loss ... val/loss ... val/acc ...
//   epoch N saved in C s at t=W s
//   fit finished in F s, K steps
// W is steady-clock seconds since main() entered; S = train + validation (like the trainer's
// "epoch N done in S s" line, which is also taken before the checkpoint is written).
//
//   hand_loop --root /usr/share/datasets/fashion-mnist --epochs 3 --out DIR [--seed 42]
//             [--model mlp|cnn] [--threads N] [--limit-train-batches N]
//             [--save model+optim|model|none] [--fsync] [--meters]
// --meters adds the trainer's per-step bookkeeping (for attributing its overhead): two device-side
// meters (loss sum and argmax accuracy) updated after every step, as src/engine/trainer.cpp does.
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "trainer/engine/blas_threads.h"

namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point g_main_start = Clock::now();

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Seconds since the process started, from /proc (the same method the trainer's log line uses).
double seconds_since_process_start() {
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  std::ifstream uptime_file("/proc/uptime");
  double uptime = -1;
  if (close == std::string::npos || !(uptime_file >> uptime)) return -1;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return uptime - std::stod(field) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return -1;
}

// An IDX file (gzipped): [magic 00 00 08 rank][rank big-endian u32 sizes][uint8 data].
torch::Tensor read_idx_gz(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path);
  gzbuffer(f, 1 << 20);
  unsigned char magic[4];
  if (gzread(f, magic, 4) != 4 || magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08) {
    gzclose(f);
    throw std::runtime_error(path + ": not a uint8 IDX file");
  }
  std::vector<int64_t> dims(magic[3]);
  int64_t total = 1;
  for (auto& d : dims) {
    unsigned char b[4];
    if (gzread(f, b, 4) != 4) throw std::runtime_error(path + ": truncated header");
    d = (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | b[3];
    total *= d;
  }
  torch::Tensor data = torch::empty({total}, torch::kUInt8);
  if (gzread(f, data.data_ptr(), static_cast<unsigned>(total)) != total) {
    gzclose(f);
    throw std::runtime_error(path + ": truncated data");
  }
  gzclose(f);
  return data.view(dims);
}

// The trainer's 54k/6k split (src/data/datasets.cpp, src/data/sampler.cpp), copied so both
// programs train and validate on exactly the same images: a Fisher-Yates permutation drawn with
// xoshiro256** seeded by mix_seed(seed, "split"); the first 10% is validation; both index sets
// sorted. Runs once at start-up (a few ms).
uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
uint64_t mix_seed(uint64_t a, uint64_t b) {
  uint64_t state = a;
  const uint64_t first = splitmix64(&state);
  state = first ^ b;
  return splitmix64(&state);
}
torch::Tensor split_permutation(int64_t n, uint64_t seed) {
  uint64_t s[4];
  for (auto& w : s) w = splitmix64(&seed);
  auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  auto next = [&] {
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  };
  torch::Tensor perm = torch::arange(n, torch::kLong);
  int64_t* p = perm.data_ptr<int64_t>();
  for (int64_t i = n - 1; i > 0; --i) {
    const uint64_t bound = static_cast<uint64_t>(i) + 1;
    const uint64_t threshold = (0 - bound) % bound;
    uint64_t r = next();
    while (r < threshold) r = next();
    std::swap(p[i], p[static_cast<int64_t>(r % bound)]);
  }
  return perm;
}

struct Mlp : torch::nn::Module {
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
  double p = 0.2;
  Mlp() {
    fc1 = register_module("fc1", torch::nn::Linear(784, 256));
    fc2 = register_module("fc2", torch::nn::Linear(256, 128));
    fc3 = register_module("fc3", torch::nn::Linear(128, 10));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = x.flatten(1);
    x = torch::dropout(fc1->forward(x).relu_(), p, is_training());
    x = torch::dropout(fc2->forward(x).relu_(), p, is_training());
    return fc3->forward(x);
  }
};

struct Cnn : torch::nn::Module {
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  double p = 0.25;
  Cnn() {
    conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 3).padding(1).bias(false)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(32));
    conv2 = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3).padding(1).bias(false)));
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(64));
    fc1 = register_module("fc1", torch::nn::Linear(64 * 7 * 7, 128));
    fc2 = register_module("fc2", torch::nn::Linear(128, 10));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(bn1->forward(conv1->forward(x)).relu_(), 2);
    x = torch::max_pool2d(bn2->forward(conv2->forward(x)).relu_(), 2);
    x = torch::dropout(fc1->forward(x.flatten(1)).relu_(), p, is_training());
    return fc2->forward(x);
  }
};

// One of the two models behind one interface, as a user's loop would hold it.
struct Net : torch::nn::Module {
  std::shared_ptr<Mlp> mlp;
  std::shared_ptr<Cnn> cnn;
  explicit Net(const std::string& name) {
    if (name == "mlp") {
      mlp = register_module("mlp", std::make_shared<Mlp>());
    } else if (name == "cnn") {
      cnn = register_module("cnn", std::make_shared<Cnn>());
    } else {
      throw std::runtime_error("--model must be mlp or cnn, not " + name);
    }
  }
  torch::Tensor forward(const torch::Tensor& x) { return mlp ? mlp->forward(x) : cnn->forward(x); }
};

void fsync_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string root = "/usr/share/datasets/fashion-mnist", out = ".", save = "model+optim", model_name = "mlp";
  int64_t epochs = 3, batch_size = 128, limit_train_batches = 0;
  uint64_t seed = 42;
  int threads = 0;
  bool do_fsync = false, meters = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--root")
      root = value();
    else if (a == "--out")
      out = value();
    else if (a == "--epochs")
      epochs = std::stoll(value());
    else if (a == "--seed")
      seed = std::stoull(value());
    else if (a == "--threads")
      threads = std::stoi(value());
    else if (a == "--model")
      model_name = value();
    else if (a == "--limit-train-batches")
      limit_train_batches = std::stoll(value());
    else if (a == "--save")
      save = value();
    else if (a == "--fsync")
      do_fsync = true;
    else if (a == "--meters")
      meters = true;
    else {
      std::cerr << "unknown argument " << a << "\n";
      return 2;
    }
  }

  // The trainer's engine start-up tuning (src/engine/engine_c_abi.cpp).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  if (threads <= 0) {
    cpu_set_t set;
    threads = sched_getaffinity(0, sizeof(set), &set) == 0 ? std::max(1, CPU_COUNT(&set)) : 1;
  }
  torch::set_num_threads(threads);
  const std::string blas = trainer::engine::limit_openblas_pool(threads);
  if (!blas.empty()) std::printf("%s\n", blas.c_str());
  torch::manual_seed(seed);

  // Data: uint8 images [N, 1, 28, 28] and int64 labels in memory.
  torch::Tensor images = read_idx_gz(root + "/train-images-idx3-ubyte.gz").unsqueeze(1);
  torch::Tensor labels = read_idx_gz(root + "/train-labels-idx1-ubyte.gz").to(torch::kLong);
  const int64_t n = images.size(0);
  const int64_t val_count = std::llround(0.1 * static_cast<double>(n));
  torch::Tensor perm = split_permutation(n, mix_seed(seed, 0x73706c6974ULL));
  torch::Tensor val_idx = std::get<0>(perm.narrow(0, 0, val_count).sort());
  torch::Tensor train_idx = std::get<0>(perm.narrow(0, val_count, n - val_count).sort());
  torch::Tensor train_x = images.index_select(0, train_idx), train_y = labels.index_select(0, train_idx);
  torch::Tensor val_x = images.index_select(0, val_idx), val_y = labels.index_select(0, val_idx);
  const int64_t n_train = train_x.size(0), n_val = val_x.size(0);
  const double mean = 0.2860, stddev = 0.3530;
  auto normalise = [&](const torch::Tensor& u8) {
    return u8.to(torch::kFloat).mul_(1.0 / (255.0 * stddev)).sub_(mean / stddev);
  };

  auto model = std::make_shared<Net>(model_name);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  int64_t steps = 0;
  const auto fit_start = Clock::now();
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    const auto epoch_start = Clock::now();
    model->train();
    torch::Tensor loss_sum = torch::zeros({}, torch::kDouble);
    torch::Tensor order = torch::randperm(n_train, torch::kLong);
    torch::Tensor meter_loss[2], meter_correct[2];
    for (int m = 0; m < 2; ++m) {
      meter_loss[m] = torch::zeros({}, torch::kDouble);
      meter_correct[m] = torch::zeros({}, torch::kLong);
    }
    int64_t samples = 0;
    const int64_t train_end = limit_train_batches > 0 ? std::min(n_train, limit_train_batches * batch_size) : n_train;
    for (int64_t start = 0; start < train_end; start += batch_size) {
      const int64_t count = std::min(batch_size, train_end - start);
      samples += count;
      torch::Tensor idx = order.narrow(0, start, count);
      torch::Tensor x = normalise(train_x.index_select(0, idx));
      torch::Tensor y = train_y.index_select(0, idx);
      optimizer.zero_grad();
      torch::Tensor logits = model->forward(x);
      torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
      loss.backward();
      optimizer.step();
      if (meters) {
        for (int m = 0; m < 2; ++m) {
          meter_loss[m].add_(loss.detach().to(torch::kDouble) * static_cast<double>(count));
          meter_correct[m].add_(logits.detach().argmax(1).eq(y).sum());
        }
      } else {
        loss_sum.add_(loss.detach().to(torch::kDouble) * static_cast<double>(count));
      }
      if (++steps == 1) {
        std::printf("first training step done %.3f s after the process started (clock %.3f s since main)\n",
                    seconds_since_process_start(), since(g_main_start));
        std::fflush(stdout);
      }
    }
    const double train_s = since(epoch_start);

    const auto val_start = Clock::now();
    model->eval();
    torch::Tensor val_loss = torch::zeros({}, torch::kDouble);
    torch::Tensor correct = torch::zeros({}, torch::kLong);
    {
      torch::NoGradGuard no_grad;
      for (int64_t start = 0; start < n_val; start += batch_size) {
        const int64_t count = std::min(batch_size, n_val - start);
        torch::Tensor x = normalise(val_x.narrow(0, start, count));
        torch::Tensor y = val_y.narrow(0, start, count);
        torch::Tensor logits = model->forward(x);
        val_loss.add_(torch::nn::functional::cross_entropy(logits, y).to(torch::kDouble) * static_cast<double>(count));
        correct.add_(logits.argmax(1).eq(y).sum());
      }
    }
    const double val_s = since(val_start);
    const double epoch_s = since(epoch_start);
    std::printf(
        "epoch %lld done in %.4f s (train %.4f s, val %.4f s) at t=%.6f s: train/loss %.4f val/loss %.4f val/acc "
        "%.4f samples %lld\n",
        static_cast<long long>(epoch), epoch_s, train_s, val_s, since(g_main_start),
        (meters ? meter_loss[1] : loss_sum).item<double>() / static_cast<double>(samples),
        val_loss.item<double>() / static_cast<double>(n_val), correct.item<int64_t>() / static_cast<double>(n_val),
        static_cast<long long>(samples));
    std::fflush(stdout);

    const auto save_start = Clock::now();
    if (save != "none") {
      const std::string model_path = out + "/model.pt";
      torch::save(model, model_path);
      if (do_fsync) fsync_file(model_path);
      if (save == "model+optim") {
        const std::string optim_path = out + "/optimizer.pt";
        torch::save(optimizer, optim_path);
        if (do_fsync) fsync_file(optim_path);
      }
    }
    std::printf("epoch %lld saved in %.4f s at t=%.6f s\n", static_cast<long long>(epoch), since(save_start),
                since(g_main_start));
    std::fflush(stdout);
  }
  std::printf("fit finished in %.3f s, %lld steps\n", since(fit_start), static_cast<long long>(steps));
  return 0;
}
