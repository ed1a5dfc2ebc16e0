// meshop: the operator process and its command-line tool, in one binary.
#include <iostream>
#include <string>
#include <vector>

#include "operator/cli/cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  return meshop::cli::run(args, std::cout, std::cerr);
}
