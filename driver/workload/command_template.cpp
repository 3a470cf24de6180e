#include "workload/command_template.hpp"

#include <algorithm>
#include <cctype>

#include "kvbench/usage_error.hpp"

namespace kv::drive {
namespace {

constexpr std::string_view kKey = "__key__";
constexpr std::string_view kData = "__data__";

CommandTemplate::Arg parse_arg(const std::string& word, CommandTemplate& c) {
  CommandTemplate::Arg arg;
  size_t from = 0;
  while (from < word.size()) {
    const size_t k = word.find(kKey, from), d = word.find(kData, from);
    const size_t at = std::min(k, d);
    if (at > from) arg.push_back({CommandTemplate::Part::Kind::text, word.substr(from, at - from)});
    if (at == std::string::npos) break;
    const bool key = at == k;
    arg.push_back({key ? CommandTemplate::Part::Kind::key : CommandTemplate::Part::Kind::data, {}});
    (key ? c.uses_key : c.uses_data) = true;
    from = at + (key ? kKey : kData).size();
  }
  if (word.empty()) arg.push_back({CommandTemplate::Part::Kind::text, {}});
  return arg;
}

std::vector<std::string> split_words(std::string_view text) {
  auto bad = [&](const std::string& why) {
    throw UsageError("--command '" + std::string(text) + "': " + why);
  };
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\t') {
      ++i;
      continue;
    }
    std::string word;
    bool quoted = false;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') {
      const char q = text[i];
      if (q != '"' && q != '\'') {
        word += text[i++];
        continue;
      }
      const size_t end = text.find(q, i + 1);
      if (end == std::string_view::npos) bad(std::string("a ") + q + " is not closed");
      word.append(text.substr(i + 1, end - i - 1));
      quoted = true;
      i = end + 1;
    }
    if (!word.empty() || quoted) words.push_back(word);
  }
  return words;
}

}  // namespace

CommandTemplate parse_command_template(std::string_view text) {
  CommandTemplate c;
  c.text = std::string(text);
  const std::vector<std::string> words = split_words(text);
  if (words.empty())
    throw UsageError("--command: empty (expected a command such as 'HSET __key__ f __data__')");
  if (words.front().find(kKey) != std::string::npos ||
      words.front().find(kData) != std::string::npos || words.front().empty())
    throw UsageError("--command '" + c.text + "': the first word must be the command's name");
  for (char ch : words.front())
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != '-' &&
        ch != '|')
      throw UsageError("--command '" + c.text + "': '" + words.front() +
                       "' is not a command name (letters, digits, . _ - |)");
  for (const std::string& w : words) c.args.push_back(parse_arg(w, c));
  c.name = words.front();
  std::transform(c.name.begin(), c.name.end(), c.name.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return c;
}

KeyPattern parse_command_key_pattern(std::string_view text) {
  if (text == "R") return parse_key_pattern("uniform");
  if (text == "G") return parse_key_pattern("gaussian");
  if (text == "S" || text == "P") return parse_key_pattern("sequential");
  try {
    return parse_key_pattern(text);
  } catch (const UsageError& e) {
    throw UsageError("--command-key-pattern: " + std::string(e.what()) +
                     " (or memtier's R, G, S, P)");
  }
}

bool routes_by_key(const CommandTemplate& c) {
  using Kind = CommandTemplate::Part::Kind;
  if (!c.uses_key) return false;
  for (const CommandTemplate::Arg& arg : c.args) {
    const auto key = std::find_if(
        arg.begin(), arg.end(), [](const CommandTemplate::Part& p) { return p.kind == Kind::key; });
    if (key == arg.end() || arg.size() == 1) continue;
    // A hash tag: the argument's first '{' right before the key, a '}' right after it.
    std::string before;
    for (auto it = arg.begin(); it != key; ++it) before += it->text;  // data parts: not a tag
    const bool data_before = std::any_of(
        arg.begin(), key, [](const CommandTemplate::Part& p) { return p.kind == Kind::data; });
    const auto after = std::next(key);
    if (data_before || before.empty() || before.back() != '{' ||
        before.find('{') != before.size() - 1 || after == arg.end() || after->kind != Kind::text ||
        after->text.empty() || after->text.front() != '}')
      return false;
  }
  return true;
}

void name_commands(std::vector<CommandTemplate>& commands, const std::vector<MixEntry>& mix) {
  std::vector<std::string> taken;
  for (const MixEntry& e : mix) taken.emplace_back(op_name(e.op));
  for (CommandTemplate& c : commands) {
    const std::string base = c.name;
    for (int n = 2; std::find(taken.begin(), taken.end(), c.name) != taken.end(); ++n)
      c.name = base + "-" + std::to_string(n);
    taken.push_back(c.name);
  }
}

}  // namespace kv::drive
