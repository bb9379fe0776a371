#include "trainer/formats/shard_writer.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <utility>

#include "trainer/util/error.h"

namespace trainer::formats {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBlock = 512;
constexpr int64_t kEndOfArchive = 2 * kBlock;

// A member's size in the tar: its header block and its data padded to whole blocks.
int64_t stored_size(size_t bytes) { return kBlock + (static_cast<int64_t>(bytes) + kBlock - 1) / kBlock * kBlock; }

std::string padded_number(int64_t value, int width) {
  std::string text = std::to_string(value);
  if (static_cast<int>(text.size()) < width) text.insert(0, static_cast<size_t>(width) - text.size(), '0');
  return text;
}

// Renames `from` to `to` unless `to` exists, atomically (two packs to the same names cannot both
// win): renameat2's RENAME_NOREPLACE, or where a file system lacks it, a hard link then an unlink.
// False with errno set (EEXIST: `to` exists).
bool rename_without_replacing(const std::string& from, const std::string& to) {
#ifdef RENAME_NOREPLACE
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return false;
#endif
  if (::link(from.c_str(), to.c_str()) != 0) return false;
  ::unlink(from.c_str());
  return true;
}

}  // namespace

ShardPattern::ShardPattern(std::string pattern, std::string key) : pattern_(std::move(pattern)), key_(std::move(key)) {
  const std::string example =
      "Give a pattern with one shard number, as webdataset's ShardWriter takes: shards/train-%06d.tar.";
  // One %d, %0Nd; "%%" is a literal '%', as in printf.
  bool numbered = false;
  std::string* part = &head_;
  for (size_t at = 0; at < pattern_.size(); ++at) {
    if (pattern_[at] != '%') {
      *part += pattern_[at];
      continue;
    }
    if (at + 1 < pattern_.size() && pattern_[at + 1] == '%') {
      *part += '%';
      ++at;
      continue;
    }
    if (numbered) throw Error(key_, "'" + pattern_ + "' has more than one shard number ('%')", example);
    size_t spec = at + 1;
    bool zero = false;
    if (spec < pattern_.size() && pattern_[spec] == '0') {
      zero = true;
      ++spec;
    }
    int width = 0;
    while (spec < pattern_.size() && pattern_[spec] >= '0' && pattern_[spec] <= '9' && width < 100) {
      width = width * 10 + (pattern_[spec] - '0');
      ++spec;
    }
    if (spec >= pattern_.size() || pattern_[spec] != 'd' || (!zero && width > 0)) {
      throw Error(key_,
                  "'" + pattern_ + "' has a '%' that is not a zero-padded shard number (%d or %06d; %% for a '%')",
                  example);
    }
    width_ = zero ? width : 0;
    numbered = true;
    part = &tail_;
    at = spec;
  }
  if (!numbered) {
    throw Error(key_, "'" + pattern_ + "' has no shard number (%06d) to number the shards by", example);
  }
  if (fs::path(name(0)).filename().empty() || name(0).back() == '/') {
    throw Error(key_, "'" + pattern_ + "' names a folder, not shard files", example);
  }
}

std::string ShardPattern::name(int64_t number) const { return head_ + padded_number(number, width_) + tail_; }

std::string ShardPattern::brace_spec(int64_t count) const {
  if (count <= 1) return name(0);
  const int64_t last = count - 1;
  // Zero-padded bounds make expand_braces pad every number; %d's are unpadded.
  if (width_ == 0 || static_cast<int>(std::to_string(last).size()) <= width_) {
    return head_ + "{" + padded_number(0, width_) + ".." + padded_number(last, width_) + "}" + tail_;
  }
  // Numbers that outgrow %0Nd's width are written wider and unpadded (s-%02d: s-99.tar, then
  // s-100.tar): a list of ranges, one per width, {{00..99},{100..152}}.
  std::string ranges = "{" + padded_number(0, width_) + ".." + std::string(static_cast<size_t>(width_), '9') + "}";
  int64_t from = 1;
  for (int digits = 0; digits < width_; ++digits) from *= 10;
  while (from <= last) {
    const int64_t to = from > last / 10 ? last : std::min(last, from * 10 - 1);
    ranges += ",{" + std::to_string(from) + ".." + std::to_string(to) + "}";
    if (to == last) break;
    from *= 10;
  }
  return head_ + "{" + ranges + "}" + tail_;
}

ShardWriter::ShardWriter(ShardPattern pattern, int64_t maxcount, int64_t maxsize)
    : pattern_(std::move(pattern)), maxcount_(maxcount), maxsize_(maxsize) {
  const std::string first = pattern_.name(0);
  std::error_code error;
  if (fs::exists(first, error)) {
    throw Error(pattern_.text(), "the first shard " + first + " exists already; nothing was written",
                "Remove the old shards, or give another output pattern.");
  }
  const fs::path folder = fs::path(first).parent_path();
  if (!folder.empty()) {
    fs::create_directories(folder, error);
    if (error) {
      throw Error(pattern_.text(), "cannot make the folder " + folder.string() + ": " + error.message(),
                  "Give an output pattern in a folder you can write to.");
    }
  }
}

ShardWriter::~ShardWriter() {
  if (archive_ != nullptr) {
    archive_write_free(archive_);
    ::unlink(temporary_.c_str());
  }
}

std::string ShardWriter::completed_text() const {
  if (written_.empty()) return "";
  return "; the " + std::to_string(written_.size()) + " shard(s) written before it (" + written_.front() +
         (written_.size() > 1 ? " .. " + written_.back() : std::string()) + ") are whole";
}

// libarchive's message, with the system's reason when it has one ("Write error: No space left on
// device").
std::string ShardWriter::archive_reason() const {
  std::string why = archive_error_string(archive_) != nullptr ? archive_error_string(archive_) : "unknown error";
  const int code = archive_errno(archive_);
  if (code > 0) {
    const std::string reason = std::error_code(code, std::generic_category()).message();
    if (why.find(reason) == std::string::npos) why += ": " + reason;
  }
  return why;
}

void ShardWriter::fail(const std::string& what) const {
  throw Error(current_, what,
              "Check the free space and permissions of its folder; the shards completed before it (" +
                  std::to_string(written_.size()) + ") are whole, this one was removed.");
}

void ShardWriter::open_next() {
  current_ = pattern_.name(static_cast<int64_t>(written_.size()));
  std::error_code exists_error;
  if (fs::exists(current_, exists_error)) {
    throw Error(pattern_.text(), "the shard " + current_ + " exists already; it was not overwritten" + completed_text(),
                "Remove the old shards, or give another output pattern.");
  }
  // A shard number in a folder's name ("shards/%d/data.tar") puts each shard in its own folder.
  const fs::path folder = fs::path(current_).parent_path();
  if (!folder.empty()) {
    std::error_code folder_error;
    fs::create_directories(folder, folder_error);
    if (folder_error) {
      throw Error(current_,
                  "cannot make its folder " + folder.string() + ": " + folder_error.message() + completed_text(),
                  "Give an output pattern in a folder you can write to.");
    }
  }
  temporary_ = current_ + ".partial-" + std::to_string(::getpid());
  archive_ = archive_write_new();
  if (archive_ == nullptr) throw Error(current_, "libarchive could not make a writer (out of memory)");
  if (archive_write_set_format_pax_restricted(archive_) != ARCHIVE_OK ||
      archive_write_set_bytes_in_last_block(archive_, 1) != ARCHIVE_OK ||
      archive_write_open_filename(archive_, temporary_.c_str()) != ARCHIVE_OK) {
    const std::string why = archive_reason();
    archive_write_free(archive_);
    archive_ = nullptr;
    ::unlink(temporary_.c_str());
    throw Error(current_, "cannot be written: " + why + completed_text(),
                "Give an output pattern in a folder you can write to.");
  }
  count_ = 0;
  size_ = 0;
}

void ShardWriter::close_current() {
  if (archive_ == nullptr) return;
  const bool closed = archive_write_close(archive_) == ARCHIVE_OK;
  const std::string why = archive_reason();
  archive_write_free(archive_);
  archive_ = nullptr;
  if (!closed) {
    ::unlink(temporary_.c_str());
    fail("could not be completed: " + why);
  }
  if (!rename_without_replacing(temporary_, current_)) {
    const int code = errno;
    ::unlink(temporary_.c_str());
    if (code == EEXIST) {
      throw Error(pattern_.text(),
                  "the shard " + current_ + " appeared while it was written (another pack to the same names?); it " +
                      "was not overwritten, and this pack's copy was removed" + completed_text(),
                  "Give each pack its own output pattern.");
    }
    fail("could not be renamed from " + temporary_ + ": " + std::error_code(code, std::generic_category()).message());
  }
  written_.push_back(current_);
  total_bytes_ += size_ + kEndOfArchive;
}

void ShardWriter::write(const std::string& key, const std::vector<SampleMember>& members) {
  int64_t sample_size = 0;
  for (const SampleMember& member : members) sample_size += stored_size(member.bytes.size());
  if (archive_ != nullptr && count_ > 0 && (count_ >= maxcount_ || size_ + sample_size + kEndOfArchive > maxsize_)) {
    close_current();
  }
  if (archive_ == nullptr) open_next();
  archive_entry* entry = archive_entry_new();
  if (entry == nullptr) throw Error(current_, "libarchive could not make an entry (out of memory)");
  for (const SampleMember& member : members) {
    const std::string name = key + "." + std::string(member.extension);
    archive_entry_clear(entry);
    archive_entry_set_pathname(entry, name.c_str());
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_entry_set_size(entry, static_cast<la_int64_t>(member.bytes.size()));
    archive_entry_set_mtime(entry, 0, 0);
    if (archive_write_header(archive_, entry) != ARCHIVE_OK ||
        (!member.bytes.empty() && archive_write_data(archive_, member.bytes.data(), member.bytes.size()) !=
                                      static_cast<la_ssize_t>(member.bytes.size()))) {
      const std::string why = archive_reason();
      archive_entry_free(entry);
      archive_write_free(archive_);
      archive_ = nullptr;
      ::unlink(temporary_.c_str());
      fail("writing member " + name + " failed: " + why);
    }
  }
  archive_entry_free(entry);
  if (shard_samples_.size() <= written_.size()) shard_samples_.resize(written_.size() + 1, 0);
  ++shard_samples_[written_.size()];
  ++count_;
  ++samples_;
  size_ += sample_size;
}

std::vector<std::string> ShardWriter::finish() {
  close_current();
  return written_;
}

std::string npy_bytes(const std::string& descr, const std::vector<int64_t>& shape, std::string_view data) {
  std::string dims;  // (3,) for one dimension, (1, 28, 28) for more, as NumPy writes a tuple
  for (size_t i = 0; i < shape.size(); ++i) dims += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t unpadded = 10 + header.size() + 1;  // magic, version, length; the header; its '\n'
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(data.data(), data.size());
  return out;
}

}  // namespace trainer::formats
