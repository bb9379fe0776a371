// Schema checks for trainer's own config sections, run for every job before anything runs (when
// a sweep is planned, or before a single run writes its directory; never under --cfg): unknown
// keys in `trainer.*` and the callbacks are reported all at once, each with a did-you-mean; then
// the types and ranges of the numeric keys (a positive lr, epochs >= -1, save_top_k >= -1, ...);
// then the metrics the checkpoint and early-stopping callbacks monitor.
#pragma once

#include "trainer/config/node.h"

namespace trainer::launch {

// Throws trainer::Error listing every problem of a kind with its origin and a suggestion.
void check_job_schema(const config::Node& job_config);

}  // namespace trainer::launch
