// The logging facade. Callers pass finished strings; only log.cpp sees spdlog, so code that
// includes torch's headers (which bring their own fmt) never meets spdlog's fmt.
#pragma once

#include <string>

namespace trainer::log {

enum class Level { kDebug, kInfo, kWarning, kError };

void set_level(Level level);
// Also write every line to this file (appending), as Hydra's `<job name>.log`; replaces the file
// set before, so each job of a sweep gets its own log. The warnings and errors said while no file
// was set (a run's checks before its directory exists) are written into it first.
void set_file(const std::string& path);
// Forgets those early lines: a sweep's own, said on its console, are not its jobs'.
void discard_early_lines();
void write(Level level, const std::string& message);
// To the log file only (the console shows a progress bar instead of these lines).
void write_file_only(Level level, const std::string& message);
void flush();
// Lines another process wrote, passed on as they are whatever the level: to the console (below
// nothing: a status line is drawn again under them) and to the log file. The job process relays
// the stderr of the ranks it starts this way (engine/distributed/rank_stderr_relay.h).
void write_verbatim(const std::string& lines);
// The log file set_file set ("" when none).
std::string file_path();
// What a warning said, read back from a line of a log file; "" when the line is not a warning's.
std::string warning_text(const std::string& line);

// Whether the console (stderr) is a terminal: progress bars only make sense there.
bool console_is_terminal();
// A live status line kept at the bottom of a terminal console (a progress bar): each log line
// clears it, prints, and draws it again. An empty line removes it. No effect when the console is
// not a terminal.
void set_status(const std::string& line);

inline void debug(const std::string& message) { write(Level::kDebug, message); }
inline void info(const std::string& message) { write(Level::kInfo, message); }
inline void warning(const std::string& message) { write(Level::kWarning, message); }
inline void error(const std::string& message) { write(Level::kError, message); }

}  // namespace trainer::log
