#include "bench/soak/model.h"

#include <algorithm>

#include <absl/strings/str_cat.h>

namespace syncwrite::bench::soak {

using server::protocol::Status;

const char* toString(Op op) {
  switch (op) {
    case Op::kGet:
      return "GET";
    case Op::kSet:
      return "SET";
    case Op::kAdd:
      return "ADD";
    case Op::kReplace:
      return "REPLACE";
    case Op::kDelete:
      return "DELETE";
  }
  return "?";
}

Verdict judge(Op op, bool durable, Status status) {
  const Verdict applied{true, Outcome::kApplied};
  const Verdict refused{true, Outcome::kRefused};
  switch (status) {
    case Status::kSuccess:
      return op == Op::kGet ? refused : applied;  // a read changes nothing
    case Status::kNotMyVbucket:                   // the chaos made the vbucket a replica
    case Status::kEnomem:
    case Status::kEtmpfail:
      return refused;
    case Status::kKeyNotFound:
      return {op == Op::kGet || op == Op::kReplace || op == Op::kDelete, Outcome::kRefused};
    case Status::kKeyExists:
      return {op == Op::kAdd, Outcome::kRefused};
    case Status::kSyncWriteInProgress:
      return {op != Op::kGet, Outcome::kRefused};
    case Status::kDurabilityImpossible:
      return {durable, Outcome::kRefused};
    case Status::kSyncWriteAmbiguous:
      return {durable, Outcome::kInDoubt};
    default:
      return {false, Outcome::kRefused};
  }
}

bool KeyModel::mayHold(const Value& value) const {
  return applied_ == value ||
         std::find(in_doubt_.begin(), in_doubt_.end(), value) != in_doubt_.end();
}

bool KeyModel::mayBeAbsent() const { return mayHold(std::nullopt); }

bool KeyModel::mayBePresent() const {
  return applied_.has_value() || std::any_of(in_doubt_.begin(), in_doubt_.end(),
                                             [](const Value& v) { return v.has_value(); });
}

void KeyModel::write(const Value& value, Outcome outcome) {
  switch (outcome) {
    case Outcome::kApplied:
      applied_ = value;
      in_doubt_.clear();
      break;
    case Outcome::kInDoubt:
      in_doubt_.push_back(value);
      break;
    case Outcome::kRefused:
      break;
  }
}

std::string KeyModel::describe() const {
  auto one = [](const Value& v) {
    return v ? absl::StrCat("\"", *v, "\"") : std::string("absent");
  };
  std::string text = one(applied_);
  for (const Value& v : in_doubt_) absl::StrAppend(&text, " or ", one(v), " (in doubt)");
  return text;
}

std::string checkAnswer(Op op, Status status, const Value& read_value, const KeyModel& model) {
  bool ok = true;
  if (op == Op::kGet && status == Status::kSuccess) {
    ok = model.mayHold(read_value);
  } else if (status == Status::kKeyNotFound) {
    ok = model.mayBeAbsent();
  } else if (status == Status::kKeyExists) {
    ok = model.mayBePresent();
  } else if (status == Status::kSuccess) {
    ok = op == Op::kAdd                            ? model.mayBeAbsent()
         : op == Op::kReplace || op == Op::kDelete ? model.mayBePresent()
                                                   : true;
  }
  if (ok) return "";
  std::string seen = op == Op::kGet && status == Status::kSuccess
                         ? absl::StrCat(" \"", read_value.value_or(""), "\"")
                         : "";
  return absl::StrCat(toString(op), " answered ", std::string(server::protocol::toString(status)),
                      seen, " but the key can only be ", model.describe());
}

}  // namespace syncwrite::bench::soak
