#include "subdoc/json_value.h"

namespace syncwrite::subdoc {
namespace {

struct TooDeep {};

}  // namespace

ParseResult parseJson(std::string_view text, Json& out, std::size_t baseLevel) {
  // nlohmann reports an event's nesting depth (0 for the root); a level here
  // is that depth plus baseLevel.
  const auto limit = static_cast<int>(kMaxDepth) - static_cast<int>(baseLevel);
  auto check = [limit](int depth, Json::parse_event_t event, Json& /*parsed*/) {
    if (depth > limit &&
        (event == Json::parse_event_t::value || event == Json::parse_event_t::object_start ||
         event == Json::parse_event_t::array_start)) {
      throw TooDeep{};
    }
    return true;
  };
  try {
    out = Json::parse(text.begin(), text.end(), check, /*allow_exceptions=*/false);
  } catch (const TooDeep&) {
    out = Json();
    return ParseResult::kTooDeep;
  }
  return out.is_discarded() ? ParseResult::kNotJson : ParseResult::kOk;
}

std::string dumpJson(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace syncwrite::subdoc
