// The raw memory-reference log reader on files written byte by byte here
// (not through raw_format.h's structs), so a layout slip on either side shows.
#include "raw_reader.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <array>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace mt = tracefold::memtrace;
namespace fs = std::filesystem;

namespace {

struct Bytes {
  std::string b;
  Bytes& raw(const std::string& s) {
    b += s;
    return *this;
  }
  Bytes& u(std::uint64_t v, int n) {
    for (int i = 0; i < n; i++) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
};

Bytes raw_header(std::uint32_t version, std::uint32_t rsize, std::uint32_t thread) {
  Bytes h;
  h.raw(std::string("TFMRAW\0\0", 8)).u(version, 4).u(rsize, 4).u(thread, 4).u(4242, 4);
  return h;
}

// A version-2 record, field by field in file order.
void v2(Bytes& b, std::uint64_t iaddr, std::uint64_t daddr, std::uint32_t ctx, std::uint16_t size,
        std::uint8_t index, std::uint8_t flags, std::uint32_t region, std::uint32_t ordinal,
        std::uint32_t owner, std::int64_t offset) {
  b.u(iaddr, 8).u(daddr, 8).u(ctx, 4).u(size, 2).u(index, 1).u(flags, 1);
  b.u(region, 4).u(ordinal, 4).u(owner, 4).u(0, 4).u(static_cast<std::uint64_t>(offset), 8);
}

class RawReader : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tf_memraw_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const Bytes& b) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << b.b;
    return p;
  }
  // The message of the RawFormatError that f throws ("" if none).
  template <class F>
  static std::string error_of(F f) {
    try {
      f();
    } catch (const mt::RawFormatError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(RawReader, ReadsVersion2RecordsFieldByField) {
  Bytes b = raw_header(2, 48, 0);
  v2(b, 0x401000, 0x4c0010, 3, 8, 0, 1 | (1 << 1), 1, 0, 0, 0xc0010);  // static store
  v2(b, 0x401004, 0x7ff000, 3, 4, 1, 2 << 1, 0, 0, 0, -24);            // stack load
  v2(b, 0x401008, 0x5000040, 0, 8, 0, 1 | (3 << 1), 7, 2, 1, 64);      // heap store
  auto s = mt::read_raw_stream(write("thread-0.bin", b));
  EXPECT_EQ(s.version, 2u);
  EXPECT_EQ(s.pid, 4242u);
  ASSERT_EQ(s.refs.size(), 3u);
  EXPECT_EQ(s.refs[0].iaddr, 0x401000u);
  EXPECT_EQ(s.refs[0].daddr, 0x4c0010u);
  EXPECT_EQ(s.refs[0].context, 3u);
  EXPECT_TRUE(s.refs[0].store);
  EXPECT_EQ(s.refs[0].kind, mt::AddrKind::Static);
  EXPECT_EQ(s.refs[0].region, 1u);
  EXPECT_EQ(s.refs[0].offset, 0xc0010);
  EXPECT_FALSE(s.refs[1].store);
  EXPECT_EQ(s.refs[1].index, 1u);
  EXPECT_EQ(s.refs[1].size, 4u);
  EXPECT_EQ(s.refs[1].kind, mt::AddrKind::Stack);
  EXPECT_EQ(s.refs[1].offset, -24);
  EXPECT_EQ(s.refs[2].kind, mt::AddrKind::Heap);
  EXPECT_EQ(s.refs[2].region, 7u);
  EXPECT_EQ(s.refs[2].ordinal, 2u);
  EXPECT_EQ(s.refs[2].owner, 1u);
  EXPECT_EQ(s.refs[2].offset, 64);
  EXPECT_STREQ(mt::addr_kind_name(s.refs[2].kind), "heap");
}

TEST_F(RawReader, ReadsVersion1AsUnnormalised) {
  Bytes b = raw_header(1, 24, 0);
  b.u(0x401000, 8).u(0x4c0010, 8).u(0, 4).u(8, 2).u(0, 1).u(1, 1);
  auto s = mt::read_raw_stream(write("thread-0.bin", b));
  ASSERT_EQ(s.refs.size(), 1u);
  EXPECT_TRUE(s.refs[0].store);
  EXPECT_EQ(s.refs[0].kind, mt::AddrKind::Other);
  EXPECT_EQ(s.refs[0].offset, 0x4c0010);
}

TEST_F(RawReader, StreamsMoreRecordsThanOneChunk) {
  // More than the reader's buffer of 16384 records, so refills are crossed.
  Bytes b = raw_header(2, 48, 0);
  const std::uint64_t n = 40000;
  for (std::uint64_t i = 0; i < n; i++) v2(b, 0x1000 + i, 0x9000 + 8 * i, 0, 8, 0, 0, 0, 0, 0, 0);
  mt::RawStreamReader r(write("thread-0.bin", b));
  EXPECT_EQ(r.records(), n);
  mt::MemRef m;
  std::uint64_t i = 0;
  while (r.next(m)) {
    ASSERT_EQ(m.iaddr, 0x1000 + i) << "record " << i;
    ASSERT_EQ(m.daddr, 0x9000 + 8 * i) << "record " << i;
    i++;
  }
  EXPECT_EQ(i, n);
}

// next_batch decodes records in blocks from mapped windows of the file,
// next() field by field: both must give every field alike, across window
// edges (65,536 records a window) and batch sizes that straddle them, and
// name a bad record's true offset beyond the first window.
TEST_F(RawReader, BatchesDecodeEveryFieldAsNextDoesAcrossWindows) {
  Bytes b = raw_header(2, 48, 0);
  const std::uint64_t n = 3 * 65536 + 123;
  auto rec = [&](std::uint64_t i) {
    const std::uint8_t flags = static_cast<std::uint8_t>((i & 1) | ((i / 2) % 4) << 1);
    v2(b, 0x400000 + 3 * i, 0x7f0000000000 + 40 * i, static_cast<std::uint32_t>(i * 7),
       static_cast<std::uint16_t>(1 + i % 700), static_cast<std::uint8_t>(i % 5), flags,
       static_cast<std::uint32_t>(i ^ 0x55), static_cast<std::uint32_t>(i * 3 + 1),
       static_cast<std::uint32_t>(i % 9), static_cast<std::int64_t>(i % 2 ? -(i << 20) : i << 30));
  };
  for (std::uint64_t i = 0; i < n; i++) rec(i);
  const auto p = write("thread-0.bin", b);
  mt::RawStreamReader one(p), batched(p);
  std::vector<mt::MemRef> got(50000);
  std::uint64_t i = 0;
  while (std::size_t k = batched.next_batch(got.data(), got.size())) {
    for (std::size_t j = 0; j < k; j++, i++) {
      mt::MemRef m;
      ASSERT_TRUE(one.next(m)) << "record " << i;
      ASSERT_EQ(got[j], m) << "record " << i;
      ASSERT_EQ(m.iaddr, 0x400000 + 3 * i) << "record " << i;
      ASSERT_EQ(m.kind, static_cast<mt::AddrKind>((i / 2) % 4)) << "record " << i;
      ASSERT_EQ(m.store, (i & 1) != 0) << "record " << i;
      ASSERT_EQ(m.owner, i % 9) << "record " << i;
      ASSERT_EQ(m.offset, static_cast<std::int64_t>(i % 2 ? -(i << 20) : i << 30)) << i;
    }
  }
  EXPECT_EQ(i, n);
  v2(b, 1, 2, 0, 8, 0, 0x20, 0, 0, 0, 0);  // unknown flags after the last window's records
  const auto q = write("thread-1.bin", b);
  mt::RawStreamReader bad(q);
  const std::string err = error_of([&] {
    while (bad.next_batch(got.data(), got.size()) > 0) {
    }
  });
  EXPECT_NE(err.find("record at offset " + std::to_string(24 + 48 * n) + ": unknown flags 32"),
            std::string::npos)
      << err;
}

TEST_F(RawReader, TruncatedRecordNamesFileAndOffset) {
  Bytes b = raw_header(2, 48, 0);
  v2(b, 1, 2, 0, 8, 0, 0, 0, 0, 0, 0);
  v2(b, 1, 2, 0, 8, 0, 0, 0, 0, 0, 0);
  b.b.resize(b.b.size() - 5);  // the second record loses 5 bytes
  auto p = write("thread-0.bin", b);
  std::string e = error_of([&] { mt::read_raw_stream(p); });
  EXPECT_NE(e.find(p.string()), std::string::npos) << e;
  EXPECT_NE(e.find("truncated record at offset 72"), std::string::npos) << e;
  EXPECT_NE(e.find("43 of 48 bytes"), std::string::npos) << e;
}

TEST_F(RawReader, RejectsBadHeaders) {
  auto short_file = write("a.bin", Bytes().raw("TFMRAW"));
  EXPECT_NE(error_of([&] { mt::read_raw_stream(short_file); }).find("shorter than the 24-byte"),
            std::string::npos);
  Bytes wrong_magic = raw_header(2, 48, 0);
  wrong_magic.b[0] = 'X';
  auto m = write("b.bin", wrong_magic);
  EXPECT_NE(error_of([&] { mt::read_raw_stream(m); }).find("bad magic"), std::string::npos);
  auto v = write("c.bin", raw_header(9, 48, 0));
  EXPECT_NE(error_of([&] { mt::read_raw_stream(v); }).find("version 9"), std::string::npos);
  auto rs = write("d.bin", raw_header(2, 24, 0));
  EXPECT_NE(error_of([&] { mt::read_raw_stream(rs); }).find("record size 24 in a version 2"),
            std::string::npos);
  auto missing = dir_ / "nope.bin";
  EXPECT_NE(error_of([&] { mt::read_raw_stream(missing); }).find("nope.bin"), std::string::npos);
}

TEST_F(RawReader, RejectsUnknownFlagsAndZeroSize) {
  Bytes b = raw_header(2, 48, 0);
  v2(b, 1, 2, 0, 8, 0, 0, 0, 0, 0, 0);
  v2(b, 1, 2, 0, 8, 0, 0x10, 0, 0, 0, 0);
  auto p = write("thread-0.bin", b);
  EXPECT_NE(error_of([&] { mt::read_raw_stream(p); }).find("record at offset 72: unknown flags 16"),
            std::string::npos);
  Bytes z = raw_header(2, 48, 0);
  v2(z, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0);
  auto q = write("thread-1.bin", z);
  EXPECT_NE(error_of([&] { mt::read_raw_stream(q); }).find("record at offset 24: size 0"),
            std::string::npos);
}

Bytes ctx_file(std::uint32_t count, std::initializer_list<std::array<std::uint64_t, 3>> recs) {
  Bytes b;
  b.raw(std::string("TFMCTX\0\0", 8)).u(1, 4).u(16, 4).u(count, 4).u(0, 4);
  for (const auto& r : recs) b.u(r[0], 4).u(r[1], 4).u(r[2], 8);
  return b;
}

TEST_F(RawReader, ContextsAndCallPaths) {
  auto p =
      write("contexts.bin", ctx_file(3, {{1, 0, 0x400100}, {2, 1, 0x400200}, {3, 1, 0x400300}}));
  auto c = mt::read_contexts(p);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(mt::call_path(c, 0), std::vector<std::uint64_t>{});
  EXPECT_EQ(mt::call_path(c, 2), (std::vector<std::uint64_t>{0x400100, 0x400200}));
  EXPECT_EQ(mt::call_path(c, 3), (std::vector<std::uint64_t>{0x400100, 0x400300}));
  EXPECT_THROW(mt::call_path(c, 4), mt::RawFormatError);
}

TEST_F(RawReader, ContextErrors) {
  auto counted = write("c1.bin", ctx_file(3, {{1, 0, 1}, {2, 1, 2}}));
  EXPECT_NE(error_of([&] { mt::read_contexts(counted); }).find("header says 3 contexts"),
            std::string::npos);
  auto order = write("c2.bin", ctx_file(2, {{1, 0, 1}, {3, 1, 2}}));
  EXPECT_NE(error_of([&] {
              mt::read_contexts(order);
            }).find("context record at offset 40 has id 3, expected 2"),
            std::string::npos);
  auto loop = write("c3.bin", ctx_file(2, {{1, 0, 1}, {2, 2, 2}}));
  EXPECT_NE(error_of([&] { mt::read_contexts(loop); }).find("not an earlier context"),
            std::string::npos);
}

Bytes mod_file(std::uint32_t count,
               std::initializer_list<std::pair<std::uint64_t, std::string>> m) {
  Bytes b;
  b.raw(std::string("TFMMOD\0\0", 8)).u(1, 4).u(16, 4).u(count, 4).u(0, 4);
  std::uint32_t id = 1;
  for (const auto& [base, name] : m) b.u(id++, 4).u(name.size(), 4).u(base, 8).raw(name);
  return b;
}

TEST_F(RawReader, Modules) {
  auto p =
      write("modules.bin", mod_file(2, {{0x400000, "/bin/app"}, {0x4000000, "/lib/libc.so.6"}}));
  auto m = mt::read_modules(p);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[1].name, "/bin/app");
  EXPECT_EQ(m[1].base, 0x400000u);
  EXPECT_EQ(m[2].name, "/lib/libc.so.6");
  Bytes cut = mod_file(2, {{0x400000, "/bin/app"}, {0x4000000, "/lib/libc.so.6"}});
  cut.b.resize(cut.b.size() - 3);
  auto q = write("m2.bin", cut);
  EXPECT_NE(error_of([&] { mt::read_modules(q); }).find("module 2 (offset 48) has a 14-byte name"),
            std::string::npos);
  Bytes extra = mod_file(1, {{0x400000, "/bin/app"}});
  extra.raw("xx");
  auto r = write("m3.bin", extra);
  EXPECT_NE(error_of([&] { mt::read_modules(r); }).find("2 bytes after the last module"),
            std::string::npos);
  // A count no file of this size can hold: refused before a table is sized by it.
  auto h = write("m4.bin", mod_file(0xffffffffu, {{0x400000, "/bin/app"}}));
  EXPECT_NE(error_of([&] {
              mt::read_modules(h);
            }).find("header says 4294967295 modules (at least 68719476744 bytes)"),
            std::string::npos);
}

TEST_F(RawReader, WholeLogChecksNumberingAndIds) {
  Bytes t0 = raw_header(2, 48, 0);
  v2(t0, 1, 2, 2, 8, 0, 1 << 1, 1, 0, 0, 16);
  Bytes t1 = raw_header(2, 48, 1);
  v2(t1, 1, 2, 0, 8, 0, 0, 0, 0, 0, 0);
  write("thread-0.bin", t0);
  write("thread-1.bin", t1);
  write("contexts.bin", ctx_file(2, {{1, 0, 10}, {2, 1, 20}}));
  write("modules.bin", mod_file(1, {{0x400000, "/bin/app"}}));
  auto log = mt::read_raw_log(dir_);
  ASSERT_EQ(log.threads.size(), 2u);
  EXPECT_EQ(log.threads[1].thread, 1u);
  EXPECT_EQ(log.modules[1].name, "/bin/app");

  // A record naming a context the table does not have.
  Bytes bad = raw_header(2, 48, 1);
  v2(bad, 1, 2, 0, 8, 0, 0, 0, 0, 0, 0);
  v2(bad, 1, 2, 9, 8, 0, 0, 0, 0, 0, 0);
  write("thread-1.bin", bad);
  std::string e = error_of([&] { mt::read_raw_log(dir_); });
  EXPECT_NE(e.find("thread-1.bin: record at offset 72: context 9 is not in contexts.bin"),
            std::string::npos)
      << e;

  // A gap in the numbering.
  fs::remove(dir_ / "thread-1.bin");
  write("thread-2.bin", t1);
  e = error_of([&] { mt::read_raw_log(dir_); });
  EXPECT_NE(e.find("thread-1.bin is missing"), std::string::npos) << e;

  // A stream whose header disagrees with its name.
  fs::remove(dir_ / "thread-2.bin");
  write("thread-1.bin", t0);
  e = error_of([&] { mt::read_raw_log(dir_); });
  EXPECT_NE(e.find("header says thread 0"), std::string::npos) << e;
}

}  // namespace
