#include "parameter_values.h"

#include "error.h"

namespace cadenza {

const char* param_type_name(cdz_param_type type) {
    switch (type) {
        case CDZ_PARAM_BOOL: return "bool";
        case CDZ_PARAM_INT: return "integer";
        case CDZ_PARAM_FLOAT: return "float";
        case CDZ_PARAM_STRING: return "string";
        case CDZ_PARAM_PATH: return "path";
        case CDZ_PARAM_INT_ARRAY: return "integer array";
        case CDZ_PARAM_FLOAT_ARRAY: return "float array";
        case CDZ_PARAM_STRING_ARRAY: return "string array";
    }
    return "unknown type";
}

const ParameterValue& parameter_lookup(const cdz_params& params, const char* key,
                                       cdz_param_type expected) {
    if (!key) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "parameter key is NULL");
    auto found = params.values.find(key);
    if (found == params.values.end())
        throw Error(CDZ_STATUS_NOT_FOUND,
                    "plugin '" + params.owner + "' has no parameter '" + key + "' in its schema");
    const ParameterValue& value = found->second;
    const bool string_like = (expected == CDZ_PARAM_STRING || expected == CDZ_PARAM_PATH) &&
                             (value.type == CDZ_PARAM_STRING || value.type == CDZ_PARAM_PATH);
    if (value.type != expected && !string_like)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "parameter '" + std::string(key) + "' of plugin '" + params.owner + "' is a " +
                        param_type_name(value.type) + ", not a " + param_type_name(expected));
    return value;
}

}  // namespace cadenza
