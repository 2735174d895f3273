#include "server/protocol/feature.h"

#include <algorithm>
#include <array>

#include "server/protocol/byte_order.h"

namespace syncwrite::server::protocol {

namespace {
constexpr std::array<Feature, 9> kServerFeatures{Feature::kTcpNodelay,
                                                 Feature::kMutationSeqno,
                                                 Feature::kXattr,
                                                 Feature::kXerror,
                                                 Feature::kSelectBucket,
                                                 Feature::kJson,
                                                 Feature::kUnorderedExecution,
                                                 Feature::kAltRequestSupport,
                                                 Feature::kSyncReplication};
}  // namespace

std::span<const Feature> serverFeatures() noexcept { return kServerFeatures; }

std::vector<Feature> decodeFeatures(std::string_view hello_value) {
  std::vector<Feature> features;
  features.reserve(hello_value.size() / 2);
  for (size_t i = 0; i + 1 < hello_value.size(); i += 2) {
    features.push_back(static_cast<Feature>(wire::load16(hello_value, i)));
  }
  return features;
}

std::vector<Feature> negotiateFeatures(std::string_view hello_value,
                                       std::span<const Feature> supported) {
  std::vector<Feature> agreed;
  for (Feature asked : decodeFeatures(hello_value)) {
    const bool known = std::find(supported.begin(), supported.end(), asked) != supported.end();
    const bool repeated = std::find(agreed.begin(), agreed.end(), asked) != agreed.end();
    if (known && !repeated) agreed.push_back(asked);
  }
  return agreed;
}

void appendFeatures(std::string& out, std::span<const Feature> features) {
  for (Feature feature : features) wire::append16(out, static_cast<uint16_t>(feature));
}

std::string_view toString(Feature feature) noexcept {
  switch (feature) {
    case Feature::kDatatype:
      return "Datatype";
    case Feature::kTls:
      return "TLS";
    case Feature::kTcpNodelay:
      return "TcpNodelay";
    case Feature::kMutationSeqno:
      return "MutationSeqno";
    case Feature::kTcpDelay:
      return "TcpDelay";
    case Feature::kXattr:
      return "XATTR";
    case Feature::kXerror:
      return "XERROR";
    case Feature::kSelectBucket:
      return "SELECT_BUCKET";
    case Feature::kSnappy:
      return "Snappy";
    case Feature::kJson:
      return "JSON";
    case Feature::kDuplex:
      return "Duplex";
    case Feature::kClustermapChangeNotification:
      return "ClustermapChangeNotification";
    case Feature::kUnorderedExecution:
      return "UnorderedExecution";
    case Feature::kTracing:
      return "Tracing";
    case Feature::kAltRequestSupport:
      return "AltRequestSupport";
    case Feature::kSyncReplication:
      return "SyncReplication";
    case Feature::kCollections:
      return "Collections";
    case Feature::kOpenTracing:
      return "OpenTracing";
  }
  return "Unknown";
}

}  // namespace syncwrite::server::protocol
