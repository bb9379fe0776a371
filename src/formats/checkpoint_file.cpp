#include "trainer/formats/checkpoint_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "trainer/formats/crc32c.h"
#include "trainer/util/error.h"

namespace trainer::formats {
namespace {

constexpr char kMagic[] = "TRAINER-CKPT 2 ";
constexpr char kZipMagic[] = "PK\x03\x04";  // a bare LibTorch archive: checkpoints of format 1

struct Header {
  uint64_t payload = 0;
  uint64_t summary = 0;
  uint64_t config = 0;
  uint32_t payload_crc = 0;
  uint32_t meta_crc = 0;  // over the summary and the config
};

std::string header_line(const Header& h) {
  char line[kCheckpointHeaderBytes + 1];
  const int n = std::snprintf(line, sizeof(line), "%s%016" PRIu64 " %010" PRIu64 " %010" PRIu64 " %08x %08x", kMagic,
                              h.payload, h.summary, h.config, h.payload_crc, h.meta_crc);
  std::string text(line, static_cast<size_t>(n));
  text.resize(kCheckpointHeaderBytes - 1, ' ');
  return text + "\n";
}

bool parse_header(std::string_view line, Header& h) {
  if (line.size() != kCheckpointHeaderBytes || line.back() != '\n') return false;
  if (line.compare(0, sizeof(kMagic) - 1, kMagic) != 0) return false;
  const std::string fields(line.substr(sizeof(kMagic) - 1));
  unsigned payload_crc = 0;
  unsigned meta_crc = 0;
  if (std::sscanf(fields.c_str(), "%" SCNu64 " %" SCNu64 " %" SCNu64 " %8x %8x", &h.payload, &h.summary, &h.config,
                  &payload_crc, &meta_crc) != 5) {
    return false;
  }
  h.payload_crc = payload_crc;
  h.meta_crc = meta_crc;
  return true;
}

std::string summary_text(const CheckpointSummary& s) {
  std::string text = "epoch " + std::to_string(s.epoch) + "\nglobal_step " + std::to_string(s.global_step) +
                     "\nprecision " + s.precision + "\n";
  if (s.batch_in_epoch >= 0) text += "batch_in_epoch " + std::to_string(s.batch_in_epoch) + "\n";
  for (const auto& [score, path] : s.best) {
    char number[40];
    std::snprintf(number, sizeof(number), "%.17g", score);
    text += "best " + std::string(number) + " " + path + "\n";
  }
  for (const std::string& name : s.class_names) text += "class " + escape_line(name) + "\n";
  if (!s.sample_shape.empty()) {
    text += "sample_shape";
    for (const int64_t size : s.sample_shape) text += " " + std::to_string(size);
    text += "\n";
  }
  if (s.num_classes > 0) text += "num_classes " + std::to_string(s.num_classes) + "\n";
  if (!s.data_encoding.empty()) text += "data_encoding " + escape_line(s.data_encoding) + "\n";
  if (!s.model_file.empty()) text += "model_file " + escape_line(s.model_file) + "\n";
  return text;
}

CheckpointSummary parse_summary(std::string_view text) {
  CheckpointSummary s;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string line(text.substr(start, end - start));
    start = end + 1;
    const size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    const std::string key = line.substr(0, space);
    const std::string value = line.substr(space + 1);
    if (key == "epoch") s.epoch = std::strtoll(value.c_str(), nullptr, 10);
    if (key == "global_step") s.global_step = std::strtoll(value.c_str(), nullptr, 10);
    if (key == "batch_in_epoch") s.batch_in_epoch = std::strtoll(value.c_str(), nullptr, 10);
    if (key == "num_classes") s.num_classes = std::strtoll(value.c_str(), nullptr, 10);
    if (key == "precision") s.precision = value;
    if (key == "class") s.class_names.push_back(unescape_line(value));
    if (key == "data_encoding") s.data_encoding = unescape_line(value);
    if (key == "model_file") s.model_file = unescape_line(value);
    if (key == "sample_shape") {
      const char* p = value.c_str();
      char* end = nullptr;
      for (int64_t size = std::strtoll(p, &end, 10); end != p; size = std::strtoll(p, &end, 10)) {
        s.sample_shape.push_back(size);
        p = end;
      }
    }
    if (key == "best") {
      const size_t gap = value.find(' ');
      if (gap != std::string::npos) s.best.emplace_back(std::strtod(value.c_str(), nullptr), value.substr(gap + 1));
    }
  }
  return s;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The sentence that ends every damaged-file error: where the user can go instead.
std::string intact_hint(const std::string& path) {
  const std::optional<std::string> intact = newest_intact_checkpoint(directory_of(path), path);
  if (intact) return "The newest intact checkpoint beside it is " + *intact + ": point ckpt_path at it.";
  return "No intact checkpoint is beside it: train again (or restore the file from a copy).";
}

// Whether errors look for an intact checkpoint to suggest (not while looking for one).
thread_local bool suggest_intact = true;

[[noreturn]] void damaged(const std::string& path, const std::string& problem) {
  throw Error(path, problem, suggest_intact ? intact_hint(path) : std::string());
}

class File {
 public:
  explicit File(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  bool open() const { return fd_ >= 0; }
  int descriptor() const { return fd_; }
  uint64_t size() const {
    struct stat info;
    return ::fstat(fd_, &info) == 0 ? static_cast<uint64_t>(info.st_size) : 0;
  }
  // Reads `size` bytes at `offset` into `out` (appending); false on a short read or an error.
  bool read_at(uint64_t offset, size_t size, std::string& out) const {
    const size_t start = out.size();
    out.resize(start + size);
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pread(fd_, out.data() + start + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

 private:
  int fd_;
};

// Reads the header (and everything when `whole`), checking sizes and the checksums of what was read.
CheckpointFile read(const std::string& path, bool whole) {
  File file(path);
  if (!file.open()) {
    if (errno == ENOENT) {
      // A mistyped run directory: name the first folder on the way that does not exist.
      std::string missing;
      for (std::string dir = directory_of(path); dir != "." && dir != "/"; dir = directory_of(dir)) {
        struct stat info;
        if (::stat(dir.c_str(), &info) == 0) break;
        missing = dir;
      }
      if (!missing.empty()) {
        throw Error(path, "checkpoint not found: the folder " + missing + " does not exist",
                    "Check the path: hydra.run.dir names the training run's own directory (outputs/<date>/<time> "
                    "unless it was given), and ckpt_path=last or best is looked up in its checkpoints/.");
      }
      throw Error(path, "checkpoint not found",
                  "Give ckpt_path=last or best (looked up in the training run's checkpoints/), or the path of a "
                  ".ckpt file.");
    }
    throw Error(path, std::string("cannot open the checkpoint: ") + std::strerror(errno),
                "Check the file's permissions.");
  }
  struct stat info;
  if (::fstat(file.descriptor(), &info) == 0 && S_ISDIR(info.st_mode)) {
    throw Error(path, "ckpt_path names a directory, not a checkpoint file",
                "Name a .ckpt file in it (last.ckpt, or epoch_NNN.ckpt), or use ckpt_path=best|last with "
                "hydra.run.dir=<the training run>.");
  }
  const uint64_t size = file.size();
  CheckpointFile out;
  std::string head;
  if (!file.read_at(0, static_cast<size_t>(std::min<uint64_t>(size, kCheckpointHeaderBytes)), head)) {
    damaged(path, "cannot read the checkpoint's first bytes");
  }
  if (head.compare(0, 4, kZipMagic, 4) == 0) {  // format 1, from before checksums
    out.legacy = true;
    if (whole && !file.read_at(0, static_cast<size_t>(size), out.bytes)) damaged(path, "cannot read the checkpoint");
    out.payload_size = out.bytes.size();
    return out;
  }
  Header h;
  if (head.size() < kCheckpointHeaderBytes || head.compare(0, sizeof(kMagic) - 1, kMagic) != 0) {
    if (size == 0) damaged(path, "the checkpoint is empty (0 bytes): its write was cut short");
    throw Error(path, "not a trainer checkpoint (it does not start with a trainer or LibTorch checkpoint header)",
                "Point ckpt_path at a .ckpt file written by trainer.");
  }
  if (!parse_header(head, h)) damaged(path, "the checkpoint's header line is damaged");
  const uint64_t expected = kCheckpointHeaderBytes + h.payload + h.summary + h.config;
  if (size != expected) {
    damaged(path, "the checkpoint is " + std::string(size < expected ? "truncated" : "longer than its header says") +
                      ": " + std::to_string(size) + " bytes, its header announces " + std::to_string(expected) +
                      (size < expected ? " (the write was cut short, or the disk filled up)" : ""));
  }
  out.payload_offset = kCheckpointHeaderBytes;
  out.payload_size = static_cast<size_t>(h.payload);
  std::string meta;
  if (!file.read_at(kCheckpointHeaderBytes + h.payload, static_cast<size_t>(h.summary + h.config), meta)) {
    damaged(path, "cannot read the checkpoint's summary");
  }
  if (crc32c(meta.data(), meta.size()) != h.meta_crc) {
    damaged(path, "the checkpoint is damaged: its summary and config fail their CRC-32C checksum");
  }
  out.summary = parse_summary(std::string_view(meta).substr(0, static_cast<size_t>(h.summary)));
  out.config_yaml = meta.substr(static_cast<size_t>(h.summary));
  if (!whole) return out;
  out.bytes = std::move(head);
  if (!file.read_at(kCheckpointHeaderBytes, static_cast<size_t>(h.payload), out.bytes)) {
    damaged(path, "cannot read the checkpoint's archive");
  }
  if (crc32c(out.bytes.data() + out.payload_offset, out.payload_size) != h.payload_crc) {
    damaged(path, "the checkpoint is damaged: its model and optimizer archive fails its CRC-32C checksum (" +
                      std::to_string(h.payload) + " bytes)");
  }
  return out;
}

}  // namespace

std::string escape_line(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape_line(const std::string& value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) {
      out += value[i + 1] == 'n' ? '\n' : value[i + 1];
      ++i;
    } else {
      out += value[i];
    }
  }
  return out;
}

std::string begin_checkpoint_file() { return std::string(kCheckpointHeaderBytes, ' '); }

void finish_checkpoint_file(std::string& file, const CheckpointSummary& summary, std::string_view config_yaml) {
  Header h;
  h.payload = file.size() - kCheckpointHeaderBytes;
  h.payload_crc = crc32c(file.data() + kCheckpointHeaderBytes, static_cast<size_t>(h.payload));
  const std::string summary_bytes = summary_text(summary);
  h.summary = summary_bytes.size();
  h.config = config_yaml.size();
  file += summary_bytes;
  file.append(config_yaml.data(), config_yaml.size());
  h.meta_crc = crc32c(file.data() + kCheckpointHeaderBytes + h.payload, static_cast<size_t>(h.summary + h.config));
  const std::string line = header_line(h);
  file.replace(0, kCheckpointHeaderBytes, line);
}

CheckpointFile read_checkpoint_file(const std::string& path) { return read(path, true); }

CheckpointFile read_checkpoint_summary(const std::string& path) { return read(path, false); }

std::string checkpoint_position(int64_t epoch, int64_t batch_in_epoch, int64_t global_step) {
  const std::string step = "step " + std::to_string(global_step);
  if (batch_in_epoch < 0) return "epoch " + std::to_string(epoch) + ", " + step;
  if (batch_in_epoch > 0)
    return "epoch " + std::to_string(epoch) + ", batch " + std::to_string(batch_in_epoch) + ", " + step;
  return epoch == 0 ? step : "end of epoch " + std::to_string(epoch - 1) + ", " + step;
}

std::string resolve_checkpoint_name(const std::string& wanted, const std::string& directory) {
  std::string last = directory + "/last.ckpt";
  if (wanted == "last") return last;
  if (wanted != "best") {
    // A word, not a path (no '/', no extension), that names no file: a mistyped best or last.
    struct stat found;
    if (!wanted.empty() && wanted.find_first_of("/.") == std::string::npos && ::stat(wanted.c_str(), &found) != 0) {
      const char first = static_cast<char>(std::tolower(static_cast<unsigned char>(wanted[0])));
      throw Error("ckpt_path=" + wanted,
                  "is neither best, last nor a checkpoint file (no file '" + wanted + "' in the working directory)",
                  first == 'b'   ? std::string("Did you mean ckpt_path=best?")
                  : first == 'l' ? std::string("Did you mean ckpt_path=last?")
                                 : std::string("Give ckpt_path=best or last (the words are lower case), or the path "
                                               "of a .ckpt file."));
    }
    return wanted;
  }
  // Every checkpoint records the best files so far; last.ckpt is the newest, and without it
  // (callbacks.model_checkpoint.save_last=false) the newest intact one says the same.
  std::string source = last;
  struct stat info;
  if (::stat(last.c_str(), &info) != 0) {
    std::optional<std::string> newest = newest_intact_checkpoint(directory);
    if (!newest && ::stat(directory.c_str(), &info) == 0) {
      throw Error("ckpt_path=best", "no checkpoint in " + directory + " tells which one is best (it holds none)",
                  "Fit first with this hydra.run.dir, or give the path of a .ckpt file.");
    }
    if (newest) source = *newest;
  }
  const CheckpointFile file = read_checkpoint_summary(source);
  if (file.legacy) {
    throw Error("ckpt_path=best",
                source + " was written by an older trainer, whose best checkpoint cannot be looked up",
                "Give the best file's path: ckpt_path=" + directory + "/<name>.ckpt.");
  }
  if (file.summary.best.empty()) {
    throw Error("ckpt_path=best", "the run in " + directory + " recorded no best checkpoint",
                "Use ckpt_path=last, or train with a monitored metric (callbacks.model_checkpoint.monitor).");
  }
  // Best files are written beside last.ckpt: look there, so a run directory that was moved or
  // copied still finds its own file, not the one at the recorded absolute path.
  const auto here = [&](const std::string& recorded) {
    return directory + "/" + recorded.substr(recorded.find_last_of('/') + 1);
  };
  std::string best = here(file.summary.best.front().second);
  if (::stat(best.c_str(), &info) == 0) return best;
  // Deleted by hand (or lost): the user asked for the best, so no other file is taken in its place.
  std::string next;
  for (const auto& entry : file.summary.best) {
    if (::stat(here(entry.second).c_str(), &info) == 0) {
      next = here(entry.second);
      break;
    }
  }
  throw Error("ckpt_path=best",
              "the run's best checkpoint, " + best + ", is gone" +
                  (next.empty() ? std::string(", and so are the other best files it recorded")
                                : "; the best file left of those it recorded is " + next),
              (next.empty() ? std::string() : "Give ckpt_path=" + next + ", or ") +
                  std::string(next.empty() ? "Use " : "") + "ckpt_path=last (the weights the fit ended with).");
}

bool checkpoint_intact(const std::string& path) {
  const bool suggested = suggest_intact;
  suggest_intact = false;
  bool intact = true;
  try {
    (void)read(path, true);
  } catch (const Error&) {
    intact = false;
  }
  suggest_intact = suggested;
  return intact;
}

std::vector<std::string> checkpoints_newest_first(const std::string& directory) {
  std::vector<std::pair<int64_t, std::string>> found;  // (mtime in ns, path)
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return {};
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.size() < 5 || name.compare(name.size() - 5, 5, ".ckpt") != 0) continue;
    const std::string path = directory + "/" + name;
    struct stat info;
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    found.emplace_back(static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec, path);
  }
  ::closedir(dir);
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> paths;
  paths.reserve(found.size());
  for (auto& [time, path] : found) paths.push_back(std::move(path));
  return paths;
}

std::optional<std::string> newest_intact_checkpoint(const std::string& directory, const std::string& except) {
  for (const std::string& path : checkpoints_newest_first(directory)) {
    if (path != except && checkpoint_intact(path)) return path;
  }
  return std::nullopt;
}

}  // namespace trainer::formats
