// The "Installed Hydra Plugins" section of `--info plugins` and `--info all`, in Hydra 1.3's
// layout: Hydra's core plugins by kind, with trainer's built-in launchers and sweepers where
// Hydra lists installed ones (their class names, from the built-in hydra/launcher and
// hydra/sweeper configs' _target_).
#pragma once

#include <string>

namespace trainer::launch {

std::string installed_plugins_text();

}  // namespace trainer::launch
