"""Configure-level tests of -DKVBENCH_<DEP>_SOURCE_DIR / _ROOT (cmake/KvbenchSourceDeps.cmake).

A directory that is not the named library must stop configuration with a message naming the file
that was expected; a tree that is recognised yields the version its headers declare. The
recognition runs in CMake script mode for every dependency (fast); one real configure of the
project checks that the message reaches the user, and that SOURCE_DIR and ROOT exclude each other.
Two more configure the project to check what kvb bisect relies on: ccache hits across copies of a
tree, and a library kept up to date in its tree (KVBENCH_DEPS_LIVE).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARGS: argparse.Namespace

# dep -> (file a configure names when the tree is wrong, files and contents of a minimal tree
# that is recognised, expected version).
TREES: dict[str, tuple[str, dict[str, str], str]] = {
    "LZ4": ("lib/lz4.h", {"lib/lz4.h": "#define LZ4_VERSION_MAJOR    1\n"
                                       "#define LZ4_VERSION_MINOR    9\n"
                                       "#define LZ4_VERSION_RELEASE  4\n"}, "1.9.4"),
    "ZSTD": ("lib/zstd.h", {"lib/zstd.h": "#define ZSTD_VERSION_MAJOR    1\n"
                                          "#define ZSTD_VERSION_MINOR    5\n"
                                          "#define ZSTD_VERSION_RELEASE  7\n"}, "1.5.7"),
    "XXHASH": ("xxhash.h", {"xxhash.h": "#define XXH_VERSION_MAJOR    0\n"
                                        "#define XXH_VERSION_MINOR    8\n"
                                        "#define XXH_VERSION_RELEASE  3\n",
                            "xxhash.c": ""}, "0.8.3"),
    "ROCKSDB": ("include/rocksdb/db.h", {"include/rocksdb/db.h": "",
                                         "include/rocksdb/version.h": "#define ROCKSDB_MAJOR 9\n"
                                                                      "#define ROCKSDB_MINOR 10\n"
                                                                      "#define ROCKSDB_PATCH 0\n"},
                "9.10.0"),
    "LMDB": ("libraries/liblmdb/lmdb.h or lmdb.h",
             {"libraries/liblmdb/lmdb.h": "#define MDB_VERSION_MAJOR\t0\n"
                                          "#define MDB_VERSION_MINOR\t9\n"
                                          "#define MDB_VERSION_PATCH\t31\n",
              "libraries/liblmdb/mdb.c": ""}, "0.9.31"),
    # A 3.x release tree (autotools: build_posix/); 10.0 and later add a CMakeLists.txt.
    "WIREDTIGER": ("src/include/wiredtiger.in",
                   {"src/include/wiredtiger.in": "", "build_posix/configure.ac.in": "",
                    "RELEASE_INFO": "WIREDTIGER_VERSION_MAJOR=3\nWIREDTIGER_VERSION_MINOR=2\n"
                                    "WIREDTIGER_VERSION_PATCH=1\n"}, "3.2.1"),
}


def flat(text: str) -> str:
    """CMake wraps long messages; compare them with the line breaks as spaces."""
    return " ".join(text.split())


def write_tree(base: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def check_tree(dep: str, directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARGS.cmake, f"-DDEP={dep}", f"-DDIR={directory}", "-P",
         str(ROOT / "tests" / "check_source_tree.cmake")],
        capture_output=True, text=True, timeout=60)


class SourceTreeRecognition(unittest.TestCase):
    def test_wrong_tree_names_the_expected_file(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            # Another library's tree: lz4's, which also holds an xxhash.h.
            wrong = Path(tmp) / "not-it"
            write_tree(wrong, {"lib/lz4.h": "", "lib/xxhash.h": "", "README.md": ""})
            for dep, (expected, _, _) in TREES.items():
                if dep == "LZ4":
                    continue
                with self.subTest(dep=dep):
                    r = check_tree(dep, wrong)
                    self.assertNotEqual(r.returncode, 0, r.stderr)
                    self.assertIn(f"is not a {dep.lower()} source tree", flat(r.stderr))
                    self.assertIn(f"expected {expected}", flat(r.stderr))

    def test_recognised_tree_gives_its_version(self) -> None:
        for dep, (_, files, version) in TREES.items():
            with self.subTest(dep=dep), tempfile.TemporaryDirectory() as tmp:
                write_tree(Path(tmp), files)
                r = check_tree(dep, Path(tmp))
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(r.stderr.strip().endswith(version), r.stderr)

    def test_missing_directory(self) -> None:
        r = check_tree("LZ4", Path("/nonexistent/kvbench-lz4"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is not a directory", flat(r.stderr))


class ConfigureWithWrongSource(unittest.TestCase):
    """The real project's configure, as a user runs it, stops with the message."""

    def configure(self, tmp: Path, *defs: str) -> subprocess.CompletedProcess[str]:
        cmd = [ARGS.cmake, "-S", str(ROOT), "-B", str(tmp / "build"), "-G", ARGS.generator,
               f"-DCMAKE_C_COMPILER={ARGS.c_compiler}",
               f"-DCMAKE_CXX_COMPILER={ARGS.cxx_compiler}",
               f"-DKVBENCH_DEPS_CACHE={tmp / 'deps'}", "-DKVBENCH_BUILD_TESTS=OFF",
               "-DKVBENCH_BUILD_MICRO=OFF", *defs]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "CCACHE_DISABLE": "1"})

    def test_wrong_lz4_source_dir_fails_configuration(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            wrong = Path(tmp) / "zstd-tree"
            write_tree(wrong, {"lib/zstd.h": ""})
            r = self.configure(Path(tmp), f"-DKVBENCH_LZ4_SOURCE_DIR={wrong}")
            self.assertNotEqual(r.returncode, 0)
            out = flat(r.stdout + r.stderr)
            self.assertIn(f"KVBENCH_LZ4_SOURCE_DIR={wrong} is not a lz4 source tree", out)
            self.assertIn("expected lib/lz4.h", out)
            self.assertFalse((Path(tmp) / "deps").exists(), "nothing may be built")

    def test_source_dir_and_root_exclude_each_other(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            r = self.configure(Path(tmp), f"-DKVBENCH_XXHASH_SOURCE_DIR={tmp}",
                               f"-DKVBENCH_XXHASH_ROOT={tmp}")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("KVBENCH_XXHASH_SOURCE_DIR and KVBENCH_XXHASH_ROOT are both set",
                          flat(r.stdout + r.stderr))


class CcacheAcrossTrees(unittest.TestCase):
    """kvb bisect's steps (docs/presets.md): a library built inside its tree
    (KVBENCH_DEPS_BUILD_IN_TREE=ON, as kvb bisect configures it) compiles to ccache hits from a
    copy of the tree at another path, CCACHE_BASEDIR covering both; built beside its prefix it
    does not, as the build directory's path relative to the tree differs."""

    def hits(self, in_tree: bool) -> dict[str, int]:
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "CCACHE_DIR": f"{tmp}/ccache", "CCACHE_BASEDIR": tmp}
            # Counted alone: a user's launcher (CMake's environment defaults would put ccache in
            # front of the configure checks too) and hash settings are not the test's.
            for name in ("CCACHE_DISABLE", "CCACHE_NOHASHDIR", "CCACHE_HASHDIR",
                         "CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER"):
                env.pop(name, None)
            for copy in ("aaaa", "bbbb"):  # two commits' worktrees: same files, other paths
                tree = Path(tmp) / "trees" / copy
                write_tree(tree, {**TREES["LMDB"][1],
                                  "libraries/liblmdb/mdb.c": '#include "lmdb.h"\nint x;\n',
                                  "libraries/liblmdb/midl.c": "int y;\n"})
                r = subprocess.run(
                    [ARGS.cmake, "-S", str(ROOT), "-B", f"{tmp}/build-{copy}", "-G",
                     ARGS.generator, f"-DCMAKE_C_COMPILER={ARGS.c_compiler}",
                     f"-DCMAKE_CXX_COMPILER={ARGS.cxx_compiler}", f"-DKVBENCH_DEPS_CACHE={tmp}/deps",
                     "-DKVBENCH_BUILD_TESTS=OFF", "-DKVBENCH_BUILD_MICRO=OFF",
                     f"-DKVBENCH_LMDB_SOURCE_DIR={tree}",
                     f"-DKVBENCH_DEPS_BUILD_IN_TREE={'ON' if in_tree else 'OFF'}"],
                    capture_output=True, text=True, timeout=300, env=env)
                self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
                self.assertIn("kvbench: built lmdb 0.9.31", r.stdout)
                self.assertEqual((tree / ".kvbench-build").exists(), False, "removed once built")
            p = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                               env=env)
            if p.returncode != 0:
                self.skipTest(f"this ccache has no --print-stats: {p.stderr.strip()}")
            stats = dict(ln.split("\t", 1) for ln in p.stdout.splitlines() if "\t" in ln)
            return {k: int(stats.get(k, "0")) for k in
                    ("direct_cache_hit", "preprocessed_cache_hit", "cache_miss")}

    def test_in_tree_builds_hit_across_copies(self) -> None:
        if shutil.which("ccache") is None:
            self.skipTest("ccache is not installed (scripts/install-deps.sh)")
        got = self.hits(in_tree=True)
        self.assertEqual(got["direct_cache_hit"] + got["preprocessed_cache_hit"], 2, got)
        self.assertEqual(got["cache_miss"], 2, got)  # the first copy's mdb.c and midl.c
        got = self.hits(in_tree=False)
        self.assertEqual(got["direct_cache_hit"] + got["preprocessed_cache_hit"], 0, got)


class LiveInTree(unittest.TestCase):
    """kvb bisect's slots (docs/presets.md): with KVBENCH_DEPS_LIVE=ON a library built from its
    tree stays a part of the build. kvbench is configured once; a later build after a file of
    the tree changed (another commit checked out there) recompiles that file only and installs
    what changed, through the target kvbench_dep_<lib>, and configures neither kvbench nor the
    library again."""

    def test_a_changed_file_is_recompiled_alone_without_a_configure(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            tree, bdir = Path(tmp) / "src", Path(tmp) / "build"
            write_tree(tree, {**TREES["LMDB"][1],
                              "libraries/liblmdb/mdb.c": '#include "lmdb.h"\nint x;\n',
                              "libraries/liblmdb/midl.c": "int y;\n"})
            env = {**os.environ, "CCACHE_DISABLE": "1"}
            r = subprocess.run(
                [ARGS.cmake, "-S", str(ROOT), "-B", str(bdir), "-G", ARGS.generator,
                 f"-DCMAKE_C_COMPILER={ARGS.c_compiler}",
                 f"-DCMAKE_CXX_COMPILER={ARGS.cxx_compiler}", f"-DKVBENCH_DEPS_CACHE={tmp}/deps",
                 "-DKVBENCH_BUILD_TESTS=OFF", "-DKVBENCH_BUILD_MICRO=OFF",
                 f"-DKVBENCH_LMDB_SOURCE_DIR={tree}", "-DKVBENCH_DEPS_LIVE=ON"],
                capture_output=True, text=True, timeout=300, env=env)
            self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
            self.assertIn("kept there and brought up to date by every build", flat(r.stdout))
            lib = tree / ".kvbench-live" / "prefix" / "lib" / "liblmdb.a"
            self.assertTrue(lib.exists() and (tree / ".kvbench-build").is_dir())

            def build() -> str:
                p = subprocess.run([ARGS.cmake, "--build", str(bdir), "--target",
                                    "kvbench_dep_lmdb"], capture_output=True, text=True,
                                   timeout=300, env=env)
                self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
                return p.stdout
            out = build()
            self.assertNotRegex(out, r"Building C object")
            before = lib.stat().st_mtime_ns
            (tree / "libraries/liblmdb/midl.c").write_text("int y = 2;\n")
            out = build()
            self.assertEqual(len(re.findall(r"Building C object", out)), 1, out)
            self.assertIn("midl.c", out)
            self.assertNotIn("Configuring done", out)   # neither kvbench nor lmdb again
            self.assertGreater(lib.stat().st_mtime_ns, before)
            # A changed header gets a new time stamp in the prefix even when its source's is
            # older than the last build (cmake --install would copy the old one, to the
            # second: a checkout within a second of a build), so what includes it is rebuilt;
            # an unchanged one keeps its own.
            header = tree / ".kvbench-live" / "prefix" / "include" / "lmdb.h"
            src = tree / "libraries/liblmdb/lmdb.h"
            kept = lib.stat().st_mtime_ns
            src.write_text(src.read_text() + "/* changed */\n")
            past = time.time() - 60
            os.utime(src, (past, past))
            start = time.time_ns()
            out = build()
            self.assertGreaterEqual(header.stat().st_mtime_ns, start)
            self.assertIn("changed", header.read_text())
            self.assertGreaterEqual(lib.stat().st_mtime_ns, kept)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cmake", required=True)
    parser.add_argument("--generator", required=True)
    parser.add_argument("--c-compiler", required=True)
    parser.add_argument("--cxx-compiler", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
