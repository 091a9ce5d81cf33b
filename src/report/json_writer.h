// A small streaming JSON writer: objects, arrays, strings (escaped), numbers, booleans.
// Non-finite numbers are written as null, since JSON has no NaN or infinity. Strings are bytes:
// well-formed UTF-8 is copied, every other byte becomes U+FFFD ("\ufffd"), so the output is
// always valid JSON.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace kvbench {

class JsonWriter {
 public:
  JsonWriter& BeginObject(const char* key = nullptr);
  JsonWriter& EndObject();
  JsonWriter& BeginArray(const char* key = nullptr);
  JsonWriter& EndArray();
  JsonWriter& Str(const char* key, const std::string& v);
  JsonWriter& Num(const char* key, double v);
  JsonWriter& Int(const char* key, uint64_t v);
  JsonWriter& Bool(const char* key, bool v);
  JsonWriter& Null(const char* key);
  // A short array of integers on one line, "[1, 2, 3]": a histogram bucket, not a record.
  JsonWriter& IntRow(const char* key, std::initializer_list<uint64_t> v);
  // A string and a count on one line, "["a;b;c", 12]": a folded stack.
  JsonWriter& StrIntRow(const char* key, const std::string& s, uint64_t n);
  const std::string& str() const { return out_; }

 private:
  // A nesting level: its bracket, and on Close the closing one on a line of its own.
  JsonWriter& Open(char bracket);
  JsonWriter& Close(char bracket);
  void Key(const char* key);
  void Quote(const std::string& s);
  std::string out_;
  std::vector<bool> first_{true};  // per nesting level: no element written yet
};

}  // namespace kvbench
