// Internal to the config module: finding a map entry by key while the map is being built or
// merged into. Node keeps its entries in a vector (insertion order is part of the config), so a
// lookup is a scan; done once per key while building a map, that is quadratic, and a 10 MB file
// with 60k top-level keys took seconds. This index scans while a map is small (most config maps
// are, and a scan of a few keys beats hashing) and hashes once it is large.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "trainer/config/node.h"

namespace trainer::config::detail {

// Positions by key hash for one entry vector. It holds positions, not pointers, so the vector may
// grow and move (a Node moved between stack frames) between calls; pass the same vector every
// time. While an index is in use, entries may only be appended or have their values changed: no
// erasing, reordering or renaming. Appended entries are picked up at the next find.
class EntryIndex {
 public:
  // Below this many entries find scans; hashing starts when a map reaches it.
  static constexpr size_t kScanLimit = 32;

  // The first entry with this key (as a scan would find it), or nullptr.
  Node::Entry* find(std::vector<Node::Entry>& entries, std::string_view key) {
    if (entries.size() < kScanLimit) {
      for (Node::Entry& entry : entries)
        if (entry.key == key) return &entry;
      return nullptr;
    }
    for (; indexed_ < entries.size(); ++indexed_) insert(entries, indexed_);
    const size_t h = hash(key);
    for (size_t i = h & mask(); slots_[i].position != kEmpty; i = (i + 1) & mask()) {
      const Slot& slot = slots_[i];
      if (slot.hash == h && entries[slot.position].key == key) return &entries[slot.position];
    }
    return nullptr;
  }

 private:
  // Open addressing with linear probing in one vector: a node-based hash map costs a malloc and
  // a free per key, a third of the time of loading a large file.
  struct Slot {
    size_t hash = 0;
    size_t position = kEmpty;
  };
  static constexpr size_t kEmpty = static_cast<size_t>(-1);

  static size_t hash(std::string_view key) { return std::hash<std::string_view>{}(key); }
  size_t mask() const { return slots_.size() - 1; }

  void insert(const std::vector<Node::Entry>& entries, size_t position) {
    if (2 * (count_ + 1) > slots_.size()) grow();
    const size_t h = hash(entries[position].key);
    size_t i = h & mask();
    for (; slots_[i].position != kEmpty; i = (i + 1) & mask()) {
      // A repeated key keeps pointing at its first entry, which is what a scan finds.
      if (slots_[i].hash == h && entries[slots_[i].position].key == entries[position].key) return;
    }
    slots_[i] = Slot{h, position};
    ++count_;
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 4 * kScanLimit : 2 * old.size(), Slot{});
    for (const Slot& slot : old) {
      if (slot.position == kEmpty) continue;
      size_t i = slot.hash & mask();
      while (slots_[i].position != kEmpty) i = (i + 1) & mask();
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;  // a power of two in size, at most half full
  size_t count_ = 0;         // occupied slots
  size_t indexed_ = 0;       // entries [0, indexed_) have been inserted
};

}  // namespace trainer::config::detail
