// The JSON writer's strings: whatever bytes go in, valid JSON (UTF-8) comes out.
#include "report/json_writer.h"

#include <gtest/gtest.h>

#include <string>

namespace kvbench {
namespace {

std::string Quoted(const std::string& bytes) {
  JsonWriter j;
  j.BeginObject().Str("s", bytes).EndObject();
  const std::string& out = j.str();
  const size_t begin = out.find(": \"") + 3;
  return out.substr(begin, out.rfind('"') - begin);
}

TEST(JsonWriterTest, WellFormedUtf8IsCopied) {
  EXPECT_EQ(Quoted("/tmp/caf\xc3\xa9"), "/tmp/caf\xc3\xa9");    // U+00E9
  EXPECT_EQ(Quoted("\xe2\x82\xac"), "\xe2\x82\xac");            // U+20AC
  EXPECT_EQ(Quoted("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");    // U+1F600
  EXPECT_EQ(Quoted("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf");    // U+10FFFF
  EXPECT_EQ(Quoted("a\"b\\c\n\x01"), "a\\\"b\\\\c\\n\\u0001");  // escapes as before
}

TEST(JsonWriterTest, EveryByteThatIsNotUtf8BecomesOneReplacementCharacter) {
  EXPECT_EQ(Quoted("/tmp/bad\xff"), "/tmp/bad\\ufffd");
  EXPECT_EQ(Quoted("\xc3("), "\\ufffd(");                                 // truncated sequence
  EXPECT_EQ(Quoted("\xc3"), "\\ufffd");                                   // truncated at the end
  EXPECT_EQ(Quoted("\xc0\x80"), "\\ufffd\\ufffd");                        // overlong NUL
  EXPECT_EQ(Quoted("\xe0\x80\xaf"), "\\ufffd\\ufffd\\ufffd");             // overlong '/'
  EXPECT_EQ(Quoted("\xed\xa0\x80"), "\\ufffd\\ufffd\\ufffd");             // a UTF-16 surrogate
  EXPECT_EQ(Quoted("\xf4\x90\x80\x80"), "\\ufffd\\ufffd\\ufffd\\ufffd");  // above U+10FFFF
  EXPECT_EQ(Quoted("\x80\xe9t\xc3\xa9"), "\\ufffd\\ufffdt\xc3\xa9");      // Latin-1 next to UTF-8
}

}  // namespace
}  // namespace kvbench
