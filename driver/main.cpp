// kvdrive: the load driver. Everything but this line lives in the kv_driver library.
#include "cli/cli.hpp"

int main(int argc, char** argv) { return kv::drive::kvdrive_main(argc, argv); }
