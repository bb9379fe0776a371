#include "trainer/formats/csv_table.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

using trainer::Error;
using namespace trainer::formats;

namespace {

// Reads `text` as the file "t.csv", every column as `kind` (the columns `names`, or all).
CsvTable read(const std::string& text, CsvKind kind = CsvKind::kText, std::vector<std::string> names = {},
              char delimiter = ',') {
  return read_csv(reinterpret_cast<const uint8_t*>(text.data()), text.size(), "t.csv", "data.path", delimiter,
                  [&](const std::vector<std::string>& header) {
                    std::vector<CsvWanted> wanted;
                    for (const std::string& name : names.empty() ? header : names) wanted.push_back({name, kind});
                    return wanted;
                  });
}

std::string problem(const std::string& text, CsvKind kind = CsvKind::kNumber, std::vector<std::string> names = {}) {
  try {
    read(text, kind, std::move(names));
  } catch (const Error& error) {
    CHECK(error.where() == "data.path");
    return error.problem();
  }
  return "(no error)";
}

// The numbers of column `index` of `table`, row by row.
std::vector<float> numbers(const CsvTable& table, size_t index) {
  std::vector<float> out;
  for (int64_t row = 0; row < table.rows(); ++row) out.push_back(table.number(row, table.columns.at(index)));
  return out;
}

}  // namespace

TEST_CASE("a CSV table's cells, RFC 4180 quoting and the lines its rows start on", "[csv]") {
  const CsvTable table = read("name,note\r\nab,\"x, \"\"y\"\"\"\r\n\r\ncd,\"two\nlines\"\r\nef,plain\r\n");
  REQUIRE(table.header == std::vector<std::string>{"name", "note"});
  REQUIRE(table.columns.size() == 2);
  CHECK(table.columns[1].texts == std::vector<std::string>{"x, \"y\"", "two\nlines", "plain"});
  CHECK(table.columns[0].texts == std::vector<std::string>{"ab", "cd", "ef"});
  // A blank line is skipped but counted; a quoted line break moves the next row down a line.
  CHECK(table.lines == std::vector<int64_t>{2, 4, 6});
}

TEST_CASE("numbers are read as double: a Unix time keeps its seconds", "[csv]") {
  const CsvTable table = read("ts\n1700000001\n1700000049.5\n", CsvKind::kNumber);
  CHECK(table.number(0, table.columns.front()) == 1700000001.0);
  CHECK(table.number(1, table.columns.front()) == 1700000049.5);
}

TEST_CASE("pandas' words for a missing value are missing values, its odd ones included", "[csv]") {
  for (const char* word : {"", "NA", "N/A", "NaN", "nan", "null", "None", "#N/A", "<NA>", "1.#IND", "-1.#IND",
                           "1.#QNAN", "-1.#QNAN", "#N/A N/A"}) {
    INFO(word);
    CHECK(is_csv_missing(word));
  }
  CHECK_FALSE(is_csv_missing("n.a."));
  CHECK_FALSE(is_csv_missing("0"));
}

TEST_CASE("pandas' forms of a number are accepted", "[csv]") {
  const CsvTable table = read(
      "\xEF\xBB\xBF"
      "a,b\n1.5,-2\n+3, 4e-2 \n.5,1E3\n",
      CsvKind::kNumber);
  REQUIRE(table.header.front() == "a");  // the byte-order mark is not part of the name
  CHECK(numbers(table, 0) == std::vector<float>{1.5F, 3.0F, 0.5F});
  CHECK(numbers(table, 1) == std::vector<float>{-2.0F, 0.04F, 1000.0F});
}

TEST_CASE("a byte-order mark before a quoted header is not part of the name", "[csv]") {
  const CsvTable table = read("\xEF\xBB\xBF\"a\",\"b\"\n1,2\n", CsvKind::kNumber);
  CHECK(table.header == std::vector<std::string>{"a", "b"});
}

TEST_CASE("only the chosen columns are read, in the order chosen", "[csv]") {
  const CsvTable table = read("a,b,c\n1,x,3\n4,y,6\n", CsvKind::kNumber, {"c", "a"});
  REQUIRE(table.columns.size() == 2);
  CHECK(table.columns[0].name == "c");
  CHECK(table.columns[0].position == 2);
  CHECK(numbers(table, 0) == std::vector<float>{3.0F, 6.0F});
  CHECK(numbers(table, 1) == std::vector<float>{1.0F, 4.0F});
}

TEST_CASE("a tab-separated table keeps tabs as delimiters", "[csv]") {
  CHECK(csv_delimiter_for("x/y.tsv") == '\t');
  CHECK(csv_delimiter_for("x/y.tab") == '\t');
  CHECK(csv_delimiter_for("x/y.csv") == ',');
  const CsvTable table = read("a\tb\n1\t 2\n", CsvKind::kNumber, {}, '\t');
  CHECK(numbers(table, 1) == std::vector<float>{2.0F});
}

TEST_CASE("a header without a name gets pandas' name for it", "[csv]") {
  const CsvTable table = read(",a\n0,5\n", CsvKind::kNumber);
  CHECK(table.header == std::vector<std::string>{"Unnamed: 0", "a"});
}

TEST_CASE("every bad cell is named by file:line:column and its column", "[csv]") {
  CHECK(problem("a,b\n1,2\n3,\n") == "t.csv:3:2 (b): the cell is empty (a missing value) in a column of numbers");
  CHECK(problem("a,b\n1,2\n3,NA\n") == "t.csv:3:2 (b): the cell is 'NA' (a missing value) in a column of numbers");
  CHECK(problem("a,b\n1,2\n3,4x\n") == "t.csv:3:2 (b): '4x' is not a number, in a column of numbers");
  CHECK(problem("a,b\n1,+-3\n") == "t.csv:2:2 (b): '+-3' is not a number, in a column of numbers");
  CHECK(problem("a,b\n1,++3\n") == "t.csv:2:2 (b): '++3' is not a number, in a column of numbers");
  CHECK(problem("a,b\n1,2\n\n3,1,5\n") == "t.csv:4: the row has 3 cells, the header 2 columns");
  CHECK(problem("a,b\n1,inf\n") == "t.csv:2:2 (b): 'inf' is infinite or beyond 1e38 (float32's range)");
  CHECK(problem("a,b\n1,-Infinity\n") == "t.csv:2:2 (b): '-Infinity' is infinite or beyond 1e38 (float32's range)");
  CHECK(problem("a,b\n1,1e400\n") == "t.csv:2:2 (b): '1e400' is infinite or beyond 1e38 (float32's range)");
  CHECK(problem("a,b\n1,3e38\n") == "t.csv:2:2 (b): '3e38' is infinite or beyond 1e38 (float32's range)");
  CHECK(problem("a,b\n1,-nan\n") == "t.csv:2:2 (b): the cell is '-nan' (a missing value) in a column of numbers");
  CHECK(problem("a,b\n1,\"x\ny\"\n") == "t.csv:2:2 (b): 'x\\ny' is not a number, in a column of numbers");
  CHECK(problem("a,b\n1,\"2\n") ==
        "t.csv:2: a misplaced quote (a quote inside an unquoted cell, text after a closing quote, or a quoted cell "
        "that never closes)");
  CHECK(problem("a,b\n1,\"2\"x\n3,4\n").rfind("t.csv:2: a misplaced quote", 0) == 0);
  CHECK(problem("a,b\nx,\n", CsvKind::kText) == "t.csv:2:2 (b): the cell is empty (a missing value)");
  CHECK(problem("a,a\n1,2\n") == "t.csv:1: the header names two columns 'a' (columns 1 and 2)");
  CHECK(problem("a,b\n1,2\n", CsvKind::kNumber, {"c"}) == "t.csv:1: the header has no column 'c'; it has a, b");
  CHECK(problem("\n\n") == "t.csv has no header row (the file is empty)");
  CHECK(problem("") == "t.csv has no header row (the file is empty)");
  // Not UTF-8 (Latin-1's e-acute), on line 3 past 17 ASCII bytes (the 8-byte fast path and the
  // byte loop both), and a truncated 3-byte sequence at the very end.
  CHECK(problem("a,b\n1,2\nlong enough text,caf\xe9\n", CsvKind::kText) ==
        "t.csv:3: byte 21 of the line (0xE9) is not UTF-8 text (a Latin-1 or Windows-1252 file?)");
  CHECK(problem("a,b\n1,\xe2\x82", CsvKind::kText) ==
        "t.csv:2: byte 3 of the line (0xE2) is not UTF-8 text (a Latin-1 or Windows-1252 file?)");
  CHECK(problem(std::string("\x1f\x8b\x08\0\0\0", 6)) == "t.csv is gzip-compressed; tables are read as plain text");
  CHECK(problem("PK\x03\x04rest") == "t.csv is zip-compressed; tables are read as plain text");
}

TEST_CASE("UTF-8 text of every length is read as it is", "[csv]") {
  const CsvTable table = read("name,n\ncaf\xc3\xa9,1\n\xe2\x82\xac,2\n\xf0\x9f\x98\x80,3\n", CsvKind::kText, {"name"});
  REQUIRE(table.rows() == 3);
  CHECK(table.columns.at(0).texts == std::vector<std::string>{"caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"});
}

TEST_CASE("a large table is read in parts on several threads exactly as in one, errors included", "[csv]") {
  // 12 MB: CRLF and LF line ends, a lone CR, blank lines, numbers and a text column. A quote in
  // the header (same name) makes the reader take the table in one part: the reference.
  std::string body;
  for (int row = 0; body.size() < (size_t{12} << 20); ++row) {
    body += std::to_string(row) + "," + std::to_string(row % 977) + ".25,-" + std::to_string(row % 13) + "e-3," +
            (row % 3 == 0 ? "cat" : "dog") +
            (row % 5 == 0     ? "\r\n"
             : row % 101 == 0 ? "\r"
                              : "\n");
    if (row % 1000 == 999) body += "\n";
  }
  const std::string plain = "id,x,y,label\n" + body;
  const std::string quoted = "id,x,y,\"label\"\n" + body;
  auto read_mixed = [](const std::string& text) {
    return read_csv(
        reinterpret_cast<const uint8_t*>(text.data()), text.size(), "t.csv", "data.path", ',',
        [](const std::vector<std::string>&) {
          return std::vector<CsvWanted>{
              {"id", CsvKind::kNumber}, {"x", CsvKind::kNumber}, {"label", CsvKind::kText}, {"y", CsvKind::kNumber}};
        });
  };
  const CsvTable parts = read_mixed(plain);
  const CsvTable one = read_mixed(quoted);
  REQUIRE(one.rows() > 400000);
  CHECK(parts.rows() == one.rows());
  CHECK(parts.lines == one.lines);
  CHECK(parts.numbers == one.numbers);
  CHECK(parts.columns.at(2).texts == one.columns.at(2).texts);
  CHECK(parts.number(one.rows() - 1, parts.columns.at(0)) == static_cast<float>(one.rows() - 1));

  // A bad cell late in the file: the same file:line:column either way.
  std::string bad_plain = plain;
  std::string bad_quoted = quoted;
  const size_t late = bad_plain.size() * 7 / 8;
  const size_t cell = bad_plain.find(",-", late) + 1;  // the start of a y cell
  bad_plain.replace(cell, 1, "?");
  bad_quoted.replace(cell + 2, 1, "?");  // the quoted header is 2 bytes longer
  std::string from_parts, from_one;
  try {
    read_mixed(bad_plain);
  } catch (const Error& error) {
    from_parts = error.problem();
  }
  try {
    read_mixed(bad_quoted);
  } catch (const Error& error) {
    from_one = error.problem();
  }
  CHECK(from_parts.find("is not a number, in a column of numbers") != std::string::npos);
  CHECK(from_parts == from_one);

  // A header ended by a lone CR, with rows before the first LF: read with the header, those rows
  // are neither lost nor repeated, and every text stays with its row.
  const std::string lone = "id,x,y,label\r0,1,2,first\r1,1,2,second\n" + body;
  const std::string lone_quoted = "id,x,y,\"label\"\r0,1,2,first\r1,1,2,second\n" + body;
  const CsvTable lone_parts = read_mixed(lone);
  const CsvTable lone_one = read_mixed(lone_quoted);
  CHECK(lone_parts.rows() == one.rows() + 2);
  CHECK(lone_parts.columns.at(2).texts.size() == static_cast<size_t>(lone_parts.rows()));
  CHECK(lone_parts.columns.at(2).texts == lone_one.columns.at(2).texts);
  CHECK(lone_parts.lines == lone_one.lines);
  CHECK(lone_parts.numbers == lone_one.numbers);
}
