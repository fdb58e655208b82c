// The C++ plugin SDK (sdk/include/cadenza/sdk) against a host table of the
// test's own: the guard's status for each kind of exception, the entry
// point's checks, the class-to-table trampolines, ExportedTensor's deleter,
// TensorView's checks and the typed parameters' errors.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cadenza/sdk/plugin_class.hpp"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "cadenza/sdk/plugin_tensor.hpp"

struct cdz_status {
    cdz_status_code code;
    std::string message;
};

// The test's parameters: integers by key; any other key or type is refused
// as the host refuses it.
struct cdz_params {
    std::map<std::string, int64_t> integers;
};

namespace {

namespace sdk = cadenza::sdk;

cdz_status* status_create(cdz_status_code code, const char* message) { return new cdz_status{code, message}; }
cdz_status_code status_code(const cdz_status* status) { return status->code; }
const char* status_message(const cdz_status* status) { return status->message.c_str(); }
void status_release(cdz_status* status) { delete status; }

cdz_status* refuse(const char* key) {
    return status_create(CDZ_STATUS_INVALID_CONFIG, (std::string("no such parameter: ") + key).c_str());
}
cdz_status* params_get_int(const cdz_params* params, const char* key, int64_t* out) {
    const auto found = params->integers.find(key);
    if (found == params->integers.end()) return refuse(key);
    *out = found->second;
    return nullptr;
}
cdz_status* params_get_float(const cdz_params*, const char* key, double*) { return refuse(key); }

cdz_host_api test_host() {
    cdz_host_api host{};
    host.struct_size = sizeof(host);
    host.abi_major = CDZ_PLUGIN_ABI_MAJOR;
    host.abi_minor = CDZ_PLUGIN_ABI_MINOR;
    host.status_create = status_create;
    host.params_get_int = params_get_int;
    host.params_get_float = params_get_float;
    host.status_code = status_code;
    host.status_message = status_message;
    host.status_release = status_release;
    return host;
}

const cdz_host_api host = test_host();

// A status as (code, message), released.
struct Outcome {
    cdz_status_code code = CDZ_STATUS_OK;
    std::string message;
};
Outcome outcome_of(cdz_status* status) {
    if (!status) return {};
    Outcome outcome{status->code, status->message};
    status_release(status);
    return outcome;
}

class PluginSdk : public ::testing::Test {
protected:
    void SetUp() override { sdk::library() = sdk::LibraryContext{&host, "test.plugin", nullptr}; }
};

TEST_F(PluginSdk, GuardMapsEachExceptionToItsStatus) {
    EXPECT_EQ(sdk::guarded([] {}), nullptr);

    Outcome error = outcome_of(sdk::guarded([] { throw sdk::Error(CDZ_STATUS_NOT_FOUND, "no such file"); }));
    EXPECT_EQ(error.code, CDZ_STATUS_NOT_FOUND);
    EXPECT_EQ(error.message, "test.plugin: no such file");

    Outcome memory = outcome_of(sdk::guarded([] { throw std::bad_alloc(); }));
    EXPECT_EQ(memory.code, CDZ_STATUS_OUT_OF_MEMORY);
    EXPECT_EQ(memory.message, "test.plugin: out of memory");

    Outcome bug = outcome_of(sdk::guarded([] { throw std::out_of_range("index 7"); }));
    EXPECT_EQ(bug.code, CDZ_STATUS_INTERNAL);
    EXPECT_EQ(bug.message, "test.plugin: index 7");

    Outcome unknown = outcome_of(sdk::guarded([] { throw 42; }));
    EXPECT_EQ(unknown.code, CDZ_STATUS_INTERNAL);
    EXPECT_EQ(unknown.message, "test.plugin: unknown exception");
}

TEST_F(PluginSdk, GuardNamesThePluginOnceAndDescribesForeignExceptions) {
    Outcome named = outcome_of(sdk::guarded([] { throw sdk::Error(CDZ_STATUS_IO_ERROR, "test.plugin: disk full"); }));
    EXPECT_EQ(named.message, "test.plugin: disk full");

    const sdk::LibraryContext unnamed{&host, nullptr, [](const std::exception& e) {
                                          return std::string("described: ") + e.what();
                                      }};
    Outcome described = outcome_of(sdk::guarded(unnamed, [] { throw std::runtime_error("boom"); }));
    EXPECT_EQ(described.code, CDZ_STATUS_INTERNAL);
    EXPECT_EQ(described.message, "described: boom");
}

TEST_F(PluginSdk, EntryPointChecksTheHostOnce) {
    static const cdz_plugin_descriptor descriptor{};
    static const cdz_plugin_descriptor* const descriptors[] = {&descriptor};
    sdk::library() = sdk::LibraryContext{};

    cdz_host_api other_major = host;
    other_major.abi_major = CDZ_PLUGIN_ABI_MAJOR + 1;
    cdz_plugin_list list{};
    Outcome major = outcome_of(sdk::enter_plugin(&other_major, &list, descriptors, 1, "test.plugin"));
    EXPECT_EQ(major.code, CDZ_STATUS_ABI_MISMATCH);
    EXPECT_EQ(major.message, "test.plugin: the host speaks another major plugin ABI");
    EXPECT_EQ(list.count, 0u);

    cdz_host_api old_table = host;
    old_table.struct_size = CDZ_SIZE_THROUGH(cdz_host_api, status_create);
    EXPECT_EQ(outcome_of(sdk::enter_plugin(&old_table, &list, descriptors, 1, "test.plugin")).code,
              CDZ_STATUS_ABI_MISMATCH);
    EXPECT_EQ(sdk::library().host, nullptr);
    EXPECT_EQ(sdk::enter_plugin(nullptr, &list, descriptors, 1, "test.plugin"), nullptr);  // nothing to report with

    EXPECT_EQ(sdk::enter_plugin(&host, &list, descriptors, 1, "test.plugin"), nullptr);
    EXPECT_EQ(list.count, 1u);
    EXPECT_EQ(list.descriptors, descriptors);
    EXPECT_EQ(sdk::library().host, &host);
    EXPECT_STREQ(sdk::library().plugin_name, "test.plugin");
}

// A session-owning class in the shape of a kind's table.
struct Session {
    explicit Session(int64_t capacity) : capacity(capacity) { ++alive; }
    ~Session() { --alive; }
    int64_t length() const { return capacity / 2; }
    static inline int alive = 0;
    int64_t capacity;
};

struct Counter {
    explicit Counter(const cdz_instance_args& args) {
        if (!args.rng) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "no random stream");
    }
    void add(int32_t amount) {
        if (amount < 0) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "a negative amount");
        total += amount;
    }
    int64_t read() const { return total; }
    std::unique_ptr<Session> open(int64_t capacity) { return std::make_unique<Session>(capacity); }
    int64_t total = 0;
};

TEST_F(PluginSdk, TrampolinesCallTheClassAndGuardEachCall) {
    cdz_status* (*create)(const cdz_instance_args*, void**) = sdk::create<Counter>;
    void (*destroy)(void*) = sdk::destroy<Counter>;
    cdz_status* (*add)(void*, int32_t) = sdk::method<&Counter::add>;
    cdz_status* (*read)(void*, int64_t*) = sdk::method<&Counter::read>;
    cdz_status* (*open)(void*, int64_t, void**) = sdk::method<&Counter::open>;
    cdz_status* (*session_length)(void*, int64_t*) = sdk::method<&Session::length>;

    cdz_instance_args args{};
    args.struct_size = sizeof(args);
    args.host = &host;
    void* counter = reinterpret_cast<void*>(1);
    Outcome refused = outcome_of(create(&args, &counter));
    EXPECT_EQ(refused.code, CDZ_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(refused.message, "test.plugin: no random stream");
    EXPECT_EQ(counter, nullptr);
    EXPECT_EQ(outcome_of(create(nullptr, &counter)).code, CDZ_STATUS_INVALID_ARGUMENT);

    args.rng = reinterpret_cast<cdz_rng*>(&args);  // only compared with NULL
    ASSERT_EQ(create(&args, &counter), nullptr);
    EXPECT_EQ(add(counter, 3), nullptr);
    EXPECT_EQ(add(counter, 4), nullptr);
    EXPECT_EQ(outcome_of(add(counter, -1)).message, "test.plugin: a negative amount");
    int64_t total = 0;
    EXPECT_EQ(read(counter, &total), nullptr);
    EXPECT_EQ(total, 7);
    EXPECT_EQ(outcome_of(read(counter, nullptr)).code, CDZ_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(outcome_of(add(nullptr, 1)).message, "test.plugin: the instance is NULL");

    void* session = nullptr;
    ASSERT_EQ(open(counter, 10, &session), nullptr);
    EXPECT_EQ(Session::alive, 1);
    int64_t length = 0;
    EXPECT_EQ(session_length(session, &length), nullptr);
    EXPECT_EQ(length, 5);
    sdk::destroy<Session>(session);
    EXPECT_EQ(Session::alive, 0);
    destroy(counter);
}

// Counts how often it is destroyed, moves included as no destruction.
struct CountedOwner {
    CountedOwner() = default;
    explicit CountedOwner(int* destroyed) : destroyed(destroyed), data(4, 1.5f) {}
    CountedOwner(CountedOwner&& other) noexcept : destroyed(other.destroyed), data(std::move(other.data)) {
        other.destroyed = nullptr;
    }
    CountedOwner& operator=(CountedOwner&& other) noexcept {
        destroyed = other.destroyed;
        data = std::move(other.data);
        other.destroyed = nullptr;
        return *this;
    }
    ~CountedOwner() {
        if (destroyed) ++*destroyed;
    }
    int* destroyed = nullptr;
    std::vector<float> data;
};

TEST_F(PluginSdk, ExportedTensorOwnsItsDataAndItsDeleterRunsOnce) {
    int destroyed = 0;
    CountedOwner owner(&destroyed);
    float* data = owner.data.data();
    DLManagedTensor* tensor = sdk::export_tensor(std::move(owner), data, sdk::float32, {2, 2});
    EXPECT_EQ(destroyed, 0);
    EXPECT_EQ(tensor->dl_tensor.data, data);
    EXPECT_EQ(tensor->dl_tensor.ndim, 2);
    EXPECT_EQ(tensor->dl_tensor.shape[0], 2);
    EXPECT_EQ(tensor->dl_tensor.shape[1], 2);
    EXPECT_TRUE(sdk::same_dtype(tensor->dl_tensor.dtype, sdk::float32));
    EXPECT_EQ(tensor->dl_tensor.device.device_type, kDLCPU);
    EXPECT_EQ(static_cast<float*>(tensor->dl_tensor.data)[3], 1.5f);
    tensor->deleter(tensor);
    EXPECT_EQ(destroyed, 1);
}

TEST_F(PluginSdk, TensorViewChecksWhatComesIn) {
    const sdk::TensorSpec codes{2, {sdk::int32, sdk::int64}, "int32 [codebooks, frames]"};
    int32_t values[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {2, 3};
    DLTensor tensor{};
    tensor.data = values;
    tensor.device = DLDevice{kDLCPU, 0};
    tensor.ndim = 2;
    tensor.dtype = sdk::int32;
    tensor.shape = shape;

    const sdk::TensorView view(&tensor, "codes", codes);
    EXPECT_EQ(view.element_count(), 6);
    EXPECT_EQ(view.shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(view.data_as<int32_t>()[5], 6);

    auto message_for = [&](const DLTensor* input) {
        try {
            sdk::TensorView rejected(input, "codes", codes);
        } catch (const sdk::Error& error) {
            EXPECT_EQ(error.code(), CDZ_STATUS_INVALID_ARGUMENT);
            return std::string(error.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(message_for(nullptr), "codes is NULL");
    DLTensor floats = tensor;
    floats.dtype = sdk::float32;
    EXPECT_EQ(message_for(&floats), "codes must be int32 [codebooks, frames]");
    DLTensor on_gpu = tensor;
    on_gpu.device = DLDevice{kDLCUDA, 0};
    EXPECT_EQ(message_for(&on_gpu), "codes must be a CPU tensor");
    int64_t strides[2] = {1, 2};
    DLTensor transposed = tensor;
    transposed.strides = strides;
    EXPECT_EQ(message_for(&transposed), "codes must be contiguous");
    DLTensor empty_data = tensor;
    empty_data.data = nullptr;
    EXPECT_EQ(message_for(&empty_data), "codes has no data");
}

TEST_F(PluginSdk, ParamsReadTypedValuesAndNameTheKeyOnError) {
    cdz_params params{{{"top_k", 3}}};
    const sdk::Params values(host, &params);
    EXPECT_EQ(values.integer("top_k"), 3);
    try {
        values.number("temperature");
        FAIL() << "a key outside the schema was read";
    } catch (const sdk::Error& error) {
        EXPECT_EQ(error.code(), CDZ_STATUS_INVALID_CONFIG);
        EXPECT_EQ(std::string(error.what()), "parameter 'temperature': no such parameter: temperature");
    }
}

}  // namespace
