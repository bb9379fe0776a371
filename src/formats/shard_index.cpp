#include "trainer/formats/shard_index.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "trainer/formats/crc32c.h"

namespace trainer::formats {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHeader = "trainer shard index 2";
constexpr size_t kDigestSpan = size_t{64} << 10;          // bytes read at each end by shard_digest
constexpr auto kUnusedFor = std::chrono::hours(24 * 30);  // index files not written for this long go

// A field of a line: tabs, line ends and '%' written as %09, %0A, %0D, %25.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\t') {
      out += "%09";
    } else if (c == '\n') {
      out += "%0A";
    } else if (c == '\r') {
      out += "%0D";
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescaped(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const std::string code = text.substr(i + 1, 2);
      if (code == "25" || code == "09" || code == "0A" || code == "0D") {
        out += code == "25" ? '%' : code == "09" ? '\t' : code == "0A" ? '\n' : '\r';
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab = line.find('\t'); tab != std::string::npos; tab = line.find('\t', start)) {
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
  fields.push_back(line.substr(start));
  return fields;
}

template <typename T>
bool parse(const std::string& text, T& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

// FNV-1a, 64 bits: the index file's name from what it indexes.
uint64_t fnv1a(const std::string& text, uint64_t hash = 0xcbf29ce484222325ULL) {
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace

std::optional<uint32_t> shard_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  std::vector<char> buffer(kDigestSpan);
  uint32_t crc = 0;
  const auto read_at = [&](uint64_t offset, size_t length) {
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(buffer.data(), static_cast<std::streamsize>(length));
    crc = crc32c_extend(crc, buffer.data(), static_cast<size_t>(in.gcount()));
    return static_cast<size_t>(in.gcount()) == length;
  };
  const size_t head = static_cast<size_t>(std::min<uint64_t>(size, kDigestSpan));
  if (!read_at(0, head)) return std::nullopt;
  if (size > kDigestSpan) {
    const uint64_t tail_start = std::max<uint64_t>(kDigestSpan, size - kDigestSpan);
    if (!read_at(tail_start, static_cast<size_t>(size - tail_start))) return std::nullopt;
  }
  return crc;
}

bool FileStamp::operator==(const FileStamp& other) const {
  return device == other.device && inode == other.inode && size == other.size && modified_ns == other.modified_ns &&
         changed_ns == other.changed_ns;
}

std::optional<FileStamp> file_stamp(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  FileStamp stamp;
  stamp.device = static_cast<uint64_t>(info.st_dev);
  stamp.inode = static_cast<uint64_t>(info.st_ino);
  stamp.size = static_cast<uint64_t>(info.st_size);
  stamp.modified_ns = static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  stamp.changed_ns = static_cast<int64_t>(info.st_ctim.tv_sec) * 1'000'000'000 + info.st_ctim.tv_nsec;
  return stamp;
}

std::string shard_index_directory() {
  const auto set = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && value[0] != '\0' ? std::string(value) : std::string();
  };
  if (const std::string own = set("TRAINER_CACHE_DIR"); !own.empty()) return own + "/shard-index";
  if (const std::string xdg = set("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/trainer/shard-index";
  if (const std::string home = set("HOME"); !home.empty()) return home + "/.cache/trainer/shard-index";
  return "";
}

ShardIndex::ShardIndex(std::string directory, std::string context, std::vector<std::string> paths)
    : directory_(std::move(directory)), context_(std::move(context)), paths_(std::move(paths)) {
  now_.reserve(paths_.size());
  for (const std::string& path : paths_) now_.push_back(file_stamp(path));
  entries_.resize(paths_.size());
  if (directory_.empty() || paths_.empty()) return;
  uint64_t hash = fnv1a(context_);
  for (const std::string& path : paths_) hash = fnv1a(std::string(1, '\0') + path, hash);
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx.idx", static_cast<unsigned long long>(hash));
  file_ = directory_ + "/" + name;

  std::ifstream in(file_);
  std::string line;
  if (!in || !std::getline(in, line) || line != kHeader) return;
  if (!std::getline(in, line) || line != "context\t" + escaped(context_)) return;
  for (size_t i = 0; i < paths_.size() && std::getline(in, line); ++i) {
    const std::vector<std::string> f = fields_of(line);
    if (f.size() != 11 || unescaped(f[0]) != paths_[i]) return;  // another list under the same hash
    Entry entry;
    if (!parse(f[1], entry.stamp.device) || !parse(f[2], entry.stamp.inode) || !parse(f[3], entry.stamp.size) ||
        !parse(f[4], entry.stamp.modified_ns) || !parse(f[5], entry.stamp.changed_ns) ||
        !parse(f[6], entry.count.samples) || !parse(f[7], entry.count.skipped) || !parse(f[8], entry.count.max_label) ||
        !parse(f[10], entry.count.digest) || entry.count.samples < 0 || entry.count.skipped < 0) {
      continue;  // a damaged line: that shard is counted again
    }
    entry.count.max_label_where = unescaped(f[9]);
    entries_[i] = std::move(entry);
  }
}

std::optional<ShardCount> ShardIndex::find(size_t i) const {
  if (i >= entries_.size() || !entries_[i] || !now_[i] || !(entries_[i]->stamp == *now_[i])) return std::nullopt;
  return entries_[i]->count;
}

void ShardIndex::store(size_t i, const ShardCount& count) {
  if (i >= entries_.size() || !now_[i] || file_.empty()) return;
  entries_[i] = Entry{*now_[i], count};
  changed_ = true;
}

bool ShardIndex::save() {
  if (file_.empty()) return false;
  std::error_code error;
  if (!changed_) {
    // Used as it is: its time says so, once a day, so that it is not taken for an unused one.
    const auto written = fs::last_write_time(file_, error);
    if (!error && fs::file_time_type::clock::now() - written > std::chrono::hours(24)) {
      fs::last_write_time(file_, fs::file_time_type::clock::now(), error);
    }
    return false;
  }
  fs::create_directories(directory_, error);
  if (error) return false;
  std::ostringstream out;
  out << kHeader << "\ncontext\t" << escaped(context_) << "\n";
  for (size_t i = 0; i < paths_.size(); ++i) {
    // A shard without an entry keeps its place with a line that never matches (size -1 is no size).
    const Entry entry = entries_[i].value_or(Entry{});
    const FileStamp& s = entry.stamp;
    const ShardCount& c = entry.count;
    out << escaped(paths_[i]) << '\t' << s.device << '\t' << s.inode << '\t' << s.size << '\t' << s.modified_ns << '\t'
        << s.changed_ns << '\t' << (entries_[i] ? c.samples : -1) << '\t' << c.skipped << '\t' << c.max_label << '\t'
        << escaped(c.max_label_where) << '\t' << c.digest << "\n";
  }
  // A name no other process writes (ranks on other hosts may share the cache and their pids).
  char host[64] = {};
  ::gethostname(host, sizeof(host) - 1);
  const std::string temporary = file_ + ".tmp-" + host + "-" + std::to_string(::getpid()) + "-" +
                                std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  {
    std::ofstream file(temporary, std::ios::trunc);
    file << out.str();
    file.close();  // a write error shows at the latest here: the index is not replaced by a cut one
    if (file.fail()) {
      fs::remove(temporary, error);
      return false;
    }
  }
  fs::rename(temporary, file_, error);
  if (error) {
    fs::remove(temporary, error);
    return false;
  }
  changed_ = false;
  // Indexes of shard lists not opened for a month (a test's temporary shards, an old dataset).
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(directory_, error), end; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    // Indexes, and temporary files a killed process left.
    const bool ours = path.extension() == ".idx" || path.filename().string().find(".idx.tmp-") != std::string::npos;
    if (!ours || path == fs::path(file_)) continue;
    std::error_code time_error;
    const auto written = fs::last_write_time(path, time_error);
    if (!time_error && now - written > kUnusedFor) fs::remove(path, time_error);
  }
  return true;
}

}  // namespace trainer::formats
