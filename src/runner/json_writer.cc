#include "runner/json_writer.h"

#include <cmath>
#include <cstdio>

namespace kvbench {

void JsonWriter::Key(const char* key) {
  if (!first_.back()) out_ += ',';
  first_.back() = false;
  out_ += '\n';
  out_.append(2 * (first_.size() - 1), ' ');
  if (key != nullptr) {
    Quote(key);
    out_ += ": ";
  }
}

void JsonWriter::Quote(const std::string& s) {
  out_ += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out_ += buf;
        } else {
          out_ += static_cast<char>(c);
        }
    }
  }
  out_ += '"';
}

JsonWriter& JsonWriter::BeginObject(const char* key) {
  if (!out_.empty()) Key(key);
  out_ += '{';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  first_.pop_back();
  out_ += '\n';
  out_.append(2 * (first_.size() - 1), ' ');
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::BeginArray(const char* key) {
  Key(key);
  out_ += '[';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  first_.pop_back();
  out_ += '\n';
  out_.append(2 * (first_.size() - 1), ' ');
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::Str(const char* key, const std::string& v) {
  Key(key);
  Quote(v);
  return *this;
}

JsonWriter& JsonWriter::Num(const char* key, double v) {
  Key(key);
  if (!std::isfinite(v)) {
    out_ += "null";
  } else {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.10g", v);
    out_ += buf;
  }
  return *this;
}

JsonWriter& JsonWriter::Int(const char* key, uint64_t v) {
  Key(key);
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::Bool(const char* key, bool v) {
  Key(key);
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null(const char* key) {
  Key(key);
  out_ += "null";
  return *this;
}

}  // namespace kvbench
