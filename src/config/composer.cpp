// STUB: replaced by the composer.
#include "trainer/config/composer.h"

#include "trainer/util/error.h"

namespace trainer::config {

struct Composer::Impl {
  ComposerOptions options;
};

Composer::Composer(ComposerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}
Composer::~Composer() = default;
Composer::Composer(Composer&&) noexcept = default;

ComposeResult Composer::compose(const std::vector<Override>&, RunMode) const {
  throw Error("", "composer not implemented yet");
}

std::optional<std::vector<std::string>> Composer::group_options(const std::string&) const {
  return std::nullopt;
}

std::vector<std::string> Composer::groups() const { return {}; }

const std::vector<SearchPathEntry>& Composer::search_path() const {
  return impl_->options.search_path;
}

}  // namespace trainer::config
