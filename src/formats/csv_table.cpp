#include "trainer/formats/csv_table.h"

#include <csv.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "trainer/util/error.h"

namespace trainer::formats {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A cell as an error shows it: quoted, at most 40 characters.
std::string cell_text(std::string_view cell) {
  std::string text;
  for (const char c : cell.substr(0, 40)) {
    text += c == '\n' ? std::string("\\n") : c == '\r' ? std::string("\\r") : std::string(1, c);
  }
  return "'" + text + (cell.size() > 40 ? "...'" : "'");
}

// The parser's state across libcsv's callbacks. A problem found inside a callback is kept and
// thrown after csv_parse returns (an exception must not cross libcsv's C frames).
struct Reader {
  Reader(const std::string& file, const std::string& file_key,
         const std::function<std::vector<CsvWanted>(const std::vector<std::string>&)>& chooser)
      : path(file), key(file_key), choose(chooser) {}

  const std::string& path;
  const std::string& key;
  const std::function<std::vector<CsvWanted>(const std::vector<std::string>&)>& choose;
  CsvTable table;
  bool in_header = true;
  std::vector<int> slot;         // header position -> index in table.columns (-1: skipped)
  std::vector<std::string> row;  // the header's cells while it is read
  size_t cell = 0;               // cells of the current row so far
  int64_t line = 1;              // the line the parser is on
  int64_t row_line = 1;          // the line the current row started on
  bool after_cr = false;
  std::unique_ptr<Error> error;

  void fail(const std::string& problem, const std::string& fix) {
    if (!error) error = std::make_unique<Error>(key, path + ":" + problem, fix);
  }
  std::string at(size_t position) const {
    std::string name = position < table.header.size() ? table.header[position] : std::string();
    return std::to_string(row_line) + ":" + std::to_string(position + 1) + (name.empty() ? "" : " (" + name + ")");
  }

  void on_cell(const char* data, size_t size) {
    if (error) return;
    if (cell == 0) row_line = line;
    const std::string_view text(data != nullptr ? data : "", data != nullptr ? size : 0);
    line += std::count(text.begin(), text.end(), '\n');
    const size_t position = cell++;
    if (in_header) {
      row.emplace_back(text);
      return;
    }
    if (position >= slot.size() || slot[position] < 0) return;
    CsvColumn& column = table.columns[static_cast<size_t>(slot[position])];
    if (column.kind == CsvKind::kText) {
      if (text.empty() && column.missing_cells) {
        column.texts.emplace_back();
        return;
      }
      if (text.empty()) {
        fail(at(position) + ": the cell is empty (a missing value)",
             "Fill in every cell of the column, or drop the rows that lack it.");
        return;
      }
      column.texts.emplace_back(text);
      return;
    }
    double value = 0.0;
    if (!parse_csv_number(text, value)) {
      std::string_view trimmed = text;
      while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '\t')) trimmed.remove_prefix(1);
      while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t')) trimmed.remove_suffix(1);
      if ((trimmed.empty() || is_csv_missing(trimmed)) && column.missing_cells) {
        table.numbers.push_back(std::nan(""));
        return;
      }
      if (trimmed.empty() || is_csv_missing(trimmed)) {
        fail(at(position) + ": " +
                 (trimmed.empty() ? std::string("the cell is empty") : "the cell is " + cell_text(trimmed)) +
                 " (a missing value) in a column of numbers",
             "Fill in the missing values (e.g. with the column's mean, df.fillna in pandas), or drop those rows.");
      } else {
        fail(at(position) + ": " + cell_text(trimmed) + " is not a number, in a column of numbers",
             !column.not_a_number_fix.empty()
                 ? column.not_a_number_fix
                 : "Correct the cell, or, for an input column of categories (names, codes), list it in "
                   "data.categorical.");
      }
      return;
    }
    if (!std::isfinite(value) || std::abs(value) > 1.0e38) {
      fail(at(position) + ": " + cell_text(text) + " is infinite or beyond 1e38 (float32's range)",
           "Correct the cell (a neural network cannot train on it), or drop the row.");
      return;
    }
    table.numbers.push_back(value);
  }

  void on_row_end(int terminator) {
    if (error) return;
    if (cell > 0) end_row();
    if (terminator == '\n') {
      if (!(after_cr && cell == 0)) ++line;
      after_cr = false;
    } else if (terminator == '\r') {
      ++line;
      after_cr = true;
    }
    cell = 0;
  }

  void end_row() {
    if (in_header) {
      start_table();
      return;
    }
    if (cell != table.header.size()) {
      fail(std::to_string(row_line) + ": the row has " + std::to_string(cell) + " cells, the header " +
               std::to_string(table.header.size()) + " columns",
           "Give every row one cell per column (quote cells that hold the delimiter: \"a, b\").");
      return;
    }
    table.lines.push_back(row_line);
  }

  void start_table() {
    in_header = false;
    table.header = std::move(row);
    for (size_t i = 0; i < table.header.size(); ++i) {
      // pandas' name for a column without one (to_csv's index column has none).
      if (table.header[i].empty()) table.header[i] = "Unnamed: " + std::to_string(i);
      for (size_t j = 0; j < i; ++j) {
        if (table.header[j] == table.header[i]) {
          fail(std::to_string(row_line) + ": the header names two columns '" + table.header[i] + "' (columns " +
                   std::to_string(j + 1) + " and " + std::to_string(i + 1) + ")",
               "Give every column its own name.");
          return;
        }
      }
    }
    std::vector<CsvWanted> wanted;
    try {
      wanted = choose(table.header);
    } catch (Error& chosen) {
      error = std::make_unique<Error>(std::move(chosen));
      return;
    }
    slot.assign(table.header.size(), -1);
    for (const CsvWanted& want : wanted) {
      const auto found = std::find(table.header.begin(), table.header.end(), want.name);
      if (found == table.header.end()) {
        if (want.optional) continue;
        std::string names;
        for (const std::string& name : table.header) names += (names.empty() ? "" : ", ") + name;
        fail(std::to_string(row_line) + ": the header has no column '" + want.name + "'; it has " + names,
             "Name one of its columns, or give the file with that column.");
        return;
      }
      CsvColumn column;
      column.name = want.name;
      column.position = static_cast<size_t>(found - table.header.begin());
      column.kind = want.kind;
      column.missing_cells = want.missing_cells;
      column.not_a_number_fix = want.not_a_number_fix;
      slot[column.position] = static_cast<int>(table.columns.size());
      table.columns.push_back(std::move(column));
    }
    // Cells arrive in header order: a number column's place in a row is its rank among them.
    for (size_t position = 0; position < slot.size(); ++position) {
      if (slot[position] < 0) continue;
      CsvColumn& column = table.columns[static_cast<size_t>(slot[position])];
      if (column.kind == CsvKind::kNumber) column.number_slot = table.number_width++;
    }
  }
};

extern "C" void csv_cell_callback(void* data, size_t size, void* reader) {
  static_cast<Reader*>(reader)->on_cell(static_cast<const char*>(data), size);
}

extern "C" void csv_row_callback(int terminator, void* reader) { static_cast<Reader*>(reader)->on_row_end(terminator); }

// libcsv's blanks around unquoted cells: spaces only, so that a tab stays a TSV's delimiter.
extern "C" int csv_is_blank(unsigned char c) { return c == ' ' ? 1 : 0; }

constexpr size_t kSmallestParallel = size_t{8} << 20;  // below this one thread reads as fast

// Where the rows [begin, end) of a table can be cut into parts that parse alike on their own: just
// after line ends, when no quote in the file can make a line end part of a cell. Empty: read it
// in one part (a small table, one core, or quotes).
std::vector<size_t> parallel_cuts(const uint8_t* data, size_t begin, size_t end) {
  const size_t threads = std::min<size_t>(std::thread::hardware_concurrency(), 8);
  if (threads < 2 || end - begin < kSmallestParallel) return {};
  if (std::memchr(data, '"', end) != nullptr) return {};
  std::vector<size_t> cuts;
  for (size_t part = 1; part < threads; ++part) {
    const size_t from = std::max(begin + (end - begin) * part / threads, cuts.empty() ? begin : cuts.back());
    const void* newline = std::memchr(data + from, '\n', end - from);
    if (newline == nullptr) break;
    const size_t cut = static_cast<size_t>(static_cast<const uint8_t*>(newline) - data) + 1;
    if (cut >= end) break;
    if (cuts.empty() || cut > cuts.back()) cuts.push_back(cut);
  }
  return cuts;
}

// The lines [from, to) holds, as the reader counts them: "\n", "\r\n" and a lone "\r" end one.
int64_t lines_in(const uint8_t* data, size_t from, size_t to) {
  int64_t lines = std::count(data + from, data + to, '\n');
  for (const uint8_t* at = data + from; at < data + to;) {
    const void* cr = std::memchr(at, '\r', static_cast<size_t>(data + to - at));
    if (cr == nullptr) break;
    at = static_cast<const uint8_t*>(cr) + 1;
    if (at == data + to || *at != '\n') ++lines;
  }
  return lines;
}

// Reads the rows [begin, end) cut at `cuts` on one thread per part, each part's reader starting
// from `first`'s header and its own line number, and appends the parts to `first`'s table in
// order. The first part's error, in file order, is the one kept.
void read_parts(Reader& first, const uint8_t* data, size_t begin, size_t end, const std::vector<size_t>& cuts,
                char delimiter) {
  std::vector<size_t> bounds = {begin};
  bounds.insert(bounds.end(), cuts.begin(), cuts.end());
  bounds.push_back(end);
  const size_t parts = bounds.size() - 1;
  std::vector<std::unique_ptr<Reader>> readers;
  int64_t line = first.line;
  for (size_t part = 0; part < parts; ++part) {
    auto reader = std::make_unique<Reader>(first.path, first.key, first.choose);
    reader->in_header = false;
    reader->slot = first.slot;
    reader->table.header = first.table.header;
    reader->table.columns = first.table.columns;
    for (CsvColumn& column : reader->table.columns) column.texts.clear();  // each part holds its own rows
    reader->table.number_width = first.table.number_width;
    reader->line = reader->row_line = line;
    line += lines_in(data, bounds[part], bounds[part + 1]);
    readers.push_back(std::move(reader));
  }
  auto read = [&](size_t part) {
    Reader& reader = *readers[part];
    csv_parser parser{};
    if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_REPALL_NL) != 0) {
      reader.fail("cannot start the CSV parser", "Free some memory.");
      return;
    }
    csv_set_delim(&parser, static_cast<unsigned char>(delimiter));
    csv_set_space_func(&parser, csv_is_blank);
    const size_t length = bounds[part + 1] - bounds[part];
    const size_t parsed = csv_parse(&parser, data + bounds[part], length, csv_cell_callback, csv_row_callback, &reader);
    if (!reader.error && (parsed != length || csv_fini(&parser, csv_cell_callback, csv_row_callback, &reader) != 0)) {
      reader.fail(std::to_string(reader.line) + ": " + csv_strerror(csv_error(&parser)), "");
    }
    csv_free(&parser);
  };
  std::vector<std::thread> threads;
  for (size_t part = 1; part < parts; ++part) threads.emplace_back(read, part);
  read(0);
  for (std::thread& thread : threads) thread.join();
  for (size_t part = 0; part < parts; ++part) {
    if (readers[part]->error) {
      first.error = std::move(readers[part]->error);
      return;
    }
  }
  CsvTable& table = first.table;
  size_t rows = table.lines.size();
  for (const auto& reader : readers) rows += reader->table.lines.size();
  table.lines.reserve(rows);
  table.numbers.reserve(rows * table.number_width);
  for (size_t column = 0; column < table.columns.size(); ++column) {
    if (table.columns[column].kind == CsvKind::kText) table.columns[column].texts.reserve(rows);
  }
  for (auto& reader : readers) {
    CsvTable& part = reader->table;
    table.lines.insert(table.lines.end(), part.lines.begin(), part.lines.end());
    table.numbers.insert(table.numbers.end(), part.numbers.begin(), part.numbers.end());
    for (size_t column = 0; column < table.columns.size(); ++column) {
      std::vector<std::string>& texts = part.columns[column].texts;
      std::move(texts.begin(), texts.end(), std::back_inserter(table.columns[column].texts));
    }
    reader.reset();  // each part's memory goes back as soon as it is copied
  }
  first.line = line;
}

}  // namespace

bool is_csv_missing(std::string_view cell) {
  // pandas' STR_NA_VALUES (read_csv's default na_values), and NAN / -NAN.
  static const std::set<std::string_view> words = {
      "NA",   "N/A", "n/a", "NaN", "nan",  "-nan",   "NULL",    "null",    "None",     "#N/A",    "<NA>",
      "-NaN", "#NA", "",    "NAN", "-NAN", "1.#IND", "-1.#IND", "1.#QNAN", "-1.#QNAN", "#N/A N/A"};
  return words.count(cell) > 0;
}

char csv_delimiter_for(const std::string& path) {
  return ends_with(path, ".tsv") || ends_with(path, ".tab") || ends_with(path, ".TSV") ? '\t' : ',';
}

bool parse_csv_number(std::string_view text, double& value) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  if (!text.empty() && text.front() == '+') {
    text.remove_prefix(1);
    if (!text.empty() && (text.front() == '-' || text.front() == '+')) return false;  // "+-3" is text
  }
  const bool negative = !text.empty() && text.front() == '-';
  const std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty() || (!std::isdigit(static_cast<unsigned char>(digits.front())) && digits.front() != '.')) {
    // from_chars would read "nan" (a missing value here); infinity is a number, refused as one.
    std::string word(digits);
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (word != "inf" && word != "infinity") return false;
    value = negative ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (status == std::errc::result_out_of_range && end == text.data() + text.size()) {
    value = negative ? -HUGE_VAL : HUGE_VAL;  // 1e400: beyond any float
    return true;
  }
  return status == std::errc() && end == text.data() + text.size();
}

namespace {

// The offset of the first byte that does not belong to UTF-8 text (size when all do): a lead byte
// followed by the continuation bytes it announces (no overlong two-byte forms, nothing past U+10FFFF).
size_t first_non_utf8(const uint8_t* data, size_t size) {
  size_t i = 0;
  while (i < size) {
    if (i + 8 <= size) {  // eight ASCII bytes at a time: the common case
      uint64_t word;
      std::memcpy(&word, data + i, sizeof(word));
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    const uint8_t lead = data[i];
    const size_t length = lead < 0x80                    ? 1
                          : lead >= 0xC2 && lead <= 0xDF ? 2
                          : lead >= 0xE0 && lead <= 0xEF ? 3
                          : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                         : 0;
    if (length == 0 || i + length > size) return i;
    for (size_t k = 1; k < length; ++k) {
      if ((data[i + k] & 0xC0) != 0x80) return i;
    }
    i += length;
  }
  return size;
}

// A compressed file (its first bytes say which), or bytes that are not UTF-8 text (pandas refuses
// them too): refused before parsing, naming where and the fix.
void check_plain_text(const uint8_t* data, size_t size, const std::string& path, const std::string& key) {
  struct Magic {
    const char* bytes;
    size_t length;
    const char* format;
    const char* tool;
  };
  static const Magic kMagics[] = {{"\x1f\x8b", 2, "gzip", "gunzip"},
                                  {"PK\x03\x04", 4, "zip", "unzip"},
                                  {"\x28\xb5\x2f\xfd", 4, "zstd", "unzstd"},
                                  {"BZh", 3, "bzip2", "bunzip2"},
                                  {"\xfd"
                                   "7zXZ",
                                   5, "xz", "unxz"}};
  for (const Magic& magic : kMagics) {
    if (size >= magic.length && std::memcmp(data, magic.bytes, magic.length) == 0) {
      throw Error(
          key, path + " is " + magic.format + "-compressed; tables are read as plain text",
          std::string("Decompress it first (") + magic.tool + " " + path + ") and point " + key + " at the text file.");
    }
  }
  const size_t bad = first_non_utf8(data, size);
  if (bad == size) return;
  const auto* begin = reinterpret_cast<const char*>(data);
  const int64_t line = 1 + std::count(begin, begin + bad, '\n');
  const char* line_start = begin + bad;
  while (line_start > begin && line_start[-1] != '\n') --line_start;
  static const char kHex[] = "0123456789ABCDEF";
  const std::string byte = {'0', 'x', kHex[data[bad] >> 4], kHex[data[bad] & 15]};
  throw Error(key,
              path + ":" + std::to_string(line) + ": byte " + std::to_string(begin + bad - line_start + 1) +
                  " of the line (" + byte + ") is not UTF-8 text (a Latin-1 or Windows-1252 file?)",
              "Save the table as UTF-8: iconv -f latin1 -t utf-8 " + path +
                  " > utf8.csv, or in pandas "
                  "df.to_csv(path, encoding='utf-8').");
}

}  // namespace

CsvTable read_csv(const uint8_t* data, size_t size, const std::string& path, const std::string& key, char delimiter,
                  const std::function<std::vector<CsvWanted>(const std::vector<std::string>& header)>& choose) {
  check_plain_text(data, size, path, key);
  Reader reader(path, key, choose);
  csv_parser parser{};
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_REPALL_NL) != 0) {
    throw Error(key, path + ": cannot start the CSV parser (out of memory)");
  }
  csv_set_delim(&parser, static_cast<unsigned char>(delimiter));
  csv_set_space_func(&parser, csv_is_blank);
  // At the end of the file, a quote that never closed belongs to the row being read.
  const auto parse_error = [&](size_t offset) {
    const auto* begin = reinterpret_cast<const char*>(data);
    const int64_t line = offset >= size ? (reader.cell > 0 ? reader.row_line : reader.line)
                                        : 1 + std::count(begin, begin + offset, '\n');
    const int code = csv_error(&parser);
    csv_free(&parser);
    if (code == CSV_EPARSE) {
      throw Error(key,
                  path + ":" + std::to_string(line) +
                      ": a misplaced quote (a quote inside an unquoted cell, text after a closing quote, or a quoted "
                      "cell that never closes)",
                  "Quote a cell that holds quotes and double the quotes inside it: \"say \"\"hi\"\"\".");
    }
    throw Error(key, path + ":" + std::to_string(line) + ": " + csv_strerror(code));
  };
  // A UTF-8 byte-order mark (Excel writes one) is not part of the first column's name.
  if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) {
    data += 3;
    size -= 3;
  }
  // In blocks, so that a bad cell stops the read within a block of it.
  constexpr size_t kBlock = size_t{1} << 20;
  auto parse_range = [&](size_t from, size_t to) {
    for (size_t offset = from; offset < to; offset += kBlock) {
      const size_t length = std::min(kBlock, to - offset);
      const size_t parsed = csv_parse(&parser, data + offset, length, csv_cell_callback, csv_row_callback, &reader);
      if (reader.error) return;
      if (parsed != length) parse_error(offset + parsed);
    }
  };
  // The header first, a line at a time (it ends at the first row with a cell), then the rows: on
  // several threads when a large table can be cut at line ends into independent parts.
  size_t header_end = 0;
  while (reader.in_header && !reader.error && header_end < size) {
    const void* newline = std::memchr(data + header_end, '\n', size - header_end);
    const size_t next =
        newline == nullptr ? size : static_cast<size_t>(static_cast<const uint8_t*>(newline) - data) + 1;
    parse_range(header_end, next);
    header_end = next;
  }
  std::vector<size_t> cuts;
  // (Only right after the header: a header line ended by a lone CR has rows read with it, kept in
  // one part.)
  if (!reader.in_header && !reader.error && reader.table.lines.empty()) {
    cuts = parallel_cuts(data, header_end, size);
  }
  if (cuts.empty()) {
    parse_range(header_end, size);
    if (!reader.error && csv_fini(&parser, csv_cell_callback, csv_row_callback, &reader) != 0) parse_error(size);
    csv_free(&parser);
  } else {
    csv_free(&parser);
    read_parts(reader, data, header_end, size, cuts, delimiter);
  }
  if (reader.error) throw Error(std::move(*reader.error));
  if (reader.in_header) {
    throw Error(key, path + " has no header row (the file is empty)",
                "Give a CSV file whose first line names its columns.");
  }
  return std::move(reader.table);
}

}  // namespace trainer::formats
