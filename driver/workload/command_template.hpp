// --command TEMPLATE: parsing the template (CommandTemplate, workload/workload.hpp), its key
// pattern and its op's name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "workload/workload.hpp"

namespace kv::drive {

// Splits `text` into arguments at spaces (an argument in "double" or 'single' quotes keeps its
// spaces) and finds the placeholders. Throws UsageError naming the problem.
CommandTemplate parse_command_template(std::string_view text);

// memtier's R (uniform), G (gaussian), S and P (sequential), or any --key-pattern. Throws
// UsageError.
KeyPattern parse_command_key_pattern(std::string_view text);

// On a Redis Cluster a command goes to its key's node: true when every argument holding
// __key__ hashes to the key's slot, being __key__ alone or holding it as a hash tag
// ("list:{__key__}"), and there is one.
bool routes_by_key(const CommandTemplate& c);

// Each --command's name: its command word in lower case, with "-2", "-3", ... where an op of
// `mix` or an earlier command already has it (two HSETs: hset, hset-2).
void name_commands(std::vector<CommandTemplate>& commands, const std::vector<MixEntry>& mix);

}  // namespace kv::drive
