// Schema checks for every job before anything runs (when a sweep is planned, or before a single
// run writes its directory; never under --cfg), derived from the option declarations
// (options/option_table.h): unknown keys in trainer's own sections are reported all at once, each
// with a did-you-mean; then every declared key's type, range or choices (a positive lr, epochs
// >= -1, a monitor that names a metric the run logs, ...), and the cross-key rules.
#pragma once

#include <string>

#include "trainer/config/node.h"

namespace trainer::launch {

// Throws trainer::Error listing every problem of a kind with its origin and a suggestion.
void check_job_schema(const config::Node& job_config);

// A job of a planned sweep whose mandatory keys (`???` by default: model.path of model=torchscript,
// data.root of data=image_folder, ...) are still `???`: an error listing them, so that the sweep
// is refused before any job runs, rather than that job failing as it starts.
void check_mandatory_values(const config::Node& job_config);

// The sections `command` builds from (fit and tune batch_size: data and model; data pack: data;
// an evaluation takes them from its checkpoint): one missing is an error naming the primary config
// (from `hydra`: hydra.job.config_name and hydra.runtime.config_sources) and how to give it.
void check_job_sections(const config::Node& job_config, const std::string& command, const config::Node& hydra);

}  // namespace trainer::launch
