#pragma once
// SIGINT and SIGTERM from main's first line until the command is ready for them. A stop that lands while
// k3lab starts (loading LibTorch, or across the OpenMP restart, whose exec resets every handler) then
// waits, pending on the main thread, instead of killing the process: a thread's blocked set and its
// pending signals both survive exec.

namespace k3lab::core {

// Blocks SIGINT and SIGTERM on the calling thread (main's), and sends any that another thread receives
// meanwhile (threads a library started before main, such as OpenBLAS's pool, still take them) on to it.
// A signal the process started with ignored is left ignored.
void hold_stop_signals();

// Unblocks them: a stop that arrived meanwhile is delivered now, to the command's handler when it has
// installed one, else with the disposition the process started with (by default it ends, as it would
// have without the hold).
void release_stop_signals();

}  // namespace k3lab::core
