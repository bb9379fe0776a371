#include "trainer/util/error.h"

#include <cctype>

namespace trainer {
namespace {

std::string paragraph(const std::string& where, const std::string& problem, const std::string& fix) {
  std::string text;
  if (!where.empty()) text += where + ": ";
  text += problem;
  if (fix.empty()) return text;
  // After a listing (lines of options, of a search path) the fix starts a line of its own, as a
  // sentence: glued to the last line it would read as part of a path.
  if (problem.find('\n') != std::string::npos && fix.front() != '\n') {
    if (text.back() != '\n') text += '\n';
    text += static_cast<char>(std::toupper(static_cast<unsigned char>(fix.front())));
    text += fix.substr(1);
    if (text.back() != '.' && text.back() != '?') text += '.';
    return text;
  }
  if (!text.empty() && text.back() != '.' && text.back() != '?' && text.back() != '\n') text += '.';
  if (fix.front() != '\n') text += ' ';
  text += fix;
  return text;
}

}  // namespace

Error::Error(std::string where, std::string problem, std::string fix)
    : std::runtime_error(paragraph(where, problem, fix)),
      where_(std::move(where)),
      problem_(std::move(problem)),
      fix_(std::move(fix)) {}

}  // namespace trainer
