#pragma once
// The run dir's record of its Slurm submissions (slurm-jobs.jsonl, one JSON object per sbatch),
// which `status` and the next submission use to ask Slurm about each task and to know which units
// each task was given.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/exec/sbatch_script.hpp"

namespace k3lab::exec {

struct JobRecord {
  std::string job_id;
  std::string job_name;   // checked against Slurm's answer, so that a reused job id is not mistaken
  std::string submitted;  // UTC
  TaskLayout layout = TaskLayout::PerUnit;
  std::size_t shard_count = 0;
  std::vector<ArrayTask> tasks;
  std::string script;  // relative to the run dir
  std::string output;  // sbatch --output pattern (%A, %a)
  bool requeue = false;
  std::vector<std::string> command;  // the submitting command line

  nlohmann::json to_json() const;
  // Throws std::runtime_error naming `where` when a field is missing or has the wrong type.
  static JobRecord from_json(const nlohmann::json& record, const std::string& where);
  // The log file of one task (the output pattern with %A/%a/%j filled in).
  std::string log_of(std::size_t task) const;
};

std::filesystem::path job_records_path(const std::filesystem::path& run_dir);

// Every submission of the run dir, oldest first (none when the file does not exist). A torn last
// line (a submitter killed mid-write) is ignored; any other bad line is an error naming it.
std::vector<JobRecord> read_job_records(const std::filesystem::path& run_dir);

// Appends one record in a single write and flushes it to disk.
void append_job_record(const std::filesystem::path& run_dir, const JobRecord& record);

}  // namespace k3lab::exec
