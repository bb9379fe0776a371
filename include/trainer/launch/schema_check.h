// Schema checks for trainer's own config sections, run when a job starts (never under --cfg):
// unknown keys in `trainer.*` and the callbacks are reported all at once, each with a
// did-you-mean, before any data or model is built.
#pragma once

#include "trainer/config/node.h"

namespace trainer::launch {

// Throws trainer::Error listing every unknown key with its origin and a suggestion.
void check_job_schema(const config::Node& job_config);

}  // namespace trainer::launch
