// Tables as people keep them: a CSV or TSV file with a header row (RFC 4180 quoting, read by
// libcsv). The chosen columns are read into memory column by column, numbers as double (a
// timestamp keeps its seconds until standardised) and the rest as text, each row remembering its line in the file, so
// every bad cell can be named as file:line:column. Torch-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace trainer::formats {

enum class CsvKind {
  kSkip,    // not read
  kNumber,  // a finite number in every row
  kText,    // any text but an empty (missing) cell
};

struct CsvColumn {
  std::string name;
  size_t position = 0;  // 0-based, in the header
  CsvKind kind = CsvKind::kSkip;
  size_t number_slot = 0;          // kNumber: its place in a row of CsvTable::numbers
  std::vector<std::string> texts;  // kText: one per row
  bool missing_cells = false;      // CsvWanted::missing_cells
  std::string not_a_number_fix{};  // CsvWanted::not_a_number_fix
};

struct CsvTable {
  std::vector<std::string> header;
  std::vector<CsvColumn> columns;  // the columns read, in the order `choose` listed them
  std::vector<int64_t> lines;      // the line each row starts on (1-based; the header's is before)
  // The number columns' cells, row by row (number_width per row): one write stream however many
  // columns, which is what makes a wide table fast to read.
  std::vector<double> numbers;
  size_t number_width = 0;
  int64_t rows() const { return static_cast<int64_t>(lines.size()); }
  double number(int64_t row, const CsvColumn& column) const {
    return numbers[static_cast<size_t>(row) * number_width + column.number_slot];
  }
};

// One column to read: its header name and how.
struct CsvWanted {
  std::string name;
  CsvKind kind = CsvKind::kNumber;
  bool optional = false;  // a column the header may lack (it is then left out of CsvTable::columns)
  // Cells that may be missing: empty ones in a text column (kept as ""), and empty ones or pandas'
  // missing-value words in a number column (kept as NaN). Otherwise such a cell is an error.
  bool missing_cells = false;
  // The fix a number column's cell that is not a number gets; empty: correct the cell, or list an
  // input column of categories in data.categorical.
  std::string not_a_number_fix{};
};

// Whether a cell is one of pandas' words for a missing value (NA, NaN, null, None, ...) or empty.
bool is_csv_missing(std::string_view cell);

// The delimiter a file name implies: tab for .tsv and .tab, else comma.
char csv_delimiter_for(const std::string& path);

// The part of a number cell std::from_chars reads: `text` without surrounding blanks or a leading
// '+'. Returns false for a cell that is not one number (a missing value, "NA", "1,5", "12abc",
// "+-3");
// "inf", "-Infinity" and numbers beyond a double ("1e400") read as infinities.
bool parse_csv_number(std::string_view text, double& value);

// Reads the table of `path` (its `size` bytes are `data`). `choose` gets the header and says
// which columns to read. Throws trainer::Error at `key` (the config key naming the file), its
// problem as "path:line:column (name): ..." for a malformed quote, a row with more or fewer
// cells than the header, an empty or non-numeric cell in a number column, an empty cell in a text
// column, a duplicate header name, a wanted column the header lacks, a file with no header, a
// compressed file (gzip, zip, zstd, bzip2, xz) or bytes that are not UTF-8 ("path:line: byte N of
// the line (0xE9) is not UTF-8 text").
// Blank lines are skipped; a UTF-8 byte-order mark is ignored.
CsvTable read_csv(const uint8_t* data, size_t size, const std::string& path, const std::string& key, char delimiter,
                  const std::function<std::vector<CsvWanted>(const std::vector<std::string>& header)>& choose);

}  // namespace trainer::formats
