#include "e2e_support.h"

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "subprocess.h"

namespace trainer::testing {

bool engine_built() {
  static const bool built = [] {
    auto version = run_process({TRAINER_BINARY, "--version"});
    return version.out.find("LibTorch ") != std::string::npos && version.out.find("not built") == std::string::npos;
  }();
  return built;
}

bool test_python_imports(const std::string& modules) {
  const std::string python = TRAINER_TEST_PYTHON;
  return !python.empty() && run_process({python, "-c", "import " + modules}).exit_code == 0;
}

int find_rank(const std::string& run_dir, int rank) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = read_file(entry.path() / "cmdline");
    if (cmdline.find("hydra.run.dir=" + run_dir) == std::string::npos) continue;
    const std::string environ = read_file(entry.path() / "environ");
    if (environ.find(std::string("RANK=") + std::to_string(rank) + '\0') != std::string::npos &&
        environ.find("TRAINER_DDP_LAUNCHER=") != std::string::npos) {
      return std::stoi(name);
    }
  }
  return -1;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> split_case(const std::string& line) {
  static const std::string kSpaceMark = "\xE2\x90\xA3";
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) {
    for (size_t at = word.find(kSpaceMark); at != std::string::npos; at = word.find(kSpaceMark, at)) {
      word.replace(at, kSpaceMark.size(), " ");
    }
    words.push_back(word);
  }
  return words;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::filesystem::path predictions_under(const std::filesystem::path& dir) {
  std::filesystem::path found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().filename() == "predictions.csv") found = entry.path();
  }
  REQUIRE(!found.empty());
  return found;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

double printed(const std::string& out, const std::string& name) {
  std::smatch match;
  std::regex pattern(name + "=([0-9.eE+-]+)");
  REQUIRE(std::regex_search(out, match, pattern));
  return std::stod(match[1]);
}

namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream stream(line);
  std::string cell;
  while (std::getline(stream, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

}  // namespace

CsvTable read_csv(const std::filesystem::path& path) {
  CsvTable table;
  std::stringstream in(read_file(path));
  std::string line;
  if (std::getline(in, line)) table.columns = split(line);
  while (std::getline(in, line)) table.rows.push_back(split(line));
  return table;
}

std::string CsvTable::last(const std::string& column) const {
  size_t index = 0;
  while (index < columns.size() && columns[index] != column) ++index;
  if (index == columns.size()) return "";
  for (auto row = rows.rbegin(); row != rows.rend(); ++row) {
    if (index < row->size() && !(*row)[index].empty()) return (*row)[index];
  }
  return "";
}

Weights read_safetensors(const std::filesystem::path& path) {
  const std::string bytes = read_file(path);
  REQUIRE(bytes.size() > 8);
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);  // little-endian, as this machine
  const std::string header = bytes.substr(8, header_size);
  const size_t data_start = 8 + header_size;
  Weights tensors;
  std::regex entry(
      "\"([^\"]+)\":\\{\"dtype\":\"(F32|F64|BF16)\",\"shape\":\\[[0-9,]*\\],\"data_offsets\":\\[([0-9]+),([0-9]+)\\]"
      "\\}");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), entry); it != std::sregex_iterator(); ++it) {
    const size_t begin = std::stoull((*it)[3]);
    const size_t end = std::stoull((*it)[4]);
    std::vector<float> values;
    if ((*it)[2] == "F64") {  // precision=64's weights, read as float32
      std::vector<double> doubles((end - begin) / sizeof(double));
      std::memcpy(doubles.data(), bytes.data() + data_start + begin, end - begin);
      values.assign(doubles.begin(), doubles.end());
    } else if ((*it)[2] == "BF16") {  // precision=bf16-true's: the upper half of a float32's bits
      std::vector<uint16_t> halves((end - begin) / sizeof(uint16_t));
      std::memcpy(halves.data(), bytes.data() + data_start + begin, end - begin);
      values.resize(halves.size());
      for (size_t i = 0; i < halves.size(); ++i) {
        const uint32_t bits = static_cast<uint32_t>(halves[i]) << 16;
        std::memcpy(&values[i], &bits, sizeof(bits));
      }
    } else {
      values.resize((end - begin) / sizeof(float));
      std::memcpy(values.data(), bytes.data() + data_start + begin, end - begin);
    }
    tensors[(*it)[1]] = std::move(values);
  }
  return tensors;
}

Weights exported_weights(const std::filesystem::path& run_dir) {
  auto exported = run_process({TRAINER_BINARY, "export", "ckpt_path=last", "hydra.run.dir=" + run_dir.string(),
                               "export_path=" + (run_dir / "final.safetensors").string()});
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  return read_safetensors(run_dir / "final.safetensors");
}

double largest_difference(const Weights& a, const Weights& b) {
  REQUIRE(a.size() == b.size());
  double largest = 0.0;
  for (const auto& [name, values] : a) {
    REQUIRE(b.count(name) == 1);
    const std::vector<float>& other = b.at(name);
    REQUIRE(values.size() == other.size());
    for (size_t i = 0; i < values.size(); ++i) {
      largest = std::max(largest, static_cast<double>(std::fabs(values[i] - other[i])));
    }
  }
  return largest;
}

void check_clean_error(const ProcessResult& result) {
  CHECK(result.exit_code == 1);
  CHECK(result.err.find("Error: ") != std::string::npos);
  check_no_crash(result);
}

void check_no_crash(const ProcessResult& result) {
  for (const char* signature : {"frame #", "terminate called", "Segmentation fault", "AddressSanitizer", "what():"}) {
    INFO("crash signature '" << signature << "' in the output");
    CHECK(result.out.find(signature) == std::string::npos);
    CHECK(result.err.find(signature) == std::string::npos);
  }
  for (int signal_number : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) {
    INFO("killed by signal " << signal_number);
    CHECK(result.exit_code != 128 + signal_number);
  }
}

void write_npy(const std::filesystem::path& path, const std::string& descr, const std::vector<int64_t>& shape,
               const std::string& data, bool fortran_order) {
  std::string dims;
  for (const int64_t dim : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(dim);
  if (shape.size() == 1) dims += ",";  // Python's one-element tuple
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran_order ? "True" : "False") +
                       ", 'shape': (" + dims + "), }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const auto length = static_cast<uint16_t>(header.size());
  out.put(static_cast<char>(length & 0xff));
  out.put(static_cast<char>(length >> 8));
  out << header << data;
}

}  // namespace trainer::testing
