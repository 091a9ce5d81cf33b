#include "report/json_writer.h"

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

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF); 0 if the bytes there are not one.
size_t Utf8SequenceLength(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) -> unsigned { return static_cast<unsigned char>(s[k]); };
  const unsigned c = byte(i);
  size_t n;
  unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

void JsonWriter::Quote(const std::string& s) {
  out_ += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // Paths and engine messages are bytes, not always UTF-8; JSON text must be UTF-8. A byte
      // that does not start a well-formed sequence becomes U+FFFD (docs/json.md).
      const size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {
        out_ += "\\ufffd";
      } else {
        out_.append(s, i, n);
        i += n - 1;
      }
      continue;
    }
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

JsonWriter& JsonWriter::Open(char bracket) {
  out_ += bracket;
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::Close(char bracket) {
  first_.pop_back();
  out_ += '\n';
  out_.append(2 * (first_.size() - 1), ' ');
  out_ += bracket;
  return *this;
}

JsonWriter& JsonWriter::BeginObject(const char* key) {
  if (!out_.empty()) Key(key);  // the document's own object has no key
  return Open('{');
}

JsonWriter& JsonWriter::EndObject() { return Close('}'); }

JsonWriter& JsonWriter::BeginArray(const char* key) {
  Key(key);
  return Open('[');
}

JsonWriter& JsonWriter::EndArray() { return Close(']'); }

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

JsonWriter& JsonWriter::IntRow(const char* key, std::initializer_list<uint64_t> v) {
  Key(key);
  out_ += '[';
  const char* sep = "";
  for (uint64_t x : v) {
    out_ += sep;
    out_ += std::to_string(x);
    sep = ", ";
  }
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::StrIntRow(const char* key, const std::string& s, uint64_t n) {
  Key(key);
  out_ += '[';
  Quote(s);
  out_ += ", " + std::to_string(n) + ']';
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
