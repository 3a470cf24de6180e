# Writes OUT: a C++ source defining kv::schema::migrations() from the SQL files in FILES.
# Each file must be named NNN_description.sql; NNN is the user_version it brings the file to.
string(REPLACE "|" ";" FILES "${FILES}")
set(body "")
set(expected 1)
foreach(f IN LISTS FILES)
  get_filename_component(name ${f} NAME)
  string(SUBSTRING ${name} 0 3 num)
  math(EXPR version "${num}")
  if(NOT version EQUAL expected)
    message(FATAL_ERROR "schema migration ${name}: expected number ${expected}")
  endif()
  math(EXPR expected "${expected} + 1")
  file(READ ${f} sql)
  string(APPEND body "    {${version}, \"${name}\", R\"kvsql(${sql})kvsql\"},\n")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from schema/*.sql by cmake/embed_schema.cmake. Do not edit.\n"
"#include \"kvbench/schema.hpp\"\n\nnamespace kv::schema {\n\n"
"const std::vector<Migration>& migrations() {\n  static const std::vector<Migration> all = {\n"
"${body}  };\n  return all;\n}\n\n}  // namespace kv::schema\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
