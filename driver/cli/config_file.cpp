#include "cli/config_file.hpp"

#include <CLI/CLI.hpp>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "kvbench/usage_error.hpp"
#include "util/text_file.hpp"

namespace kv::drive {
namespace {

std::string unquoted(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    s = s.substr(1, s.size() - 2);
  return std::string(s);
}

// Each key's line, as CLI11 will read the file (sections, `key = value`, multi-line arrays,
// comments). CLI11 would take a key given twice as two values ("At Most 1 required but
// received 2", naming neither file nor line): refused here, naming both lines.
std::map<std::string, int> config_key_lines(std::string_view text, const std::string& file) {
  std::map<std::string, int> lines;
  std::string section;
  bool in_array = false;
  int line_no = 0;
  while (!text.empty()) {
    ++line_no;
    auto nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (in_array) {
      if (line.find(']') != std::string_view::npos) in_array = false;
      continue;
    }
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      auto close = line.find(']');
      section =
          unquoted(trim(line.substr(1, close == std::string_view::npos ? line.npos : close - 1)));
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;  // CLI11 says what it makes of it
    std::string_view value = trim(line.substr(eq + 1));
    if (!value.empty() && value.front() == '[' && value.find(']') == std::string_view::npos)
      in_array = true;
    std::string key = unquoted(trim(line.substr(0, eq)));
    std::string full = section.empty() ? key : section + "." + key;
    auto [it, fresh] = lines.emplace(full, line_no);
    if (!fresh)
      throw UsageError("--config '" + file + "': key '" + key + "'" +
                       (section.empty() ? "" : " in [" + section + "]") + " on line " +
                       std::to_string(it->second) + " and again on line " +
                       std::to_string(line_no));
  }
  return lines;
}

// CLI11's TOML reader, fed the text kvdrive read and checked instead of reading the file again.
class CheckedConfig : public CLI::ConfigTOML {
 public:
  explicit CheckedConfig(std::shared_ptr<const ConfigFile> file) : file_(std::move(file)) {}
  std::vector<CLI::ConfigItem> from_config(std::istream&) const override {
    std::istringstream in(file_->text);
    return CLI::ConfigTOML::from_config(in);
  }

 private:
  std::shared_ptr<const ConfigFile> file_;
};

// CLI11's messages about config files name neither the file nor the key plainly: say both.
std::string config_error_text_for(const CLI::ParseError& e, const std::string& file,
                                  const std::map<std::string, int>& key_lines) {
  auto line_of = [&](const std::string& full) {
    auto it = key_lines.find(full);
    return it == key_lines.end() ? std::string() : " (line " + std::to_string(it->second) + ")";
  };
  namespace fs = std::filesystem;
  std::string what = e.what();
  if (dynamic_cast<const CLI::FileError*>(&e) != nullptr) {
    std::error_code ec;
    if (fs::is_directory(file, ec)) return "--config '" + file + "': is a directory";
    if (!fs::exists(file, ec)) return "--config '" + file + "': no such file";
    return "--config '" + file + "': cannot read it";
  }
  constexpr std::string_view extras = "INI was not able to parse ";
  if (what.rfind(extras, 0) != 0) return "--config '" + file + "': " + what;
  std::string item = what.substr(extras.size());
  if (item.size() > 3 && item.ends_with(".++"))
    return "--config '" + file + "': unknown section [" + item.substr(0, item.size() - 3) +
           "] (options of `kvdrive run` go under [run])";
  auto dot = item.rfind('.');
  if (dot == std::string::npos)
    return "--config '" + file + "': unknown key '" + item + "' outside a section" + line_of(item) +
           " (options of `kvdrive run` go under [run])";
  return "--config '" + file + "': unknown key '" + item.substr(dot + 1) + "' in [" +
         item.substr(0, dot) + "]" + line_of(item);
}

}  // namespace

std::string with_config_origin(const std::string& what, int argc, char** argv,
                               const ConfigFile& file) {
  if (file.path.empty()) return what;
  auto at = what.find("--");
  if (at == std::string::npos) return what;
  size_t end = at + 2;
  while (end < what.size() &&
         (std::isalnum(static_cast<unsigned char>(what[end])) || what[end] == '-'))
    ++end;
  const std::string option = what.substr(at, end - at);
  if (option.size() <= 2 || option == "--config") return what;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == option || arg.rfind(option + "=", 0) == 0) return what;  // typed on the command line
  }
  for (const auto& [key, line] : file.key_lines) {
    auto dot = key.rfind('.');
    if (key.substr(dot == std::string::npos ? 0 : dot + 1) == option.substr(2))
      return what + " (from --config '" + file.path + "', line " + std::to_string(line) + ")";
  }
  return what;
}

ConfigOption add_config_option(CLI::App& app) {
  ConfigOption config;
  config.option = app.set_config("--config", "",
                                 "Read options from a TOML or INI file: long option names as keys, "
                                 "under a [run] section for `kvdrive run`");
  config.option->type_name("FILE");
  app.allow_config_extras(CLI::config_extras_mode::error);
  // The file is read (bounded, checked) when CLI11 first asks for the option's value, before it
  // opens the file itself: a FIFO or /dev/zero never reaches CLI11's unbounded reader.
  auto config_file = std::make_shared<ConfigFile>();
  config.file = config_file;
  app.config_formatter(std::make_shared<CheckedConfig>(config_file));
  config.option->check(CLI::Validator(
      [config_file](std::string& path) -> std::string {
        if (path.empty()) return {};
        try {
          config_file->path = path;
          config_file->text = read_text_file("--config", path);
          config_file->key_lines = config_key_lines(config_file->text, path);
          return {};
        } catch (const UsageError& e) {
          config_file->problem = e.what();
          return e.what();
        }
      },
      ""));
  return config;
}

void check_config_option(const ConfigOption& config) {
  if (config.option->count() > 0 && config.option->as<std::string>().empty())
    throw UsageError("--config: empty file name");
}

std::string config_error_text(const CLI::ParseError& e, const ConfigOption& config) {
  return config_error_text_for(
      e, config.option->results().empty() ? "" : config.option->results().front(),
      config.file->key_lines);
}

}  // namespace kv::drive
