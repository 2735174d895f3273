#include "vbucket/checkpoint_manager.h"

#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace syncwrite::vbucket {

CheckpointManager::CheckpointManager(CheckpointOptions options) : options_(options) {
  base::MutexLock lock(mutex_);  // uncontended: only for the analysis
  openCheckpointLocked();
}

CheckpointManager::~CheckpointManager() {
  if (options_.memory == nullptr) return;
  base::MutexLock lock(mutex_);
  int64_t held = 0;
  for (const Checkpoint& c : checkpoints_) held += static_cast<int64_t>(c.memoryBytes());
  options_.memory->addCheckpointBytes(-held);
}

void CheckpointManager::checkLayout() noexcept {
  static_assert(alignof(CheckpointManager) == 64);
  // Line 0 is the mutex and the checkpoint list, line 1 the map and the
  // head of the cursor list (the members are declared in that order).
  static_assert(sizeof(base::Mutex) + sizeof(std::list<Checkpoint>) == 64,
                "the mutex and the checkpoint list no longer fill line 0 exactly");
  // The size of the pointer member first_cursor_ is meant, not of a Cursor.
  static_assert(sizeof(std::map<std::string, Cursor, std::less<>>) +
                        sizeof(Cursor*) +  // NOLINT(bugprone-sizeof-expression)
                        sizeof(uint64_t) ==
                    64,
                "the cursor map, the cursor list head and the next id no longer fill line 1");
}

uint64_t CheckpointManager::openCheckpointLocked() {
  // The new checkpoint first: if its allocation throws, nothing has changed
  // (the old one stays open, as appendLocked relies on).
  const uint64_t id = next_checkpoint_id_;
  checkpoints_.emplace_back(id);
  ++next_checkpoint_id_;
  if (checkpoints_.size() > 1) std::prev(checkpoints_.end(), 2)->close();
  return id;
}

namespace {

// The cursor named `name` in `cursors` (the manager's map, const or not;
// its lock held); std::invalid_argument, naming `caller`, when there is none.
template <typename CursorMap>
auto& findCursor(CursorMap& cursors, std::string_view name, std::string_view caller) {
  auto it = cursors.find(name);
  if (it == cursors.end()) {
    throw std::invalid_argument(std::string(caller) + ": no cursor named '" + std::string(name) +
                                "'");
  }
  return it->second;
}

// One heap allocation per queued item: the item (its reference count
// included), its checkpoint entry, then the key's and the value's bytes. The entry's `item` is the
// checkpoint's reference to the block; releasing the entry (releaseEntry) drops it, and the block
// goes when no reader holds the item either (intrusive_ptr_release, below).
//
// What every block starts with: the item and the bucket memory the block is
// charged to. create() allocates the block with room for the key and the
// value after it and copies them there; destroy() is its only way out. The
// block charges its bytes to the bucket's item bytes for its life; the
// figure is recomputed from the item, which never changes once built, so only
// the memory is stored. `Block` is the whole block, whose size (with the
// bytes after it) is charged, and `kKind` the tag that names it to
// intrusive_ptr_release.
template <typename Block, ItemBlock kKind>
struct ChargedItem : Item {
  static Block* create(BucketMemory* bucket_memory, QueueOp queued_op, std::string_view key,
                       std::string_view value, Cas item_cas, bool item_deleted,
                       ItemMeta item_meta) {
    if (key.size() > UINT32_MAX || value.size() > UINT32_MAX) {
      throw std::length_error("an item's key or value is over 4 GiB");
    }
    void* raw = ::operator new(sizeof(Block) + key.size() + value.size());
    char* bytes = static_cast<char*>(raw) + sizeof(Block);  // where Item::bytes() looks
    if (!key.empty()) std::memcpy(bytes, key.data(), key.size());
    if (!value.empty()) std::memcpy(bytes + key.size(), value.data(), value.size());
    return ::new (raw) Block(bucket_memory, queued_op, key.size(), value.size(), item_cas,
                             item_deleted, item_meta);
  }

  static void destroy(const Block* block) noexcept {
    block->~Block();
    ::operator delete(const_cast<Block*>(block));
  }

  // Only through create(), which has made room for the bytes after the block.
  ChargedItem(BucketMemory* bucket_memory, QueueOp queued_op, size_t item_key_size,
              size_t item_value_size, Cas item_cas, bool item_deleted, ItemMeta item_meta)
      : Item{.key_size = static_cast<uint32_t>(item_key_size),
             .value_size = static_cast<uint32_t>(item_value_size),
             .cas = item_cas,
             .meta = item_meta,
             .op = queued_op,
             .deleted = item_deleted,
             .block = kKind},
        memory(bucket_memory) {
    charge(1);
  }
  ~ChargedItem() { charge(-1); }
  ChargedItem(const ChargedItem&) = delete;
  ChargedItem& operator=(const ChargedItem&) = delete;

  BucketMemory* const memory;

 private:
  // What the block's allocation holds: the block, then the key and value.
  void charge(int64_t sign) const noexcept {
    if (memory == nullptr) return;
    memory->addItemBytes(sign * static_cast<int64_t>(sizeof(Block) + key_size + value_size));
  }
};

struct QueuedBlock : ChargedItem<QueuedBlock, ItemBlock::kQueued> {
  using ChargedItem::ChargedItem;
  CheckpointEntry entry;
};

// A prepare's block also holds the entry of its commit or abort, which takes
// its own reference to the block when it is queued.
struct PrepareBlock : ChargedItem<PrepareBlock, ItemBlock::kPrepare> {
  using ChargedItem::ChargedItem;
  CheckpointEntry entry;
  ResolutionEntry resolution;
};

// Item::bytes() finds the key after the block by these sizes.
static_assert(sizeof(QueuedBlock) == kItemBlockSizes[static_cast<size_t>(ItemBlock::kQueued)],
              "QueuedBlock's size changed: update kItemBlockSizes (item.h)");
static_assert(sizeof(PrepareBlock) == kItemBlockSizes[static_cast<size_t>(ItemBlock::kPrepare)],
              "PrepareBlock's size changed: update kItemBlockSizes (item.h)");

// The entry reserved for `prepare`'s commit or abort, or null when it has
// none: not from queuePrepare, or used up already (queued: it has a seqno,
// which it keeps once expelled, unlike its item).
ResolutionEntry* reservedEntry(const QueuedPrepare& prepare) noexcept {
  if (!prepare.item || prepare->block != ItemBlock::kPrepare) return nullptr;
  // The block is mutable: only its item is handed out as const.
  auto* block = const_cast<PrepareBlock*>(static_cast<const PrepareBlock*>(prepare.item.get()));
  return block->resolution.own_seqno != 0 ? nullptr : &block->resolution;
}

// Marks `entry` as living in `block` and hands the first reference to the
// block to the caller, as the item. The entry's own reference is taken by
// appendLocked(), once nothing can throw.
QueuedItem attach(Item* block, CheckpointEntry& entry) {
  entry.own_allocation = false;
  entry.op = block->op;
  return QueuedItem(block);
}

}  // namespace

bool QueuedPrepare::resolvable() const noexcept { return reservedEntry(*this) != nullptr; }

Seqno committedSeqno(const Item& item) noexcept {
  if (item.block != ItemBlock::kPrepare) return item.seqno;
  const ResolutionEntry& resolution = static_cast<const PrepareBlock&>(item).resolution;
  return resolution.own_seqno != 0 && resolution.op == QueueOp::kCommit ? resolution.own_seqno
                                                                        : item.seqno;
}

void intrusive_ptr_release(const Item* item) noexcept {
  if (item->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  switch (item->block) {
    case ItemBlock::kQueued:
      QueuedBlock::destroy(static_cast<const QueuedBlock*>(item));
      return;
    case ItemBlock::kPrepare:
      PrepareBlock::destroy(static_cast<const PrepareBlock*>(item));
      return;
  }
}

Seqno CheckpointManager::appendLocked(CheckpointEntry* entry, const QueuedItem& item, Seqno at) {
  const Seqno high = high_seqno_.load(std::memory_order_relaxed);
  if (at != 0 && at <= high) {
    throw std::invalid_argument("queue: seqno " + std::to_string(at) +
                                " is not above the high seqno " + std::to_string(high));
  }
  // The only other step that can throw (a new checkpoint allocates), so it
  // comes first: if it throws, the entry holds no reference and nothing changed.
  if (options_.max_items_per_checkpoint != 0 &&
      checkpoints_.back().numItems() >= options_.max_items_per_checkpoint) {
    openCheckpointLocked();
  }
  entry->item = item;  // the checkpoint's reference: keeps the block alive
  const Seqno seqno = at != 0 ? at : high + 1;
  if (entry->resolution) static_cast<ResolutionEntry*>(entry)->own_seqno = seqno;
  checkpoints_.back().append(entry);
  high_seqno_.store(seqno, std::memory_order_release);
  return seqno;
}

QueuedItem CheckpointManager::queue(QueueOp op, std::string_view key, std::string_view value,
                                    Cas cas, bool deleted, ItemMeta meta, Seqno at) {
  // Allocate outside the lock; the seqno is filled in under it, before any
  // other thread can see the item.
  QueuedBlock* block = QueuedBlock::create(options_.memory, op, key, value, cas, deleted, meta);
  Item* item = block;
  CheckpointEntry* entry = &block->entry;
  QueuedItem result = attach(block, *entry);  // owns the block from here
  {
    base::MutexLock lock(mutex_);
    item->seqno = appendLocked(entry, result, at);
  }
  chargeEntry(*item, op);
  return result;
}

QueuedPrepare CheckpointManager::queuePrepare(std::string_view key, std::string_view value, Cas cas,
                                              bool deleted, ItemMeta meta, uint8_t durability_level,
                                              Seqno at) {
  PrepareBlock* block =
      PrepareBlock::create(options_.memory, QueueOp::kPrepare, key, value, cas, deleted, meta);
  Item* item = block;
  CheckpointEntry* entry = &block->entry;
  entry->durability_level = durability_level;
  QueuedPrepare result(attach(block, *entry));  // owns the block from here
  {
    base::MutexLock lock(mutex_);
    item->seqno = appendLocked(entry, result.item, at);
  }
  chargeEntry(*item, QueueOp::kPrepare);
  return result;
}

Seqno CheckpointManager::queueResolution(QueueOp op, QueuedPrepare& prepare, Seqno at) {
  if (op != QueueOp::kCommit && op != QueueOp::kAbort) {
    throw std::invalid_argument("queueResolution: op must be commit or abort, not " +
                                std::string(toString(op)));
  }
  ResolutionEntry* entry = reservedEntry(prepare);
  if (entry == nullptr) {
    throw std::invalid_argument(
        "queueResolution: the prepare has no reserved entry (resolved already, or not from "
        "queuePrepare)");
  }
  entry->own_allocation = false;
  entry->op = op;
  Seqno seqno = 0;
  {
    base::MutexLock lock(mutex_);
    // Used up once queued (appendLocked gives it its seqno after the one step
    // that can throw): a throw leaves the prepare resolvable.
    seqno = appendLocked(entry, prepare.item, at);
  }
  chargeEntry(*prepare.item, op);
  return seqno;
}

void CheckpointManager::chargeEntry(const Item& item, QueueOp op) noexcept {
  // The figure CheckpointEntry::bytes() gives the entry once appended.
  if (options_.memory != nullptr) {
    options_.memory->addCheckpointBytes(
        static_cast<int64_t>(sizeof(CheckpointEntry) + item.estimatedSize()));
  }
  if (options_.listener != nullptr) options_.listener->queued(options_.vbid, op);
}

uint64_t CheckpointManager::createCheckpoint() {
  base::MutexLock lock(mutex_);
  return openCheckpointLocked();
}

bool CheckpointManager::registerCursor(std::string name) {
  base::MutexLock lock(mutex_);
  auto first = checkpoints_.begin();
  auto [it, inserted] =
      cursors_.try_emplace(std::move(name), Cursor{first, first->sentinel(), first->numExpelled()});
  if (inserted) {
    first->addCursor();
    it->second.next_listed = std::exchange(first_cursor_, &it->second);
  }
  return inserted;
}

bool CheckpointManager::removeCursor(std::string_view name) {
  base::MutexLock lock(mutex_);
  auto it = cursors_.find(name);
  if (it == cursors_.end()) return false;
  Cursor* cursor = &it->second;
  cursor->checkpoint->removeCursor();
  Cursor** link = &first_cursor_;
  while (*link != cursor) link = &(*link)->next_listed;
  *link = cursor->next_listed;
  cursors_.erase(it);
  return true;
}

bool CheckpointManager::hasCursor(std::string_view name) const {
  base::MutexLock lock(mutex_);
  return cursors_.find(name) != cursors_.end();
}

void CheckpointManager::skipFinishedCheckpoints(Cursor& cursor) {
  // A closed checkpoint is never the last, so std::next is valid.
  while (cursor.position->next == nullptr && !cursor.checkpoint->isOpen()) {
    cursor.checkpoint->removeCursor();
    ++cursor.checkpoint;
    cursor.checkpoint->addCursor();
    cursor.position = cursor.checkpoint->sentinel();
    cursor.passed = cursor.checkpoint->numExpelled();
  }
}

std::vector<LogRecord> CheckpointManager::readItems(std::string_view name, size_t max_items) {
  std::vector<LogRecord> out;
  base::MutexLock lock(mutex_);
  Cursor& cursor = findCursor(cursors_, name, "readItems");
  while (out.size() < max_items) {
    skipFinishedCheckpoints(cursor);
    CheckpointLink* next = cursor.position->next;
    if (next == nullptr) break;  // at the end of the open checkpoint
    auto* entry = static_cast<CheckpointEntry*>(next);
    out.push_back(entry->record());
    cursor.position = entry;
    ++cursor.passed;  // ordinals are consecutive: the sentinel's is numExpelled()
  }
  return out;
}

size_t CheckpointManager::visitItems(std::string_view name, size_t max_items,
                                     absl::FunctionRef<void(QueueOp op, Seqno seqno)> fn) {
  base::MutexLock lock(mutex_);
  Cursor& cursor = findCursor(cursors_, name, "visitItems");
  size_t n = 0;
  while (n < max_items) {
    skipFinishedCheckpoints(cursor);
    CheckpointLink* next = cursor.position->next;
    if (next == nullptr) break;
    auto* entry = static_cast<CheckpointEntry*>(next);
    fn(entry->op, entry->seqno());
    cursor.position = entry;
    ++cursor.passed;
    ++n;
  }
  return n;
}

CheckpointManager::CursorHandle CheckpointManager::cursorHandle(std::string_view name) {
  base::MutexLock lock(mutex_);
  return CursorHandle(this, &findCursor(cursors_, name, "cursorHandle"));
}

CheckpointManager::Skimmed CheckpointManager::skimPrepares(
    std::string_view name, size_t max_items, absl::FunctionRef<void(Seqno seqno)> fn) {
  base::MutexLock lock(mutex_);
  return skimLocked(findCursor(cursors_, name, "skimPrepares"), max_items, &fn);
}

CheckpointManager::Cursor& CheckpointManager::cursorOf(CursorHandle cursor,
                                                       const char* what) const {
  if (cursor.owner_ != this) {
    throw std::invalid_argument(std::string(what) +
                                (cursor.owner_ == nullptr
                                     ? ": the cursor handle is empty"
                                     : ": the cursor handle is another vbucket's"));
  }
  return *cursor.cursor_;
}

CheckpointManager::Skimmed CheckpointManager::skimPrepares(
    CursorHandle cursor, size_t max_items, absl::FunctionRef<void(Seqno seqno)> fn) {
  Cursor& c = cursorOf(cursor, "skimPrepares");
  base::MutexLock lock(mutex_);
  return skimLocked(c, max_items, &fn);
}

CheckpointManager::Skimmed CheckpointManager::passAll(CursorHandle cursor, size_t max_items) {
  Cursor& c = cursorOf(cursor, "passAll");
  base::MutexLock lock(mutex_);
  return skimLocked(c, max_items, nullptr);
}

CheckpointManager::Skimmed CheckpointManager::skimLocked(
    Cursor& cursor, size_t max_items, const absl::FunctionRef<void(Seqno seqno)>* fn) {
  Skimmed out;
  // The checks read the checkpoint's line and the cursor, not the entries:
  // the cursor has read all of a checkpoint when it passed its last ordinal
  // (as `position->next == nullptr` says, without the cache miss).
  while (out.items < max_items) {
    Checkpoint* here = &*cursor.checkpoint;
    if (cursor.passed == here->numAppended()) {
      if (here->isOpen()) break;
      skipFinishedCheckpoints(cursor);
      continue;
    }
    const bool no_prepare = here->noPrepareAfter(cursor.passed);
    if (no_prepare || fn == nullptr) {
      // Nothing but mutations, commits and aborts up to the tail, or a
      // reader that reads no entry: jump there. The open checkpoint's last
      // entry has the high seqno (both are written under the lock held
      // here); only a closed one's is read.
      if (!no_prepare) out.prepare = true;
      CheckpointEntry* last = here->lastEntry();  // not null: one is unread
      out.items += here->numAppended() - cursor.passed;
      out.last_seqno = here->isOpen() ? high_seqno_.load(std::memory_order_relaxed) : last->seqno();
      cursor.position = last;
      cursor.passed = here->numAppended();
      continue;
    }
    auto* entry = static_cast<CheckpointEntry*>(cursor.position->next);
    const Seqno seqno = entry->seqno();
    if (entry->op == QueueOp::kPrepare) {
      out.prepare = true;
      (*fn)(seqno);
    }
    out.last_seqno = seqno;
    cursor.position = entry;
    ++cursor.passed;
    ++out.items;
  }
  return out;
}

size_t CheckpointManager::itemsRemaining(std::string_view name) const {
  base::MutexLock lock(mutex_);
  const Cursor& cursor = findCursor(cursors_, name, "itemsRemaining");
  const Checkpoint& here = *cursor.checkpoint;
  // Items present in this checkpoint after the cursor: those present minus
  // those the cursor passed that are still present.
  size_t n = here.numItems() - (cursor.passed - here.numExpelled());
  for (auto c = std::next(cursor.checkpoint); c != checkpoints_.end(); ++c) n += c->numItems();
  return n;
}

void CheckpointManager::removeUnreferencedCheckpoints(ExpelledItems& out) {
  while (checkpoints_.size() > 1 && checkpoints_.front().numCursors() == 0) {
    const Checkpoint& oldest = checkpoints_.front();
    removed_items_ += oldest.numExpelled() + oldest.numItems();
    removed_bytes_ += oldest.memoryBytes();
    removed_bytes_ += oldest.bytesExpelled();
    ++checkpoints_removed_;
    // A node move between lists: O(1), the checkpoint is destroyed with `out`.
    out.removed_.splice(out.removed_.end(), checkpoints_, checkpoints_.begin());
  }
}

ExpelledItems CheckpointManager::reset(Seqno high_seqno) {
  ExpelledItems out;
  {
    base::MutexLock lock(mutex_);
    openCheckpointLocked();
    const auto fresh = std::prev(checkpoints_.end());
    for (Cursor* cursor = first_cursor_; cursor != nullptr; cursor = cursor->next_listed) {
      cursor->checkpoint->removeCursor();
      cursor->checkpoint = fresh;
      fresh->addCursor();
      cursor->position = fresh->sentinel();
      cursor->passed = fresh->numExpelled();
    }
    removeUnreferencedCheckpoints(out);
    high_seqno_.store(high_seqno, std::memory_order_release);
  }
  if (options_.memory != nullptr && !out.empty()) {
    options_.memory->addCheckpointBytes(-static_cast<int64_t>(out.bytes()));
  }
  return out;
}

ExpelledItems CheckpointManager::extractItemsToExpel(ExpelMethod method) {
  ExpelledItems out = extractLocked(method);
  if (options_.memory != nullptr && !out.empty()) {
    options_.memory->addCheckpointBytes(-static_cast<int64_t>(out.bytes()));
  }
  return out;
}

ExpelledItems CheckpointManager::extractLocked(ExpelMethod method) {
  ExpelledItems out;
  base::MutexLock lock(mutex_);
  // One walk over the cursors moves each out of the closed checkpoints it
  // has finished and finds the slowest: the one in the oldest checkpoint
  // (ids increase along the list) that has passed the fewest items there.
  Cursor* slowest = nullptr;
  uint64_t slowest_id = 0;
  for (Cursor* cursor = first_cursor_; cursor != nullptr; cursor = cursor->next_listed) {
    skipFinishedCheckpoints(*cursor);
    const uint64_t id = cursor->checkpoint->id();
    if (slowest == nullptr || id < slowest_id ||
        (id == slowest_id && cursor->passed < slowest->passed)) {
      slowest = cursor;
      slowest_id = id;
    }
  }
  // Leaves the slowest cursor's checkpoint at the front: the checkpoints
  // before it have no cursor, and it has one.
  if (checkpoints_.size() > 1) removeUnreferencedCheckpoints(out);

  auto oldest = checkpoints_.begin();
  CheckpointEntry* through = nullptr;
  if (slowest == nullptr) {
    through = oldest->lastEntry();  // no cursor at all: everything counts as read
  } else if (slowest->passed > oldest->numExpelled()) {
    // The slowest cursor bounds what can go.
    through = static_cast<CheckpointEntry*>(slowest->position);
  }
  if (through == nullptr) return out;

  out.chain_ = method == ExpelMethod::kSplice ? oldest->detachThrough(through)
                                              : oldest->copyThenEraseThrough(through);
  // Cursors that stood on the last expelled entry now stand on the sentinel:
  // the same place in the log, since the sentinel is followed by what
  // followed that entry.
  for (Cursor* cursor = first_cursor_; cursor != nullptr; cursor = cursor->next_listed) {
    if (cursor->position == through) cursor->position = oldest->sentinel();
  }
  return out;
}

CheckpointStats CheckpointManager::stats() const {
  base::MutexLock lock(mutex_);
  CheckpointStats s;
  s.num_checkpoints = checkpoints_.size();
  s.items_expelled = removed_items_;
  s.bytes_expelled = removed_bytes_;
  for (const Checkpoint& c : checkpoints_) {
    s.num_items += c.numItems();
    s.memory_bytes += c.memoryBytes();
    s.items_expelled += c.numExpelled();
    s.bytes_expelled += c.bytesExpelled();
  }
  s.checkpoints_removed = checkpoints_removed_;
  s.num_cursors = cursors_.size();
  s.high_seqno = high_seqno_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace syncwrite::vbucket
