#include "edit_counts_json.h"

namespace cadenza::cli {

nlohmann::json edit_counts_json(const recognition::EditCounts& counts) {
    return {{"rate", counts.rate()},
            {"errors", counts.errors()},
            {"substitutions", counts.substitutions},
            {"deletions", counts.deletions},
            {"insertions", counts.insertions},
            {"reference_length", counts.reference_length}};
}

}  // namespace cadenza::cli
