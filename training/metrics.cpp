#include "metrics.h"

#include <cstdio>
#include <stdexcept>

namespace cadenza::training {

void Metrics::add(const std::string& name, Unit unit, double sum, double count) {
    for (auto& entry : entries_)
        if (entry.name == name) {
            entry.sum += sum;
            entry.count += count;
            return;
        }
    entries_.push_back({name, unit, sum, count});
}

void Metrics::merge(const Metrics& other) {
    for (const auto& entry : other.entries_) add(entry.name, entry.unit, entry.sum, entry.count);
}

bool Metrics::contains(const std::string& name) const {
    for (const auto& entry : entries_)
        if (entry.name == name) return true;
    return false;
}

const Metrics::Entry& Metrics::at(const std::string& name) const {
    for (const auto& entry : entries_)
        if (entry.name == name) return entry;
    throw std::out_of_range("no metric '" + name + "'");
}

std::string Metrics::format(const Entry& entry) {
    char text[160];
    switch (entry.unit) {
        case Unit::nats: std::snprintf(text, sizeof(text), "%s %.4f nats/token", entry.name.c_str(), entry.mean()); break;
        case Unit::fraction: std::snprintf(text, sizeof(text), "%s %.2f%%", entry.name.c_str(), 100.0 * entry.mean()); break;
        case Unit::count: std::snprintf(text, sizeof(text), "%s %.0f", entry.name.c_str(), entry.sum); break;
    }
    return text;
}

}  // namespace cadenza::training
