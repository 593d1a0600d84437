// The benchmark shape suite (bench/shapes.txt) read into a list of shapes.
//
// One shape a line, eight fields separated by blanks (a ninth, batch=N, for a strided
// batch of N products of the shape), '#' to the end of a line a comment:
//   name m n k layout transa transb group [batch=N]
// name is unique (letters, digits, '_', '-', '.'); m, n, k and N are decimal integers
// from 1 to 2^31 - 1 (cuBLAS takes int); layout is row or col; transa and transb are N
// or T; group is a tag (letters, digits, '-') that --groups selects by. A malformed line stops
// the read with "FILE:LINE: what is wrong" and no shapes: a suite that is read at all
// is read whole, so that two runs of the same file time the same problems.
//
// Plain C++ and the public C header only (no CUDA), so that a CPU test can check the
// committed suite and the parser's refusals.
#ifndef TILEDMM_BENCH_SHAPE_SUITE_HPP
#define TILEDMM_BENCH_SHAPE_SUITE_HPP

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <istream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tiledmm/tiledmm.h"

namespace tmm_suite {

struct SuiteShape {
  std::string name;
  int64_t m = 0, n = 0, k = 0;
  tmm_layout layout = TMM_ROW_MAJOR;
  tmm_transpose ta = TMM_NO_TRANS, tb = TMM_NO_TRANS;
  std::string group;
  int64_t batch = 1;  // products of a strided batch (dense, one after another)
  int line = 0;       // where in the file, for messages
};

namespace detail {

inline bool all_of_chars(const std::string& s, const char* extra) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr(extra, c)) return false;
  return true;
}

// A decimal integer of 1 to 2^31 - 1 with nothing else: no sign, exponent or suffix.
inline bool parse_extent(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 10) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > INT32_MAX) return false;
  *out = v;
  return true;
}

// Parses one line's fields into *s; on a malformed field returns what is wrong.
inline std::string parse_fields(const std::vector<std::string>& f, SuiteShape* s) {
  if (f.size() != 8 && f.size() != 9)
    return "want 8 fields (name m n k layout transa transb group) and maybe batch=N, found " +
           std::to_string(f.size());
  if (!all_of_chars(f[0], "_-.")) return "name '" + f[0] + "': use letters, digits, _ - .";
  s->name = f[0];
  const char* dims = "mnk";
  int64_t* extents[3] = {&s->m, &s->n, &s->k};
  for (int i = 0; i < 3; ++i)
    if (!parse_extent(f[1 + i], extents[i]))
      return std::string(1, dims[i]) + " '" + f[1 + i] + "': want an integer from 1 to 2147483647";
  if (f[4] == "row") {
    s->layout = TMM_ROW_MAJOR;
  } else if (f[4] == "col") {
    s->layout = TMM_COL_MAJOR;
  } else {
    return "layout '" + f[4] + "': want row or col";
  }
  tmm_transpose* ops[2] = {&s->ta, &s->tb};
  for (int i = 0; i < 2; ++i) {
    if (f[5 + i] == "N") {
      *ops[i] = TMM_NO_TRANS;
    } else if (f[5 + i] == "T") {
      *ops[i] = TMM_TRANS;
    } else {
      return std::string(i == 0 ? "transa" : "transb") + " '" + f[5 + i] + "': want N or T";
    }
  }
  if (!all_of_chars(f[7], "-")) return "group '" + f[7] + "': use letters, digits, -";
  s->group = f[7];
  if (f.size() == 9 &&
      (f[8].compare(0, 6, "batch=") != 0 || !parse_extent(f[8].substr(6), &s->batch)))
    return "'" + f[8] + "': want batch=N, N an integer from 1 to 2147483647";
  return "";
}

}  // namespace detail

// Reads a whole suite from `in`; `source` names it in messages. Returns true and the
// shapes in file order, or false, *out untouched and *error = "source:LINE: reason".
inline bool parse_shape_suite(std::istream& in, const std::string& source,
                              std::vector<SuiteShape>* out, std::string* error) {
  std::vector<SuiteShape> shapes;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    const size_t hash = text.find('#');
    if (hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    std::vector<std::string> fields;
    for (std::string w; words >> w;) fields.push_back(w);
    if (fields.empty()) continue;  // blank or comment only
    SuiteShape s;
    std::string why = detail::parse_fields(fields, &s);
    for (const SuiteShape& seen : shapes)
      if (why.empty() && seen.name == s.name)
        why = "name '" + s.name + "' already on line " + std::to_string(seen.line);
    if (!why.empty()) {
      *error = source + ":" + std::to_string(line) + ": " + why;
      return false;
    }
    s.line = line;
    shapes.push_back(s);
  }
  if (in.bad()) {
    *error = source + ": read error";
    return false;
  }
  if (shapes.empty()) {
    *error = source + ": no shapes";
    return false;
  }
  *out = std::move(shapes);
  return true;
}

inline bool read_shape_suite(const std::string& path, std::vector<SuiteShape>* out,
                             std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  return parse_shape_suite(in, path, out, error);
}

// The shapes whose group is in the comma-separated `groups` ("" or "all": every one),
// in file order. A group that no shape has is an error, so that a misspelt filter
// does not quietly time nothing.
inline bool select_groups(const std::vector<SuiteShape>& all, const std::string& groups,
                          std::vector<SuiteShape>* out, std::string* error) {
  if (groups.empty() || groups == "all") {
    *out = all;
    return true;
  }
  std::vector<std::string> wanted;
  std::istringstream list(groups);
  for (std::string g; std::getline(list, g, ',');) {
    bool known = false;
    for (const SuiteShape& s : all) known = known || s.group == g;
    if (!known) {
      std::string have;
      for (const SuiteShape& s : all)
        if (("," + have + ",").find("," + s.group + ",") == std::string::npos)
          have += (have.empty() ? "" : ",") + s.group;
      *error = "no shape in group '" + g + "' (groups: " + have + ")";
      return false;
    }
    wanted.push_back(g);
  }
  std::vector<SuiteShape> picked;
  for (const SuiteShape& s : all)
    for (const std::string& g : wanted)
      if (s.group == g) {
        picked.push_back(s);
        break;
      }
  *out = std::move(picked);
  return true;
}

}  // namespace tmm_suite

#endif  // TILEDMM_BENCH_SHAPE_SUITE_HPP
