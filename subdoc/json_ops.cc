#include "subdoc/json_ops.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace syncwrite::subdoc {
namespace {

// The level of the node a path of `components` components reaches.
std::size_t levelAfter(std::size_t components) { return components + 1; }

Status cantInsert(ParseResult result) {
  return result == ParseResult::kTooDeep ? Status::SubdocValueEtoodeep
                                         : Status::SubdocValueCantinsert;
}

// Steps from `node` through `component`. With `create` (a mutable tree
// only), a missing member of an object becomes an empty object.
template <typename J>
Status step(J*& node, const PathComponent& component, bool create) {
  if (component.isIndex()) {
    if (!node->is_array()) {
      return Status::SubdocPathMismatch;
    }
    const auto size = static_cast<int64_t>(node->size());
    const int64_t index = component.index() == -1 ? size - 1 : component.index();
    if (index < 0 || index >= size) {
      return Status::SubdocPathEnoent;
    }
    node = &(*node)[static_cast<std::size_t>(index)];
    return Status::Success;
  }
  if (!node->is_object()) {
    return Status::SubdocPathMismatch;
  }
  auto it = node->find(component.key());
  if (it == node->end()) {
    if constexpr (!std::is_const_v<J>) {
      if (create) {
        node = &(*node)[component.key()];
        *node = Json::object();
        return Status::Success;
      }
    }
    return Status::SubdocPathEnoent;
  }
  node = &*it;
  return Status::Success;
}

// Walks the first `count` components of `path`.
template <typename J>
Status walk(J& root, const Path& path, std::size_t count, bool create, J*& node) {
  node = &root;
  for (std::size_t i = 0; i < count; ++i) {
    if (const auto status = step(node, path[i], create); status != Status::Success) {
      return status;
    }
  }
  return Status::Success;
}

// The array a push or add-unique operates on; MkdirP creates it (and its
// parents) when the last component is a missing member.
Status targetArray(Json& root, const Path& path, bool mkdirP, Json*& array) {
  if (path.empty()) {
    array = &root;
  } else {
    Json* parent = nullptr;
    if (auto status = walk(root, path, path.size() - 1, mkdirP, parent);
        status != Status::Success) {
      return status;
    }
    const auto& last = path.back();
    if (!last.isIndex() && parent->is_object() && !parent->contains(last.key())) {
      if (!mkdirP) {
        return Status::SubdocPathEnoent;
      }
      array = &(*parent)[last.key()];
      *array = Json::array();
      return Status::Success;
    }
    array = parent;
    if (auto status = step(array, last, false); status != Status::Success) {
      return status;
    }
  }
  return array->is_array() ? Status::Success : Status::SubdocPathMismatch;
}

// The elements of a push or insert: one or more comma-separated values.
Status parseElements(std::string_view value, std::size_t arrayLevel, Json& elements) {
  std::string list;
  list.reserve(value.size() + 2);
  list.append("[").append(value).append("]");
  const auto result = parseJson(list, elements, arrayLevel);
  if (result != ParseResult::kOk) {
    return cantInsert(result);
  }
  return elements.empty() ? Status::SubdocValueCantinsert : Status::Success;
}

bool isPrimitive(const Json& value) { return !value.is_object() && !value.is_array(); }

// COUNTER's delta: a non-zero integer in int64 range, written as one.
bool parseDelta(std::string_view text, int64_t& delta) {
  Json parsed;
  if (parseJson(text, parsed) != ParseResult::kOk) {
    return false;
  }
  if (parsed.is_number_unsigned()) {
    const auto magnitude = parsed.get<uint64_t>();
    if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return false;
    }
    delta = static_cast<int64_t>(magnitude);
  } else if (parsed.is_number_integer()) {
    delta = parsed.get<int64_t>();
  } else {
    return false;
  }
  return delta != 0;
}

Status counter(Json& root, const Path& path, std::string_view value, bool mkdirP,
               std::string& out) {
  int64_t delta = 0;
  if (!parseDelta(value, delta)) {
    return Status::SubdocDeltaEinval;
  }
  Json* parent = nullptr;
  if (auto status = walk(root, path, path.size() - 1, mkdirP, parent); status != Status::Success) {
    return status;
  }
  Json* target = parent;
  const auto status = step(target, path.back(), false);
  if (status == Status::SubdocPathEnoent && !path.back().isIndex()) {
    (*parent)[path.back().key()] = delta;
    out = std::to_string(delta);
    return Status::Success;
  }
  if (status != Status::Success) {
    return status;
  }
  int64_t current = 0;
  if (target->is_number_unsigned()) {
    if (target->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::SubdocNumErange;
    }
    current = static_cast<int64_t>(target->get<uint64_t>());
  } else if (target->is_number_integer()) {
    current = target->get<int64_t>();
  } else if (target->is_number_float()) {
    // nlohmann keeps no lexeme: an integral float beyond int64 was an integer
    // too big to count (kv_engine: NumErange); any other float is a mismatch.
    const double number = target->get<double>();
    const bool integral = std::nearbyint(number) == number;
    return integral && std::fabs(number) >= 9.2233720368547758e18 ? Status::SubdocNumErange
                                                                  : Status::SubdocPathMismatch;
  } else {
    return Status::SubdocPathMismatch;
  }
  if ((delta > 0 && current > std::numeric_limits<int64_t>::max() - delta) ||
      (delta < 0 && current < std::numeric_limits<int64_t>::min() - delta)) {
    return Status::SubdocValueCantinsert;  // kv_engine answers an overflow so
  }
  *target = current + delta;
  out = std::to_string(current + delta);
  return Status::Success;
}

Status dictStore(Json& root, const Path& path, Opcode opcode, std::string_view value, bool mkdirP) {
  if (path.back().isIndex()) {
    return Status::SubdocPathEinval;
  }
  Json parsed;
  if (const auto result = parseJson(value, parsed, levelAfter(path.size()));
      result != ParseResult::kOk) {
    return cantInsert(result);
  }
  Json* parent = nullptr;
  if (auto status = walk(root, path, path.size() - 1, mkdirP, parent); status != Status::Success) {
    return status;
  }
  if (!parent->is_object()) {
    return Status::SubdocPathMismatch;
  }
  const auto& key = path.back().key();
  if (opcode == Opcode::DictAdd && parent->contains(key)) {
    return Status::SubdocPathEexists;
  }
  (*parent)[key] = std::move(parsed);
  return Status::Success;
}

Status remove(Json& root, const Path& path) {
  Json* parent = nullptr;
  if (auto status = walk(root, path, path.size() - 1, false, parent); status != Status::Success) {
    return status;
  }
  Json* target = parent;
  if (auto status = step(target, path.back(), false); status != Status::Success) {
    return status;
  }
  if (parent->is_object()) {
    parent->erase(path.back().key());
  } else {
    const auto index = path.back().index() == -1 ? parent->size() - 1
                                                 : static_cast<std::size_t>(path.back().index());
    parent->erase(index);
  }
  return Status::Success;
}

Status replace(Json& root, const Path& path, std::string_view value) {
  Json parsed;
  if (const auto result = parseJson(value, parsed, levelAfter(path.size()));
      result != ParseResult::kOk) {
    return cantInsert(result);
  }
  Json* target = nullptr;
  if (auto status = walk(root, path, path.size(), false, target); status != Status::Success) {
    return status;
  }
  *target = std::move(parsed);
  return Status::Success;
}

Status push(Json& root, const Path& path, Opcode opcode, std::string_view value, bool mkdirP) {
  Json elements;
  if (auto status = parseElements(value, levelAfter(path.size()), elements);
      status != Status::Success) {
    return status;
  }
  Json* array = nullptr;
  if (auto status = targetArray(root, path, mkdirP, array); status != Status::Success) {
    return status;
  }
  auto where = opcode == Opcode::ArrayPushFirst ? array->begin() : array->end();
  array->insert(where, elements.begin(), elements.end());
  return Status::Success;
}

Status insert(Json& root, const Path& path, std::string_view value) {
  if (path.empty() || !path.back().isIndex() || path.back().index() < 0) {
    return Status::SubdocPathEinval;
  }
  Json elements;
  // The array is at the level of the path's parent; its elements one deeper.
  if (auto status = parseElements(value, levelAfter(path.size() - 1), elements);
      status != Status::Success) {
    return status;
  }
  Json* array = nullptr;
  if (auto status = walk(root, path, path.size() - 1, false, array); status != Status::Success) {
    return status;
  }
  if (!array->is_array()) {
    return Status::SubdocPathMismatch;
  }
  const auto index = static_cast<uint64_t>(path.back().index());
  if (index > array->size()) {
    return Status::SubdocPathEnoent;
  }
  array->insert(array->begin() + static_cast<std::ptrdiff_t>(index), elements.begin(),
                elements.end());
  return Status::Success;
}

Status addUnique(Json& root, const Path& path, std::string_view value, bool mkdirP) {
  Json parsed;
  if (const auto result = parseJson(value, parsed, levelAfter(path.size()) + 1);
      result != ParseResult::kOk || !isPrimitive(parsed)) {
    return result == ParseResult::kTooDeep ? Status::SubdocValueEtoodeep
                                           : Status::SubdocValueCantinsert;
  }
  Json* array = nullptr;
  if (auto status = targetArray(root, path, mkdirP, array); status != Status::Success) {
    return status;
  }
  // kv_engine compares by text: "1" and 1, 1.0 and 1 are different.
  const std::string text = dumpJson(parsed);
  for (const auto& element : *array) {
    if (!isPrimitive(element)) {
      return Status::SubdocPathMismatch;
    }
    if (dumpJson(element) == text) {
      return Status::SubdocPathEexists;
    }
  }
  array->push_back(std::move(parsed));
  return Status::Success;
}

}  // namespace

Status lookupPath(const Json& root, const Path& path, Opcode opcode, std::string& out) {
  const Json* node = nullptr;
  if (auto status = walk(root, path, path.size(), false, node); status != Status::Success) {
    return status;
  }
  switch (opcode) {
    case Opcode::Get:
      out = dumpJson(*node);
      return Status::Success;
    case Opcode::Exists:
      return Status::Success;
    case Opcode::GetCount:
      if (!node->is_object() && !node->is_array()) {
        return Status::SubdocPathMismatch;
      }
      out = std::to_string(node->size());
      return Status::Success;
    default:
      return Status::Einval;
  }
}

Status mutatePath(Json& root, const Path& path, Opcode opcode, std::string_view value, bool mkdirP,
                  std::string& out) {
  const bool needsComponent = opcode != Opcode::ArrayPushFirst && opcode != Opcode::ArrayPushLast &&
                              opcode != Opcode::ArrayAddUnique;
  if (needsComponent && path.empty()) {
    return Status::Einval;
  }
  switch (opcode) {
    case Opcode::DictAdd:
    case Opcode::DictUpsert:
      return dictStore(root, path, opcode, value, mkdirP);
    case Opcode::Delete:
      return remove(root, path);
    case Opcode::Replace:
      return replace(root, path, value);
    case Opcode::ArrayPushFirst:
    case Opcode::ArrayPushLast:
      return push(root, path, opcode, value, mkdirP);
    case Opcode::ArrayInsert:
      return insert(root, path, value);
    case Opcode::ArrayAddUnique:
      return addUnique(root, path, value, mkdirP);
    case Opcode::Counter:
      return counter(root, path, value, mkdirP, out);
    default:
      return Status::Einval;
  }
}

}  // namespace syncwrite::subdoc
