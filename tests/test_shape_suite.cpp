// The committed benchmark suite (bench/shapes.txt) and its parser (bench/shape_suite.hpp),
// on the CPU: the suite has at least 30 shapes, every group, both layouts and all four
// transpose pairs in each, and every shape the open issues' tables name; the parser
// refuses each kind of malformed line by its line number, and --groups' selection
// refuses a group that no shape has.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "shape_suite.hpp"

namespace {

using tmm_suite::SuiteShape;

std::vector<SuiteShape> committed_suite() {
  std::vector<SuiteShape> shapes;
  std::string error;
  EXPECT_TRUE(tmm_suite::read_shape_suite(TMM_SHAPE_SUITE_FILE, &shapes, &error)) << error;
  return shapes;
}

TEST(ShapeSuite, HasEveryGroupLayoutAndTransposePair) {
  const std::vector<SuiteShape> shapes = committed_suite();
  EXPECT_GE(shapes.size(), 30u);
  const std::set<std::string> groups_wanted = {"thin", "small", "mid",     "deep-k",
                                               "odd",  "large", "extreme", "batched"};
  std::set<std::string> groups;
  std::set<std::pair<int, int>> pairs;  // (layout, ta * 2 + tb)
  for (const SuiteShape& s : shapes) {
    groups.insert(s.group);
    pairs.insert({int(s.layout), int(s.ta == TMM_TRANS) * 2 + int(s.tb == TMM_TRANS)});
  }
  EXPECT_EQ(groups, groups_wanted) << "a group was added, dropped or misspelt";
  EXPECT_EQ(pairs.size(), 8u) << "want both layouts with each of NN, NT, TN, TT";
}

TEST(ShapeSuite, HasTheIssuesShapes) {
  const std::vector<SuiteShape> shapes = committed_suite();
  const int64_t issue_shapes[][3] = {
      {1, 4096, 4096},     {4096, 1, 4096},    {31, 33, 8191},      {640, 480, 320},
      {100, 100, 100},     {300, 5000, 5000},  {5000, 300, 5000},   {3000, 5000, 4000},
      {11111, 2222, 3333}, {1536, 1536, 1536}, {1000, 1000, 32768}, {200, 100, 16384},
      {96, 96, 32768},     {4096, 4096, 4096}, {8192, 8192, 8192},  {16384, 16384, 16384},
      {64, 64, 8388608},   {4095, 4095, 4095}, {4097, 4097, 4097},  {12345, 6789, 2345},
      {1000, 3000, 7000},  {8192, 256, 8192}};
  for (const auto& want : issue_shapes) {
    bool found = false;
    for (const SuiteShape& s : shapes)
      found = found || (s.m == want[0] && s.n == want[1] && s.k == want[2]);
    EXPECT_TRUE(found) << want[0] << "x" << want[1] << "x" << want[2] << " is not in the suite";
  }
  // The issue's strided batches: batch x n^3, only in the batched group.
  const int64_t batches[][2] = {{100000, 16}, {50000, 32}, {10000, 64},
                                {4000, 128},  {1000, 256}, {100, 1024}};
  for (const auto& want : batches) {
    bool found = false;
    for (const SuiteShape& s : shapes)
      found = found || (s.batch == want[0] && s.m == want[1] && s.n == want[1] && s.k == want[1]);
    EXPECT_TRUE(found) << want[0] << " x " << want[1] << "^3 is not in the suite";
  }
  for (const SuiteShape& s : shapes) EXPECT_EQ(s.batch > 1, s.group == "batched") << s.name;
}

TEST(ShapeSuite, SelectsGroups) {
  const std::vector<SuiteShape> shapes = committed_suite();
  std::vector<SuiteShape> picked;
  std::string error;
  ASSERT_TRUE(tmm_suite::select_groups(shapes, "small,odd", &picked, &error)) << error;
  EXPECT_FALSE(picked.empty());
  for (const SuiteShape& s : picked) EXPECT_TRUE(s.group == "small" || s.group == "odd");
  ASSERT_TRUE(tmm_suite::select_groups(shapes, "", &picked, &error));
  EXPECT_EQ(picked.size(), shapes.size());
  EXPECT_FALSE(tmm_suite::select_groups(shapes, "small,hueg", &picked, &error));
  EXPECT_NE(error.find("'hueg'"), std::string::npos) << error;
}

std::string parse_error(const std::string& text) {
  std::istringstream in(text);
  std::vector<SuiteShape> shapes = {SuiteShape{}};
  std::string error;
  EXPECT_FALSE(tmm_suite::parse_shape_suite(in, "suite", &shapes, &error)) << text;
  EXPECT_EQ(shapes.size(), 1u) << "a refused suite leaves the output alone";
  return error;
}

TEST(ShapeSuiteParser, ReadsFieldsCommentsAndBlankLines) {
  std::istringstream in(
      "# a comment\n"
      "\n"
      "  one  10 20 30 row N T small   # trailing comment\n"
      "two\t1\t2\t2147483647\tcol\tT\tN\tdeep-k\n"
      "three 4 4 4 row N N batched batch=2147483647\n");
  std::vector<SuiteShape> shapes;
  std::string error;
  ASSERT_TRUE(tmm_suite::parse_shape_suite(in, "suite", &shapes, &error)) << error;
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].batch, 1);
  EXPECT_EQ(shapes[2].batch, 2147483647);
  EXPECT_EQ(shapes[0].name, "one");
  EXPECT_EQ(shapes[0].m, 10);
  EXPECT_EQ(shapes[0].n, 20);
  EXPECT_EQ(shapes[0].k, 30);
  EXPECT_EQ(shapes[0].layout, TMM_ROW_MAJOR);
  EXPECT_EQ(shapes[0].ta, TMM_NO_TRANS);
  EXPECT_EQ(shapes[0].tb, TMM_TRANS);
  EXPECT_EQ(shapes[0].group, "small");
  EXPECT_EQ(shapes[0].line, 3);
  EXPECT_EQ(shapes[1].layout, TMM_COL_MAJOR);
  EXPECT_EQ(shapes[1].ta, TMM_TRANS);
  EXPECT_EQ(shapes[1].k, 2147483647);
  EXPECT_EQ(shapes[1].group, "deep-k");
}

TEST(ShapeSuiteParser, RefusesMalformedLinesByNumber) {
  const std::string good = "ok 1 2 3 row N N small\n";
  const std::pair<const char*, const char*> cases[] = {
      {"short 1 2 3 row N N\n", "want 8 fields"},
      {"long 1 2 3 row N N small extra\n", "'extra': want batch=N"},
      {"longer 1 2 3 row N N small batch=2 x\n", "found 10"},
      {"batch0 1 2 3 row N N small batch=0\n", "'batch=0'"},
      {"batchless 1 2 3 row N N small batch=\n", "'batch='"},
      {"zero 0 2 3 row N N small\n", "m '0'"},
      {"neg 1 -2 3 row N N small\n", "n '-2'"},
      {"big 1 2 2147483648 row N N small\n", "k '2147483648'"},
      {"exp 1e3 2 3 row N N small\n", "m '1e3'"},
      {"sign +1 2 3 row N N small\n", "m '+1'"},
      {"lay 1 2 3 rows N N small\n", "layout 'rows'"},
      {"ta 1 2 3 row n N small\n", "transa 'n'"},
      {"tb 1 2 3 row N C small\n", "transb 'C'"},
      {"grp 1 2 3 row N N sm@ll\n", "group 'sm@ll'"},
      {"bad/name 1 2 3 row N N small\n", "name 'bad/name'"},
      {"ok 4 5 6 col T T odd\n", "already on line 2"},
  };
  for (const auto& c : cases) {
    // The bad line is line 3, after a comment and a good shape.
    const std::string error = parse_error("# suite\n" + good + c.first);
    EXPECT_EQ(error.rfind("suite:3: ", 0), 0u) << error;
    EXPECT_NE(error.find(c.second), std::string::npos) << "'" << error << "' lacks " << c.second;
  }
  EXPECT_NE(parse_error("# nothing but comments\n\n").find("no shapes"), std::string::npos);
}

TEST(ShapeSuiteParser, SaysWhichFileIsMissing) {
  std::vector<SuiteShape> shapes;
  std::string error;
  EXPECT_FALSE(tmm_suite::read_shape_suite("/nonexistent/shapes.txt", &shapes, &error));
  EXPECT_NE(error.find("/nonexistent/shapes.txt"), std::string::npos) << error;
}

}  // namespace
