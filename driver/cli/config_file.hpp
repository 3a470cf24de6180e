// kvdrive's --config file: read bounded and checked by kvdrive itself before CLI11 parses it,
// and CLI11's messages about it rewritten to name the file, the key and the line.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace CLI {
class App;
class Option;
class ParseError;
}  // namespace CLI

namespace kv::drive {

// The --config file as kvdrive read it: bounded, checked, BOM dropped, each key's line.
struct ConfigFile {
  std::string path;
  std::string text;
  std::map<std::string, int> key_lines;  // "run.keys" -> line number
  std::string problem;                   // set when the file is refused
};

// The --config option of `app`, and the file it names once parsed.
struct ConfigOption {
  CLI::Option* option = nullptr;
  std::shared_ptr<ConfigFile> file;
};

// Adds --config to `app` (app level: CLI11 2.1 reads config files there only), with CLI11's TOML
// reader fed the text kvdrive read. Unknown keys are errors.
ConfigOption add_config_option(CLI::App& app);

// After parsing: a `--config ''` is refused. Throws UsageError.
void check_config_option(const ConfigOption& config);

// The one-line message for a CLI11 error about the config file (unknown key or section, a file
// that cannot be read), naming the file, the key and its line.
std::string config_error_text(const CLI::ParseError& e, const ConfigOption& config);

// A message about an option ("invalid --keys 'x': ...") whose value came from the config file,
// not the command line, also names the file and the line.
std::string with_config_origin(const std::string& what, int argc, char** argv,
                               const ConfigFile& file);

}  // namespace kv::drive
