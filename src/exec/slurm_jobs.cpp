#include "k3lab/exec/slurm_jobs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace k3lab::exec {
namespace {

std::string layout_name(TaskLayout layout) { return layout == TaskLayout::PerUnit ? "unit" : "shard"; }

template <typename T>
T field(const nlohmann::json& record, const char* key, const std::string& where) {
  if (!record.contains(key)) throw std::runtime_error(where + ": missing \"" + key + "\"");
  try {
    return record.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(where + ": \"" + key + "\" has the wrong type");
  }
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (auto pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
}

}  // namespace

nlohmann::json JobRecord::to_json() const {
  nlohmann::json tasks_json = nlohmann::json::array();
  for (const auto& t : tasks) tasks_json.push_back({{"index", t.index}, {"units", t.units}});
  return {{"job_id", job_id}, {"job_name", job_name}, {"submitted", submitted}, {"layout", layout_name(layout)},
          {"shard_count", shard_count}, {"tasks", tasks_json}, {"script", script}, {"output", output},
          {"requeue", requeue}, {"command", command}};
}

JobRecord JobRecord::from_json(const nlohmann::json& record, const std::string& where) {
  if (!record.is_object()) throw std::runtime_error(where + ": not a JSON object");
  JobRecord r;
  r.job_id = field<std::string>(record, "job_id", where);
  r.job_name = field<std::string>(record, "job_name", where);
  r.submitted = field<std::string>(record, "submitted", where);
  const auto layout = field<std::string>(record, "layout", where);
  if (layout != "unit" && layout != "shard") throw std::runtime_error(where + ": layout must be \"unit\" or \"shard\"");
  r.layout = layout == "unit" ? TaskLayout::PerUnit : TaskLayout::Shards;
  r.shard_count = field<std::size_t>(record, "shard_count", where);
  for (const auto& t : field<nlohmann::json>(record, "tasks", where)) {
    r.tasks.push_back({field<std::size_t>(t, "index", where + " task"),
                       field<std::vector<std::string>>(t, "units", where + " task")});
  }
  r.script = field<std::string>(record, "script", where);
  r.output = field<std::string>(record, "output", where);
  r.requeue = field<bool>(record, "requeue", where);
  r.command = field<std::vector<std::string>>(record, "command", where);
  return r;
}

std::string JobRecord::log_of(std::size_t task) const {
  std::string path = output;
  replace_all(path, "%A", job_id);
  replace_all(path, "%a", std::to_string(task));
  return path;
}

std::filesystem::path job_records_path(const std::filesystem::path& run_dir) { return run_dir / "slurm-jobs.jsonl"; }

std::vector<JobRecord> read_job_records(const std::filesystem::path& run_dir) {
  const auto path = job_records_path(run_dir);
  std::vector<JobRecord> records;
  std::ifstream in(path, std::ios::binary);
  if (!in) return records;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string data = buffer.str();
  std::size_t start = 0;
  int line_number = 0;
  while (start < data.size()) {
    const auto end = data.find('\n', start);
    if (end == std::string::npos) break;  // a torn last line: its sbatch reply was never recorded
    ++line_number;
    const std::string line = data.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const std::string where = path.string() + " line " + std::to_string(line_number);
    nlohmann::json parsed;
    try {
      parsed = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {  // parse_error, or out_of_range for an overflowing number
      throw std::runtime_error(where + " is not valid JSON: the file was edited by something other than k3lab; "
                                       "restore it from a copy");
    }
    records.push_back(JobRecord::from_json(parsed, where));
  }
  return records;
}

void append_job_record(const std::filesystem::path& run_dir, const JobRecord& record) {
  const auto path = job_records_path(run_dir);
  const std::string line = record.to_json().dump() + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  struct stat before {};
  if (::fstat(fd, &before) != 0) before.st_size = -1;
  std::string error;
  const ssize_t n = ::write(fd, line.data(), line.size());
  if (n < 0) error = std::strerror(errno);
  else if (n != static_cast<ssize_t>(line.size())) error = "short write (is the disk full?)";
  else if (::fdatasync(fd) != 0) error = std::strerror(errno);
  // Never leave a partial line behind for the next append to continue.
  if (!error.empty() && n > 0 && before.st_size >= 0 && ::ftruncate(fd, before.st_size) != 0) error += "; and cannot cut it back";
  ::close(fd);
  if (!error.empty()) throw std::runtime_error("cannot append to " + path.string() + ": " + error);
}

}  // namespace k3lab::exec
