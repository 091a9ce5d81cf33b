// common/file_output.h: a regular file replaced atomically, a link's target written with the
// link kept, a device or FIFO written in place and never replaced, a failure that loses nothing.
#include "common/file_output.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace kvbench {
namespace {

class FileOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/kvbench-file-output-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf " + dir_).c_str()), 0); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  static bool IsLink(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
  }

  static bool IsCharDevice(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
  }

  // A character device node like /dev/null (1, 3) or /dev/full (1, 7) in the test's directory,
  // so the real ones are never at risk. False when this process may not make one.
  bool MakeDevice(const std::string& name, unsigned minor) const {
    return mknod(Path(name).c_str(), S_IFCHR | 0666, makedev(1, minor)) == 0;
  }

  std::string dir_;
};

TEST_F(FileOutputTest, NewAndRegularFilesAreReplacedWhole) {
  const std::string p = Path("r.json");
  ASSERT_TRUE(WriteOutputFile(p, "first").ok());
  EXPECT_EQ(Read(p), "first");
  ASSERT_TRUE(WriteOutputFile(p, "second").ok());
  EXPECT_EQ(Read(p), "second");
  EXPECT_FALSE(std::ifstream(p + ".tmp").good());
}

TEST_F(FileOutputTest, ALinkIsFollowedAndKept) {
  const std::string target = Path("target.json");
  const std::string link = Path("link.json");
  ASSERT_TRUE(WriteOutputFile(target, "old").ok());
  ASSERT_EQ(symlink("target.json", link.c_str()), 0);  // relative, as users make them
  ASSERT_TRUE(WriteOutputFile(link, "new").ok());
  EXPECT_TRUE(IsLink(link));
  EXPECT_EQ(Read(target), "new");
  EXPECT_FALSE(std::ifstream(link + ".tmp").good());
  EXPECT_FALSE(std::ifstream(target + ".tmp").good());
}

TEST_F(FileOutputTest, ADanglingLinkGetsItsTargetCreated) {
  const std::string link = Path("link.json");
  ASSERT_EQ(symlink(Path("later.json").c_str(), link.c_str()), 0);
  ASSERT_TRUE(WriteOutputFile(link, "made").ok());
  EXPECT_TRUE(IsLink(link));
  EXPECT_EQ(Read(Path("later.json")), "made");
}

TEST_F(FileOutputTest, AFifoIsWrittenInPlace) {
  const std::string fifo = Path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = Read(fifo); });
  const Status s = WriteOutputFile(fifo, "through the pipe");
  reader.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got, "through the pipe");
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(FileOutputTest, DevicesAreWrittenInPlaceAndAFullOneFailsWithoutBeingReplaced) {
  if (!MakeDevice("null", 3) || !MakeDevice("full", 7)) {
    GTEST_SKIP() << "mknod is not permitted here (needs CAP_MKNOD)";
  }
  EXPECT_TRUE(WriteOutputFile(Path("null"), "gone").ok());
  EXPECT_TRUE(IsCharDevice(Path("null")));
  const Status s = WriteOutputFile(Path("full"), "no room");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "cannot write " + Path("full") + ": No space left on device");
  EXPECT_TRUE(IsCharDevice(Path("full")));
  // Through a link the device is still written in place; the link stays.
  ASSERT_EQ(symlink(Path("full").c_str(), Path("to-full").c_str()), 0);
  EXPECT_FALSE(WriteOutputFile(Path("to-full"), "no room").ok());
  EXPECT_TRUE(IsLink(Path("to-full")));
  EXPECT_TRUE(IsCharDevice(Path("full")));
}

TEST_F(FileOutputTest, AFailureKeepsWhatWasThere) {
  const std::string p = Path("ro/r.json");
  ASSERT_EQ(mkdir(Path("ro").c_str(), 0755), 0);
  ASSERT_TRUE(WriteOutputFile(p, "kept").ok());
  // A temporary file that cannot be made: PATH.tmp is a directory.
  ASSERT_EQ(mkdir((p + ".tmp").c_str(), 0755), 0);
  const Status s = WriteOutputFile(p, "lost?");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "cannot write " + p + ".tmp: Is a directory");
  EXPECT_EQ(Read(p), "kept");
}

TEST_F(FileOutputTest, ADirectoryIsRefused) {
  const Status s = WriteOutputFile(dir_, "x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "cannot write " + dir_ + ": is a directory");
}

TEST_F(FileOutputTest, StdoutIsItsDescriptor) {
  OutputTarget t;
  ASSERT_TRUE(ResolveOutput("/dev/stdout", &t).ok());
  EXPECT_EQ(t.fd, 1);
  ASSERT_TRUE(ResolveOutput("/dev/fd/2", &t).ok());
  EXPECT_EQ(t.fd, 2);
  ASSERT_TRUE(ResolveOutput(Path("r.json"), &t).ok());
  EXPECT_EQ(t.fd, -1);
  EXPECT_FALSE(t.in_place);
}

}  // namespace
}  // namespace kvbench
