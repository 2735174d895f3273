#include "server/log_cursor_reader.h"

#include <stdexcept>
#include <utility>

#include <absl/strings/str_cat.h>

namespace syncwrite::server {

LogCursorReader::LogCursorReader(vbucket::VBucketMap& map, std::string cursor)
    : map_(map),
      cursor_(std::move(cursor)),
      handles_(std::make_unique<vbucket::CheckpointManager::CursorHandle[]>(map.size())),
      dirty_(std::make_unique<std::atomic<bool>[]>(map.size())) {
  for (size_t id = 0; id < map_.size(); ++id) {
    vbucket::CheckpointManager& log = map_.at(static_cast<vbucket::Vbid>(id)).checkpointManager();
    if (!log.registerCursor(cursor_)) {
      // Another reader's cursor: sharing it would split the log between the
      // two, and the first to go would leave the other's handle dangling.
      for (size_t done = 0; done < id; ++done) {
        map_.at(static_cast<vbucket::Vbid>(done)).checkpointManager().removeCursor(cursor_);
      }
      throw std::invalid_argument(absl::StrCat("LogCursorReader: vbucket ", id,
                                               " already has a cursor named '", cursor_, "'"));
    }
    handles_[id] = log.cursorHandle(cursor_);
  }
}

LogCursorReader::~LogCursorReader() {
  for (size_t id = 0; id < map_.size(); ++id) {
    map_.at(static_cast<vbucket::Vbid>(id)).checkpointManager().removeCursor(cursor_);
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
    const auto vbid = static_cast<vbucket::Vbid>(id);
    const vbucket::CheckpointManager::Skimmed skimmed = read(vbid, handles_[id]);
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
    size_t batch, absl::FunctionRef<void(vbucket::Vbid, vbucket::Seqno)> prepare,
    absl::FunctionRef<void(vbucket::Vbid, size_t count, vbucket::Seqno last_seqno)> done) {
  return readMarked(
      batch,
      [&](vbucket::Vbid vbid, vbucket::CheckpointManager::CursorHandle handle) {
        return map_.at(vbid).checkpointManager().skimPrepares(
            handle, batch, [&](vbucket::Seqno seqno) { prepare(vbid, seqno); });
      },
      [&](vbucket::Vbid vbid, const vbucket::CheckpointManager::Skimmed& skimmed) {
        done(vbid, skimmed.items, skimmed.last_seqno);
      });
}

bool LogCursorReader::passDirty(
    size_t batch,
    absl::FunctionRef<void(vbucket::Vbid, const vbucket::CheckpointManager::Skimmed&)> done) {
  return readMarked(
      batch,
      [&](vbucket::Vbid vbid, vbucket::CheckpointManager::CursorHandle handle) {
        return map_.at(vbid).checkpointManager().passAll(handle, batch);
      },
      done);
}

size_t LogCursorReader::itemsQueued() const {
  size_t n = 0;
  for (size_t id = 0; id < map_.size(); ++id) {
    n += map_.at(static_cast<vbucket::Vbid>(id)).checkpointManager().itemsRemaining(cursor_);
  }
  return n;
}

}  // namespace syncwrite::server
