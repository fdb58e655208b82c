#include "validate_command.h"

#include <iostream>
#include <memory>

#include "diagnostic.h"
#include "exit_codes.h"
#include "pipeline_config.h"

namespace cadenza::cli {

int validate_pipelines(const std::vector<std::string>& files) {
    int result = exit_ok;
    for (const auto& file : files) {
        try {
            const PipelineConfig config = load_pipeline_config_file(file);
            std::cout << config.to_toml() << '\n';
            std::cerr << file << ": valid\n";
        } catch (const ValidationError& error) {
            for (const auto& diagnostic : error.diagnostics()) std::cerr << diagnostic.to_string() << '\n';
            std::cerr << file << ": " << error.diagnostics().size() << " error(s)\n";
            result = std::max(result, static_cast<int>(exit_user_error));
        } catch (const std::exception& error) {
            result = std::max(result, report_exception(error));
        }
    }
    return result;
}

Command add_validate_command(CLI::App& app) {
    auto* validate = app.add_subcommand("validate", "print resolved pipelines, or every error with its position");
    auto files = std::make_shared<std::vector<std::string>>();
    validate->add_option("files", *files, "pipeline TOML files")->required()->check(CLI::ExistingFile);
    return {validate, [files] { return validate_pipelines(*files); }};
}

}  // namespace cadenza::cli
