// hydra/sweeper=random through the real binary: the sampled values reach each job's composed
// config, the same seed gives the same jobs, and bad settings stop the sweep before anything runs.
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

using namespace trainer::testing;

namespace {

ProcessResult list_jobs(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "-m",
                                   "--cfg",
                                   "job",
                                   "-p",
                                   "optimizer",
                                   "hydra/sweeper=random",
                                   "hydra.sweeper.num_samples=6"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  TempDir dir;
  return run_process(argv, dir.path());
}

}  // namespace

TEST_CASE("random search: sampled values reach each job's config, reproducibly from the seed") {
  const std::vector<std::string> space = {"optimizer.lr=tag(log, interval(1e-4, 1e-1))", "optimizer=adam,sgd"};
  std::vector<std::string> seeded = space;
  seeded.push_back("hydra.sweeper.seed=3");
  const ProcessResult first = list_jobs(seeded);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const ProcessResult again = list_jobs(seeded);
  CHECK(again.out == first.out);
  std::vector<std::string> other = space;
  other.push_back("hydra.sweeper.seed=4");
  CHECK(list_jobs(other).out != first.out);

  // Six jobs; each job line's lr is the lr in that job's printed optimizer config.
  const std::regex job_line(
      R"(# job (\d+): optimizer\.lr=(\S+) optimizer=(adam|sgd)\n# @package optimizer\nname: (\w+)\nlr: (\S+))");
  int jobs = 0;
  for (std::sregex_iterator it(first.out.begin(), first.out.end(), job_line), end; it != end; ++it) {
    const std::smatch& m = *it;
    CHECK(std::stoi(m[1].str()) == jobs);
    CHECK(m[2].str() == m[5].str());
    CHECK(m[3].str() == m[4].str());
    const double lr = std::stod(m[2].str());
    CHECK(lr >= 1e-4);
    CHECK(lr < 1e-1);
    ++jobs;
  }
  CHECK(jobs == 6);
}

TEST_CASE("random search: bad settings are reported before any job runs") {
  const ProcessResult zero = list_jobs({"hydra.sweeper.num_samples=0", "optimizer.lr=interval(0.1, 1)"});
  CHECK(zero.exit_code != 0);
  check_no_crash(zero);
  CHECK(zero.out.empty());
  CHECK(zero.err.find("hydra.sweeper.num_samples") != std::string::npos);
  const ProcessResult log_zero = list_jobs({"optimizer.lr=tag(log, interval(0, 1))"});
  CHECK(log_zero.exit_code != 0);
  check_no_crash(log_zero);
  CHECK(log_zero.err.find("optimizer.lr=tag(log, interval(0, 1))") != std::string::npos);
  CHECK(log_zero.err.find("above zero") != std::string::npos);
}
