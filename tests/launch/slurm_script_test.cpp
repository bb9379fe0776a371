// The SLURM launcher's files: the job-array script (#SBATCH lines from hydra.launcher, the body
// run by bash for real with a stand-in job program to check the pre-emption signal is passed on),
// the job list, option errors, and the launcher on a machine without sbatch.
#include "trainer/launch/slurm_script.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/launch/launcher.h"
#include "trainer/launch/slurm_launcher.h"
#include "trainer/util/error.h"

#include "temp_dir.h"

namespace fs = std::filesystem;
using trainer::testing::TempDir;
using namespace trainer::launch;
using trainer::config::Node;

namespace {

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Node yaml(const std::string& text) { return trainer::config::load_yaml_string(text, "test").root; }
// A YAML value that is not a mapping (a list), parsed as the value of a key.
Node yaml_value(const std::string& text) { return *yaml("value: " + text).find("value"); }

// The built-in hydra/launcher=slurm options, as composed (interpolations resolved).
const char* kDefaults = R"(_target_: trainer.launcher.SlurmLauncher
submitit_folder: /x/.submitit/%j
timeout_min: 60
cpus_per_task: null
gpus_per_node: null
tasks_per_node: 1
mem_gb: null
nodes: 1
name: trainer
partition: null
qos: null
comment: null
constraint: null
exclude: null
gres: null
cpus_per_gpu: null
gpus_per_task: null
mem_per_gpu: null
mem_per_cpu: null
account: null
signal_delay_s: 120
max_num_timeout: 0
additional_parameters: {}
array_parallelism: 256
setup: null
srun_args: null
wait: true
fail_fast: false
)";

SweepPlan plan_in(const std::string& sweep_dir, int jobs) {
  SweepPlan plan;
  plan.sweep_dir = sweep_dir;
  plan.command = "fit";
  plan.executable = "/opt/my trainer/bin/trainer";
  for (int i = 0; i < jobs; ++i) {
    plan.jobs.push_back(
        {i, {"seed=" + std::to_string(i + 1), "hydra.launcher.partition=x"}, sweep_dir + "/" + std::to_string(i)});
  }
  return plan;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text + "\n").find("\n" + line + "\n") != std::string::npos;
}

std::string error_of(const Node& launcher) {
  try {
    slurm_launcher_options(launcher);
  } catch (const trainer::Error& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("array indices: runs of job numbers become ranges", "[slurm]") {
  CHECK(slurm_array_indices({0, 1, 2, 3}) == "0-3");
  CHECK(slurm_array_indices({4}) == "4");
  CHECK(slurm_array_indices({9, 8, 7, 5, 3, 1, 0, 3}) == "0-1,3,5,7-9");
}

TEST_CASE("shell_quote keeps plain words and quotes the rest", "[slurm]") {
  CHECK(shell_quote("/a/b-c_d.e") == "/a/b-c_d.e");
  CHECK(shell_quote("/a b") == "'/a b'");
  CHECK(shell_quote("it's $HOME") == "'it'\\''s $HOME'");
  CHECK(shell_quote("") == "''");
}

TEST_CASE("the defaults give a job-array script with submitit's defaults", "[slurm]") {
  const SlurmOptions options = slurm_launcher_options(yaml(kDefaults));
  CHECK(options.wait);
  CHECK_FALSE(options.fail_fast);
  const SweepPlan plan = plan_in("/sw/dir", 4);
  const std::string script = slurm_array_script(options, plan, {0, 1, 2, 3});
  CHECK(script.rfind("#!/bin/bash\n", 0) == 0);
  CHECK(has_line(script, "#SBATCH --job-name=trainer"));
  CHECK(has_line(script, "#SBATCH --array=0-3"));  // 256 at once: no throttle
  CHECK(has_line(script, "#SBATCH --time=60"));
  CHECK(has_line(script, "#SBATCH --output=/sw/dir/.sweep/slurm/logs/%a.out"));
  CHECK(has_line(script, "#SBATCH --error=/sw/dir/.sweep/slurm/logs/%a.err"));
  CHECK(has_line(script, "#SBATCH --signal=B:USR1@120"));
  CHECK(script.find("--partition") == std::string::npos);
  CHECK(script.find("--mem") == std::string::npos);
  CHECK(script.find("--requeue") == std::string::npos);
  CHECK(has_line(script, "trainer_exe='/opt/my trainer/bin/trainer'"));
  CHECK(has_line(script, "sweep_dir=/sw/dir"));
  CHECK(has_line(script, "\"$trainer_exe\" sweep run-job \"$sweep_dir\" \"$job\" &"));
}

TEST_CASE("every option reaches its #SBATCH line", "[slurm]") {
  Node launcher = yaml(kDefaults);
  launcher.set("name", Node::string("lr sweep"));
  launcher.set("timeout_min", Node::integer(240));
  launcher.set("cpus_per_task", Node::integer(8));
  launcher.set("gpus_per_node", Node::integer(2));
  launcher.set("mem_gb", Node::integer(32));
  launcher.set("partition", Node::string("gpu"));
  launcher.set("qos", Node::string("high"));
  launcher.set("account", Node::string("proj1"));
  launcher.set("constraint", Node::string("a100|h100"));
  launcher.set("exclude", Node::string("node7"));
  launcher.set("gres", Node::string("gpu:2"));
  launcher.set("comment", Node::string("night run"));
  launcher.set("signal_delay_s", Node::integer(300));
  launcher.set("max_num_timeout", Node::integer(3));
  launcher.set("array_parallelism", Node::integer(2));
  launcher.set("additional_parameters", yaml("{mail_type: END, exclusive: true, hint: null, nice: 10}"));
  launcher.set("setup", yaml_value("['module load cuda/12', 'source /opt/venv/bin/activate']"));
  const SlurmOptions options = slurm_launcher_options(launcher);
  TempDir dir("trainer-slurm script");  // a blank in the path, on purpose
  const SweepPlan plan = plan_in(dir.path, 6);
  const std::string script = slurm_array_script(options, plan, {0, 1, 2, 3, 5});
  CHECK(has_line(script, "#SBATCH --job-name=\"lr sweep\""));
  CHECK(has_line(script, "#SBATCH --array=0-3,5%2"));
  CHECK(has_line(script, "#SBATCH --output=\"" + dir.path + "/.sweep/slurm/logs/%a.out\""));
  CHECK(has_line(script, "#SBATCH --time=240"));
  CHECK(has_line(script, "#SBATCH --cpus-per-task=8"));
  CHECK(has_line(script, "#SBATCH --gpus-per-node=2"));
  CHECK(has_line(script, "#SBATCH --mem=32G"));
  CHECK(has_line(script, "#SBATCH --partition=gpu"));
  CHECK(has_line(script, "#SBATCH --qos=high"));
  CHECK(has_line(script, "#SBATCH --account=proj1"));
  CHECK(has_line(script, "#SBATCH --constraint=a100|h100"));
  CHECK(has_line(script, "#SBATCH --exclude=node7"));
  CHECK(has_line(script, "#SBATCH --gres=gpu:2"));
  CHECK(has_line(script, "#SBATCH --comment=\"night run\""));
  CHECK(has_line(script, "#SBATCH --signal=B:USR1@300"));
  CHECK(has_line(script, "#SBATCH --requeue"));
  CHECK(has_line(script, "#SBATCH --mail-type=END"));
  CHECK(has_line(script, "#SBATCH --exclusive"));
  CHECK(has_line(script, "#SBATCH --nice=10"));
  CHECK(script.find("--hint") == std::string::npos);
  CHECK(has_line(script, "max_requeues=3"));
  // Setup lines come after the #SBATCH block (sbatch stops reading options at the first command)
  // and before the job runs.
  const size_t setup = script.find("\nmodule load cuda/12\nsource /opt/venv/bin/activate\n");
  REQUIRE(setup != std::string::npos);
  CHECK(setup > script.rfind("#SBATCH"));
  CHECK(setup < script.find("sweep run-job"));

  // The options sbatch takes in place of --cpus-per-task and --mem (one of each kind at a time).
  Node per_device = yaml(kDefaults);
  per_device.set("cpus_per_gpu", Node::integer(6));
  per_device.set("gpus_per_task", Node::integer(2));
  per_device.set("mem_per_gpu", Node::string("40G"));
  const std::string per_device_script = slurm_array_script(slurm_launcher_options(per_device), plan, {0});
  CHECK(has_line(per_device_script, "#SBATCH --cpus-per-gpu=6"));
  CHECK(has_line(per_device_script, "#SBATCH --gpus-per-task=2"));
  CHECK(has_line(per_device_script, "#SBATCH --mem-per-gpu=40G"));
  Node per_cpu = yaml(kDefaults);
  per_cpu.set("mem_per_cpu", Node::string("4G"));
  CHECK(has_line(slurm_array_script(slurm_launcher_options(per_cpu), plan, {0}), "#SBATCH --mem-per-cpu=4G"));

  Node fractional = yaml(kDefaults);
  fractional.set("mem_gb", Node::floating(1.5));
  CHECK(has_line(slurm_array_script(slurm_launcher_options(fractional), plan, {0}), "#SBATCH --mem=1536M"));
  Node with_srun = yaml(kDefaults);
  with_srun.set("srun_args", yaml_value("['--cpu-bind=none']"));
  CHECK(has_line(slurm_array_script(slurm_launcher_options(with_srun), plan, {0}),
                 "srun --cpu-bind=none \"$trainer_exe\" sweep run-job \"$sweep_dir\" \"$job\" &"));
  Node no_signal = yaml(kDefaults);
  no_signal.set("signal_delay_s", Node::integer(0));
  CHECK(slurm_array_script(slurm_launcher_options(no_signal), plan, {0}).find("--signal") == std::string::npos);
}

TEST_CASE("the job list names each job's overrides and command line", "[slurm]") {
  const SweepPlan plan = plan_in("/sw/dir", 3);
  const std::string text = slurm_job_commands(plan, {0, 2});
  CHECK(has_line(text, "# job 0 (run dir /sw/dir/0): seed=1"));
  CHECK(has_line(text, "'/opt/my trainer/bin/trainer' sweep run-job /sw/dir 0"));
  CHECK(has_line(text, "'/opt/my trainer/bin/trainer' sweep run-job /sw/dir 2"));
  CHECK(text.find("run-job /sw/dir 1") == std::string::npos);
}

TEST_CASE("bad launcher options are refused naming the key", "[slurm]") {
  Node launcher = yaml(kDefaults);
  launcher.set("timeout_mins", Node::integer(5));
  CHECK_THAT(error_of(launcher),
             Catch::Contains("hydra.launcher.timeout_mins") && Catch::Contains("no option 'timeout_mins'"));
  launcher = yaml(kDefaults);
  launcher.set("timeout_min", Node::string("an hour"));
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.timeout_min") && Catch::Contains("integer"));
  launcher = yaml(kDefaults);
  launcher.set("nodes", Node::integer(2));
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.nodes") && Catch::Contains("one process"));
  launcher = yaml(kDefaults);
  launcher.set("partition", Node::string("a\nb"));
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.partition") && Catch::Contains("line break"));
  launcher = yaml(kDefaults);
  launcher.set("wait", Node::string("no"));
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.wait"));
  launcher = yaml(kDefaults);
  launcher.set("array_parallelism", Node::integer(0));
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.array_parallelism"));
  launcher = yaml(kDefaults);
  launcher.set("additional_parameters", yaml_value("[a]"));
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.additional_parameters"));
  launcher = yaml(kDefaults);
  launcher.set("additional_parameters", yaml_value("{time: 5}"));  // the launcher writes --time itself
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.additional_parameters.time") &&
                                     Catch::Contains("Set hydra.launcher.timeout_min."));
  launcher = yaml(kDefaults);
  launcher.set("additional_parameters", yaml_value("{output: /tmp/x.out}"));
  CHECK_THAT(error_of(launcher), Catch::Contains("Leave it out: each task's output goes to the sweep's .slurm/logs."));
  launcher = yaml(kDefaults);
  launcher.set("srun_args", Node::string("[--cpu-bind=none]"));  // a list quoted whole: a string
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.srun_args") &&
                                     Catch::Contains("hydra.launcher.srun_args=['--cpu-bind=none']"));
  launcher = yaml(kDefaults);
  launcher.set("mem_gb", Node::string("lots"));
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.mem_gb"));
  // A time limit no longer than the stop signal's lead: every job would be signalled as it starts.
  launcher = yaml(kDefaults);
  launcher.set("timeout_min", Node::integer(1));
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.signal_delay_s=120") &&
                                     Catch::Contains("is not below the time limit (timeout_min=1: 60 s)"));
  launcher.set("signal_delay_s", Node::integer(30));
  CHECK_NOTHROW(slurm_launcher_options(launcher));
  // Options sbatch holds mutually exclusive: refused before anything is submitted.
  launcher = yaml(kDefaults);
  launcher.set("mem_gb", Node::integer(16));
  launcher.set("mem_per_gpu", Node::string("8G"));
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.mem_per_gpu: is set with hydra.launcher.mem_gb") &&
                                     Catch::Contains("hydra.launcher.mem_gb=null"));
  launcher = yaml(kDefaults);
  launcher.set("mem_per_cpu", Node::string("2G"));
  launcher.set("mem_per_gpu", Node::string("8G"));
  CHECK_THAT(error_of(launcher), Catch::Contains("hydra.launcher.mem_per_gpu: is set with hydra.launcher.mem_per_cpu"));
  launcher = yaml(kDefaults);
  launcher.set("cpus_per_task", Node::integer(8));
  launcher.set("cpus_per_gpu", Node::integer(4));
  CHECK_THAT(error_of(launcher),
             Catch::Contains("hydra.launcher.cpus_per_gpu: is set with hydra.launcher.cpus_per_task"));
  launcher.set("cpus_per_task", Node());
  CHECK_NOTHROW(slurm_launcher_options(launcher));
  CHECK_THROWS_WITH(slurm_array_script(slurm_launcher_options(yaml(kDefaults)), plan_in("/a\"b", 1), {0}),
                    Catch::Contains("double quote"));
}

// The script's body, run by bash as SLURM would (SLURM_ARRAY_TASK_ID set), with a stand-in for
// the trainer executable that records its arguments and ends on SIGTERM as the engine does.
TEST_CASE("the array task runs its job by number and passes USR1 on as SIGTERM", "[slurm]") {
  TempDir dir("trainer-slurm script");  // a blank in the path, on purpose
  const std::string exe = dir.path + "/fake trainer";
  {
    std::ofstream out(exe);
    out << "#!/bin/bash\n"
        << "printf '%s\\n' \"$@\" > \"$3/../args\"\n"  // $3 is the sweep dir
        << "trap 'echo TERM > \"$3/../got_term\"; exit 143' TERM\n"
        << "touch \"$3/../ready\"\n"
        << "while :; do sleep 0.05; done\n";
  }
  ::chmod(exe.c_str(), 0755);
  SweepPlan plan = plan_in(dir.path + "/sweep", 4);
  plan.executable = exe;
  fs::create_directories(plan.sweep_dir);
  const std::string script_path = dir.path + "/array.sbatch";
  {
    std::ofstream out(script_path);
    out << slurm_array_script(slurm_launcher_options(yaml(kDefaults)), plan, {0, 1, 2, 3});
  }
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so a failed check below can end the script and its job
    setenv("SLURM_ARRAY_TASK_ID", "2", 1);
    setenv("SLURM_ARRAY_JOB_ID", "77", 1);
    execl("/bin/bash", "bash", script_path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 600 && !fs::exists(dir.path + "/ready"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!fs::exists(dir.path + "/ready")) {
    ::kill(-pid, SIGKILL);  // nothing may outlive the test (ctest would wait for it)
    waitpid(pid, nullptr, 0);
    FAIL("the array task never started the job");
  }
  CHECK(read(dir.path + "/args") == "sweep\nrun-job\n" + plan.sweep_dir + "\n2\n");
  ::kill(pid, SIGUSR1);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 143);  // the job's own exit code, not the shell's
  CHECK(read(dir.path + "/got_term") == "TERM\n");
}

TEST_CASE("without sbatch the launcher writes the array and says how to submit it", "[slurm]") {
  TempDir dir("trainer-slurm script");  // a blank in the path, on purpose
  SweepPlan plan = plan_in(dir.path, 3);
  plan.launcher = yaml(kDefaults);
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path != nullptr ? old_path : "";
  setenv("PATH", (dir.path + "/no-bin").c_str(), 1);
  std::unique_ptr<Launcher> launcher = make_launcher(plan);
  std::ostringstream captured;
  std::streambuf* previous = std::cout.rdbuf(captured.rdbuf());
  try {
    launcher->launch(plan, {1, 2});
  } catch (...) {
    std::cout.rdbuf(previous);
    setenv("PATH", saved.c_str(), 1);
    throw;
  }
  std::cout.rdbuf(previous);
  setenv("PATH", saved.c_str(), 1);
  CHECK(launcher->detached());
  CHECK_FALSE(launcher->interrupted());
  const std::string script = read(slurm_script_path(dir.path));
  CHECK(has_line(script, "#SBATCH --array=1-2"));
  CHECK(fs::is_directory(slurm_log_dir(dir.path)));
  CHECK(read(slurm_commands_path(dir.path)).find("sweep run-job " + shell_quote(dir.path) + " 2") != std::string::npos);
  const std::string printed = captured.str();
  CHECK(has_line(printed, "sbatch --parsable " + shell_quote(slurm_script_path(dir.path))));
  CHECK(printed.find(script) != std::string::npos);
}
