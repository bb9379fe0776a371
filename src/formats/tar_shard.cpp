#include "trainer/formats/tar_shard.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string_view>
#include <utility>

#include "trainer/util/error.h"

namespace trainer::formats {
namespace {

constexpr size_t kMostExpanded = 10'000'000;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Whether two extensions are the same but for case, without allocating (per field of every sample).
bool same_extension(const std::string& a, const std::string& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](unsigned char x, unsigned char y) { return std::tolower(x) == std::tolower(y); });
}

// The matching '}' of the '{' at `open`, or npos.
size_t closing_brace(const std::string& text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == '{') ++depth;
    if (text[i] == '}' && --depth == 0) return i;
  }
  return std::string::npos;
}

// The parts of `inside` between its top-level commas.
std::vector<std::string> top_level_parts(const std::string& inside) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < inside.size(); ++i) {
    if (inside[i] == '{') ++depth;
    if (inside[i] == '}') --depth;
    if (inside[i] == ',' && depth == 0) {
      parts.push_back(inside.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(inside.substr(start));
  return parts;
}

bool parse_integer(std::string_view text, int64_t& value) {
  if (text.empty()) return false;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [end, error] = std::from_chars(first, last, value);
  return error == std::errc() && end == last;
}

void expand_into(const std::string& spec, const std::string& key, std::vector<std::string>& out) {
  const size_t open = spec.find('{');
  if (open == std::string::npos) {
    if (spec.find('}') != std::string::npos) {
      throw Error(key, "'" + spec + "' has a '}' without its '{'", "Balance the braces: data-{000..009}.tar.");
    }
    out.push_back(spec);
    return;
  }
  const size_t close = closing_brace(spec, open);
  if (close == std::string::npos) {
    throw Error(key, "'" + spec + "' has a '{' without its '}'", "Balance the braces: data-{000..009}.tar.");
  }
  const std::string head = spec.substr(0, open);
  const std::string inside = spec.substr(open + 1, close - open - 1);
  const std::string tail = spec.substr(close + 1);
  std::vector<std::string> parts = top_level_parts(inside);
  if (parts.size() == 1) {
    const size_t dots = inside.find("..");
    const size_t dots2 = dots == std::string::npos ? dots : inside.find("..", dots + 2);
    int64_t first = 0, last = 0, step = 0;
    const std::string_view view(inside);
    if (dots == std::string::npos || !parse_integer(view.substr(0, dots), first) ||
        !parse_integer(view.substr(dots + 2, dots2 == std::string::npos ? std::string::npos : dots2 - dots - 2),
                       last) ||
        (dots2 != std::string::npos && (!parse_integer(view.substr(dots2 + 2), step) || step == 0))) {
      throw Error(key, "'{" + inside + "}' in '" + spec + "' is neither a range of numbers nor a list",
                  "Write a range as {000..127} (zero-padded like its first bound), with a step as {0..10..2}, or "
                  "a list as {a,b}.");
    }
    const std::string a = inside.substr(0, dots);
    const std::string b = inside.substr(dots + 2, dots2 == std::string::npos ? std::string::npos : dots2 - dots - 2);
    const bool padded = (a.size() > 1 && a[0] == '0') || (b.size() > 1 && b[0] == '0');
    const size_t width = padded ? std::max(a.size(), b.size()) : 0;
    step = (first <= last ? 1 : -1) * (step < 0 ? -step : (step == 0 ? 1 : step));
    if (static_cast<size_t>((last - first) / step) >= kMostExpanded) {
      throw Error(key, "'{" + inside + "}' names more than " + std::to_string(kMostExpanded) + " shards");
    }
    parts.clear();
    for (int64_t v = first; step > 0 ? v <= last : v >= last; v += step) {
      std::string text = std::to_string(v < 0 ? -v : v);
      if (text.size() < width) text.insert(0, width - text.size() - (v < 0 ? 1 : 0), '0');
      parts.push_back((v < 0 ? "-" : "") + text);
    }
  }
  for (const std::string& part : parts) {
    expand_into(head + part + tail, key, out);
    if (out.size() > kMostExpanded) {
      throw Error(key, "'" + spec + "' names more than " + std::to_string(kMostExpanded) + " shards");
    }
  }
}

}  // namespace

std::vector<std::string> expand_braces(const std::string& spec, const std::string& key) {
  std::vector<std::string> out;
  expand_into(spec, key, out);
  return out;
}

const SampleField* ShardSample::field(const std::string& extension) const {
  for (const SampleField& f : fields) {
    if (same_extension(f.extension, extension)) return &f;
  }
  return nullptr;
}

TarShardReader::TarShardReader(std::string path, std::string key) : path_(std::move(path)), key_(std::move(key)) {
  // libarchive would read standard input for an empty name and block on a FIFO: refused first.
  if (path_.empty()) {
    throw Error(key_, "lists an empty shard path",
                "Give each shard's file: \"" + key_ +
                    "='/data/train-{000..009}.tar'\" (on the command line, both "
                    "quotes: Hydra's and the shell's).");
  }
  if (path_.find("://") != std::string::npos || path_.rfind("pipe:", 0) == 0) {
    throw Error(key_, "lists '" + path_ + "': shards are read from local files only (no URLs or pipe: commands)",
                "Copy or mount the shards on this machine and give their paths.");
  }
  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0) {
    const std::string why = std::strerror(errno);
    if (path_.find_first_of("*?[") != std::string::npos) {
      throw Error(key_, "lists '" + path_ + "': " + why + "; wildcards (*, ?, [...]) are not expanded",
                  "Name the shards with braces, as WebDataset does: " + key_ +
                      "='/data/train-{000000..000127}.tar', or list them: " + key_ + "=[a.tar,b.tar].");
    }
    throw Error(key_, "lists '" + path_ + "': " + why,
                "Check the path (" + key_ +
                    " lists the files; braces like {000..009} are expanded, ~ is the home "
                    "directory; a relative path is taken from the directory trainer was started in).");
  }
  if (!S_ISREG(info.st_mode)) {
    throw Error(key_,
                "lists '" + path_ + "', which is " + (S_ISDIR(info.st_mode) ? "a directory" : "not a regular file"),
                "List the tar files themselves: " + key_ + "='" + (S_ISDIR(info.st_mode) ? path_ + "/" : "") +
                    "train-{000..009}.tar'.");
  }
  archive_ = archive_read_new();
  if (archive_ == nullptr) throw Error(path_, "libarchive could not allocate a reader");
  archive_read_support_format_tar(archive_);
  archive_read_support_filter_all(archive_);
  if (archive_read_open_filename(archive_, path_.c_str(), 1 << 16) != ARCHIVE_OK) {
    const std::string why = archive_error_string(archive_) != nullptr ? archive_error_string(archive_) : "";
    archive_read_free(archive_);
    archive_ = nullptr;
    throw Error(path_, "cannot open the shard (listed at " + key_ + "): " + why,
                "A shard is a tar file, optionally compressed (.tar.gz, .tar.zst, .tar.xz): check the file.");
  }
}

TarShardReader::~TarShardReader() {
  if (archive_ != nullptr) archive_read_free(archive_);
}

void TarShardReader::fail(const std::string& member, const std::string& what) const {
  const char* why = archive_error_string(archive_);
  throw Error(path_ + (member.empty() ? std::string() : ": member " + member),
              what + (why != nullptr ? std::string(": ") + why : std::string()),
              "The shard is damaged or was cut short (an interrupted copy?): write it again, or leave it out of its "
              "shard list (with data.on_bad_sample=skip a sample that cannot be decoded is left out, but a broken "
              "tar cannot be read past).");
}

// libarchive reads a tar cut at a member boundary to a clean end: nothing tells it from a whole
// one but the end-of-archive blocks (two of 512 zero bytes, then padding) every tar writer puts
// last. An uncompressed shard whose last block is not zeros was cut short; a compressed one cut
// anywhere fails in its decompressor instead.
void TarShardReader::check_end_blocks() const {
  if (archive_filter_code(archive_, 0) != ARCHIVE_FILTER_NONE) return;
  std::ifstream in(path_, std::ios::binary | std::ios::ate);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
  if (size < 512) return;  // an empty file: libarchive's own error, or nothing to read
  char block[512];
  in.seekg(size - 512);
  if (!in.read(block, sizeof block)) return;
  if (std::all_of(block, block + sizeof block, [](char c) { return c == 0; })) return;
  throw Error(
      path_,
      "ends " + (pending_member_.empty() ? std::string("before its first member") : "after member " + pending_member_) +
          " without the zero blocks that end every tar archive: it was cut short at a member boundary, so "
          "its last samples are missing",
      "The shard is damaged or was cut short (an interrupted copy?): write it again, or leave it out of its "
      "shard list.");
}

bool TarShardReader::next_header() {
  if (at_end_) return false;
  for (;;) {
    struct archive_entry* entry = nullptr;
    const int status = archive_read_next_header(archive_, &entry);
    if (status == ARCHIVE_EOF) {
      at_end_ = true;
      check_end_blocks();
      return false;
    }
    if (status < ARCHIVE_WARN) {
      fail(pending_member_.empty() ? std::string() : "after " + pending_member_, "cannot read the next member");
    }
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    const char* name = archive_entry_pathname(entry);
    if (name == nullptr) continue;
    std::string member = name;
    const size_t slash = member.rfind('/');
    const size_t base = slash == std::string::npos ? 0 : slash + 1;
    const size_t dot = member.find('.', base);
    if (dot == std::string::npos || dot == base) continue;  // no key, or a hidden file
    pending_member_ = member;
    pending_key_ = member.substr(0, dot);
    pending_extension_ = member.substr(dot + 1);
    pending_size_ = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : -1;
    have_pending_ = true;
    return true;
  }
}

bool TarShardReader::next(ShardSample& sample, const std::function<bool(const std::string&)>& wanted) {
  if (!have_pending_ && !next_header()) return false;
  sample.key = pending_key_;
  if (!keys_.insert(sample.key).second) {
    throw Error(path_ + ": member " + pending_member_,
                "belongs to sample '" + sample.key +
                    "', whose other members came earlier with other samples between: a sample's members must be "
                    "adjacent in the tar",
                "Write the shard with its members in name order (GNU tar: tar --sort=name -cf shard.tar ...; "
                "Python: add them sorted), as WebDataset's writers do.");
  }
  size_t used = 0;
  for (;;) {
    for (size_t i = 0; i < used; ++i) {
      if (same_extension(sample.fields[i].extension, pending_extension_)) {
        throw Error(path_ + ": member " + pending_member_,
                    "is a second ." + pending_extension_ + " member of sample '" + sample.key + "' (the first is " +
                        sample.fields[i].member + ")",
                    "Give each sample one member per extension: remove or rename the duplicate and write the shard "
                    "again.");
      }
    }
    if (sample.fields.size() <= used) sample.fields.emplace_back();
    SampleField& field = sample.fields[used++];
    field.extension = pending_extension_;
    field.member = pending_member_;
    field.read = wanted(lower(field.extension));
    field.bytes.clear();
    have_pending_ = false;
    if (field.read && pending_size_ >= 0) {
      field.bytes.resize(static_cast<size_t>(pending_size_));
      size_t done = 0;
      while (done < field.bytes.size()) {
        const la_ssize_t got = archive_read_data(archive_, field.bytes.data() + done, field.bytes.size() - done);
        if (got < 0) fail(field.member, "cannot read the member's bytes");
        if (got == 0) fail(field.member, "the member ends before its " + std::to_string(pending_size_) + " bytes");
        done += static_cast<size_t>(got);
      }
    } else if (field.read) {
      uint8_t block[1 << 15];
      for (;;) {
        const la_ssize_t got = archive_read_data(archive_, block, sizeof block);
        if (got < 0) fail(field.member, "cannot read the member's bytes");
        if (got == 0) break;
        field.bytes.insert(field.bytes.end(), block, block + got);
      }
    } else if (archive_read_data_skip(archive_) != ARCHIVE_OK) {
      fail(field.member, "cannot skip over the member's bytes");
    }
    if (!next_header() || pending_key_ != sample.key) break;
  }
  sample.fields.resize(used);
  ++samples_read_;
  return true;
}

}  // namespace trainer::formats
