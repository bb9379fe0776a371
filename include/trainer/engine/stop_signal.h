// SIGINT and SIGTERM (Ctrl-C, `kill`, SLURM's pre-emption notice): the handler only records the
// signal; the training loop reads it once per step, finishes that step, writes a checkpoint and
// stops with an error that names the checkpoint and how to resume; the batch-size search starts no new trial. Under
// data parallel the flag travels with the gradients (grad_reducer.h) so every rank stops at the same step.
#pragma once

namespace trainer::engine {

// Installs the handlers (the engine's entry points call it before a job runs).
void install_stop_signal_handlers();

// The signal received (SIGINT or SIGTERM), 0 when none. A relaxed atomic load: cheap in the loop.
// The engine's entry point reports it in TrainerJobResult::stop_signal (engine_c_abi.h).
int stop_signal_received();

// Under data parallel, a stop another rank received: this rank stops with it, as if SIGTERM had
// come here (no effect when a signal of its own came first).
void record_stop_from_peer();

}  // namespace trainer::engine
