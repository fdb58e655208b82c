// cadenza plugin SDK: typed access to a plugin's validated parameters
// (host->params_get_*). A failure throws an Error naming the key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::sdk {

class Params {
public:
    Params(const cdz_host_api& host, const cdz_params* params) : host_(host), params_(params) {}
    explicit Params(const cdz_instance_args& args) : Params(*args.host, args.params) {}

    bool boolean(const char* key) const {
        int value = 0;
        check(key, host_.params_get_bool(params_, key, &value));
        return value != 0;
    }
    int64_t integer(const char* key) const {
        int64_t value = 0;
        check(key, host_.params_get_int(params_, key, &value));
        return value;
    }
    double number(const char* key) const {
        double value = 0;
        check(key, host_.params_get_float(params_, key, &value));
        return value;
    }
    // STRING and PATH (made absolute by the host).
    std::string string(const char* key) const {
        const char* value = nullptr;
        check(key, host_.params_get_string(params_, key, &value));
        return value ? value : "";
    }
    std::vector<int64_t> integers(const char* key) const {
        const int64_t* data = nullptr;
        size_t count = 0;
        check(key, host_.params_get_int_array(params_, key, &data, &count));
        return std::vector<int64_t>(data, data + count);
    }
    std::vector<double> numbers(const char* key) const {
        const double* data = nullptr;
        size_t count = 0;
        check(key, host_.params_get_float_array(params_, key, &data, &count));
        return std::vector<double>(data, data + count);
    }
    std::vector<std::string> strings(const char* key) const {
        const char* const* data = nullptr;
        size_t count = 0;
        check(key, host_.params_get_string_array(params_, key, &data, &count));
        return std::vector<std::string>(data, data + count);
    }

private:
    void check(const char* key, cdz_status* status) const {
        try {
            throw_if_error(host_, status);
        } catch (const Error& error) {
            throw Error(error.code(), "parameter '" + std::string(key) + "': " + error.what());
        }
    }

    const cdz_host_api& host_;
    const cdz_params* params_;
};

}  // namespace cadenza::sdk
