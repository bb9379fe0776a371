// trainer: the command line (src in run_cli.cpp, also a library for programs that add their own
// models and callbacks). Runs without LibTorch; the engine library is loaded only when a job runs.
#include "trainer/cli/run_cli.h"

int main(int argc, char** argv) { return trainer::run_cli(argc, argv); }
