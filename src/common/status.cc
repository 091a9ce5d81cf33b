#include "common/status.h"

#include "common/enum_names.h"

namespace kvbench {

std::string Status::ToString() const {
  static constexpr EnumName<Code> kPrefixes[] = {
      {Code::kNotFound, "NotFound"},          {Code::kInvalidArgument, "Invalid argument"},
      {Code::kNotSupported, "Not supported"}, {Code::kIOError, "IO error"},
      {Code::kCorruption, "Corruption"},
  };
  if (code_ == Code::kOk) return "OK";
  const char* prefix = NameOf(code_, kPrefixes, "OK");
  return msg_.empty() ? std::string(prefix) : std::string(prefix) + ": " + msg_;
}

}  // namespace kvbench
