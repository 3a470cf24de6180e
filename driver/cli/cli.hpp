// kvdrive's command line: parses it, installs the signal handlers and runs the subcommand.
#pragma once

namespace kv::drive {
// Returns the process exit code. Prints one clear line for any error.
int kvdrive_main(int argc, char** argv);
}  // namespace kv::drive
