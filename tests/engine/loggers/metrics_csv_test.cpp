// metrics.csv as Lightning's CSVLogger writes it: epoch and step first, a column per metric in
// the order first logged, empty cells for metrics a row lacks, the header widened by a rewrite,
// a resumed run appending to the file it finds, less what it logged after the checkpoint.
// Engine tests use Catch's prefixed macros (docs/architecture.md).
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/loggers/metrics_csv.h"

#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

using trainer::engine::MetricsCsv;

namespace {

struct Scratch {
  std::string dir;
  Scratch() {
    char pattern[] = "/tmp/metrics_csv_test_XXXXXX";
    CATCH_REQUIRE(::mkdtemp(pattern) != nullptr);
    dir = pattern;
  }
  ~Scratch() {
    ::nftw(
        dir.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }, 8,
        FTW_DEPTH | FTW_PHYS);
  }
};

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

CATCH_TEST_CASE("rows hold epoch, step and the metrics in the order first logged; new names widen the header") {
  Scratch scratch;
  const std::string path = scratch.dir + "/run/metrics.csv";  // the directory is created
  {
    MetricsCsv csv(path);
    CATCH_CHECK(read(path) == "epoch,step\n");
    csv.log_metrics({{"train/loss", 0.5}, {"lr-Adam", 1e-05}}, 0, 49);
    csv.flush();
    CATCH_CHECK(read(path) == "epoch,step,train/loss,lr-Adam\n0,49,0.5,1e-05\n");
    csv.log_metrics({{"lr-Adam", 0.001}}, 0, 99);
    csv.log_metrics({{"val/acc", 0.75}, {"train/loss", 0.25}}, 0, 100);  // a new column: rewritten
    csv.log_metrics({{"test/acc", 0.5}}, -1, -1);                        // outside fit: no epoch, no step
    CATCH_CHECK(csv.columns() ==
                std::vector<std::string>{"epoch", "step", "train/loss", "lr-Adam", "val/acc", "test/acc"});
  }
  CATCH_CHECK(read(path) ==
              "epoch,step,train/loss,lr-Adam,val/acc,test/acc\n"
              "0,49,0.5,1e-05,,\n"
              "0,99,,0.001,,\n"
              "0,100,0.25,,0.75,\n"
              ",,,,,0.5\n");
  CATCH_CHECK_FALSE(std::ifstream(path + ".tmp").good());
}

CATCH_TEST_CASE("a resumed run keeps the file's columns and rows and appends") {
  Scratch scratch;
  const std::string path = scratch.dir + "/metrics.csv";
  {
    MetricsCsv csv(path);
    csv.log_metrics({{"train/loss", 2.0}}, 0, 10);
  }
  {
    MetricsCsv resumed(path);
    CATCH_CHECK(resumed.columns() == std::vector<std::string>{"epoch", "step", "train/loss"});
    resumed.log_metrics({{"train/loss", 1.0}}, 1, 20);
    resumed.log_metrics({{"val/loss", 1.5}}, 1, 20);
  }
  CATCH_CHECK(read(path) == "epoch,step,train/loss,val/loss\n0,10,2.0,\n1,20,1.0,\n1,20,,1.5\n");
}

CATCH_TEST_CASE("a run directory that cannot be created is an error naming metrics.csv") {
  Scratch scratch;
  const std::string blocker = scratch.dir + "/file";
  std::ofstream(blocker) << "x";
  try {
    MetricsCsv csv(blocker + "/sub/metrics.csv");
    CATCH_FAIL("no error");
  } catch (const trainer::Error& error) {
    CATCH_CHECK(error.where() == blocker + "/sub/metrics.csv");
    CATCH_CHECK_THAT(error.problem(), Catch::Contains("metrics.csv"));
  }
}

CATCH_TEST_CASE("resumed: the rows the checkpoint counted stay, later ones go with the columns only they had") {
  Scratch scratch;
  const std::string path = scratch.dir + "/metrics.csv";
  std::string saved;
  {
    MetricsCsv csv(path);
    csv.log_metrics({{"train/loss", 2.0}}, 0, 4);
    saved = csv.checkpoint_state();               // the checkpoint of step 4
    csv.log_metrics({{"lr-Adam", 0.001}}, 1, 4);  // the next epoch's first row, at the same step
    csv.log_metrics({{"train/loss", 1.0}}, 1, 6);
    csv.log_metrics({{"test/acc", 0.5}}, -1, -1);  // no step
  }
  CATCH_CHECK(saved == "rows=1");
  {
    MetricsCsv resumed(path);
    resumed.on_fit_start(4, saved);
    CATCH_CHECK(read(path) == "epoch,step,train/loss\n0,4,2.0\n");
  }
  {
    // A checkpoint of an older trainer kept no count: the rows after its step go.
    std::ofstream(path) << "epoch,step,train/loss,lr-Adam\n0,4,2.0,\n1,4,,0.001\n1,6,1.0,\n";
    MetricsCsv resumed(path);
    resumed.on_fit_start(4, "");
    CATCH_CHECK(read(path) == "epoch,step,train/loss,lr-Adam\n0,4,2.0,\n1,4,,0.001\n");
  }
}

CATCH_TEST_CASE("a new fit: an earlier fit's rows elsewhere are kept aside; another run's directory is refused") {
  Scratch scratch;
  const std::string shared = scratch.dir + "/shared";
  {
    MetricsCsv csv(shared + "/metrics.csv", scratch.dir + "/run1");
    csv.log_metrics({{"train/loss", 2.0}}, 0, 4);
  }
  {
    MetricsCsv csv(shared + "/metrics.csv", scratch.dir + "/run2");
    csv.on_fit_start(std::nullopt, "");
    CATCH_CHECK(read(shared + "/metrics.csv.1") == "epoch,step,train/loss\n0,4,2.0\n");
    CATCH_CHECK(read(shared + "/metrics.csv") == "epoch,step\n");
  }
  const std::string other_run = scratch.dir + "/other_run";
  CATCH_REQUIRE(::mkdir(other_run.c_str(), 0755) == 0);
  CATCH_REQUIRE(::mkdir((other_run + "/.hydra").c_str(), 0755) == 0);
  std::ofstream(other_run + "/metrics.csv") << "epoch,step,train/loss\n0,4,2.0\n";
  MetricsCsv csv(other_run + "/metrics.csv", scratch.dir + "/run3");
  try {
    csv.on_fit_start(std::nullopt, "");
    CATCH_FAIL("no error");
  } catch (const trainer::Error& error) {
    CATCH_CHECK(error.where() == "logger.csv.save_dir");
    CATCH_CHECK_THAT(error.problem(), Catch::Contains("another run's directory"));
  }
  CATCH_CHECK(read(other_run + "/metrics.csv") == "epoch,step,train/loss\n0,4,2.0\n");
}

CATCH_TEST_CASE(
    "resumed on a damaged file: kept aside as metrics.csv.damaged, a new file begins; a cut row is dropped") {
  Scratch scratch;
  const std::string path = scratch.dir + "/metrics.csv";
  const std::string good = "epoch,step,train/loss\n0,4,2.0\n1,8,1.5\n";
  for (const std::string& damaged :
       {std::string("garbage\x01\x02 not a table\n"), std::string("epoch,step,train/loss\n0,4,2.0,7,8\n"),
        std::string("epoch,step,train/loss\n0,four,2.0\n"), std::string("epoch,step,train/loss\n0,4,abc\n")}) {
    CATCH_INFO(damaged);
    std::ofstream(path, std::ios::trunc) << damaged;
    {
      MetricsCsv resumed(path);
      resumed.on_fit_start(4, "rows=1");
      resumed.log_metrics({{"train/loss", 1.0}}, 1, 6);
    }
    CATCH_CHECK(read(path) == "epoch,step,train/loss\n1,6,1.0\n");
    CATCH_CHECK(read(path + ".damaged") == damaged);
    std::remove((path + ".damaged").c_str());
  }
  // A last row without its newline (the process killed as it appended) is dropped; the rest stays.
  std::ofstream(path, std::ios::trunc) << good << "2,12,1.";
  {
    MetricsCsv resumed(path);
    resumed.on_fit_start(8, "rows=2");
  }
  CATCH_CHECK(read(path) == good);
  // Fewer rows than the checkpoint counted (cut short by hand): kept, and the run goes on.
  std::ofstream(path, std::ios::trunc) << "epoch,step,train/loss\n0,4,2.0\n";
  {
    MetricsCsv resumed(path);
    resumed.on_fit_start(8, "rows=2");
    resumed.log_metrics({{"train/loss", 1.0}}, 2, 12);
  }
  CATCH_CHECK(read(path) == "epoch,step,train/loss\n0,4,2.0\n2,12,1.0\n");
}
