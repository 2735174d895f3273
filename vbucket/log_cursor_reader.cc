#include "vbucket/log_cursor_reader.h"

#include <stdexcept>
#include <utility>

#include <absl/strings/str_cat.h>

namespace syncwrite::vbucket {

LogCursorReader::LogCursorReader(VBucketMap& map, std::string cursor)
    : map_(map),
      cursor_(std::move(cursor)),
      handles_(std::make_unique<CheckpointManager::CursorHandle[]>(map.size())),
      dirty_(std::make_unique<std::atomic<bool>[]>(map.size())) {
  for (size_t id = 0; id < map_.size(); ++id) {
    CheckpointManager& log = map_.at(static_cast<Vbid>(id)).checkpointManager();
    if (!log.registerCursor(cursor_)) {
      // Another reader's cursor: sharing it would split the log between the
      // two, and the first to go would leave the other's handle dangling.
      for (size_t done = 0; done < id; ++done) {
        map_.at(static_cast<Vbid>(done)).checkpointManager().removeCursor(cursor_);
      }
      throw std::invalid_argument(absl::StrCat("LogCursorReader: vbucket ", id,
                                               " already has a cursor named '", cursor_, "'"));
    }
    handles_[id] = log.cursorHandle(cursor_);
  }
}

LogCursorReader::~LogCursorReader() {
  for (size_t id = 0; id < map_.size(); ++id) {
    map_.at(static_cast<Vbid>(id)).checkpointManager().removeCursor(cursor_);
  }
}

template <typename Read, typename Done>
bool LogCursorReader::readMarked(size_t batch, Read read, Done done) {
  // Cleared before reading: a write queued after this store marks again and
  // reports a first mark; one queued before it is read below (the manager's
  // lock orders the two).
  any_dirty_.store(false, std::memory_order_seq_cst);
  bool more = false;
  for (size_t id = 0; id < map_.size(); ++id) {
    if (!dirty_[id].load(std::memory_order_seq_cst)) continue;
    dirty_[id].store(false, std::memory_order_seq_cst);
    const auto vbid = static_cast<Vbid>(id);
    const CheckpointManager::Skimmed skimmed = read(vbid, handles_[id]);
    if (skimmed.items >= batch) {
      // A batch or more read (a skip may have passed more): maybe more
      // behind it, so stay marked for the next read.
      dirty_[id].store(true, std::memory_order_relaxed);
      any_dirty_.store(true, std::memory_order_relaxed);
      more = true;
    }
    if (skimmed.items != 0) done(vbid, skimmed);
  }
  return more;
}

bool LogCursorReader::readDirty(
    size_t batch, absl::FunctionRef<void(Vbid, Seqno)> prepare,
    absl::FunctionRef<void(Vbid, size_t count, Seqno last_seqno)> done) {
  return readMarked(
      batch,
      [&](Vbid vbid, CheckpointManager::CursorHandle handle) {
        return map_.at(vbid).checkpointManager().skimPrepares(
            handle, batch, [&](Seqno seqno) { prepare(vbid, seqno); });
      },
      [&](Vbid vbid, const CheckpointManager::Skimmed& skimmed) {
        done(vbid, skimmed.items, skimmed.last_seqno);
      });
}

bool LogCursorReader::passDirty(
    size_t batch, absl::FunctionRef<void(Vbid, const CheckpointManager::Skimmed&)> done) {
  return readMarked(
      batch,
      [&](Vbid vbid, CheckpointManager::CursorHandle handle) {
        return map_.at(vbid).checkpointManager().passAll(handle, batch);
      },
      done);
}

bool LogCursorReader::readRecords(
    size_t batch, absl::FunctionRef<void(Vbid, std::vector<LogRecord>&& records)> records) {
  std::vector<LogRecord> read;
  return readMarked(
      batch,
      [&](Vbid vbid, CheckpointManager::CursorHandle /*handle*/) {
        read = map_.at(vbid).checkpointManager().readItems(cursor_, batch);
        CheckpointManager::Skimmed skimmed;
        skimmed.items = read.size();
        if (!read.empty()) skimmed.last_seqno = read.back().seqno;
        return skimmed;
      },
      [&](Vbid vbid, const CheckpointManager::Skimmed& /*skimmed*/) {
        records(vbid, std::move(read));
        read.clear();
      });
}

size_t LogCursorReader::itemsQueued() const {
  size_t n = 0;
  for (size_t id = 0; id < map_.size(); ++id) {
    n += map_.at(static_cast<Vbid>(id)).checkpointManager().itemsRemaining(cursor_);
  }
  return n;
}

}  // namespace syncwrite::vbucket
