// Configuration: the values of one scope's keys (the server's, or one
// bucket's), checked against the Schema.
//
// Code names a key with its typed constant from config/keys.h, generated from
// config/schema.json (config/key.h): get(keys::kMaxVbuckets) is a uint64_t,
// and a misspelt key does not compile. Keys are taken by name only where the
// name arrives from outside: a configuration document (load*) and a runtime
// set from the wire (setFromText, as SET_PARAM sends it).
//
// Loading and setting are all-or-nothing: a refused document or value changes
// nothing, and the returned status names the key, the value and what was
// expected. Reads are cheap but take a shared lock and copy the value;
// components on a hot path read once and keep the value current with a
// listener.
//
// Thread-safety: every member function may be called from any thread.
//
// Listeners: addListener(key, fn) registers fn to be called after each
// successful set of that key that changed its value, with the new value.
//  - fn runs synchronously on the thread that called set(), after the new
//    value is visible to readers and with no lock of the value table held;
//    set() returns once every listener has returned.
//  - Changes are delivered one at a time: sets are serialised, so listeners
//    see changes in the order they were made, never concurrently.
//  - A listener may read the configuration, call set() (of another key; a set
//    of the same key recurses), and add or remove listeners.
//  - It must not block waiting for another thread that may itself call set()
//    or removeListener() on this Configuration: that thread waits for it.
//  - removeListener(id) returns only once that listener is not running (unless
//    called from inside a listener on the same thread), so the state a
//    listener captured may be destroyed right after.
//  - If a listener throws, the value stays set, later listeners still run,
//    and set() returns Internal with the exception's message.
// load*() is for start-up and calls no listener.
//
// Validators: addValidator(key, fn) lets the component that gives a key its
// meaning refuse values the schema cannot judge (a replica name that does not
// exist). fn runs under the same serialisation as listeners, before the value
// is stored; a refusal is returned by set() as it is, and changes nothing.
// load*() calls no validator: the owner checks the loaded value itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <absl/status/status.h>
#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "config/key.h"
#include "config/keys.h"
#include "config/schema.h"

namespace syncwrite::config {

class Configuration {
 public:
  using ListenerId = uint64_t;

  // Every key of `scope` at its default.
  explicit Configuration(Scope scope, const Schema& schema = Schema::builtin());

  Configuration(const Configuration&) = delete;
  Configuration& operator=(const Configuration&) = delete;

  // Applies a JSON object of key → value over the current values. Refuses,
  // changing nothing: malformed JSON (with its byte position), a document that
  // is not an object, an unknown key, a key of the other scope, a value of the
  // wrong type, out of range or not in the enum.
  absl::Status loadString(std::string_view json_text);
  absl::Status loadJson(const nlohmann::json& object);
  // As loadString, from a file read with readFile (config/read_file.h): its
  // error when the file cannot be read (NotFound naming the path when missing).
  absl::Status loadFile(const std::filesystem::path& path);

  // Changes one key at runtime. Refuses, changing nothing: a key of the other
  // scope or an invalid value, e.g. out of range (InvalidArgument), a key that
  // is not dynamic (FailedPrecondition).
  template <typename T>
  absl::Status set(const Key<T>& key, std::type_identity_t<T> value) {
    return setJson(key.name(), KeyValue<T>::toJson(value));
  }
  // As set(), for a key named at run time with its value written as text, as
  // a SET_PARAM request carries them ("polling", "25", "true"). Also refuses
  // an unknown key (NotFound).
  absl::Status setFromText(std::string_view key, std::string_view text);

  // The current value. A key of the other scope is a programming error:
  // std::invalid_argument.
  template <typename T>
  T get(const Key<T>& key) const {
    return KeyValue<T>::fromJson(getJson(key.name(), KeyValue<T>::kType), key.name());
  }

  // Every key of this scope with its current value.
  nlohmann::json toJson() const;

  Scope scope() const noexcept { return scope_; }
  const Schema& schema() const noexcept { return schema_; }

  // See the file comment; `fn` gets the new value. Throws
  // std::invalid_argument for a key of the other scope.
  template <typename T>
  ListenerId addListener(const Key<T>& key, std::function<void(std::type_identity_t<T>)> fn) {
    return addJsonListener(key.name(), [key, fn = std::move(fn)](const nlohmann::json& v) {
      fn(KeyValue<T>::fromJson(v, key.name()));
    });
  }
  // See the file comment; `fn` gets the candidate value and returns OK or
  // the refusal (InvalidArgument, naming the key and the value).
  template <typename T>
  ListenerId addValidator(const Key<T>& key,
                          std::function<absl::Status(std::type_identity_t<T>)> fn) {
    return addJsonValidator(key.name(), [key, fn = std::move(fn)](const nlohmann::json& v) {
      return fn(KeyValue<T>::fromJson(v, key.name()));
    });
  }
  // Removes a listener or a validator. Returns false when `id` is not
  // registered (never was, or already removed).
  bool removeListener(ListenerId id);

 private:
  // The spec of a key of this scope, or an error status explaining why not.
  absl::StatusOr<const KeySpec*> lookup(std::string_view key) const;

  // The by-name forms behind the typed members above.
  using Listener = std::function<void(const nlohmann::json& new_value)>;
  absl::Status setJson(std::string_view key, const nlohmann::json& value);
  nlohmann::json getJson(std::string_view key, ValueType type) const;
  ListenerId addJsonListener(std::string_view key, Listener fn);
  using Validator = std::function<absl::Status(const nlohmann::json& candidate)>;
  ListenerId addJsonValidator(std::string_view key, Validator fn);

  const Schema& schema_;
  const Scope scope_;

  // Held while listeners run (serialises set() and orders removeListener()
  // after a running notification); recursive so listeners may call back in.
  base::RecursiveMutex notify_mutex_ ABSL_ACQUIRED_BEFORE(values_mutex_);

  mutable base::SharedMutex values_mutex_;
  std::map<std::string, nlohmann::json, std::less<>> values_ ABSL_GUARDED_BY(values_mutex_);

  struct Registration {
    std::string key;
    std::shared_ptr<Listener> fn;
  };
  std::map<ListenerId, Registration> listeners_ ABSL_GUARDED_BY(notify_mutex_);
  std::map<ListenerId, std::pair<std::string, Validator>> validators_
      ABSL_GUARDED_BY(notify_mutex_);
  ListenerId next_listener_id_ ABSL_GUARDED_BY(notify_mutex_) = 1;
};

}  // namespace syncwrite::config
