#include "config/configuration.h"

#include <stdexcept>
#include <vector>

#include <absl/strings/str_cat.h>

#include "config/read_file.h"

namespace syncwrite::config {

Configuration::Configuration(Scope scope, const Schema& schema) : schema_(schema), scope_(scope) {
  for (const auto& spec : schema_.keys()) {
    if (spec.scope == scope_) values_.emplace(spec.name, spec.default_value);
  }
}

absl::StatusOr<const KeySpec*> Configuration::lookup(std::string_view key) const {
  const KeySpec* spec = schema_.find(key);
  if (spec == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("unknown configuration key \"", std::string(key), "\""));
  }
  if (spec->scope != scope_) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(key), " is a ",
                                                   toString(spec->scope), " key, not a ",
                                                   toString(scope_), " key"));
  }
  return spec;
}

absl::Status Configuration::loadString(std::string_view json_text) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON at byte ", e.byte, ": ", e.what()));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number too large for a double (1e999): the parser throws out_of_range
    // 406, not parse_error (found by tests/fuzz/config_fuzz.cc).
    return absl::InvalidArgumentError(absl::StrCat("malformed JSON: ", e.what()));
  }
  return loadJson(doc);
}

absl::Status Configuration::loadFile(const std::filesystem::path& path) {
  absl::StatusOr<std::string> text = readFile(path);
  if (!text.ok()) return text.status();
  absl::Status s = loadString(*text);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat(path.string(), ": ", s.message()));
  }
  return s;
}

absl::Status Configuration::loadJson(const nlohmann::json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a configuration must be a JSON object of key: value, got ", object.type_name()));
  }
  // Check everything first so that a refused document changes nothing.
  std::vector<std::pair<std::string, nlohmann::json>> accepted;
  for (const auto& [key, value] : object.items()) {
    absl::StatusOr<const KeySpec*> spec = lookup(key);
    if (!spec.ok()) return spec.status();
    absl::StatusOr<nlohmann::json> stored = (*spec)->canonical(value);
    if (!stored.ok()) return stored.status();
    accepted.emplace_back(key, *std::move(stored));
  }
  base::WriterMutexLock lock(values_mutex_);
  for (auto& [key, value] : accepted) {
    values_.find(key)->second = std::move(value);
  }
  return absl::OkStatus();
}

absl::Status Configuration::setJson(std::string_view key, const nlohmann::json& value) {
  absl::StatusOr<const KeySpec*> spec = lookup(key);
  if (!spec.ok()) return spec.status();
  if (!(*spec)->dynamic) {
    return absl::FailedPreconditionError(
        absl::StrCat(std::string(key),
                     " cannot be changed at runtime (not dynamic); set it in the "
                     "configuration file and restart"));
  }
  absl::StatusOr<nlohmann::json> stored = (*spec)->canonical(value);
  if (!stored.ok()) return stored.status();
  const nlohmann::json& new_value = *stored;

  base::RecursiveMutexLock notify(notify_mutex_);
  for (const auto& [id, validator] : validators_) {
    if (validator.first != key) continue;
    if (absl::Status refused = validator.second(new_value); !refused.ok()) return refused;
  }
  {
    base::WriterMutexLock lock(values_mutex_);
    nlohmann::json& current = values_.find(key)->second;
    if (current == new_value) return absl::OkStatus();
    current = new_value;
  }
  std::vector<std::shared_ptr<Listener>> to_call;
  for (const auto& [id, reg] : listeners_) {
    if (reg.key == key) to_call.push_back(reg.fn);
  }
  std::string failures;
  for (const auto& fn : to_call) {
    try {
      (*fn)(new_value);
    } catch (const std::exception& e) {
      absl::StrAppend(&failures, failures.empty() ? "" : "; ", e.what());
    }
  }
  if (!failures.empty()) {
    return absl::InternalError(absl::StrCat(std::string(key), " was set to ", new_value.dump(),
                                            " but a change listener failed: ", failures));
  }
  return absl::OkStatus();
}

absl::Status Configuration::setFromText(std::string_view key, std::string_view text) {
  absl::StatusOr<const KeySpec*> spec = lookup(key);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<nlohmann::json> value = (*spec)->parseText(text);
  if (!value.ok()) return value.status();
  return setJson(key, *value);
}

nlohmann::json Configuration::getJson(std::string_view key, ValueType type) const {
  absl::StatusOr<const KeySpec*> spec = lookup(key);
  if (!spec.ok()) throw std::invalid_argument(std::string(spec.status().message()));
  if ((*spec)->type != type) {
    // Only a schema other than the one config/keys.h was generated from.
    throw std::invalid_argument(absl::StrCat(std::string(key), " is of type ",
                                             toString((*spec)->type), ", not ", toString(type)));
  }
  base::ReaderMutexLock lock(values_mutex_);
  return values_.find(key)->second;
}

nlohmann::json Configuration::toJson() const {
  base::ReaderMutexLock lock(values_mutex_);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : values_) out[key] = value;
  return out;
}

Configuration::ListenerId Configuration::addJsonListener(std::string_view key, Listener fn) {
  absl::StatusOr<const KeySpec*> spec = lookup(key);
  if (!spec.ok()) throw std::invalid_argument(std::string(spec.status().message()));
  base::RecursiveMutexLock notify(notify_mutex_);
  const ListenerId id = next_listener_id_++;
  listeners_.emplace(id, Registration{std::string(key), std::make_shared<Listener>(std::move(fn))});
  return id;
}

Configuration::ListenerId Configuration::addJsonValidator(std::string_view key, Validator fn) {
  absl::StatusOr<const KeySpec*> spec = lookup(key);
  if (!spec.ok()) throw std::invalid_argument(std::string(spec.status().message()));
  base::RecursiveMutexLock notify(notify_mutex_);
  const ListenerId id = next_listener_id_++;
  validators_.emplace(id, std::make_pair(std::string(key), std::move(fn)));
  return id;
}

bool Configuration::removeListener(ListenerId id) {
  base::RecursiveMutexLock notify(notify_mutex_);
  return listeners_.erase(id) == 1 || validators_.erase(id) == 1;
}

}  // namespace syncwrite::config
