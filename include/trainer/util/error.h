// The one error type that ends an operation. It carries where the problem is (a file:line, an
// override, a config path), what is wrong and how to fix it, and prints as one short paragraph.
#pragma once

#include <stdexcept>
#include <string>

namespace trainer {

class Error : public std::runtime_error {
 public:
  Error(std::string where, std::string problem, std::string fix = {});

  const std::string& where() const { return where_; }
  const std::string& problem() const { return problem_; }
  const std::string& fix() const { return fix_; }

 private:
  std::string where_;
  std::string problem_;
  std::string fix_;
};

}  // namespace trainer
