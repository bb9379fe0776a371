#include "trainer/config/user_warning.h"

#include <mutex>
#include <set>

#include "trainer/util/log.h"

namespace trainer::config {

void warn_once(const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> shown;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!shown.insert(message).second) return;
  }
  log::warning("UserWarning: " + message);
}

}  // namespace trainer::config
