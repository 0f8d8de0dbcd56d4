#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "ggufguard/cli/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return ggufguard::RunCli(args, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "ggufguard: internal error: " << e.what() << "\n";
    return ggufguard::kExitInternal;
  }
}
