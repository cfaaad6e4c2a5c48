#pragma once
// Durable file-system changes: whole-file writes that never leave a half-written file (write a
// temporary, fsync, rename, fsync the folder), and the folder fsync that makes a new entry (a created
// file or folder, a rename) survive a power loss.
#include <filesystem>
#include <string_view>

namespace k3lab::core {

// Durable: the file and its folder entry survive a power loss. AtomicOnly: readers see the old or the new
// content, never a mix, but a power loss may leave the old, the new or an empty file; for state whose
// meaning ends with the process that wrote it (unit leases), where two fsyncs per write cost more than
// the unit (measured: 25 ms a unit on this machine's disk with them).
enum class Durability { Durable, AtomicOnly };

void write_file_atomically(const std::filesystem::path& path, std::string_view content,
                           Durability durability = Durability::Durable);

// fsyncs the folder itself, so that entries created, renamed or removed in it are on disk. Throws on an
// I/O error; a file system that cannot fsync a folder (EINVAL, EROFS) or a folder this process may not
// open for reading (EACCES) is accepted as it is.
void fsync_directory(const std::filesystem::path& folder);

}  // namespace k3lab::core
