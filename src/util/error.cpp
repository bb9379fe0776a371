#include "trainer/util/error.h"

namespace trainer {
namespace {

std::string paragraph(const std::string& where, const std::string& problem, const std::string& fix) {
  std::string text;
  if (!where.empty()) text += where + ": ";
  text += problem;
  if (!fix.empty()) {
    if (!text.empty() && text.back() != '.' && text.back() != '?' && text.back() != '\n') text += '.';
    text += ' ';
    text += fix;
  }
  return text;
}

}  // namespace

Error::Error(std::string where, std::string problem, std::string fix)
    : std::runtime_error(paragraph(where, problem, fix)),
      where_(std::move(where)),
      problem_(std::move(problem)),
      fix_(std::move(fix)) {}

}  // namespace trainer
