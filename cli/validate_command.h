// `cadenza validate FILE...` prints each resolved pipeline, or every error
// with its position.
#pragma once

#include <string>
#include <vector>

namespace cadenza::cli {

int validate_pipelines(const std::vector<std::string>& files);

}  // namespace cadenza::cli
