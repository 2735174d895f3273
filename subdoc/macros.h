// Macro expansion in xattr values (path_flag::kExpandMacros), as kv_engine
// does it (couchbase/kv_engine docs/ExtendedAttributes.md, item 8, and
// daemon/subdocument_context.cc). A spec's whole value is the macro:
//
//   "${Mutation.CAS}"          the new CAS: "0x" and 16 hex digits of the CAS
//                              with its bytes reversed, exactly as kv_engine
//                              writes it (Couchbase transactions decode it so)
//   "${Mutation.seqno}"        the new seqno: "0x" and 16 hex digits
//   "${Mutation.value_crc32c}" CRC-32C of the new body: "0x" and 8 hex digits
//   "${$document}", "${$document.<field>}"  the stored document's $document
//                              (or one field of it), before this mutation
//
// The new CAS and seqno exist only once the server stores the document, so
// the library writes a placeholder instead: a quoted "0x..." string of the
// expansion's exact length, unique in the document and the request. The
// server, after assigning CAS and seqno and before anyone can read the
// document, calls fillMutationMacros() on the value, which overwrites the
// placeholders in place (the value's length never changes). The CRC-32C is
// known when the library finishes, and the library fills it itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "subdoc/status.h"

namespace syncwrite::subdoc {

namespace macro {
inline constexpr std::string_view kCas = R"("${Mutation.CAS}")";
inline constexpr std::string_view kSeqno = R"("${Mutation.seqno}")";
inline constexpr std::string_view kValueCrc32c = R"("${Mutation.value_crc32c}")";
}  // namespace macro

enum class MacroKind : uint8_t { kCas, kSeqno, kValueCrc32c };

// A placeholder written into the xattr section for the server to fill.
struct PendingMacro {
  MacroKind kind;
  std::string placeholder;  // with its quotes
};

// Success for a macro the library knows (the Mutation ones, and any
// "${$document...}" form), SubdocXattrUnknownMacro otherwise.
Status validateMacro(std::string_view value);

// The text the macro expands to (quotes included).
std::string expandMacro(MacroKind kind, uint64_t value);

// Overwrites every pending CAS and seqno placeholder in the xattr section of
// `value` (datatype must have kXattr, else nothing is done). Returns the
// number of placeholders written. Cost: one scan of the section per pending
// macro.
std::size_t fillMutationMacros(std::string& value, uint8_t datatype,
                               const std::vector<PendingMacro>& pending, uint64_t cas,
                               uint64_t seqno);

// Replaces `placeholder` (same length as `text`) in `section`, at every place.
std::size_t overwriteAll(std::string& section, std::string_view placeholder, std::string_view text);

// A placeholder for `kind` that occurs in none of `haystacks`; `salt` makes the
// sequence of candidates differ between calls.
std::string makePlaceholder(MacroKind kind, const std::vector<std::string_view>& haystacks,
                            uint64_t salt);

}  // namespace syncwrite::subdoc
