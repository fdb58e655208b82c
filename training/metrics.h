// Named running means (held-out loss, accuracy, ...) in the order they were
// first added, each with its unit for printing. No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cadenza::training {

enum class Unit { nats, fraction, count };

class Metrics {
public:
    struct Entry {
        std::string name;
        Unit unit = Unit::nats;
        double sum = 0;
        double count = 0;
        double mean() const { return count > 0 ? sum / count : 0.0; }
    };

    // Adds `sum` over `count` items to the metric `name`.
    void add(const std::string& name, Unit unit, double sum, double count);
    void merge(const Metrics& other);

    const std::vector<Entry>& entries() const { return entries_; }
    bool contains(const std::string& name) const;
    const Entry& at(const std::string& name) const;  // throws std::out_of_range
    double mean(const std::string& name) const { return at(name).mean(); }

    // "loss 1.234 nats/token", "accuracy 45.6%"
    static std::string format(const Entry& entry);

private:
    std::vector<Entry> entries_;
};

}  // namespace cadenza::training
